package ref

import (
	"bytes"
	"fmt"
	"maps"
	"sort"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// qk names one queue of one (group, topic) pair.
type qk struct {
	group, topic string
	qid          int32
}

// pk names a (group, topic) pair: the group@topic lock and request counter.
type pk struct{ group, topic string }

type queue struct {
	min  int64
	msgs []*model.Message // msgs[i] has offset min+i
}

func (q *queue) max() int64 { return q.min + int64(len(q.msgs)) }

func (q *queue) at(o int64) *model.Message {
	if o < q.min || o >= q.max() {
		return nil
	}
	return q.msgs[o-q.min]
}

type topic struct {
	cfg    pop.TopicConfig
	queues []*queue
}

// Broker is the reference broker. Not safe for concurrent use.
type Broker struct {
	cfg    pop.Config
	order  []string // topic names in creation order
	topics map[string]*topic
	groups map[string]pop.GroupConfig

	commit, pull, reset map[qk]int64
	flushed             map[qk]int64 // the commit offsets as last persisted
	nextFlush           int64
	store               []pop.LeasedRecord // in-flight records, any order
	lastLease           model.LeaseID      // the last lease granted (durable)

	// faults and the write ordinal (durable), as pop.Broker's.
	faults    pop.Faults
	writes    uint64
	failed    []pop.WriteFailure // the current call's failed writes (revive, cleanup)
	pullWakes []pop.PullWakeup   // and the held pulls its writes woke

	// volatile: lost on Restart.
	pending      map[qk]int64 // fixed #10949: the commit a stage left to make
	requests     map[pk]int64
	locks        map[pk]int64
	reviveCursor int64
	cache        []pop.LeasedRecord
	cacheOrder   []qk
	polls        []parked
	holds        []heldPull // held pulls, in arrival order
	holdKeys     []holdKey  // topic@queueId keys in the order first used
	nextHoldID   uint64
	nextPollID   uint64
	topicGroups  map[string][]string

	stats pop.Stats

	// ck is the checkpoint (FS) path's state (ck.go).
	ck ckState
	// ord is the orderly (FIFO) state of both paths (order.go).
	ord ordState
}

// New builds an empty reference broker. It accepts what pop.New accepts.
func New(cfg pop.Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, topics: map[string]*topic{}, groups: map[string]pop.GroupConfig{},
		commit: map[qk]int64{}, pull: map[qk]int64{}, reset: map[qk]int64{}}
	b.forgetVolatile()
	return b, nil
}

// forgetVolatile drops everything a restart loses (fsRestart the FS
// path's).
func (b *Broker) forgetVolatile() {
	b.pending = map[qk]int64{}
	b.requests = map[pk]int64{}
	b.locks = map[pk]int64{}
	b.reviveCursor = 3000
	b.cache, b.cacheOrder = nil, nil
	b.polls, b.nextPollID = nil, 0
	b.holds, b.holdKeys = nil, nil // hold ids go on: never reused
	b.topicGroups = map[string][]string{}
	b.pull = map[qk]int64{}
}

// Config returns the configuration.
func (b *Broker) Config() pop.Config { return b.cfg }

// CreateTopic adds a topic or updates its queue counts and permission;
// queues are never removed.
func (b *Broker) CreateTopic(c pop.TopicConfig) error {
	if err := model.ValidateTopic(c.Name); err != nil {
		return err
	}
	if c.ReadQueueNums < 1 || c.ReadQueueNums > 65535 || c.WriteQueueNums < 1 || c.WriteQueueNums > 65535 {
		return fmt.Errorf("ref: topic %s: readQueueNums %d / writeQueueNums %d: want 1..65535", c.Name, c.ReadQueueNums, c.WriteQueueNums)
	}
	switch c.MessageType {
	case "", "UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED", "PRIORITY":
	default:
		return fmt.Errorf("ref: topic %s: message.type %q unknown", c.Name, c.MessageType)
	}
	b.createTopic(c)
	return nil
}

// createTopic is the broker creating a topic of its own (retry, revive):
// no name check; the store refuses writes to a name too long for it.
func (b *Broker) createTopic(c pop.TopicConfig) {
	if c.Perm == 0 {
		c.Perm = pop.PermRead | pop.PermWrite
	}
	t := b.topics[c.Name]
	if t == nil {
		t = &topic{}
		b.topics[c.Name] = t
		b.order = append(b.order, c.Name)
	}
	t.cfg = c
	for len(t.queues) < int(max(c.ReadQueueNums, c.WriteQueueNums)) {
		t.queues = append(t.queues, &queue{})
	}
}

// CreateGroup adds or replaces a subscription group.
func (b *Broker) CreateGroup(g pop.GroupConfig) error {
	if err := model.ValidateGroup(g.Name, model.MaxGroupLength); err != nil {
		return err
	}
	if g.RetryMaxTimes < 0 {
		return fmt.Errorf("ref: group %s: retryMaxTimes %d: want >= 0", g.Name, g.RetryMaxTimes)
	}
	if g.PriorityFactor < 0 || g.PriorityFactor > 100 {
		return fmt.Errorf("ref: group %s: priority.factor %d: want 0..100", g.Name, g.PriorityFactor)
	}
	b.groups[g.Name] = g
	return nil
}

