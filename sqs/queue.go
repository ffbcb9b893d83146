package sqs

import (
	"hash/fnv"

	"github.com/tidwall/btree"

	"popsim/clock"
	"popsim/model"
)

// msgState is where a message is: waiting out its delay, visible (can be
// received), or in flight (received, inside its visibility timeout).
type msgState uint8

const (
	stDelayed msgState = iota
	stVisible
	stInFlight
)

var stateNames = [...]string{stDelayed: "delayed", stVisible: "visible", stInFlight: "in-flight"}

func (s msgState) String() string { return stateNames[s] }

// message is one stored message.
type message struct {
	seq     int64
	id      model.MsgID
	body    []byte
	group   *group // FIFO only
	groupID string
	dedupID string
	// sent is SentTimestamp; retainFrom starts the retention period (the
	// enqueue time; a FIFO dead-letter copy restarts it); availableAt ends
	// the delay.
	sent, retainFrom, availableAt clock.Time
	receiveCount                  int
	firstReceive                  clock.Time // 0: never received
	state                         msgState
	// lease is the latest lease granted (0: never received); it is live
	// while state is stInFlight. leasedAt is when it was granted.
	lease    model.LeaseID
	leasedAt clock.Time
	deadline clock.Time // visibility deadline while in flight
	// changed is set by ChangeMessageVisibility on the latest lease: a
	// ReceiveRequestAttemptId retry no longer returns the message.
	changed   bool
	dlqSource string
}

// group is a FIFO message group within one queue.
type group struct {
	id       string
	ord      uint32 // interned number within the queue
	server   int
	size     int // stored messages
	inflight int
	ready    bool  // in queue.ready, ordered by head
	head     int64 // position of the first message while ready
}

// memberKey orders a FIFO queue's messages by group, then position.
type memberKey struct {
	g   uint32
	seq int64
}

func memberLess(a, b memberKey) bool {
	if a.g != b.g {
		return a.g < b.g
	}
	return a.seq < b.seq
}

// readyLess orders the groups that can deliver by the position of their
// first message (positions are unique, so ord never decides). A group's
// head only changes while it is out of the ready tree.
func readyLess(a, b *group) bool {
	if a.head != b.head {
		return a.head < b.head
	}
	return a.ord < b.ord
}

func int64Less(a, b int64) bool { return a < b }

// poll is a parked long poll.
type poll struct {
	id    uint64
	req   ReceiveMessageRequest
	max   int
	vt    int
	until clock.Time
}

// dedupEntry remembers a FIFO deduplication id for 5 minutes.
type dedupEntry struct {
	at  clock.Time
	seq int64
	id  model.MsgID
}

type dedupRef struct {
	at  clock.Time
	key string
}

// attempt remembers the deliveries of a FIFO receive made with a
// ReceiveRequestAttemptId.
type attempt struct {
	at     clock.Time
	leases []attemptLease
}

type attemptLease struct {
	seq   int64
	lease model.LeaseID
}

type attemptRef struct {
	at clock.Time
	id string
}

// queue is one SQS queue.
type queue struct {
	idx     int
	name    string
	arn     string
	attrs   QueueAttributes
	dlq     *queue
	created clock.Time
	nextSeq int64
	msgs    map[int64]*message

	visible, inflight, delayed int

	// Standard queues: visible positions per server.
	vis []*btree.BTreeG[int64]

	// FIFO queues.
	groups    map[string]*group
	nextGroup uint32
	members   *btree.BTreeG[memberKey]
	ready     *btree.BTreeG[*group]
	live      *btree.BTreeG[int64] // every stored position, for the scan window
	dedup     map[string]dedupEntry
	dedupLog  []dedupRef // insertion (time) order, for expiry
	attempts  map[string]*attempt
	attemptLg []attemptRef

	polls []*poll // parked long polls, oldest first

	purgedAt  clock.Time
	hasPurged bool
	stats     QueueStats
}

var btreeOpts = btree.Options{NoLocks: true}

func newQueue(idx int, name, arn string, attrs QueueAttributes, dlq *queue, servers int, now clock.Time) *queue {
	q := &queue{idx: idx, name: name, arn: arn, attrs: attrs, dlq: dlq, created: now, msgs: map[int64]*message{}}
	if attrs.FifoQueue {
		q.groups = map[string]*group{}
		q.members = btree.NewBTreeGOptions(memberLess, btreeOpts)
		q.ready = btree.NewBTreeGOptions(readyLess, btreeOpts)
		q.live = btree.NewBTreeGOptions(int64Less, btreeOpts)
		q.dedup = map[string]dedupEntry{}
		q.attempts = map[string]*attempt{}
		return q
	}
	q.vis = make([]*btree.BTreeG[int64], servers)
	for i := range q.vis {
		q.vis[i] = btree.NewBTreeGOptions(int64Less, btreeOpts)
	}
	return q
}

