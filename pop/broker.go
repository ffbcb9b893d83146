package pop

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// GroupConfig is a subscription group (SubscriptionGroupConfig).
type GroupConfig struct {
	Name          string
	ConsumeEnable bool
	RetryMaxTimes int32 // 16 by default; the proxy's maxAttempts is this + 1
	// ConsumeMessageOrderly (false): the group consumes orderly; the proxy
	// then receives with fifo (GrpcClientSettingsManager).
	ConsumeMessageOrderly bool
	// PriorityFactor is the priority.factor attribute (0..100, 100 by
	// default): of every 100 pops on a PRIORITY topic, how many read in
	// priority mode (0 turns it off).
	PriorityFactor int64
}

// DefaultGroup returns a group with RocketMQ's defaults.
func DefaultGroup(name string) GroupConfig {
	return GroupConfig{Name: name, ConsumeEnable: true, RetryMaxTimes: 16, PriorityFactor: 100}
}

// Broker is the POP engine: one broker's message store, consumer offsets,
// in-flight records, cache, long polling and revive, as RocketMQ 5's
// record-based (KV) path. It is a single-threaded, clockless state machine:
// every method takes now from its caller, runs to completion and returns
// what happened. It is not safe for concurrent use.
type Broker struct {
	cfg Config
	// reviveTopic is the cluster's revive topic name (rmq_sys_REVIVE_LOG_
	// + clusterName), built once: the checkpoint path names it on every
	// CK, ack and revive read.
	reviveTopic string
	// reviveT is the revive topic once created (topics are never
	// removed): the revive services look at its queues at every call.
	reviveT *topic
	// reviveQs is reviveT's queues once it has reviveQueueNum of them, at
	// most 65535 (the queue ids a store accepts): reviveQueue's answer
	// without a look at the topic or the config.
	reviveQs []*queue
	// reviveNoCarry (tests): every revive round reads its queue again from
	// its start, as upstream's does, instead of resuming from the last
	// round's carried state (carryFrom), which must come to the same.
	reviveNoCarry bool
	topics        map[string]*topic
	groups        map[string]*GroupConfig
	// topicOrder and groupOrder keep creation order for deterministic walks.
	topicOrder []string
	names      *names
	offsets    offsets
	index      *index
	// lease holds the last lease id granted (durable: ids are never
	// reused). Brokers of one simulated cluster share it (ShareLeaseIDs).
	lease *leaseCounter
	// faults decides which store writes fail; writes numbers the write
	// attempts (durable, so decisions never repeat after a restart).
	// writeFaults reports that faults has a write rule or WritePPM, and
	// retryWriteFaults a RetryWritePPM (SetFaults): a write neither can
	// fail, writeFailsTo only counts.
	faults                        Faults
	writes                        uint64
	writeFaults, retryWriteFaults bool
	// reads numbers revive reads for Faults.ReviveReadPPM; draws the
	// random draws (RandomQ); lockDraws the tryLocks Faults.LockBusyPPM
	// decides. All durable.
	reads, draws, lockDraws uint64
	// modes is MessageRequestModeManager's table (assign.go): durable,
	// persisted at every set.
	modes map[modeKey]SetMessageRequestModeRequest
	// order is the orderly (FIFO) state: ConsumerOrderInfoManager's table,
	// its persisted copy and its lock manager's timers (order.go). A
	// restart brings the table back as last flushed.
	order orderTable

	// The checkpoint path's durable state: the timer wheel's messages and
	// the lease bookkeeping of every CK that may still revive. The revive
	// topic is a topic of the store (topics).
	timer timerStore
	ckl   ckLeases
	// keyMemo caches recent CKs' and acks' merge keys by their fields
	// (ck_keymemo.go); not state: nothing it holds decides anything.
	keyMemo keyMemo
	// started: the broker's clock began at startMs (its first call);
	// lastNow is the latest time any call brought.
	started          bool
	startMs, lastNow int64
	// nextFlush is when ConsumerOffsetManager next persists the commit
	// offsets (every FlushConsumerOffsetInterval from time 0).
	nextFlush int64
	// touchBy is when touch next has more to do than move lastNow: no
	// later than nextFlush, the OrderInfo table's next flush and the
	// timer's first delivery (touchDue sets it, a timer put that is its
	// queue's next lowers it, Restart clears it).
	touchBy int64
	// arrival is when the last successful revive-topic put reaches its
	// revive queue (its timer delivery, or the put itself).
	arrival int64

	volatile
	stats   Stats
	scratch popScratch
	// ckBodies and ackBodies are storage for the decoded revive bodies
	// the engine keeps (newCkBody, ackPrefill), ackMsgs for their acks.
	ckBodies  []ckBody
	ackBodies []ackBody
	ackMsgs   []model.AckMsg
	// slabs is where those, the wrappers and the keys apart take their
	// blocks (slabSource).
	slabs slabSources
	// reviveSpare is where newReviveServices takes its services' round
	// storage (a Spare's; nil: none).
	reviveSpare *[]reviveBufs
	arena       reviveArena
	// logPool is the queues' released log chunks, for reuse (chunkPool).
	logPool chunkPool
	// retryRefs caches, by pair id, the pair's V1 and V2 retry topics.
	retryRefs [][2]retryRef
	// lastTopic is the topic found most recently by topicNamed.
	lastTopicName string
	lastTopic     *topic
	// lastGroup is the group found most recently by groupNamed (nil after
	// CreateGroup, which may replace it).
	lastGroupName string
	lastGroup     *GroupConfig
	// popPairT, popPairG and popPairID remember popPair's last pair.
	popPairT  *topic
	popPairG  *GroupConfig
	popPairID uint32
}

