package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/pop"
)

// Engine is pop.Config under RocketMQ's broker.conf names. Every field of
// pop.Config has a counterpart here with the same Go name (a test keeps
// them in step); defaults are pop.DefaultConfig's. Millisecond settings
// accept a plain number of milliseconds, as in broker.conf, or a duration.
type Engine struct {
	BrokerName                         string `yaml:"brokerName"`
	ClusterName                        string `yaml:"brokerClusterName"`
	Readable                           bool   `yaml:"readable"`
	TimerWheelEnable                   bool   `yaml:"timerWheelEnable"`
	PopReviveMaxReturnSizePerRead      int    `yaml:"popReviveMaxReturnSizePerRead" range:"1..16777216"`
	PopReviveMaxAttemptTimes           int32  `yaml:"popReviveMaxAttemptTimes" range:"0..16"`
	EnablePopBufferMerge               bool   `yaml:"enablePopBufferMerge"`
	PopCkStayBufferTime                Millis `yaml:"popCkStayBufferTime" range:"1.."`
	PopCkMaxBufferSize                 int64  `yaml:"popCkMaxBufferSize" range:"0..1099511627776"`
	EnableRetryTopicV2                 bool   `yaml:"enableRetryTopicV2"`
	RetrieveMessageFromPopRetryTopicV1 bool   `yaml:"retrieveMessageFromPopRetryTopicV1"`
	EnablePopMessageThreshold          bool   `yaml:"enablePopMessageThreshold"`
	PopInflightMessageThreshold        int64  `yaml:"popInflightMessageThreshold" range:"1..1099511627776"`
	PopPollingSize                     int    `yaml:"popPollingSize" range:"0..1073741824"`
	MaxPopPollingSize                  int    `yaml:"maxPopPollingSize" range:"0..1073741824"`
	PopLongPollingForceNotifyInterval  int64  `yaml:"popLongPollingForceNotifyInterval" range:"1..1099511627776"`
	InitPopOffsetByCheckMsgInMem       bool   `yaml:"initPopOffsetByCheckMsgInMem"`
	UseServerSideResetOffset           bool   `yaml:"useServerSideResetOffset"`
	PopConsumerLockTimeout             Millis `yaml:"popConsumerLockTimeout" range:"1.."`
	Bugs                               Bugs   `yaml:"bugs"`
}

// Bugs are pop.Bugs: switches that bring back known upstream defects.
type Bugs struct {
	SameDeadlineChangeInvisible      bool `yaml:"sameDeadlineChangeInvisible"`
	CacheCleanupIgnoresReviveFailure bool `yaml:"cacheCleanupIgnoresReviveFailure"`
	V1RetryNoPollWake                bool `yaml:"v1RetryNoPollWake"`
	CommitOffsetLag                  bool `yaml:"commitOffsetLag"`
	RetryTopicReencoding             bool `yaml:"retryTopicReencoding"`
}

// Millis is a RocketMQ millisecond setting: 10000 or 10s.
type Millis int64

func (m *Millis) setText(s string) error {
	if digits(strings.ReplaceAll(s, "_", "")) && s != "" {
		v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil || v > 1<<50 {
			return fmt.Errorf("%q: want milliseconds up to %d, or a duration such as 10s", s, int64(1<<50))
		}
		*m = Millis(v)
		return nil
	}
	d, err := clock.ParseDuration(s)
	if err != nil || d%clock.Millisecond != 0 || d < 0 {
		return fmt.Errorf("%q: want whole milliseconds (10000) or a duration of whole milliseconds (10s, 250ms)", s)
	}
	*m = Millis(d.Millis())
	return nil
}

// engineFrom copies pop.Config into an Engine, field by field by name.
func engineFrom(c pop.Config) Engine {
	var e Engine
	copyByName(reflect.ValueOf(&e).Elem(), reflect.ValueOf(c))
	return e
}

// Config returns the engine configuration as a pop.Config.
func (e Engine) Config() pop.Config {
	var c pop.Config
	copyByName(reflect.ValueOf(&c).Elem(), reflect.ValueOf(e))
	return c
}

// copyByName sets every field of dst from the field of src with the same
// name, converting between convertible types and recursing into structs.
// A field missing on either side is a programming error (pop.Config grew a
// field that Engine lacks) and panics; TestEngineMirrorsPopConfig catches it.
func copyByName(dst, src reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		name := dst.Type().Field(i).Name
		s := src.FieldByName(name)
		if !s.IsValid() {
			panic(fmt.Sprintf("scenarios: %s has field %s, %s does not", dst.Type(), name, src.Type()))
		}
		d := dst.Field(i)
		if d.Kind() == reflect.Struct {
			copyByName(d, s)
			continue
		}
		d.Set(s.Convert(d.Type()))
	}
}