func (b *Broker) queue(name string, qid int32) *queue {
	t := b.topics[name]
	if t == nil || qid < 0 || int(qid) >= len(t.queues) {
		return nil
	}
	return t.queues[qid]
}

// MinOffset is the queue's first offset, -1 when the queue does not exist.
func (b *Broker) MinOffset(name string, qid int32) int64 {
	if q := b.queue(name, qid); q != nil {
		return q.min
	}
	return -1
}

// MaxOffset is the next offset to be written, -1 when absent.
func (b *Broker) MaxOffset(name string, qid int32) int64 {
	if q := b.queue(name, qid); q != nil {
		return q.max()
	}
	return -1
}

// Message returns a deep copy of the stored message, false when absent.
func (b *Broker) Message(name string, qid int32, offset int64) (model.Message, bool) {
	if q := b.queue(name, qid); q != nil {
		if m := q.at(offset); m != nil {
			return deepCopy(m), true
		}
	}
	return model.Message{}, false
}

// deepCopy copies m with its Body and Properties.
func deepCopy(m *model.Message) model.Message {
	c := *m.Clone()
	if len(m.Body) > 0 {
		c.Body = append([]byte(nil), m.Body...)
	}
	return c
}

// inFlight returns the stored records in store-key order.
func (b *Broker) inFlight() []pop.LeasedRecord {
	out := append([]pop.LeasedRecord(nil), b.store...)
	sortByKey(out)
	return out
}

// InFlightCount is the number of stored plus cached records.
func (b *Broker) InFlightCount() int {
	return len(b.store) + len(b.cache) + b.liveLeases() + b.liveOrder()
}

// cached returns the cached records by queue (in the order the queues were
// first filled) then offset.
func (b *Broker) cached() []pop.LeasedRecord {
	var out []pop.LeasedRecord
	for _, k := range b.cacheOrder {
		out = append(out, b.cachedOf(k)...)
	}
	return out
}

func sortByKey(rs []pop.LeasedRecord) {
	sort.SliceStable(rs, func(i, j int) bool { return bytes.Compare(rs[i].Record.Key(), rs[j].Record.Key()) < 0 })
}

func sameKey(a, b *model.PopConsumerRecord) bool { return bytes.Equal(a.Key(), b.Key()) }

// grant gives r the next lease id: 1, 2, 3 … for the life of the broker.
func (b *Broker) grant(r model.PopConsumerRecord) pop.LeasedRecord {
	b.lastLease++
	return pop.LeasedRecord{Lease: b.lastLease, Record: r}
}

// storePut writes a record; an equal key is overwritten, as RocksDB does,
// and the overwritten record's lease is returned (0 when none).
func (b *Broker) storePut(r pop.LeasedRecord) model.LeaseID {
	b.stats.RecordPuts++
	for i := range b.store {
		if sameKey(&b.store[i].Record, &r.Record) {
			old := b.store[i].Lease
			b.store[i] = r
			return old
		}
	}
	b.store = append(b.store, r)
	return 0
}

// storeDelete removes the record with r's key and returns its lease, 0
// when there was none.
func (b *Broker) storeDelete(r model.PopConsumerRecord) model.LeaseID {
	for i := range b.store {
		if sameKey(&b.store[i].Record, &r) {
			l := b.store[i].Lease
			b.store = append(b.store[:i], b.store[i+1:]...)
			return l
		}
	}
	return 0
}

// Put stores a message at the tail of msg.QueueID and wakes pollers.
func (b *Broker) Put(now clock.Time, msg *model.Message) pop.PutResult {
	b.touch(now.Millis())
	t := b.topics[msg.Topic]
	if t == nil {
		return pop.PutResult{Code: model.TopicNotExist, Offset: -1}
	}
	if t.cfg.Perm&pop.PermWrite == 0 {
		return pop.PutResult{Code: model.NoPermission, Offset: -1}
	}
	if msg.QueueID < 0 || msg.QueueID >= t.cfg.WriteQueueNums {
		return pop.PutResult{Code: model.MessageIllegal, Offset: -1}
	}
	if err := msg.Validate(); err != nil {
		return pop.PutResult{Code: model.MessageIllegal, Offset: -1}
	}
	m := deepCopy(msg) // the caller's message is neither kept nor modified
	if f, ok := b.write(now, &m); !ok {
		return pop.PutResult{Code: model.SystemError, Offset: -1, Failures: []pop.WriteFailure{f}}
	}
	b.stats.Produced++
	pulls := b.pullArrived(now, &m)
	return pop.PutResult{Code: model.Success, Offset: m.QueueOffset, Woken: b.arrived(&m, ""), PullWoken: pulls}
}