// popPair is names.pair of a pop's group and topic, g and t (found by
// those names), remembering the last: a topic is found by one name for
// good (never removed or replaced) and a group by one name while the
// broker refers to it (a replaced group is a new GroupConfig), so the two
// pointers name the pair without comparing the request's two strings.
// t is not nil (popPairT starts nil). It inlines: nearly every pop is of
// the last pair (newPopPair).
func (b *Broker) popPair(t *topic, g *GroupConfig, req *PopRequest) uint32 {
	if t == b.popPairT && g == b.popPairG {
		if invariants {
			assertf(t != nil && b.popPairID == b.names.pair(req.ConsumerGroup, req.Topic), "pop: popPair %d of %s@%s, names %d", b.popPairID, req.ConsumerGroup, req.Topic, b.names.pair(req.ConsumerGroup, req.Topic))
		}
		return b.popPairID
	}
	return b.newPopPair(t, g, req)
}

// newPopPair is popPair of a pair other than the last, kept out of line,
// where popPair inlines it.
//
//go:noinline
func (b *Broker) newPopPair(t *topic, g *GroupConfig, req *PopRequest) uint32 {
	id := b.names.pair(req.ConsumerGroup, req.Topic)
	b.popPairT, b.popPairG, b.popPairID = t, g, id
	return id
}

// topicNamed is b.topics[name], remembering the last hit: acks, renewals,
// pops and puts name the same topic over and over, and comparing a string
// (usually the same pointer) is cheaper than hashing it. Topics are never
// removed or replaced, so the remembered one cannot go stale.
func (b *Broker) topicNamed(name string) *topic {
	if b.lastTopic != nil && sameString(b.lastTopicName, name) {
		return b.lastTopic
	}
	t := b.topics[name]
	if t != nil {
		b.lastTopicName, b.lastTopic = name, t
	}
	return t
}

// volatile is everything a broker restart loses, besides the pull offsets
// and pending commits kept in offsets (offsets.dropVolatile).
type volatile struct {
	requestCount []int64   // per group@topic pair id (KV pops served)
	locks        []popLock // PopConsumerLockService: group@topic (pair id) -> lockTime
	lastLockScan int64
	reviveCursor int64
	cache        *cache
	polls        *polling
	holds        *holds
	commitSeq    uint64
	// The checkpoint path's: PopBufferMergeService, the PopReviveServices,
	// PopInflightMessageCounter, the revive-queue round robin
	// (ckMessageNumber) and the time before which pops do not decrement the
	// in-flight counter (shouldStartTime).
	buf      *ckBuffer
	revivers []*reviveService
	inflight inflightCounts
	// svcNext and svcAt are nextService's answer, but for the services in
	// svcDirty (bit qid), whose next step was forgotten since
	// (forgetNext): the others' are as they were. svcDirty all ones
	// (svcAll): every service is asked (the answer is not known, or the
	// earliest service's step was forgotten; 64 services all forgotten
	// come to the same).
	svcNext         *reviveService
	svcAt           int64
	svcDirty        uint64
	ckMessageNumber int64
	shouldStartTime int64
}

