package pop

import "fmt"

// Config is the broker configuration the engine honours, with RocketMQ's
// names (BrokerConfig unless noted) and defaults (DefaultConfig). Times are
// milliseconds, as upstream.
//
// A scenario file's engine section sets these fields under their
// broker.conf keys: the Go name in lower camel case, or the yaml tag where
// RocketMQ's name differs. A field tagged unit:"ms" also accepts a
// duration of whole milliseconds (10s for 10000).
type Config struct {
	BrokerName  string // receipt handles carry it (field 6)
	ClusterName string `yaml:"brokerClusterName"`
	// Readable is the broker permission; false answers pops NO_PERMISSION.
	Readable bool
	// TimerWheelEnable (MessageStoreConfig) must be true for POP.
	TimerWheelEnable bool

	PopReviveMaxReturnSizePerRead int   // KV revive page size (16384)
	PopReviveMaxAttemptTimes      int32 // revive attempts before a record is dropped (16)

	EnablePopBufferMerge bool  // KV: use the in-memory cache (PopConsumerCache)
	PopCkStayBufferTime  int64 `unit:"ms"` // cache staging age (10000)
	PopCkMaxBufferSize   int64 // cache is full above this many records (200000)

	EnableRetryTopicV2                 bool // write retries to %RETRY%g+t
	RetrieveMessageFromPopRetryTopicV1 bool // also read %RETRY%g_t (true)

	EnablePopMessageThreshold   bool  // in-flight stop (needs the cache)
	PopInflightMessageThreshold int64 // per-queue limit (10000), compared with >=

	PopPollingSize                    int   // suspended requests per polling key (1024)
	MaxPopPollingSize                 int   // suspended requests in all (100000)
	PopLongPollingForceNotifyInterval int64 // notify without filtering when offset % n == 0 (800)

	InitPopOffsetByCheckMsgInMem bool  // MAX init starts at 0 while offset 0 is in memory (true)
	UseServerSideResetOffset     bool  // queryOffset honours a pending admin reset (true)
	PopConsumerLockTimeout       int64 `unit:"ms"` // PopConsumerLockService lease, "consumer offline" (120000)

	// Bugs re-enables upstream defects. All off by default.
	Bugs Bugs
}

// Bugs are switches that bring back known upstream RocketMQ defects so that
// the harness can prove it catches them. Each is off by default, where the
// engine behaves as the fixed broker does.
type Bugs struct {
	// SameDeadlineChangeInvisible (apache/rocketmq#10276): a KV
	// changeInvisibleTime whose new visibility timeout equals the old one
	// writes the new record and then deletes the same key, so the message is
	// never retried: it is lost.
	SameDeadlineChangeInvisible bool
	// CacheCleanupIgnoresReviveFailure (#10667): PopConsumerCache.cleanupRecords
	// ignores the result of the revive it starts, so a failed revive of a
	// cached record loses the message instead of retrying it with backoff.
	CacheCleanupIgnoresReviveFailure bool
	// V1RetryNoPollWake (#9632): a message written to a V1 retry topic
	// (%RETRY%g_t) does not wake suspended pop requests; they wait for their
	// poll timeout.
	V1RetryNoPollWake bool
	// CommitOffsetLag (#10949): the KV commit offset is the start of the last
	// popped batch (or the smallest cached offset); acks never advance it, so
	// consumer lag never reaches 0 after the consumer drains.
	CommitOffsetLag bool
	// RetryTopicReencoding (#10945/#11195): the KV path's re-encoding of retry
	// messages is broken, so they reach clients under their retry topic name;
	// the client then acks on a topic that does not exist.
	RetryTopicReencoding bool
}

// DefaultConfig returns RocketMQ's defaults (spec section 3).
func DefaultConfig() Config {
	return Config{
		BrokerName:                         "broker-a",
		ClusterName:                        "DefaultCluster",
		Readable:                           true,
		TimerWheelEnable:                   true,
		PopReviveMaxReturnSizePerRead:      16384,
		PopReviveMaxAttemptTimes:           16,
		PopCkStayBufferTime:                10000,
		PopCkMaxBufferSize:                 200000,
		RetrieveMessageFromPopRetryTopicV1: true,
		PopInflightMessageThreshold:        10000,
		PopPollingSize:                     1024,
		MaxPopPollingSize:                  100000,
		PopLongPollingForceNotifyInterval:  800,
		InitPopOffsetByCheckMsgInMem:       true,
		UseServerSideResetOffset:           true,
		PopConsumerLockTimeout:             120000,
	}
}

