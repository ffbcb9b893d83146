package pop

import (
	"sort"

	"popsim/clock"
	"popsim/model"
)

// State is a snapshot of everything observable about the broker, for
// tests and a driver's end-of-run checks. It is a deep copy: nothing in it
// refers to the broker's memory. Building it copies every in-flight record,
// so drivers that poll use the few getters kept for that (InFlightCount,
// MinOffset/MaxOffset, ConsumerOffsets, NextPollExpiry, NextHoldCheck).
type State struct {
	// Topics in creation order, retry topics included.
	Topics []TopicState
	// Groups sorted by name.
	Groups []GroupConfig
	// Offsets lists every (group, topic, queue) that has a commit offset, a
	// pull offset or a pending reset, sorted by group, topic and queue.
	Offsets []OffsetState
	// InFlight holds the stored in-flight records in store-key order
	// (RocketMQ's RocksDB order); Cached the cached ones, by queue (in the
	// order the cache first held them) then offset.
	InFlight []LeasedRecord
	Cached   []LeasedRecord
	// SuspendedPolls is the number of pop requests parked for long polling;
	// NextPollExpiry (when HasPollExpiry) is when PollTick next hands one
	// back.
	SuspendedPolls int
	NextPollExpiry clock.Time
	HasPollExpiry  bool
	// PullHolds is the number of held pulls; NextHoldCheck (when
	// HasHoldCheck) is when CheckHoldRequest next hands one back.
	PullHolds     int
	NextHoldCheck clock.Time
	HasHoldCheck  bool
	// LastLease is the last lease id granted; WriteOrdinal the last store
	// write attempt's ordinal.
	LastLease    model.LeaseID
	WriteOrdinal uint64
	// Faults is the fault set, counted rules with what is left of them.
	Faults Faults
	Stats  Stats
	// Checkpoint is the checkpoint (FS) path's state.
	Checkpoint CheckpointState
	// Order is the orderly (FIFO) state of both paths.
	Order OrderState
	// RequestModes are the stored request modes (SET_MESSAGE_REQUEST_MODE)
	// sorted by topic, then group.
	RequestModes []SetMessageRequestModeRequest
}

// TopicState is a topic and its queues.
type TopicState struct {
	Config TopicConfig
	Queues []QueueState
}

// QueueState is one queue's bounds: messages at [MinOffset, MaxOffset).
type QueueState struct {
	QueueID              int32
	MinOffset, MaxOffset int64
}

// OffsetState is one queue's consumer offsets for a group, -1 where absent.
type OffsetState struct {
	Group, Topic string
	QueueID      int32
	Commit       int64 // offsetTable: the durable consumer offset
	Pull         int64 // pullOffsetTable: volatile, the next pop (and pull) position
	Reset        int64 // resetOffsetTable: a pending admin reset
}

// fill copies the slot's offsets into o.
func (s *slot) fill(o *OffsetState) {
	if s.has&hasCommit != 0 {
		o.Commit = s.commit
	}
	if s.has&hasPull != 0 {
		o.Pull = s.pull
	}
	if s.has&hasReset != 0 {
		o.Reset = s.reset
	}
}

// State returns a snapshot of the broker.
func (b *Broker) State() State {
	st := State{
		InFlight: b.index.all(), Cached: b.cachedRecords(), SuspendedPolls: b.polls.count,
		LastLease: b.lease.last, WriteOrdinal: b.writes, Stats: b.stats,
		Faults: b.faults,
	}
	st.Faults.Writes = append([]WriteFault(nil), b.faults.Writes...)
	st.Checkpoint = b.checkpointState()
	st.Order = b.orderState()
	st.RequestModes = b.requestModes()
	st.NextPollExpiry, st.HasPollExpiry = b.NextPollExpiry()
	st.PullHolds = b.holds.count()
	st.NextHoldCheck, st.HasHoldCheck = b.NextHoldCheck()
	for _, name := range b.topicOrder {
		t := b.topics[name]
		ts := TopicState{Config: t.cfg}
		for i, q := range t.queues {
			ts.Queues = append(ts.Queues, QueueState{QueueID: int32(i), MinOffset: q.min, MaxOffset: q.maxOffset()})
		}
		st.Topics = append(st.Topics, ts)
	}
	for _, g := range b.groups { // collected, then sorted: order does not matter
		st.Groups = append(st.Groups, *g)
	}
	sort.Slice(st.Groups, func(i, j int) bool { return st.Groups[i].Name < st.Groups[j].Name })
	b.offsets.each(func(k qkey, s *slot) {
		if s.has&(hasCommit|hasPull|hasReset) == 0 {
			return
		}
		p := b.names.pairs[k.pair]
		o := OffsetState{Group: p.group, Topic: p.topic, QueueID: k.qid, Commit: -1, Pull: -1, Reset: -1}
		s.fill(&o)
		st.Offsets = append(st.Offsets, o)
	})
	sort.Slice(st.Offsets, func(i, j int) bool {
		a, c := &st.Offsets[i], &st.Offsets[j]
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Topic != c.Topic {
			return a.Topic < c.Topic
		}
		return a.QueueID < c.QueueID
	})
	return st
}

