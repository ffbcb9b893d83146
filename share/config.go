package share

import (
	"fmt"
	"strings"
)

// OffsetReset is share.auto.offset.reset: where a share-partition that has
// no persisted start offset starts, decided when its leader first loads it.
type OffsetReset uint8

// The reset strategies. by_duration:<ISO8601> is not modelled.
const (
	ResetLatest   OffsetReset = iota // "latest" (default): the log end offset at load
	ResetEarliest                    // "earliest": the log start offset at load
)

func (r OffsetReset) String() string {
	if r == ResetEarliest {
		return "earliest"
	}
	return "latest"
}

// Config is the broker configuration, with Kafka's names (the key is in each
// comment) and defaults (DefaultConfig). Times are milliseconds, as in
// Kafka. The group-level keys (share.*, errors.deadletterqueue.*) live in
// Group: the configuration of every group without its own
// (Broker.SetGroupConfig).
type Config struct {
	// RecordLockDurationMs is group.share.record.lock.duration.ms (30000): the
	// acquisition lock. It must lie within the broker bounds below.
	RecordLockDurationMs int32
	// MinRecordLockDurationMs / MaxRecordLockDurationMs are
	// group.share.min.record.lock.duration.ms (15000) and
	// group.share.max.record.lock.duration.ms (60000), the bounds of the
	// broker and group lock durations.
	MinRecordLockDurationMs, MaxRecordLockDurationMs int32
	// DeliveryCountLimit is group.share.delivery.count.limit (5, 2..10).
	DeliveryCountLimit int32
	// PartitionMaxRecordLocks is group.share.partition.max.record.locks (2000
	// since 4.1, 100..10000): the in-flight window SPEO-SPSO+1 per
	// share-partition.
	PartitionMaxRecordLocks int32
	// HeartbeatIntervalMs is group.share.heartbeat.interval.ms (5000, 5000..15000).
	HeartbeatIntervalMs int32
	// SessionTimeoutMs is group.share.session.timeout.ms (45000, 45000..60000).
	SessionTimeoutMs int32
	// MaxSize is group.share.max.size (200, 1..1000): members per share group.
	MaxSize int32
	// MaxShareSessions is group.share.max.share.sessions (2000, >= 1): share
	// sessions per broker.
	MaxShareSessions int32

	// Group holds the group-level configs every group starts with.
	Group GroupConfig

	// Bugs re-enables upstream defects. All off by default.
	Bugs Bugs
}

// GroupConfig is the dynamic group configuration of one share group
// (GroupConfig.java). The five numeric keys inherit the broker's
// group.share.* value when 0, as an unset Kafka group config does; the
// others have no broker counterpart, so start from Config.Group (or
// Broker.GroupConfig) rather than from a zero GroupConfig.
type GroupConfig struct {
	// RecordLockDurationMs is share.record.lock.duration.ms (0: inherit).
	RecordLockDurationMs int32
	// DeliveryCountLimit is share.delivery.count.limit (KIP-1240, 4.3; 0:
	// inherit).
	DeliveryCountLimit int32
	// PartitionMaxRecordLocks is share.partition.max.record.locks
	// (KIP-1240; 0: inherit).
	PartitionMaxRecordLocks int32
	// HeartbeatIntervalMs is share.heartbeat.interval.ms (0: inherit).
	HeartbeatIntervalMs int32
	// SessionTimeoutMs is share.session.timeout.ms (0: inherit).
	SessionTimeoutMs int32
	// AutoOffsetReset is share.auto.offset.reset (latest).
	AutoOffsetReset OffsetReset
	// RenewAcknowledgeEnable is share.renew.acknowledge.enable. Kafka's
	// GroupConfig defaults it to true (see docs/share.md for the reading);
	// when false a RENEW acknowledgement fails with INVALID_RECORD_STATE.
	RenewAcknowledgeEnable bool
	// DeadLetterTopic is errors.deadletterqueue.topic.name (KIP-1191, 4.4;
	// "" = none): rejected records and records archived at the delivery
	// limit are copied there. The topic must exist when a copy is written.
	DeadLetterTopic string
	// DeadLetterCopyRecord is errors.deadletterqueue.copy.record.enable
	// (false): copy the record's body into the DLQ record, not only its
	// context headers.
	DeadLetterCopyRecord bool
}

// Bugs are switches that bring back known upstream Kafka defects so that the
// harness can show what they did. Each is off by default.
type Bugs struct {
	// DecrementDeliveryCountOnSessionRelease (KAFKA-17541 part 1, Kafka
	// 4.1; reverted by KAFKA-19972): releasing a closed share session's
	// records decrements their delivery count instead of keeping it, so a
	// consumer that crashes on a poison record gets it forever.
	DecrementDeliveryCountOnSessionRelease bool
}

