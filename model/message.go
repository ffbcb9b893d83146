package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Property names (MessageConst). Tags, keys, UNIQ_KEY and the reconsume
// count have typed fields on Message; the rest live in Properties.
const (
	PropertyKeys            = "KEYS"
	PropertyTags            = "TAGS"
	PropertyUniqKey         = "UNIQ_KEY"
	PropertyFirstPopTime    = "1ST_POP_TIME"
	PropertyPopCK           = "POP_CK"
	PropertyRetryTopic      = "RETRY_TOPIC"
	PropertyOriginMessageID = "ORIGIN_MESSAGE_ID"
	// PropertyOriginGroup is the group a POP retry copy was revived for
	// (RocketMQ 5.4.0 on: long polling wakes that group's pollers).
	PropertyOriginGroup = "ORIGIN_GROUP"
)

// systemProperties are the names RocketMQ keeps for itself
// (MessageConst.STRING_HASH_SET: Message.putUserProperty refuses them with
// "The Property<%s> is used by system, input another please"), and
// ORIGIN_GROUP, which a POP revive sets (popsim types it on Message).
var systemProperties = map[string]bool{
	"TRACE_ON": true, "MSG_REGION": true, PropertyKeys: true, PropertyTags: true, "WAIT": true, "DELAY": true,
	PropertyRetryTopic: true, "REAL_TOPIC": true, "REAL_QID": true, "TRAN_MSG": true, "PGROUP": true,
	"MIN_OFFSET": true, "MAX_OFFSET": true, "BUYER_ID": true, PropertyOriginMessageID: true, "TRANSFER_FLAG": true,
	"CORRECTION_FLAG": true, "MQ2_FLAG": true, "RECONSUME_TIME": true, PropertyUniqKey: true,
	"MAX_RECONSUME_TIMES": true, "CONSUME_START_TIME": true, PropertyPopCK: true, "POP_CK_OFFSET": true,
	PropertyFirstPopTime: true, "TRAN_PREPARED_QUEUE_OFFSET": true, "DUP_INFO": true, "EXTEND_UNIQ_INFO": true,
	"INSTANCE_ID": true, "CORRELATION_ID": true, "REPLY_TO_CLIENT": true, "TTL": true, "ARRIVE_TIME": true,
	"PUSH_REPLY_TIME": true, "CLUSTER": true, "MSG_TYPE": true, "INNER_MULTI_QUEUE_OFFSET": true,
	"TIMER_DELAY_MS": true, "TIMER_DELAY_SEC": true, "TIMER_DELIVER_MS": true, "TIMER_ENQUEUE_MS": true,
	"TIMER_DEQUEUE_MS": true, "TIMER_ROLL_TIMES": true, "TIMER_OUT_MS": true, "TIMER_DEL_UNIQKEY": true,
	"TIMER_DELAY_LEVEL": true, "__BORNHOST": true, "BORN_TIMESTAMP": true, "DLQ_ORIGIN_TOPIC": true,
	"DLQ_ORIGIN_MESSAGE_ID": true, "__CRC32#": true, PropertyOriginGroup: true,
}

// IsSystemProperty reports whether a producer may not set a property of
// this name (RocketMQ's own properties).
func IsSystemProperty(name string) bool { return systemProperties[name] }

// Property is one user or system property not covered by a typed field.
type Property struct {
	Key, Value string
}

// Message is a stored message with the RocketMQ fields POP cares about.
// Offsets are consume-queue offsets; times are epoch milliseconds.
type Message struct {
	Topic string
	// ID is the simulator's identity of the message (see MsgID); copies
	// keep it. It is not a RocketMQ field and never reaches a wire format.
	// It sits beside QueueID so that the two 4-byte fields share a word:
	// first, it left 4 bytes of padding (a Message was 200 bytes, now 192,
	// and every stored message is one).
	ID              MsgID
	QueueID         int32
	QueueOffset     int64
	CommitLogOffset int64
	BornTimestamp   int64
	StoreTimestamp  int64
	Flag            int32
	SysFlag         int32
	ReconsumeTimes  int32
	// UniqKey is the client-generated message id (UNIQ_KEY); retry copies
	// keep it, so it identifies a message across redeliveries.
	UniqKey string
	Tags    string
	Keys    string
	// FirstPopTime is 1ST_POP_TIME in ms, 0 when absent.
	FirstPopTime int64
	// OriginGroup is ORIGIN_GROUP, the group a POP retry copy was revived
	// for; empty when absent. Typed so a revive adds it without copying
	// the other properties.
	OriginGroup string
	Body        []byte
	// Properties holds every other property, sorted by key.
	Properties []Property
}