// Stats returns the cumulative counters (a copy; State has them too).
func (b *Broker) Stats() Stats { return b.stats }

// Stats are cumulative counters since the broker was created.
type Stats struct {
	Produced, PutFailures                         int64
	Popped, PopRequests, Acked, AckMisses         int64
	Changed, Revived, ReviveSkipped, ReviveFailed int64
	MayBeLost, CacheFlushed, Restarts             int64
	Pulled, PullRequests                          int64

	// The checkpoint path's own outcomes: leases ended by revive pairing
	// an ack message with its CK, CKs re-put, CKs never written (acked in
	// the buffer), acks merged in the buffer, revive rounds aborted by a
	// revive message that does not decode.
	RevivePaired, CkRePuts, CksUnwritten, AcksMerged, ReviveRoundsAborted int64

	// LockBusy counts pops (KV) and queue stages (FS) that found their
	// lock held (Faults.LockBusyPPM).
	LockBusy int64

	// Broker work: what the store did, per kind, for the comparison of the
	// two paths (RocketMQ built the KV path for fewer writes and less CPU).
	//
	//   - ReadCalls, ReadMessages: store reads (getMessage) by pops, pulls
	//     and revives, and the messages they returned.
	//   - RetryPuts: retry copies written by revive (attempts).
	//   - RecordPuts, RecordDeletes, RecordReads (KV): in-flight records
	//     written to RocksDB (pops, renewals, cache flushes, revive
	//     backoff), deletes issued (acks, renewals, the revive's
	//     deleteRecords), records the revive scans read.
	//   - CkPuts, AckPuts, BatchAckPuts (FS): CK, ack and bAck messages
	//     written to the revive topic (attempts); TimerDeliveries: timer
	//     messages written a second time, into the revive topic, at their
	//     time; ReviveReads: revive-topic messages the revive rounds read
	//     (a message is read again by every round until the revive offset
	//     passes it, as upstream's rounds do; popsim's count it so, but a
	//     round resumes from the last one's state past its new offset).
	ReadCalls, ReadMessages, RetryPuts     int64
	RecordPuts, RecordDeletes, RecordReads int64
	CkPuts, AckPuts, BatchAckPuts          int64
	TimerDeliveries, ReviveReads           int64
}

// New builds an empty broker; the configuration is validated first.
func New(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, reviveTopic: model.ReviveTopic(cfg.ClusterName), topics: map[string]*topic{}, groups: map[string]*GroupConfig{}, names: newNames(), offsets: newOffsets(), ckl: newCkLeases(), lease: &leaseCounter{}}
	b.ckl.keys.src = &b.slabs.mk
	b.index = newIndex(b.names)
	b.order = newOrderTable(b.names)
	b.resetVolatile()
	return b, nil
}

func (b *Broker) resetVolatile() {
	var holdIDs uint64 // hold ids are never reused, so a driver's map of them stays valid
	if b.holds != nil {
		holdIDs = b.holds.nextID
	}
	if b.buf != nil {
		b.buf.forget()
	}
	b.volatile = volatile{
		reviveCursor: reviveLookBack,
		cache:        newCache(&b.offsets),
		polls:        newPolling(),
		holds:        newHolds(),
		buf:          newCkBuffer(&b.ckl.keys),
	}
	b.holds.nextID = holdIDs
}

// Config returns the configuration.
func (b *Broker) Config() Config { return b.cfg }

