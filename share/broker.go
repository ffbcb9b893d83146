package share

import (
	"fmt"
	"sort"

	"popsim/clock"
	"popsim/model"
)

// spKey names a share-partition: a (group, topic-partition) pair.
type spKey struct {
	group string
	TopicPartition
}

func (k spKey) less(o spKey) bool {
	if k.group != o.group {
		return k.group < o.group
	}
	return tpLess(k.TopicPartition, o.TopicPartition)
}

// Broker is one Kafka broker running share groups: the partition logs, the
// share-partition leaders (SharePartitionManager/SharePartition), the group
// coordinator for share groups and the share coordinator that persists
// share-group state. It is a single-threaded, clockless state machine:
// every method takes now from its caller, runs to completion and returns
// what happened. Lock timeouts and member session timeouts happen only in
// Tick, which the driver calls at NextDeadline. It is not safe for
// concurrent use.
type Broker struct {
	cfg       Config
	groupCfgs map[string]GroupConfig

	topics map[string]*topic

	groups map[string]*group

	// sps are the share-partitions loaded in memory (lost at restart);
	// persisted is the share coordinator's state (survives restart).
	sps       map[spKey]*sharePartition
	spByID    []*sharePartition // index = id; nil once unloaded
	persisted map[spKey]*persistedState

	sessions map[sessionKey]*session

	timers timerIndex

	nextLease model.LeaseID
	faults    []PersisterFault
	stats     Stats
	// spOrder caches the loaded share-partitions in key order; nil when stale.
	spOrder []*sharePartition
}

type topic struct {
	name  string
	parts []*partitionLog
}

// Stats are cumulative counters since the broker was created.
type Stats struct {
	Produced, Fetches, Acknowledges, Heartbeats            int64
	Acquired, Accepted, Released, Rejected, Archived       int64
	LockTimeouts, SessionReleases, Renewals, LostLeases    int64
	PersistWrites, PersistFailures, DLQCopies, DLQFailures int64
	MembersExpired, Restarts                               int64
	// LockLimited counts fetches of a share-partition that had records
	// to deliver but whose in-flight window was full
	// (group.share.partition.max.record.locks).
	LockLimited int64
}

// New builds an empty broker; the configuration is validated first.
func New(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Broker{
		cfg:       cfg,
		groupCfgs: map[string]GroupConfig{},
		topics:    map[string]*topic{},
		groups:    map[string]*group{},
		sps:       map[spKey]*sharePartition{},
		persisted: map[spKey]*persistedState{},
		sessions:  map[sessionKey]*session{},
		nextLease: 1,
	}
	b.timers.init()
	return b, nil
}

// Config returns the configuration.
func (b *Broker) Config() Config { return b.cfg }

// Stats returns the cumulative counters.
func (b *Broker) Stats() Stats { return b.stats }

// NextLease is the id the next acquisition will get.
func (b *Broker) NextLease() model.LeaseID { return b.nextLease }

// CreateTopic adds a topic with n partitions. Topics are never deleted and
// their partition count never changes.
func (b *Broker) CreateTopic(name string, partitions int32) error {
	if err := validTopicName(name); err != nil {
		return err
	}
	if partitions < 1 || partitions > 10000 {
		return fmt.Errorf("share: topic %s: %d partitions: want 1..10000", name, partitions)
	}
	if _, ok := b.topics[name]; ok {
		return fmt.Errorf("share: topic %s already exists", name)
	}
	t := &topic{name: name, parts: make([]*partitionLog, partitions)}
	for i := range t.parts {
		t.parts[i] = &partitionLog{}
	}
	b.topics[name] = t
	return nil
}