// Property returns the value of a property, including the typed ones, and
// whether it is present.
func (m *Message) Property(key string) (string, bool) {
	switch key {
	case PropertyTags:
		return m.Tags, m.Tags != ""
	case PropertyKeys:
		return m.Keys, m.Keys != ""
	case PropertyUniqKey:
		return m.UniqKey, m.UniqKey != ""
	case PropertyFirstPopTime:
		return strconv.FormatInt(m.FirstPopTime, 10), m.FirstPopTime != 0
	case PropertyOriginGroup:
		return m.OriginGroup, m.OriginGroup != ""
	}
	i := sort.Search(len(m.Properties), func(i int) bool { return m.Properties[i].Key >= key })
	if i < len(m.Properties) && m.Properties[i].Key == key {
		return m.Properties[i].Value, true
	}
	return "", false
}

// SetProperty sets a property, keeping Properties sorted. Typed properties
// go to their fields; a malformed 1ST_POP_TIME is an error.
func (m *Message) SetProperty(key, value string) error {
	switch key {
	case PropertyTags:
		m.Tags = value
		return nil
	case PropertyKeys:
		m.Keys = value
		return nil
	case PropertyUniqKey:
		m.UniqKey = value
		return nil
	case PropertyOriginGroup:
		m.OriginGroup = value
		return nil
	case PropertyFirstPopTime:
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("model: property %s=%q: want a non-negative integer of epoch milliseconds", key, value)
		}
		m.FirstPopTime = v
		return nil
	}
	i := sort.Search(len(m.Properties), func(i int) bool { return m.Properties[i].Key >= key })
	if i < len(m.Properties) && m.Properties[i].Key == key {
		m.Properties[i].Value = value
		return nil
	}
	m.Properties = append(m.Properties, Property{})
	copy(m.Properties[i+1:], m.Properties[i:])
	m.Properties[i] = Property{key, value}
	return nil
}

// Clone returns a deep copy (the body is shared: it is never mutated).
func (m *Message) Clone() *Message {
	c := *m
	if m.Properties != nil {
		c.Properties = append([]Property(nil), m.Properties...)
	}
	return &c
}

// Validate checks what a producer may send: a valid topic name no longer
// than 127 characters (SendMessageProcessor refuses a longer one, retry
// topics included, as MESSAGE_ILLEGAL), a tag without '|' (which separates
// tags in subscription expressions), a non-negative born time.
func (m *Message) Validate() error {
	if err := ValidateSendTopic(m.Topic); err != nil {
		return err
	}
	if m.FieldsValid() {
		return nil
	}
	return m.fieldsError()
}

// ValidateSendTopic checks the topic part of Validate: a valid topic
// name a producer may send to (at most MaxTopicLength characters). A
// broker that keeps its topics can check it once per topic.
func ValidateSendTopic(name string) error {
	if err := ValidateTopic(name); err != nil {
		return err
	}
	if len(name) > MaxTopicLength {
		return fmt.Errorf("model: message topic %q is %d characters long: a producer may send to at most %d", clip(name), len(name), MaxTopicLength)
	}
	return nil
}

// FieldsValid reports whether the message's own fields pass Validate
// (its topic aside): at most one tag, no negative born time or
// reconsume count. It is short enough to be inlined on a put.
func (m *Message) FieldsValid() bool {
	// '|' is ASCII, so a byte search finds it as ContainsAny would
	return strings.IndexByte(m.Tags, '|') < 0 && m.BornTimestamp >= 0 && m.ReconsumeTimes >= 0
}

// fieldsError names the first of the message's own fields that fails
// FieldsValid.
func (m *Message) fieldsError() error {
	switch {
	case strings.IndexByte(m.Tags, '|') >= 0:
		return fmt.Errorf("model: message tag %q contains '|': a message has at most one tag", m.Tags)
	case m.BornTimestamp < 0:
		return fmt.Errorf("model: message bornTimestamp %d is negative", m.BornTimestamp)
	default:
		return fmt.Errorf("model: message reconsumeTimes %d is negative", m.ReconsumeTimes)
	}
}

// String is a deterministic one-line rendering for traces and tests.
func (m *Message) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d@%d key=%s tag=%s reconsume=%d born=%d", m.Topic, m.QueueID, m.QueueOffset, m.UniqKey, m.Tags, m.ReconsumeTimes, m.BornTimestamp)
	if m.FirstPopTime != 0 {
		fmt.Fprintf(&b, " 1st_pop=%d", m.FirstPopTime)
	}
	if m.OriginGroup != "" {
		fmt.Fprintf(&b, " %s=%s", PropertyOriginGroup, m.OriginGroup)
	}
	for _, p := range m.Properties {
		fmt.Fprintf(&b, " %s=%s", p.Key, p.Value)
	}
	return b.String()
}
