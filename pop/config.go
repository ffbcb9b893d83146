package pop

import (
	"fmt"

	"popsim/model"
)

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
	// BrokerIP1 is the address the broker announces; RocketMQ names it in
	// the remarks of refused pops ("the broker[%s] pop message is
	// forbidden"). Upstream's default is the host's first address;
	// popsim's is 127.0.0.1, so remarks do not depend on the machine.
	BrokerIP1 string `yaml:"brokerIP1"`
	// Readable is the broker permission; false answers pops NO_PERMISSION.
	Readable bool
	// TimerWheelEnable (MessageStoreConfig) must be true for POP.
	TimerWheelEnable bool
	// TimerPrecisionMs (MessageStoreConfig) is the timer wheel's slot: a
	// timer message due at t is delivered at the first slot boundary at or
	// after t (1000).
	TimerPrecisionMs int64 `unit:"ms"`
	// TimerMaxDelaySec (MessageStoreConfig): the store refuses a timer
	// message due more than this far ahead (259200, 3 days).
	TimerMaxDelaySec int64

	// Path selection. popConsumerKVServiceEnable routes pop, ack and
	// changeInvisibleTime to the record-based (KV) path; off, RocketMQ's
	// default, they take the checkpoint (FS) path. popsim builds the KV
	// service whenever either KV switch is on (upstream needs
	// popConsumerKVServiceInit for Enable, or fails at startup).
	PopConsumerFSServiceInit   bool // start the FS buffer-merge and revive services (true)
	PopConsumerKVServiceInit   bool // start the KV service (false)
	PopConsumerKVServiceEnable bool // serve POP on the KV path (false)

	PopReviveMaxReturnSizePerRead int   // KV revive page size (16384)
	PopReviveMaxAttemptTimes      int32 // KV revive attempts before a record is dropped (16)

	// EnablePopBufferMerge: KV, use the in-memory cache (PopConsumerCache);
	// FS, hold checkpoints and merge acks in PopBufferMergeService.
	EnablePopBufferMerge bool
	PopCkStayBufferTime  int64 `unit:"ms"` // KV cache staging age; FS: how long a CK stays buffered (10000)
	// PopCkStayBufferTimeOut (FS): a buffered CK is written once its revive
	// time is this close (3000); addCk/addAk refuse within it + 1500.
	PopCkStayBufferTimeOut int64 `unit:"ms"`
	PopCkMaxBufferSize     int64 // KV: cache full above this many records; FS: addCk refuses above this many buffered CKs (200000)
	// PopCkOffsetMaxQueueSize (FS): addCk refuses when the queue's commit
	// queue holds this many wrappers (20000).
	PopCkOffsetMaxQueueSize int64
	// EnablePopBatchAck (FS): the buffer writes one bAck message per CK
	// instead of one ack message per index (false).
	EnablePopBatchAck bool

	// ReviveQueueNum (FS) is the number of revive-topic queues, one
	// PopReviveService each (8).
	ReviveQueueNum int32
	ReviveInterval int64 `unit:"ms"` // FS: wait between revive rounds (1000)
	ReviveMaxSlow  int64 // FS: an idle round waits up to reviveMaxSlow × reviveInterval more (3)
	ReviveScanTime int64 `unit:"ms"` // FS: longest read phase of a revive round (10000)
	// EnableSkipLongAwaitingAck (FS, apache/rocketmq#5408): an ack whose
	// CK was not found for reviveAckWaitMs gets a mock CK so the revive
	// offset can pass it (false).
	EnableSkipLongAwaitingAck bool
	ReviveAckWaitMs           int64 `unit:"ms"` // (180000)
	// SkipWhenCKRePutReachMaxTimes (FS): drop a CK re-put 17 times instead
	// of re-putting it every 7200 s forever (false).
	SkipWhenCKRePutReachMaxTimes bool

	// PopFromRetryProbability: percentage of requests that read the retry
	// topics first (20). KV: the requests whose requestCount % (100/p) is 0
	// (p of 51..100: every one); FS: those whose randomQ < p
	// (retrychoice.go).
	PopFromRetryProbability int32
	// PopFromRetryProbabilityForPriority is PopFromRetryProbability for a
	// request in priority mode (a PRIORITY topic, the draw below the
	// group's priority.factor): 0, so retries come after every queue.
	PopFromRetryProbabilityForPriority int32
	// PriorityOrderAsc (true; "0 as the lowest priority"): an all-queue pop
	// visits queues from the highest id down, starting at the request's
	// rotation; false, from the lowest up.
	PriorityOrderAsc bool
	// RetryChoiceRelease is popsim's, set by a version profile: "" is
	// 5.4.0's choice above; RetryChoice531 and RetryChoice514 are the
	// earlier releases' (retrychoice.go), which have no priority mode and
	// scan ascending whatever PriorityOrderAsc says.
	RetryChoiceRelease string

	EnableRetryTopicV2                 bool // write retries to %RETRY%g+t
	RetrieveMessageFromPopRetryTopicV1 bool // also read %RETRY%g_t (true)

	// EnablePopMessageThreshold stops reading a queue with too many
	// messages in flight: KV counts cached records (so it needs the cache)
	// and stops at >= the threshold; FS counts PopInflightMessageCounter
	// and stops above it (>).
	EnablePopMessageThreshold   bool
	PopInflightMessageThreshold int64 // per-queue limit (10000)

	PopPollingSize                    int   // suspended requests per polling key (1024)
	MaxPopPollingSize                 int   // suspended requests in all (100000)
	PopLongPollingForceNotifyInterval int64 // notify without filtering when offset % n == 0 (800)

	// EnablePropertyFilter lets Pull requests subscribe with SQL92
	// (PullMessageProcessor answers SYSTEM_ERROR otherwise; false). Pops do
	// not check it: a POP consumer may always use SQL92.
	EnablePropertyFilter bool

	InitPopOffsetByCheckMsgInMem bool  // MAX init starts at 0 while offset 0 is in memory (true)
	UseServerSideResetOffset     bool  // queryOffset honours a pending admin reset (true)
	PopConsumerLockTimeout       int64 `unit:"ms"` // PopConsumerLockService lease, "consumer offline" (120000)
	// FlushConsumerOffsetInterval: ConsumerOffsetManager persists the
	// commit offsets every this many ms (5000); a crash (Restart) loses
	// what changed since the last flush, a graceful Stop nothing.
	FlushConsumerOffsetInterval int64 `unit:"ms"`

	// EnableNotifyAfterPopOrderLockRelease (true): the lock manager's
	// timer wakes parked pops when a FIFO queue's lock-free time comes
	// (OrderTick); off, they wake at their poll timeout or on new messages.
	EnableNotifyAfterPopOrderLockRelease bool

	// Queue assignment (QueryAssignmentProcessor, assign.go).
	// ServerLoadBalancerEnable (true): QUERY_ASSIGNMENT allocates the
	// queues among the group's clients; false hands every client every
	// queue. DefaultMessageRequestMode (PULL) and DefaultPopShareQueueNum
	// (-1) answer for a (topic, group) whose mode no admin set.
	ServerLoadBalancerEnable  bool
	DefaultMessageRequestMode MessageRequestMode
	DefaultPopShareQueueNum   int32

	// Seed is popsim's: it seeds the broker's own random draws (the FS
	// pop's randomQ, java.util.Random in upstream), each a pure function
	// of the seed and the draw's ordinal (RandomDraw). It is not a
	// RocketMQ setting.
	Seed uint64

	// Version names the RocketMQ release whose profile (Releases) the
	// configuration started from: ApplyVersion sets that release's bug
	// switches and the defaults it changed. Empty: popsim's defaults, every
	// defect fixed. It is not a RocketMQ setting.
	Version string

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
	// CommitOffsetLag (#10949, open; every release with the KV path): a KV
	// stage commits the offset it started from, not the one it read to
	// (the smallest cached offset instead while the cache holds the
	// queue's records), and acks never move it. While the consumer keeps
	// polling, the next stage commits where the last one ended, so lag
	// reaches 0; once it stops, the commit offset stays at the start of
	// its last batch and the queue reports lag forever. Fixed (as PR
	// #10964 proposes): a stage commits its next begin offset once its
	// records are stored, capped at the smallest cached offset, never
	// backwards; cache cleanup commits the rest once the cache is empty.
	CommitOffsetLag bool
	// EmptyStageCommitsNextBegin (#9339, 5.3.2 only, fixed in 5.3.3 by PR
	// #9340): with CommitOffsetLag, a stage that found nothing commits its
	// next begin offset rather than the offset it started from.
	EmptyStageCommitsNextBegin bool
	// RetryTopicReencoding (#10945/#11195, open; KV 5.3.2 on): the KV
	// path's re-encoding of retry messages is broken, so the broker sends
	// them under their retry topic name without a POP_CK property. The
	// official Java client and the proxy rename the topic to the request
	// topic and build POP_CK from the retry name, so with them acks work
	// and applications see nothing (docs/rocketmq/kv-path.md §4.5); a
	// client that keeps the broker's topic shows the retry name, which is
	// what the engine reports (PoppedMessage.Message.Topic) and the
	// simulator's checker catches (presented-topic).
	RetryTopicReencoding bool

	// ReviveReadFailureLosesRetry (#10985, FS, open upstream): a revive
	// read of a message that completes exceptionally makes the completion
	// callback throw before rePutCK, while the revive offset has already
	// moved past the CK: that message (and every failure after it in the
	// CK) is never retried. Fixed (PR #10986): the failed read is re-put.
	// Reads fail only with Faults.ReviveReadPPM.
	ReviveReadFailureLosesRetry bool
	// RePutCkLosesBrokerName (#7412, FS, fixed in 5.2.0): a re-put CK has
	// no broker name, so its revive read goes nowhere and fails: the
	// message is re-put forever (every 7200 s after 17 times) and never
	// revived.
	RePutCkLosesBrokerName bool
	// DelayLevelTimer (#3787/#4153, FS before 5.0.0, fixed by #4725): CK
	// and ack messages are delivered by delay levels (1s 5s 10s 30s 1m 2m
	// … 2h: the smallest one longer than the wanted delay) instead of the
	// timer wheel, so an ack can reach the revive topic after its CK was
	// revived: the acked message comes back.
	DelayLevelTimer bool

	// FifoRetryLockBusy (apache/rocketmq#10827, KV, fixed by PR #10828,
	// release unknown): an orderly pop retrying with the attemptId of a
	// batch in flight fails fast on a busy group@topic lock like any pop:
	// its empty answer parks, it loses its re-entrancy, and the queue stays
	// blocked for the batch's lease. Fixed, such a retry spins for the
	// lock. The lock is busy only with Faults.LockBusyPPM.
	FifoRetryLockBusy bool
	// SameMillisChangeInvisible (popsim's finding, FS; no upstream issue
	// known, present from 5.1.4 to develop): changeInvisibleTime's new CK
	// takes popTime = now and startOffset = the message's offset, so a
	// renewal in the millisecond of the CK it renews (its pop's, when the
	// message starts the batch, or an earlier renewal's) makes a CK with
	// that CK's merge key. The ack-origin then pairs with the wrong one: in
	// revive the later CK replaces the earlier in the round's map (the
	// batch's other messages are lost, the renewal's lease ends as acked),
	// and with the buffer on a later renewal's ack merges into the pop's
	// buffered CK while the renewal's CK revives. Fixed, the new CK's
	// popTime is the first millisecond from now at which no live CK has
	// its merge key (docs/rocketmq/checkpoint-path.md §8).
	SameMillisChangeInvisible bool
	// LockFreeTimerFirstPending (popsim's finding; no upstream issue known):
	// the lock manager arms a FIFO queue's timer for its first pending
	// message's next-visible time (getLockFreeTimestamp), not for when the
	// whole batch stops blocking; a pop the timer wakes while a later
	// message still blocks parks again and nothing re-arms the timer, so
	// parked pops miss the real unblock and wait for their poll timeout.
	// Fixed, the timer is armed for the batch's unblock time.
	LockFreeTimerFirstPending bool
	// FifoChangeBelowCommitEmptyHandle (popsim's finding; no upstream
	// issue known, every release from 5.1.4 to develop, FS and KV): an
	// orderly changeInvisibleTime of an offset below the commit offset
	// answers SUCCESS without setting the response header, and the client
	// builds the new handle from it: popTime 0, invisibleTime 0 and
	// reviveQid 0, no longer orderly (reviveQid 999). A renewal of that
	// handle takes the unordered path, which checks no commit offset: it
	// writes a CK (FS) or record (KV) for the offset, and its revive puts
	// the message, already acked, into %RETRY%group_topic, which orderly
	// pops never read: it stays there and the retry queue never drains.
	// Fixed, the answer carries the request handle's popTime,
	// invisibleTime and reviveQid, so the handle stays orderly and its
	// later renewals and acks are no-ops as well.
	FifoChangeBelowCommitEmptyHandle bool
}