// ConfigError is a setting outside what the engine allows, under its
// broker.conf key.
type ConfigError struct {
	Key  string // popPollingSize
	Msg  string // what is wrong, with the value: "-1 out of range"
	Want string // what is allowed: "0..1073741824"
}

func (e *ConfigError) Error() string {
	return "pop: config " + e.Key + ": " + e.Msg + ": want " + e.Want
}

// Validate reports the first field outside its allowed range as a
// *ConfigError.
func (c *Config) Validate() error {
	if c.BrokerName == "" || containsSpace(c.BrokerName) {
		return &ConfigError{Key: "brokerName", Msg: fmt.Sprintf("%q", c.BrokerName), Want: "a non-empty name without spaces (it is a receipt-handle field)"}
	}
	checks := []struct {
		name   string
		v, min int64
		max    int64
	}{
		{"popReviveMaxReturnSizePerRead", int64(c.PopReviveMaxReturnSizePerRead), 1, 1 << 24},
		{"popReviveMaxAttemptTimes", int64(c.PopReviveMaxAttemptTimes), 0, int64(len(ReviveIntervalsSeconds))},
		{"popCkStayBufferTime", c.PopCkStayBufferTime, 1, 1 << 40},
		{"popCkMaxBufferSize", c.PopCkMaxBufferSize, 0, 1 << 40},
		{"popInflightMessageThreshold", c.PopInflightMessageThreshold, 1, 1 << 40},
		{"popPollingSize", int64(c.PopPollingSize), 0, 1 << 30},
		{"maxPopPollingSize", int64(c.MaxPopPollingSize), 0, 1 << 30},
		{"popLongPollingForceNotifyInterval", c.PopLongPollingForceNotifyInterval, 1, 1 << 40},
		{"popConsumerLockTimeout", c.PopConsumerLockTimeout, 1, 1 << 40},
	}
	for _, k := range checks {
		if k.v < k.min || k.v > k.max {
			return &ConfigError{Key: k.name, Msg: fmt.Sprintf("%d out of range", k.v), Want: fmt.Sprintf("%d..%d", k.min, k.max)}
		}
	}
	return nil
}

func containsSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' || s[i] == '\n' {
			return true
		}
	}
	return false
}

// ReviveIntervalsSeconds is the KV revive backoff (REWRITE_INTERVALS_IN_SECONDS),
// indexed by a record's attemptTimes. popReviveMaxAttemptTimes is capped at
// its length, which avoids upstream's out-of-bounds index (spec 7.2).
var ReviveIntervalsSeconds = [...]int64{10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// Driver cadence: how often RocketMQ runs each periodic task. The engine
// never wakes itself; its driver calls the matching method on this schedule.
const (
	ReviveIdleInterval   = 500   // PopConsumerService sleeps this long unless a full page was read
	CacheCleanupInterval = 1000  // PopConsumerCache.cleanupRecords period
	LockCleanInterval    = 60000 // PopConsumerLockService.removeTimeout period
	PollTickInterval     = 20    // PopLongPollingService scan period
	// PullHoldCheckInterval is PullRequestHoldService's scan period with
	// long polling enabled (RocketMQ's default): CheckHoldRequest answers a
	// held pull whose suspend time is up, or whose queue got a message its
	// filter did not match, at the first scan after that (NextHoldCheck).
	PullHoldCheckInterval = 5000
	MaxPopBatch           = 32   // maxMsgNums limit
	PollTimeoutSlack      = 50   // a poll is timed out once now > expired - 50
	bornTimeTolerance     = 500  // now - bornTime - pollTime above this is POLLING_TIMEOUT
	reviveLookBack        = 3000 // the revive scan starts 3 s before its cursor
	reviveUpperSlack      = 50   // and stops 50 ms before now
	maxFilterScan         = 800  // consume-queue entries one filtered read inspects (16000 B / 20 B)
	maxTransferCount      = 32   // maxTransferCountOnMessageInMemory: messages one pull returns at most
)