func (q *queue) fifo() bool { return q.attrs.FifoQueue }

// groupServer places a message group on a server.
func groupServer(id string, servers int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(servers))
}

// ---- timers ----

// timer is a due instant: a message's retention end, visibility deadline
// or delay end, or a parked poll's wait end. Timers fire in (at, kind,
// queue, id) order: at one instant retention first, then visibility, then
// delays, then poll waits; within a kind by queue and position (poll id).
type timer struct {
	at   clock.Time
	kind uint8
	q    int32
	id   int64
}

const (
	tRetention uint8 = iota
	tVisibility
	tDelay
	tPoll
)

func timerLess(a, b timer) bool {
	switch {
	case a.at != b.at:
		return a.at < b.at
	case a.kind != b.kind:
		return a.kind < b.kind
	case a.q != b.q:
		return a.q < b.q
	}
	return a.id < b.id
}

func (s *Service) retentionTimer(q *queue, m *message) timer {
	return timer{at: m.retainFrom.Add(clock.Duration(q.attrs.MessageRetentionPeriod) * clock.Second), kind: tRetention, q: int32(q.idx), id: m.seq}
}

// ---- state transitions ----

// enter puts m (not in any state index) into state st's indexes.
func (s *Service) enter(q *queue, m *message, st msgState) {
	m.state = st
	switch st {
	case stVisible:
		q.visible++
		if !q.fifo() {
			q.vis[int(m.seq%int64(len(q.vis)))].Set(m.seq)
		}
	case stInFlight:
		q.inflight++
		s.timers.Set(timer{at: m.deadline, kind: tVisibility, q: int32(q.idx), id: m.seq})
		if m.group != nil {
			m.group.inflight++
		}
	case stDelayed:
		q.delayed++
		s.timers.Set(timer{at: m.availableAt, kind: tDelay, q: int32(q.idx), id: m.seq})
	}
	if m.group != nil {
		q.refresh(m.group)
	}
	s.markDirty(q)
}

// leave takes m out of its state's indexes.
func (s *Service) leave(q *queue, m *message) {
	switch m.state {
	case stVisible:
		q.visible--
		if !q.fifo() {
			q.vis[int(m.seq%int64(len(q.vis)))].Delete(m.seq)
		}
	case stInFlight:
		q.inflight--
		s.timers.Delete(timer{at: m.deadline, kind: tVisibility, q: int32(q.idx), id: m.seq})
		if m.group != nil {
			m.group.inflight--
		}
	case stDelayed:
		q.delayed--
		s.timers.Delete(timer{at: m.availableAt, kind: tDelay, q: int32(q.idx), id: m.seq})
	}
}

// store adds a new message to q in state st.
func (s *Service) store(q *queue, m *message, st msgState) {
	q.msgs[m.seq] = m
	s.timers.Set(s.retentionTimer(q, m))
	if q.fifo() {
		g := q.groups[m.groupID]
		if g == nil {
			g = &group{id: m.groupID, ord: q.nextGroup, server: groupServer(m.groupID, s.cfg.Servers)}
			q.nextGroup++
			q.groups[m.groupID] = g
		}
		m.group = g
		g.size++
		q.members.Set(memberKey{g.ord, m.seq})
		q.live.Set(m.seq)
	}
	s.enter(q, m, st)
}

// remove deletes m from q entirely.
func (s *Service) remove(q *queue, m *message) {
	s.leave(q, m)
	s.timers.Delete(s.retentionTimer(q, m))
	delete(q.msgs, m.seq)
	if g := m.group; g != nil {
		g.size--
		q.members.Delete(memberKey{g.ord, m.seq})
		q.live.Delete(m.seq)
		q.refresh(g)
		if g.size == 0 {
			delete(q.groups, g.id)
		}
	}
	s.markDirty(q)
}

// refresh recomputes whether FIFO group g can deliver: nothing of it in
// flight and its first message visible.
func (q *queue) refresh(g *group) {
	ready, head := false, int64(0)
	if g.inflight == 0 && g.size > 0 {
		q.members.Ascend(memberKey{g.ord, 0}, func(k memberKey) bool {
			head = k.seq
			return false
		})
		ready = q.msgs[head].state == stVisible
	}
	if g.ready && (!ready || head != g.head) {
		q.ready.Delete(g)
		g.ready = false
	}
	if ready && !g.ready {
		g.ready, g.head = true, head
		q.ready.Set(g)
	}
}