// DefaultConfig returns RocketMQ's defaults (docs/rocketmq/config.md): the
// checkpoint (FS) path, as a default broker runs it. KVConfig is the same
// broker switched to the KV path.
func DefaultConfig() Config {
	return Config{
		BrokerName:                         "broker-a",
		ClusterName:                        "DefaultCluster",
		BrokerIP1:                          "127.0.0.1",
		Readable:                           true,
		TimerWheelEnable:                   true,
		TimerPrecisionMs:                   1000,
		TimerMaxDelaySec:                   259200,
		PopConsumerFSServiceInit:           true,
		PopReviveMaxReturnSizePerRead:      16384,
		PopReviveMaxAttemptTimes:           16,
		PopCkStayBufferTime:                10000,
		PopCkStayBufferTimeOut:             3000,
		PopCkMaxBufferSize:                 200000,
		PopCkOffsetMaxQueueSize:            20000,
		ReviveQueueNum:                     8,
		ReviveInterval:                     1000,
		ReviveMaxSlow:                      3,
		ReviveScanTime:                     10000,
		ReviveAckWaitMs:                    180000,
		PopFromRetryProbability:            20,
		PriorityOrderAsc:                   true,
		RetrieveMessageFromPopRetryTopicV1: true,
		PopInflightMessageThreshold:        10000,
		PopPollingSize:                     1024,
		MaxPopPollingSize:                  100000,
		PopLongPollingForceNotifyInterval:  800,
		InitPopOffsetByCheckMsgInMem:       true,
		UseServerSideResetOffset:           true,
		PopConsumerLockTimeout:             120000,

		EnableNotifyAfterPopOrderLockRelease: true,
		FlushConsumerOffsetInterval:          5000,
		ServerLoadBalancerEnable:             true,
		DefaultMessageRequestMode:            RequestModePull,
		DefaultPopShareQueueNum:              -1,
	}
}