// CreateTopic adds a topic (or replaces its queue counts and permission),
// as an administrator does: the name must pass TopicValidator
// (model.ValidateTopic).
func (b *Broker) CreateTopic(c TopicConfig) error {
	if err := model.ValidateTopic(c.Name); err != nil {
		return err
	}
	if c.ReadQueueNums < 1 || c.ReadQueueNums > 65535 || c.WriteQueueNums < 1 || c.WriteQueueNums > 65535 {
		return fmt.Errorf("pop: topic %s: readQueueNums %d / writeQueueNums %d: want 1..65535", c.Name, c.ReadQueueNums, c.WriteQueueNums)
	}
	if !validTopicMessageType(c.MessageType) {
		return fmt.Errorf("pop: topic %s: message.type %q: want UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED or PRIORITY", c.Name, c.MessageType)
	}
	b.createTopic(c)
	return nil
}

// createTopic is the broker creating a topic of its own (a retry topic,
// the revive topic) without TopicValidator, as upstream does: a name the
// store cannot write to (too long) makes every write to it fail.
func (b *Broker) createTopic(c TopicConfig) {
	if c.Perm == 0 {
		c.Perm = PermRead | PermWrite
	}
	t, ok := b.topics[c.Name]
	if !ok {
		t = &topic{}
		b.topics[c.Name] = t
		b.topicOrder = append(b.topicOrder, c.Name)
		if c.Name == b.reviveTopic {
			b.reviveT = t
		}
	}
	t.cfg = c
	t.sendable = model.ValidateSendTopic(c.Name) == nil
	t.flag = model.RetryFlagOf(c.Name)
	n := max(c.ReadQueueNums, c.WriteQueueNums)
	for int32(len(t.queues)) < n {
		t.queues = append(t.queues, &queue{unbuilt: t == b.reviveT})
	}
	if t == b.reviveT && int32(len(t.queues)) >= b.cfg.ReviveQueueNum {
		b.reviveQs = t.queues[:min(len(t.queues), 65535)]
	}
}

// CreateGroup adds or replaces a subscription group.
func (b *Broker) CreateGroup(g GroupConfig) error {
	if err := model.ValidateGroup(g.Name, b.cfg.maxGroupLength()); err != nil {
		return err
	}
	if g.RetryMaxTimes < 0 {
		return fmt.Errorf("pop: group %s: retryMaxTimes %d: want >= 0", g.Name, g.RetryMaxTimes)
	}
	if g.PriorityFactor < 0 || g.PriorityFactor > 100 {
		return fmt.Errorf("pop: group %s: priority.factor %d: want 0..100", g.Name, g.PriorityFactor)
	}
	b.groups[g.Name] = &g
	b.lastGroup = nil
	return nil
}

// groupNamed is b.groups[name], remembering the last hit as topicNamed
// does: every pop names its group. CreateGroup forgets it, since it may
// replace the group.
func (b *Broker) groupNamed(name string) *GroupConfig {
	if b.lastGroup != nil && sameString(b.lastGroupName, name) {
		return b.lastGroup
	}
	g := b.groups[name]
	if g != nil {
		b.lastGroupName, b.lastGroup = name, g
	}
	return g
}

// Group is a subscription group's configuration, false when it does not
// exist (what the proxy's metadata service reads).
func (b *Broker) Group(name string) (GroupConfig, bool) {
	g := b.groupNamed(name)
	if g == nil {
		return GroupConfig{}, false
	}
	return *g, true
}

func (b *Broker) queue(topicName string, qid int32) *queue {
	t := b.topicNamed(topicName)
	if t == nil || qid < 0 || int(qid) >= len(t.queues) {
		return nil
	}
	return t.queues[qid]
}

// MinOffset and MaxOffset are RocketMQ's GET_MIN_OFFSET and GET_MAX_OFFSET
// requests: a queue's bounds, -1 when it does not exist. MinOffset is the
// first stored offset.
func (b *Broker) MinOffset(topicName string, qid int32) int64 {
	if q := b.queue(topicName, qid); q != nil {
		return q.min
	}
	return -1
}

// MaxOffset returns the offset the next message will get, -1 when absent.
func (b *Broker) MaxOffset(topicName string, qid int32) int64 {
	if q := b.queue(topicName, qid); q != nil {
		return q.maxOffset()
	}
	return -1
}