// Topics returns the topic names, sorted.
func (b *Broker) Topics() []string {
	out := make([]string, 0, len(b.topics))
	for n := range b.topics { // collected, then sorted
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Partitions returns a topic's partition count, -1 when it does not exist.
func (b *Broker) Partitions(name string) int32 {
	if t := b.topics[name]; t != nil {
		return int32(len(t.parts))
	}
	return -1
}

func (b *Broker) log(tp TopicPartition) *partitionLog {
	t := b.topics[tp.Topic]
	if t == nil || tp.Partition < 0 || int(tp.Partition) >= len(t.parts) {
		return nil
	}
	return t.parts[tp.Partition]
}

// LogStartOffset and LogEndOffset return a partition's bounds, -1 when it
// does not exist.
func (b *Broker) LogStartOffset(tp TopicPartition) int64 {
	if l := b.log(tp); l != nil {
		return l.start
	}
	return -1
}

// LogEndOffset returns the offset the next produced record gets, -1 when
// the partition does not exist.
func (b *Broker) LogEndOffset(tp TopicPartition) int64 {
	if l := b.log(tp); l != nil {
		return l.end()
	}
	return -1
}

// Record returns the stored record at an offset, nil when absent or below
// the log start offset. The result is shared: callers must not modify it.
func (b *Broker) Record(tp TopicPartition, offset int64) *model.Message {
	if l := b.log(tp); l != nil && offset >= l.start {
		return l.at(offset)
	}
	return nil
}

// Produce appends one record batch. The broker keeps the records and sets
// their Topic, QueueID, QueueOffset and StoreTimestamp.
func (b *Broker) Produce(now clock.Time, req ProduceRequest) ProduceResult {
	l := b.log(req.TopicPartition)
	if l == nil {
		return ProduceResult{Err: UnknownTopicOrPartition, BaseOffset: -1, LastOffset: -1}
	}
	if len(req.Records) == 0 {
		return ProduceResult{Err: InvalidRequest, BaseOffset: -1, LastOffset: -1}
	}
	for _, m := range req.Records {
		if m == nil {
			return ProduceResult{Err: InvalidRequest, BaseOffset: -1, LastOffset: -1}
		}
	}
	base := appendBatch(now, l, req.TopicPartition, req.Records)
	b.stats.Produced += int64(len(req.Records))
	return ProduceResult{BaseOffset: base, LastOffset: base + int64(len(req.Records)) - 1}
}

// appendBatch stores a batch, stamping each record with its location.
func appendBatch(now clock.Time, l *partitionLog, tp TopicPartition, msgs []*model.Message) int64 {
	base := l.end()
	for i, m := range msgs {
		m.Topic, m.QueueID, m.QueueOffset, m.StoreTimestamp = tp.Topic, tp.Partition, base+int64(i), now.Millis()
	}
	l.append(msgs)
	return base
}

// DeleteRecords moves a partition's log start offset up to offset (admin
// DeleteRecords or retention), at most to the log end. Share-partitions
// notice it lazily: their next fetch from below it archives the AVAILABLE
// records there and moves the SPSO (SharePartition.updateCacheAndOffsets).
func (b *Broker) DeleteRecords(tp TopicPartition, offset int64) error {
	l := b.log(tp)
	if l == nil {
		return fmt.Errorf("share: delete records %s: no such partition", tp)
	}
	if offset < 0 || offset > l.end() {
		return fmt.Errorf("share: delete records %s below %d: want 0..%d (the log end)", tp, offset, l.end())
	}
	l.truncate(offset)
	return nil
}

// SetGroupConfig sets a group's dynamic configuration. Like the delivery
// limit and in-flight limit of a SharePartition, which Kafka reads when the
// share-partition is created, it can only be set before the group exists
// (before its first member joins).
func (b *Broker) SetGroupConfig(groupID string, gc GroupConfig) error {
	if groupID == "" {
		return fmt.Errorf("share: group id is empty")
	}
	if err := b.cfg.ValidateGroup(gc); err != nil {
		return err
	}
	if b.groups[groupID] != nil {
		return fmt.Errorf("share: group %s exists: set its configuration before the first member joins", groupID)
	}
	b.groupCfgs[groupID] = gc
	return nil
}

// GroupConfig returns the configuration a group runs with, inherited keys
// resolved.
func (b *Broker) GroupConfig(groupID string) GroupConfig {
	gc, ok := b.groupCfgs[groupID]
	if !ok {
		gc = b.cfg.Group
	}
	return b.cfg.resolve(gc)
}

// SetPersisterFault installs, replaces (same group, topic and partition) or
// clears (Count 0) a share-state write fault. Err None means
// UNKNOWN_SERVER_ERROR.
func (b *Broker) SetPersisterFault(f PersisterFault) {
	if f.Err == None {
		f.Err = UnknownServerError
	}
	out := b.faults[:0:0]
	for _, x := range b.faults {
		if x.Group != f.Group || x.Topic != f.Topic || x.Partition != f.Partition {
			out = append(out, x)
		}
	}
	if f.Count != 0 {
		out = append(out, f)
	}
	b.faults = out
}

// writeFails consumes one matching fault for a write to k and returns its
// error code, or None.
func (b *Broker) writeFails(k spKey) ErrorCode {
	for i := range b.faults {
		f := &b.faults[i]
		if f.Count == 0 || f.Group != k.group || (f.Topic != "" && f.Topic != k.Topic) || (f.Partition >= 0 && f.Partition != k.Partition) {
			continue
		}
		if f.Count > 0 {
			f.Count--
		}
		return f.Err
	}
	return None
}

// sortedSPs returns the loaded share-partitions in key order.
func (b *Broker) sortedSPs() []*sharePartition {
	if b.spOrder == nil {
		b.spOrder = make([]*sharePartition, 0, len(b.sps))
		for _, sp := range b.sps { // collected, then sorted
			b.spOrder = append(b.spOrder, sp)
		}
		sort.Slice(b.spOrder, func(i, j int) bool { return b.spOrder[i].key.less(b.spOrder[j].key) })
	}
	return b.spOrder
}

func (b *Broker) grantLeases(n int64) model.LeaseID {
	base := b.nextLease
	b.nextLease += model.LeaseID(n)
	return base
}

// validTopicName applies Kafka's topic name rules (Topic.validate): 1 to
// 249 characters from [a-zA-Z0-9._-], not "." or "..".
func validTopicName(name string) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("share: topic name %q: want 1 to 249 characters from [a-zA-Z0-9._-], not \".\" or \"..\"", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("share: topic name %q has %q at position %d: allowed characters are [a-zA-Z0-9._-]", name, c, i)
		}
	}
	return nil
}