// write appends msg (which the broker then owns) to its queue unless the
// faults fail it; a failed write is returned.
func (b *Broker) write(now clock.Time, msg *model.Message) (pop.WriteFailure, bool) {
	if refusedTopic(msg.Topic) {
		return pop.WriteFailure{Refused: true, Topic: msg.Topic, QueueID: msg.QueueID, Msg: msg.ID, UniqKey: msg.UniqKey}, false
	}
	b.writes++
	if b.fails(msg) {
		b.stats.PutFailures++
		return pop.WriteFailure{Ordinal: b.writes, Topic: msg.Topic, QueueID: msg.QueueID, Msg: msg.ID, UniqKey: msg.UniqKey}, false
	}
	q := b.topics[msg.Topic].queues[msg.QueueID]
	msg.QueueOffset = q.max()
	msg.StoreTimestamp = now.Millis()
	q.msgs = append(q.msgs, msg)
	return pop.WriteFailure{}, true
}

// refusedTopic: the store takes a topic of at most 127 bytes, or 255 for a
// %RETRY% topic.
func refusedTopic(t string) bool {
	return len(t) > 255 || len(t) > 127 && !strings.HasPrefix(t, "%RETRY%")
}

// fails applies the faults to the write numbered b.writes: the first
// counted rule for its topic and queue with writes left, else the
// probability for its topic against pop.FaultDraw.
func (b *Broker) fails(msg *model.Message) bool {
	for i := range b.faults.Writes {
		w := &b.faults.Writes[i]
		if w.Count == 0 || w.Topic != msg.Topic || w.QueueID >= 0 && w.QueueID != msg.QueueID {
			continue
		}
		if w.Count > 0 {
			w.Count--
		}
		return true
	}
	ppm := b.faults.WritePPM
	if model.IsRetryTopic(msg.Topic) && b.faults.RetryWritePPM > ppm {
		ppm = b.faults.RetryWritePPM
	}
	return pop.FaultDraw(b.faults.Seed, b.writes) < ppm
}

// SetFaults replaces the fault set, as pop.Broker.SetFaults.
func (b *Broker) SetFaults(f pop.Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Writes = append([]pop.WriteFault(nil), f.Writes...)
	b.faults = f
	return nil
}

// Truncate drops a queue's messages below offset (retention).
func (b *Broker) Truncate(name string, qid int32, offset int64) (int, error) {
	q := b.queue(name, qid)
	if q == nil {
		return 0, fmt.Errorf("ref: truncate %s/%d: no such queue", name, qid)
	}
	n := 0
	for q.min < offset && len(q.msgs) > 0 {
		q.msgs = q.msgs[1:]
		q.min++
		n++
	}
	return n, nil
}

// ResetOffset is the admin reset: a pending reset, the commit offset, and
// (KV) the queue's cache and pull offset cleared.
func (b *Broker) ResetOffset(group, name string, qid int32, offset int64) (pop.ResetOffsetResult, error) {
	if b.queue(name, qid) == nil {
		return pop.ResetOffsetResult{}, fmt.Errorf("ref: reset offset %s/%d: no such queue", name, qid)
	}
	if _, ok := b.groups[group]; !ok {
		return pop.ResetOffsetResult{}, fmt.Errorf("ref: reset offset: group %s does not exist", group)
	}
	if offset < 0 {
		return pop.ResetOffsetResult{}, fmt.Errorf("ref: reset offset %d: want >= 0", offset)
	}
	k := qk{group, name, qid}
	delete(b.ck.inflight, k)
	b.reset[k] = offset
	b.commit[k] = offset
	delete(b.pending, k)
	var res pop.ResetOffsetResult
	if !b.cfg.UsesKV() {
		return res, nil
	}
	for q := range b.pull { // every queue of the topic for the group
		if q.group == group && q.topic == name {
			delete(b.pull, q)
		}
	}
	for _, r := range b.cachedOf(k) {
		b.cacheRemove(k, r.Record.Offset)
		res.Discarded = append(res.Discarded, r.Lease)
	}
	b.dropCacheOrder(k)
	return res, nil
}

// FlushConsumerOffsets persists every commit offset now.
func (b *Broker) FlushConsumerOffsets(now clock.Time) {
	b.touch(now.Millis())
	b.flushed = maps.Clone(b.commit)
}

// Restart (a crash) loses the volatile state and the commits made since
// the last flush; messages, the flushed commit offsets, pending
// resets, topics, groups and stored records survive.
func (b *Broker) Restart(now clock.Time) pop.RestartResult {
	b.touch(now.Millis())
	r := pop.RestartResult{DroppedPolls: b.dropAllPolls(), DroppedPulls: b.dropAllHolds(), CachedLost: len(b.cache)}
	r.Lapsed = b.settleOrder(now.Millis(), nil)
	for _, x := range b.cached() {
		r.LostLeases = append(r.LostLeases, x.Lease)
	}
	b.commit = maps.Clone(b.flushed) // a crash: commits since the last flush are lost
	if b.commit == nil {
		b.commit = map[qk]int64{}
	}
	b.fsRestart(now.Millis(), &r)
	b.restartOrder(now.Millis(), &r)
	b.forgetVolatile()
	b.stats.Restarts++
	return r
}