// Message returns a copy of the stored message (Body and Properties
// copied too), false when it is gone or never existed: an admin's view of
// one message (viewMessage), for inspection.
func (b *Broker) Message(topicName string, qid int32, offset int64) (model.Message, bool) {
	var m model.Message
	if q := b.queue(topicName, qid); q != nil {
		if p := q.at(offset); p != nil {
			copyMessage(&m, p)
			return m, true
		}
	}
	return m, false
}

// ConsumerOffsets returns one queue's consumer offsets for a group (-1
// where absent): the durable commit offset, the volatile pull offset (the
// KV path's next pop position) and a pending admin reset. It is kept beside
// State for drivers that check a group's position often (the simulator's
// drain check); State lists every queue's.
func (b *Broker) ConsumerOffsets(group, topicName string, qid int32) OffsetState {
	o := OffsetState{Group: group, Topic: topicName, QueueID: qid, Commit: -1, Pull: -1, Reset: -1}
	if s := b.slotOf(group, topicName, qid); s != nil {
		s.fill(&o)
	}
	return o
}

// slotOf is the offsets slot of (group, topic, qid), nil when the pair was
// never interned or the slot never created. It creates nothing.
func (b *Broker) slotOf(group, topicName string, qid int32) *slot {
	id, ok := b.names.lookup(group, topicName)
	if !ok {
		return nil
	}
	return b.offsets.peek(qkey{id, qid})
}

func (b *Broker) commitOffset(k qkey, v int64) { b.offsets.at(k).setCommit(v) }

// ResetOffsetResult reports what an admin reset did besides the offsets.
type ResetOffsetResult struct {
	// Discarded (KV) lists the leases of the queue's cached records, which
	// the reset removes without writing them to the store: they are
	// forgotten and never revive.
	Discarded []model.LeaseID
}

// ResetOffset is the admin reset (AdminBrokerProcessor.resetOffsetInner
// with server-side reset, docs/rocketmq/kv-path.md §5.5): it records a
// pending reset, overwrites the commit offset and clears the queue's
// in-flight counter; on the KV path it also discards the queue's cached
// records (clearCache) and drops the pull offsets of every queue of the
// topic for the group (clearPullOffset), not only the reset queue's.
func (b *Broker) ResetOffset(group, topicName string, qid int32, offset int64) (ResetOffsetResult, error) {
	q := b.queue(topicName, qid)
	if q == nil {
		return ResetOffsetResult{}, fmt.Errorf("pop: reset offset %s/%d: no such queue", topicName, qid)
	}
	if _, ok := b.groups[group]; !ok {
		return ResetOffsetResult{}, fmt.Errorf("pop: reset offset: group %s does not exist", group)
	}
	if offset < 0 {
		return ResetOffsetResult{}, fmt.Errorf("pop: reset offset %d: want >= 0", offset)
	}
	k := qkey{b.names.pair(group, topicName), qid}
	s := b.offsets.at(k)
	s.reset, s.commit, s.pending = offset, offset, 0
	s.has = s.has&^hasPending | hasReset | hasCommit
	b.inflight.drop(k) // the in-flight counter of the queue is cleared
	var res ResetOffsetResult
	if !b.cfg.UsesKV() {
		return res, nil
	}
	row := b.offsets.row(k.pair, 0)
	for i := range row {
		row[i].pull, row[i].has = 0, row[i].has&^hasPull
	}
	for _, r := range b.cache.take(k) {
		res.Discarded = append(res.Discarded, r.lease)
	}
	return res, nil
}

// FlushConsumerOffsets persists every commit offset now
// (ConsumerOffsetManager.persist, as a graceful shutdown does), besides
// the periodic flush every FlushConsumerOffsetInterval.
func (b *Broker) FlushConsumerOffsets(now clock.Time) {
	b.touch(now.Millis())
	b.offsets.flush()
}