// DefaultConfig returns Kafka's defaults (docs/share.md, "Configuration").
func DefaultConfig() Config {
	return Config{
		RecordLockDurationMs:    30000,
		MinRecordLockDurationMs: 15000,
		MaxRecordLockDurationMs: 60000,
		DeliveryCountLimit:      5,
		PartitionMaxRecordLocks: 2000,
		HeartbeatIntervalMs:     5000,
		SessionTimeoutMs:        45000,
		MaxSize:                 200,
		MaxShareSessions:        2000,
		Group: GroupConfig{
			AutoOffsetReset:        ResetLatest,
			RenewAcknowledgeEnable: true,
		},
	}
}

type bound struct {
	name     string
	v        int64
	min, max int64
}

func checkBounds(prefix string, bs []bound) error {
	for _, b := range bs {
		if b.v < b.min || b.v > b.max {
			return fmt.Errorf("share: %s%s = %d out of range: want %d..%d", prefix, b.name, b.v, b.min, b.max)
		}
	}
	return nil
}

// Validate reports the first field outside its allowed range, by its Kafka
// key.
func (c *Config) Validate() error {
	err := checkBounds("config ", []bound{
		{"group.share.min.record.lock.duration.ms", int64(c.MinRecordLockDurationMs), 1000, 3600000},
		{"group.share.max.record.lock.duration.ms", int64(c.MaxRecordLockDurationMs), int64(c.MinRecordLockDurationMs), 3600000},
		{"group.share.record.lock.duration.ms", int64(c.RecordLockDurationMs), int64(c.MinRecordLockDurationMs), int64(c.MaxRecordLockDurationMs)},
		{"group.share.delivery.count.limit", int64(c.DeliveryCountLimit), 2, 10},
		{"group.share.partition.max.record.locks", int64(c.PartitionMaxRecordLocks), 100, 10000},
		{"group.share.heartbeat.interval.ms", int64(c.HeartbeatIntervalMs), 5000, 15000},
		{"group.share.session.timeout.ms", int64(c.SessionTimeoutMs), 45000, 60000},
		{"group.share.max.size", int64(c.MaxSize), 1, 1000},
		{"group.share.max.share.sessions", int64(c.MaxShareSessions), 1, 1 << 30},
	})
	if err != nil {
		return err
	}
	return c.ValidateGroup(c.Group)
}

// resolve fills the inherited (zero) numeric keys from the broker.
func (c *Config) resolve(g GroupConfig) GroupConfig {
	for _, f := range []struct {
		dst *int32
		src int32
	}{
		{&g.RecordLockDurationMs, c.RecordLockDurationMs},
		{&g.DeliveryCountLimit, c.DeliveryCountLimit},
		{&g.PartitionMaxRecordLocks, c.PartitionMaxRecordLocks},
		{&g.HeartbeatIntervalMs, c.HeartbeatIntervalMs},
		{&g.SessionTimeoutMs, c.SessionTimeoutMs},
	} {
		if *f.dst == 0 {
			*f.dst = f.src
		}
	}
	return g
}

// ValidateGroup checks a group configuration (inherited keys resolved)
// against this broker's bounds, as GroupConfig.validate does.
func (c *Config) ValidateGroup(g GroupConfig) error {
	g = c.resolve(g)
	err := checkBounds("group config ", []bound{
		{"share.record.lock.duration.ms", int64(g.RecordLockDurationMs), int64(c.MinRecordLockDurationMs), int64(c.MaxRecordLockDurationMs)},
		{"share.delivery.count.limit", int64(g.DeliveryCountLimit), 2, 10},
		{"share.partition.max.record.locks", int64(g.PartitionMaxRecordLocks), 100, 10000},
		{"share.heartbeat.interval.ms", int64(g.HeartbeatIntervalMs), 5000, 15000},
		{"share.session.timeout.ms", int64(g.SessionTimeoutMs), 45000, 60000},
	})
	if err != nil {
		return err
	}
	if g.HeartbeatIntervalMs >= g.SessionTimeoutMs {
		return fmt.Errorf("share: group config share.heartbeat.interval.ms = %d must be below share.session.timeout.ms = %d", g.HeartbeatIntervalMs, g.SessionTimeoutMs)
	}
	if g.AutoOffsetReset > ResetEarliest {
		return fmt.Errorf("share: group config share.auto.offset.reset = %d: want latest or earliest", g.AutoOffsetReset)
	}
	if g.DeadLetterTopic != "" && strings.ContainsAny(g.DeadLetterTopic, " \t\n") {
		return fmt.Errorf("share: group config errors.deadletterqueue.topic.name = %q: a topic name has no spaces", g.DeadLetterTopic)
	}
	return nil
}