// KVConfig is DefaultConfig with popConsumerKVServiceEnable on: the
// record-based (KV) path.
func KVConfig() Config {
	c := DefaultConfig()
	c.PopConsumerKVServiceEnable = true
	return c
}

// UsesKV reports whether pop, ack and changeInvisibleTime take the KV path
// (popConsumerKVServiceEnable).
func (c *Config) UsesKV() bool { return c.PopConsumerKVServiceEnable }

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
		{"flushConsumerOffsetInterval", c.FlushConsumerOffsetInterval, 1, 1 << 40},
		{"timerPrecisionMs", c.TimerPrecisionMs, 1, 3600000},
		{"timerMaxDelaySec", c.TimerMaxDelaySec, 1, 1 << 31},
		{"popCkStayBufferTimeOut", c.PopCkStayBufferTimeOut, 0, 1 << 40},
		{"popCkOffsetMaxQueueSize", c.PopCkOffsetMaxQueueSize, 0, 1 << 40},
		{"reviveQueueNum", int64(c.ReviveQueueNum), 1, 998},
		{"reviveInterval", c.ReviveInterval, 1, 1 << 40},
		{"reviveMaxSlow", c.ReviveMaxSlow, 0, 1 << 20},
		{"reviveScanTime", c.ReviveScanTime, 1, 1 << 40},
		{"reviveAckWaitMs", c.ReviveAckWaitMs, 0, 1 << 40},
		{"popFromRetryProbability", int64(c.PopFromRetryProbability), 0, 100},
		{"popFromRetryProbabilityForPriority", int64(c.PopFromRetryProbabilityForPriority), 0, 100},
	}
	for _, k := range checks {
		if k.v < k.min || k.v > k.max {
			return &ConfigError{Key: k.name, Msg: fmt.Sprintf("%d out of range", k.v), Want: fmt.Sprintf("%d..%d", k.min, k.max)}
		}
	}
	if !c.DefaultMessageRequestMode.valid() {
		return &ConfigError{Key: "defaultMessageRequestMode", Msg: fmt.Sprintf("%q", c.DefaultMessageRequestMode), Want: "PULL or POP"}
	}
	if err := c.validateRetryChoice(); err != nil {
		return err
	}
	return c.validateVersion()
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
// its length, which avoids upstream's out-of-bounds index (docs/rocketmq/bugs.md).
var ReviveIntervalsSeconds = [...]int64{10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// CkRewriteIntervalsSeconds is the FS re-put backoff
// (PopReviveService.ckRewriteIntervalsInSeconds), indexed by a CK's
// rePutTimes, capped at its last entry.
var CkRewriteIntervalsSeconds = [...]int64{10, 20, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// Checkpoint (FS) path constants, RocketMQ's.
const (
	AckTimeInterval       = 1000   // PopAckConstants.ackTimeInterval: a CK is delivered this long before its revive time
	ReviveGrace           = 2000   // ackTimeInterval + SECOND: a CK is revived once the round has seen this far past it
	BufferScanInterval    = 5      // PopBufferMergeService.interval: its scan runs every 5 ms
	BufferGarbageInterval = 30000  // scanGarbage every 30 s of scans
	CommitQueueIdle       = 300000 // scanGarbage drops a commit queue unused this long (5 min)
	RevivePullBatch       = 32     // revive-topic messages one revive pull reads
	ReviveEmptySleep      = 100    // a revive round sleeps this long after an empty pull
	ReviveEmptyGiveUp     = 4000   // and gives up after this much sleeping on empty pulls
	ReviveEndTimeMove     = 3000   // after this long without news (and no timer backlog) endTime jumps to now
)

// DelayLevelsMs are the schedule service's delay levels
// (messageDelayLevel), used by Bugs.DelayLevelTimer.
var DelayLevelsMs = [...]int64{1000, 5000, 10000, 30000, 60000, 120000, 180000, 240000, 300000, 360000, 420000, 480000, 540000, 600000, 1200000, 1800000, 3600000, 7200000}

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

// maxGroupLength is the longest group name TopicValidator accepts.
func (c *Config) maxGroupLength() int { return model.MaxGroupLength }