// RestartResult lists what a restart dropped.
type RestartResult struct {
	// Lapsed are FIFO leases that lapsed by the restart: those due before
	// it, then those whose queue, as last flushed, no longer blocks.
	Lapsed []Lapse
	// ReopenedLeases (FS) are leases whose acks the buffer had merged
	// (reported ended) into a CK already written, but had not yet written
	// as ack messages: the acks are gone, the CK is durable, and the revive
	// service will revive them. They are live again.
	ReopenedLeases []model.LeaseID
	// DroppedPolls are suspended requests that will never be answered; their
	// clients see a timeout.
	DroppedPolls []Wakeup
	// DroppedPulls are held pulls that will never be answered.
	DroppedPulls []PullWakeup
	// LostLeases are the leases that vanished: KV, the cached in-flight
	// records, by queue (in the order the cache first held them) then
	// offset; FS, those of buffered CKs never written, in buffer order;
	// then FIFO leases whose OrderInfo change was not flushed yet, by
	// queue then offset.
	// Their messages are re-popped from the commit offset. CachedLost is
	// their number.
	LostLeases []model.LeaseID
	CachedLost int
}

// Restart simulates a broker restart: the cache, pull offsets, suspended
// polls, the lock table, request counters and the revive cursor are lost,
// and on the checkpoint path the buffer (unwritten CKs and merged acks),
// the commit queues, the revive rounds and the in-flight counters;
// messages, commit offsets (the revive group's included), topics (the
// revive topic included), groups, stored records, the timer's messages and
// the lease counter survive; the FIFO OrderInfo table comes back as last
// flushed (every OrderInfoFlushInterval). Restart is a crash: each commit
// offset is the one last persisted (every FlushConsumerOffsetInterval), so
// up to 5 s of commits are lost. The broker's clock restarts at now.
func (b *Broker) Restart(now clock.Time) RestartResult {
	nowMs := now.Millis()
	b.touch(nowMs)
	r := RestartResult{DroppedPolls: b.polls.drain(), DroppedPulls: b.holds.drain(), CachedLost: int(b.cache.size)}
	r.Lapsed = b.settleLapses(nowMs, r.Lapsed)
	for _, x := range b.cachedRecords() {
		r.LostLeases = append(r.LostLeases, x.Lease)
	}
	b.loseBuffer(&r)
	b.restartOrder(nowMs, &r)
	b.offsets.crash()
	b.offsets.dropVolatile()
	b.resetVolatile()
	b.startServices(nowMs)
	b.touchBy = 0
	b.stats.Restarts++
	return r
}

// loseBuffer settles the leases of the buffer's wrappers as a restart loses
// them. A lost CK's lease with an ack message pending is not listed lost:
// the ack was accepted (Pending), and the message, popped again from the
// commit offset the wrapper held back, comes back as a merged ack's does.
func (b *Broker) loseBuffer(r *RestartResult) {
	for _, w := range b.buf.order {
		if !w.ckStored {
			pending, first := w.ref.pending, w.ref.first
			lost := b.drop(w.ref)
			r.CachedLost += len(lost)
			for _, l := range lost {
				if pending&(1<<uint(l-first)) == 0 {
					r.LostLeases = append(r.LostLeases, l)
				}
			}
			continue
		}
		for i := 0; i < int(w.ck.Num); i++ {
			if bit := uint32(1) << uint(i); w.bits&^w.stored&bit != 0 && !w.ref.live(i) {
				w.ref.ended &^= bit
				b.ckl.live++
				if w.ref.pending&bit != 0 {
					b.ckl.pending++
				}
				r.ReopenedLeases = append(r.ReopenedLeases, w.ref.lease(i))
			}
		}
	}
}

// InFlightCount is the number of in-flight records, in the store plus the
// cache. It is kept beside State because a driver samples it often (the
// simulator at every time-series point and drain check) and State copies
// every record.
// On the checkpoint path it counts the live leases (ckLeases), those with
// an ack message pending included (PendingAckCount); on both, the live
// FIFO leases.
func (b *Broker) InFlightCount() int {
	return b.index.len() + int(b.cache.size) + b.ckl.live + b.order.liveCount
}

// PendingAckCount is the number of checkpoint-path leases whose ack was
// written as an ack message (the answer named them Pending) and that a
// revive round has not paired yet: settled for their clients, live for
// the broker until their deadline has passed. A driver that asks whether
// anything is still in flight for the clients subtracts them.
func (b *Broker) PendingAckCount() int { return b.ckl.pending }