// cachedRecords returns every cached record, by queue (in creation order)
// then offset.
func (b *Broker) cachedRecords() []LeasedRecord {
	var out []LeasedRecord
	for _, cq := range b.cache.queues {
		cq.recs.Scan(func(_ int64, r rec) bool {
			out = append(out, LeasedRecord{Lease: r.lease, Record: b.index.record(&r)})
			return true
		})
	}
	return out
}

// CheckpointState is the checkpoint (FS) path's part of State.
type CheckpointState struct {
	// Leases are the live leases, in lease order.
	Leases []CkLease
	// Timer holds the timer wheel's messages, by revive queue then
	// delivery order.
	Timer []TimerEntry
	// Buffer holds PopBufferMergeService's wrappers in insertion order;
	// CommitQueues its commit queues in creation order.
	Buffer       []BufferedCk
	CommitQueues []CommitQueueState
	// Revive is each PopReviveService's state, by revive queue.
	Revive []ReviveServiceState
	// Inflight is PopInflightMessageCounter, sorted by group, topic, queue.
	Inflight []InflightCount
	// CkMessageNumber is the revive-queue round robin; ShouldStartTime the
	// time before which pops never decrement the in-flight counter.
	CkMessageNumber, ShouldStartTime int64
	// RandomDraws and ReviveReads number the broker's random draws and
	// revive reads (durable).
	RandomDraws, ReviveReads uint64
}

// TimerEntry is a message the timer holds.
type TimerEntry struct {
	Due         int64 // delivery time, ms
	ReviveQueue int32
	Tag         string
	UniqKey     string
}

// BufferedCk is one wrapper of PopBufferMergeService.
type BufferedCk struct {
	MergeKey    string
	ReviveQueue int32
	FirstLease  model.LeaseID // 0 for a mock
	Num         int8
	// Bits are the acks merged in memory, StoredBits those of them written.
	Bits, StoredBits     uint32
	JustOffset, CkStored bool
	NextBegin            int64
}

// CommitQueueState is one lock key's commit queue.
type CommitQueueState struct {
	Group, Topic string
	QueueID      int32
	// NextBegins are its wrappers' nextBeginOffsets, head first; Done
	// tells which of them are done.
	NextBegins []int64
	Done       []bool
	Time       int64 // pop time of the last wrapper enqueued
}

// ReviveServiceState is one PopReviveService.
type ReviveServiceState struct {
	ReviveQueue       int32
	Offset, Committed int64 // in-memory and committed revive offsets
	Slow              int64
	Pulling, Ending   bool
	Due               int64 // the next round start, pull or merge (ms)
}

// InflightCount is one queue's PopInflightMessageCounter entry.
type InflightCount struct {
	Group, Topic string
	QueueID      int32
	Count        int64
}

// checkpointState builds the FS part of State.
func (b *Broker) checkpointState() CheckpointState {
	st := CheckpointState{Leases: b.ckLeasesState(), CkMessageNumber: b.ckMessageNumber, ShouldStartTime: b.shouldStartTime,
		RandomDraws: b.draws, ReviveReads: b.reads}
	b.timer.each(func(m *reviveBody, due int64) {
		st.Timer = append(st.Timer, TimerEntry{Due: due, ReviveQueue: int32(m.rq), Tag: m.kind.tag(), UniqKey: m.uniqueID(m.kind.tag())})
	})
	for _, w := range b.buf.order {
		st.Buffer = append(st.Buffer, BufferedCk{MergeKey: w.mkey, ReviveQueue: w.rq, FirstLease: w.ref.first, Num: w.ck.Num,
			Bits: w.bits, StoredBits: w.stored, JustOffset: w.justOffset, CkStored: w.ckStored, NextBegin: w.next})
	}
	for _, cq := range b.buf.corder {
		p := b.names.pairs[cq.key.pair]
		c := CommitQueueState{Group: p.group, Topic: p.topic, QueueID: cq.key.qid, Time: cq.time}
		for _, w := range cq.ws {
			c.NextBegins = append(c.NextBegins, w.next)
			c.Done = append(c.Done, w.done())
		}
		st.CommitQueues = append(st.CommitQueues, c)
	}
	for _, s := range b.revivers {
		st.Revive = append(st.Revive, ReviveServiceState{ReviveQueue: s.qid, Offset: s.offset, Committed: b.reviveCommitted(s.qid),
			Slow: s.slow, Pulling: s.pulling, Ending: s.ending, Due: s.due})
	}
	b.inflight.each(func(k qkey, n int64) { // collected, then sorted
		p := b.names.pairs[k.pair]
		st.Inflight = append(st.Inflight, InflightCount{Group: p.group, Topic: p.topic, QueueID: k.qid, Count: n})
	})
	sort.Slice(st.Inflight, func(i, j int) bool {
		a, c := &st.Inflight[i], &st.Inflight[j]
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Topic != c.Topic {
			return a.Topic < c.Topic
		}
		return a.QueueID < c.QueueID
	})
	return st
}
