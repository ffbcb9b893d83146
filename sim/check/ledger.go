package check

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

type settleKind uint8

const (
	unsettled settleKind = iota
	settledAck
	settledDLQ
	settledDrop
)

func (k settleKind) String() string {
	return [...]string{"unsettled", "acked", "in a DLQ", "dropped"}[k]
}

// group is one consumer group: its messages by id, and the places of the
// messages it forgot (a broker restart can lend those again).
type group struct {
	name  string
	idx   int32
	msgs  window[msgState]
	tombs tombstones
	// ordered: the group consumes each queue in order (EvSubscribe
	// r=ordered); busy counts its leases not ended per queue, for the
	// long-polling promise (a queue with one in flight lends nothing).
	ordered bool
	busy    map[queueKey]int
	// orderly: the group consumes orderly (subscribe r=orderly), and may
	// unblock a queue up to orderSlack after its leases' deadline.
	orderly    bool
	orderSlack clock.Duration
	inOrder    bool // ordered || orderly: a lease's end has more to do (Checker.end)
	// passable (orderly groups): the messages consumed successfully and
	// not yet settled, by the queue of their produced place (places[0]),
	// so a commit visits only its queue's (orderPassed); unplaced holds
	// those that had no place yet. Settled ones leave at the next visit.
	passable map[queueKey][]*msgState
	unplaced []*msgState
	counts   GroupReport // the group's share of the report
	// switched is the trace position (Seq+1) of the group's switch to
	// POP mode (request-mode), 0 if none.
	switched int64
}

// msgState is one message as one group sees it.
//
// Its fields are ordered by what one event touches, so that an event
// reads few of the record's cache lines (the record is 568 bytes in the
// 576-byte allocation class: nine lines, the first at a line's start;
// TestMsgStateLayout checks the lines named here): the head is line 0;
// the first lease's fields that client events and engine answers read
// (lease) are line 1; the first delivery and the history ring's header
// and first slots share line 3, so a client's event on its first lease
// reads lines 1 and 3 (and 4 past its second noted event); the produced
// place is wholly in line 5, beside the ring's last slots; the lists and
// the room for two leases, which a lease and the message's end read,
// lie together after it.
type msgState struct {
	msgHead
	// Room for its first lease and its first delivery (newLease,
	// newDelivery): they live as long as the message does anyway (each
	// points back at it).
	firstLease lease
	pulledAt   int64 // the trace position (Seq+1) of its last pull delivery (0 never); cleared by reuse
	firstDlv   delivery
	seqs       seqRing
	// Room for the common case (one place, one line, one token, two
	// leases), so that a message costs one allocation.
	placeBuf [1]placeRec
	msgLists
	leaseBuf [2]*lease
	tokenBuf [1]token
	lineBuf  [1]line
}

// msgHead is what a record's reuse clears (reuse), with pulledAt: the
// rest of a msgState is written before it is read. It is 64 bytes, one
// cache line (TestMsgStateLayout).
type msgHead struct {
	g     *group
	topic string // the produced topic: what clients must be shown

	// The small fields side by side (no padding between them).
	id          model.MsgID
	successes   int32
	firstOKLine int32
	held        int32 // deliveries a client still has in hand
	kept        int32 // the delivery count an in-place engine last wrote for good (see keep); a broker restart reloads it
	settled     settleKind
	delivered   bool
	commit      commitState // the application's commits of its successful consumptions
	// leaseRoom, dlvRoom: firstLease, firstDlv are taken (below).
	leaseRoom, dlvRoom bool
	// freed: the record is in the checker's free list; gen counts its
	// reuses (recycle.go).
	freed bool
	gen   uint32

	pull *pullState
}

// msgLists are a message's lists. A record's reuse empties them (reuse)
// and keeps their storage: the record's own buffers, or what a list grew
// off them.
type msgLists struct {
	places []placeRec // where it lives: the produced place, then copies
	tokens []token    // what an engine may lend next
	leases []*lease   // every lease of this message, in grant order
	lines  []line     // lines[0] is the main line
}

// newLease returns room for a lease of m, which the caller writes whole:
// m's own room when that is free. (A lease literal with values, written
// through the pointer, is still built on the stack and copied in: the hot
// caller, onLease, clears it and writes its fields.)
func (m *msgState) newLease() *lease { return inRoom(&m.leaseRoom, &m.firstLease) }

// newDelivery returns room for a delivery of m, which the caller writes
// whole: m's own room when that is free.
func (m *msgState) newDelivery() *delivery { return inRoom(&m.dlvRoom, &m.firstDlv) }

// inRoom returns room, marking it taken, or a new allocation when room is
// taken already.
func inRoom[T any](taken *bool, room *T) *T {
	if !*taken {
		*taken = true
		return room
	}
	return new(T)
}

// commitState is what became of the application's commits after a
// message's successful consumptions (Checker.commit).
type commitState uint8

const (
	commitNone   commitState = iota // no successful consumption yet
	commitFailed                    // every one so far failed its commit after the ack: acked, not done
	commitDone                      // one committed
)

// newMsgState returns message id of group g, produced on topic, with its
// slices on its own buffers: a record the checker forgot (recycle), else
// a new one. It is built where it lives: the struct is large, and a value
// passed in would be copied twice more.
func (c *Checker) newMsgState(id model.MsgID, g *group, topic string) *msgState {
	n := len(c.free)
	if n == 0 {
		return c.makeMsgState(id, g, topic)
	}
	// A recycled record, made new here (its one call; a method of its
	// own cost a call at each of the default run's 60 k produces). Its
	// lists are emptied in place, keeping their storage: a message that
	// needed more room passes it on (and the slice headers, outside the
	// cleared head, are not written again but for their lengths).
	m := c.free[n-1]
	c.free[n-1] = nil
	c.free = c.free[:n-1]
	// Storage grown off the record's own buffers is cleared here (the
	// buffers are written before they are read, below), so that it keeps
	// no leases and deliveries reachable. Leases and lines only grow while
	// a record is in use, so what lies past their length was cleared
	// before; tokens also shrink. Places are not cleared: they point at
	// topic names only, and a record whose places grew once (a retried
	// message's copy) keeps that storage, which then cost a clear at
	// every reuse (1.0 M instructions of the default run's, callgrind).
	if cap(m.tokens) > len(m.tokenBuf) {
		clear(m.tokens[:cap(m.tokens)])
	}
	if cap(m.leases) > len(m.leaseBuf) {
		clearFew(m.leases)
	}
	if cap(m.lines) > len(m.lineBuf) {
		clearFew(m.lines)
	}
	gen := m.gen
	// One bulk clear of the head (a literal with fields is built field by
	// field). The rest is written before it is read: the ring's slots
	// past its count, the rooms for a first lease and delivery (taken
	// whole, newLease and newDelivery), the buffers past the lists'
	// lengths. What they still point at (the previous message's leases,
	// deliveries, strings) stays reachable until written over: a few
	// small objects a record at most.
	m.msgHead, m.pulledAt = msgHead{}, 0
	m.seqs.n, m.seqs.pos, m.seqs.wide = 0, 0, nil
	m.id, m.g, m.topic, m.gen = id, g, topic, gen
	// The rooms' back pointers are m already (every lease and delivery
	// made in them names m) and stay: a client's stale entry reads its
	// record's generation through them (heldRef, pendRef).
	m.places, m.tokens, m.leases = m.places[:0], m.tokens[:0], m.leases[:0]
	m.lines = append(m.lines[:0], line{origin: causeFirst})
	return m
}

// makeMsgState is newMsgState when no record is free (out of line: a
// record is made only until the first are recycled).
//
//go:noinline
func (c *Checker) makeMsgState(id model.MsgID, g *group, topic string) *msgState {
	c.made++
	x := &msgState{msgHead: msgHead{id: id, g: g, topic: topic}}
	x.places, x.tokens, x.leases = x.placeBuf[:0], x.tokenBuf[:0], x.leaseBuf[:0]
	x.lines = append(x.lineBuf[:0], line{origin: causeFirst})
	return x
}

// clearFew zeroes s, which holds an element or two: element by element,
// cheaper for so few than the runtime's bulk clear that clear calls.
func clearFew[T any](s []T) {
	var zero T
	for i := 0; i < len(s); i++ {
		s[i] = zero
	}
}

// place is a location: topic, queue, offset.
type place struct {
	topic  string
	queue  int32
	offset int64
}

func placeOf(e *model.Event) place { return place{e.Topic, e.Queue, e.Offset} }

func (p place) String() string { return fmt.Sprintf("%s/%d@%d", p.topic, p.queue, p.offset) }

// placeRec is a place a message lives and the trace position (Seq+1) of
// its last lease there (0 never).
type placeRec struct {
	place
	leased int64
}

// token is one chance for the message to be lent at a place: its produce,
// a copy, a lease that ran out in place. prev is the lease whose end made
// it (nil for a produce); the cause of the next lease is decided when it
// is taken, from prev's story as known then.
type token struct {
	at       int32 // index into places
	line     int32
	restarts int32 // broker restarts the trace had told when it was made
	poor     bool  // the event that made it was already a violation
	// inPlace: prev ran out (or was released) where the message lives, so
	// the next lease there counts one more delivery.
	inPlace bool
	prev    *lease
	cause   string // fixed causes (first, producer_retry); "" = from prev
}

// line is a chain of leases of which at most one may be promised at a
// time. The main line starts at the produce; by-design behaviours fork
// extra lines (origin says which) that may overlap it.
type line struct {
	origin string
	since  string // the latest cause, other than a retry, that lent the message after its first success
}

func (c *Checker) group(name string) *group {
	if i, ok := c.byName[name]; ok {
		return c.groups[i]
	}
	g := &group{name: name, idx: int32(len(c.groups)), msgs: newWindow[msgState](),
		counts: GroupReport{Group: name}}
	c.groups = append(c.groups, g)
	c.byName[name] = g.idx
	return g
}

func (c *Checker) onSubscribe(e *model.Event) {
	if e.Group == "" || e.Topic == "" {
		c.violate(InvTraceForm, e.Seq, nil, "a subscribe event needs a group and a topic")
		return
	}
	g := c.group(e.Group)
	if e.Reason == model.ROrdered && !g.ordered {
		g.ordered, g.busy, g.inOrder = true, map[queueKey]int{}, true
	}
	if e.Reason == model.ROrderly {
		if !g.orderly {
			g.orderly, g.passable, g.inOrder = true, map[queueKey][]*msgState{}, true
			g.msgs.each(func(_ uint64, m *msgState) { g.indexPassable(m) })
		}
		g.orderSlack = e.Span
	}
	cl := c.clientOf(e)
	cl.known, cl.group, cl.alive = true, g.idx, true
	if cl.held.c == 0 {
		cl.room()
	}
	for _, gi := range c.topics[e.Topic] {
		if gi == g.idx {
			return
		}
	}
	c.topics[e.Topic] = append(c.topics[e.Topic], g.idx)
	c.lastTopic = topicGroups{} // c.topics changed
}

// groupsOf is c.topics[topic], through the last topic asked for (a run
// mostly produces on one topic, or a few).
func (c *Checker) groupsOf(topic string) []int32 {
	if c.lastTopic.ok && sameName(c.lastTopic.topic, topic) {
		return c.lastTopic.groups
	}
	gis := c.topics[topic]
	c.lastTopic = topicGroups{topic: topic, groups: gis, ok: true}
	return gis
}

// topicGroups is a topic's groups as c.topics had them (ok: filled).
type topicGroups struct {
	topic  string
	groups []int32
	ok     bool
}

// onProduce opens the message in every group consuming its topic; a
// message stored again (a producer's retry) gets an extra line.
func (c *Checker) onProduce(e *model.Event) {
	c.topMsg = max(c.topMsg, e.Msg)
	for _, gi := range c.groupsOf(e.Topic) {
		g := c.groups[gi]
		m, forgotten := g.msgs.get(uint64(e.Msg))
		switch {
		case m == nil && !forgotten: // opened here, where alone messages are (a call fewer)
			m = c.newMsgState(e.Msg, g, e.Topic)
			m.firstOKLine = -1
			if !g.msgs.putNext(uint64(e.Msg), m) { // mostly: put's common case, inlined
				g.msgs.put(uint64(e.Msg), m)
			}
			c.tracked, c.endWork = c.tracked+1, true
			c.rep.Produced++
			g.counts.Produced++
			m.produced(placeOf(e))
			m.seqs.start(e.Seq) // note's first event, without its call
		default:
			if m == nil {
				m = c.reopen(g, e.Msg, e.Topic, placeOf(e))
			}
			m.addToken(placeOf(e), m.fork(CauseProducerRetry), nil, CauseProducerRetry)
			m.note(e)
		}
		if !g.orderly || !c.orderProduce(g, placeOf(e)) { // a blocked orderly queue hides it
			c.wake.arrival(c, e, m, placeOf(e))
		}
	}
}

// reopen brings back a forgotten message (settled, nothing in flight) that
// the trace names again at p: it was settled, so it is not produced again;
// its tombstone there tells when it was last lent there.
func (c *Checker) reopen(g *group, id model.MsgID, topic string, p place) *msgState {
	// Its commit is taken as done: a message forgotten as acked but not
	// done stays counted once.
	m := c.newMsgState(id, g, topic)
	m.settled, m.successes, m.firstOKLine, m.delivered, m.commit = settledAck, 1, 0, true, commitDone
	if t, ok := g.tombs.get(p); ok && t.msg == id {
		m.topic = t.topic
		m.places = append(m.places, placeRec{p, t.lastLease})
		if t.pulled {
			m.pulledAt = t.lastLease
		}
	} else if m.topic == "" {
		m.topic = c.producedTopic(g, p.topic)
	}
	g.msgs.put(uint64(id), m)
	c.tracked++
	c.endWork = true
	return m
}

// producedTopic is the topic of group g's messages that live in topic t:
// t itself when g consumes it, the normal topic of g's retry topic t, ""
// when t is neither.
func (c *Checker) producedTopic(g *group, t string) string {
	for _, gi := range c.topics[t] {
		if gi == g.idx {
			return t
		}
	}
	for topic, gis := range c.topics { // a match is unique: the order does not matter
		for _, gi := range gis {
			if gi == g.idx && (t == model.BuildPopRetryTopicV1(topic, g.name) || t == model.BuildPopRetryTopicV2(topic, g.name)) {
				return topic
			}
		}
	}
	return ""
}

// fork starts a new line and returns its index.
func (m *msgState) fork(origin string) int32 {
	m.lines = append(m.lines, line{origin: origin})
	return int32(len(m.lines) - 1)
}

// lookupPlace is the index of p in m.places, or -1 when the message never
// lived there. A message brought back after it was forgotten knows only
// the place it came back at: its tombstones at its other places are
// taken back as they are named.
func (m *msgState) lookupPlace(p place) int {
	if i := m.placeIndex(p, false); i >= 0 {
		return i
	}
	if t, ok := m.g.tombs.get(p); ok && t.msg == m.id {
		i := m.placeIndex(p, true)
		m.places[i].leased = t.lastLease
		if t.pulled {
			m.pulledAt = t.lastLease
		}
		return i
	}
	return -1
}

// placeIndex returns the index of p in m.places, adding it if asked.
func (m *msgState) placeIndex(p place, add bool) int {
	for i := range m.places {
		if samePlace(m.places[i].place, p) {
			return i
		}
	}
	if !add {
		return -1
	}
	m.places = append(m.places, placeRec{place: p})
	return len(m.places) - 1
}

// produced gives a new message (no place, no token, room for one of
// each: newMsgState) its produced place p and the token of its produce
// on the main line: addToken's result, without its search of the places.
// Both are written where they go: appended, each (it holds pointers)
// was built on the stack and copied in.
func (m *msgState) produced(p place) {
	m.places = m.places[:1]
	m.places[0].place, m.places[0].leased = p, 0
	m.tokens = m.tokens[:1]
	t := &m.tokens[0]
	*t = token{}
	t.cause = causeFirst
}

func (m *msgState) addToken(p place, ln int32, prev *lease, cause string) *token {
	m.tokens = append(m.tokens, token{at: int32(m.placeIndex(p, true)), line: ln, prev: prev, cause: cause})
	return &m.tokens[len(m.tokens)-1]
}

// takeToken removes and returns the token at place index i (the oldest).
func (m *msgState) takeToken(i int) (token, bool) {
	if len(m.tokens) == 1 && int(m.tokens[0].at) == i { // the common case: no copy down
		t := m.tokens[0]
		m.tokens = m.tokens[:0]
		return t, true
	}
	for k, t := range m.tokens {
		if int(t.at) == i {
			m.tokens = append(m.tokens[:k], m.tokens[k+1:]...)
			return t, true
		}
	}
	return token{}, false
}

// settle records how the message ended; the first way counts.
func (c *Checker) settle(m *msgState, k settleKind, policy string) {
	if m.settled != unsettled {
		return
	}
	m.settled = k
	switch k {
	case settledAck:
		c.rep.Acked++
		m.g.counts.Acked++
	case settledDLQ:
		c.rep.DLQ++
		m.g.counts.DLQ++
	case settledDrop:
		c.rep.Dropped++
		m.g.counts.Dropped++
		c.rep.DroppedByPolicy[policy]++
	}
}

// msgOf finds the message an event names in group g; a forgotten message
// comes back, one never produced is a violation.
func (c *Checker) msgOf(g *group, e *model.Event) *msgState {
	m, forgotten := g.msgs.get(uint64(e.Msg))
	if m != nil {
		return m
	}
	if forgotten {
		return c.reopen(g, e.Msg, "", placeOf(e))
	}
	c.violate(InvDeliveryLocation, e.Seq, nil, fmt.Sprintf("group %s: message %d was never produced on a topic the group consumes (%s)", g.name, e.Msg, e.Kind))
	return nil
}

// maybeForget drops a message that is settled and that nothing can bring
// back any more: no lease in flight, no token, nobody holding it, no Pull
// consumer about to retry it. Its places are kept as tombstones, which a
// broker restart may need.
func (c *Checker) maybeForget(m *msgState) {
	// Mostly the message is unsettled (a consumption's end): answered
	// here, inlined at the callers.
	if m.settled != unsettled {
		c.forgetSettled(m)
	}
}

// forgetSettled is maybeForget for a settled message.
func (c *Checker) forgetSettled(m *msgState) {
	if len(m.tokens) > 0 || m.held > 0 || m.pull != nil && m.pull.failed {
		// A Pull consumer whose consumption failed retries it locally.
		return
	}
	for _, l := range m.leases {
		if !l.ended || l.awaiting {
			return
		}
	}
	for i := range m.places {
		if p := &m.places[i]; p.leased != 0 {
			m.g.tombs.forgot(p, m)
		}
	}
	// forget's common case first, inlined (firstLive, forgetPast): a
	// call fewer for the message and each of its leases.
	for _, l := range m.leases {
		if w := &c.leases.w; !(w.firstLive() && w.forgetPast(uint64(l.id))) {
			c.leases.forget(l)
		}
	}
	if w := &m.g.msgs; !(w.firstLive() && w.forgetPast(uint64(m.id))) {
		w.forget(uint64(m.id), uint64(c.topMsg))
	}
	c.tracked--
	if !m.g.orderly {
		// An orderly group's queues keep the messages owed an ack, and
		// its passable index the settled ones until their next visit:
		// its records are never reused.
		c.forgotten = append(c.forgotten, m)
		c.endWork = true
	}
}

// onCommit drops the tombstones below a group's commit offset: the engine
// will not lend those places again.
func (c *Checker) onCommit(e *model.Event) {
	if e.Group == "" {
		return
	}
	g := c.group(e.Group)
	c.orderCommit(g, queueKey{e.Topic, e.Queue}, e.Offset)
	if g.orderly {
		if e.Client < 0 {
			c.orderPassed(g, e)
		}
		// Orderly: after a broker restart the reloaded order state's next
		// offset can move the commit offset back (commitAndNext commits
		// it as it is), and the engine lends those places again.
		return
	}
	k := queueKey{e.Topic, e.Queue}
	if o := c.pullOwners[groupQueue{g.idx, k}]; o != nil && (len(o.clients) > 1 || g.switched != 0 && len(o.clients) > 0) {
		// Two readers of the queue, one behind the other (two pull owners
		// during a rebalance, or a pull owner and the pops of a group
		// switched to POP): the one behind reads places the other's commit
		// passed, so their tombstones stay.
		return
	}
	g.tombs.dropBelow(k, e.Offset)
}

// orderPassed settles, as acked, the unsettled messages of an orderly
// group that were consumed successfully and that the engine's commit
// offset passed: after a broker restart lost the queue's OrderInfo,
// RocketMQ's commitAndNext commits ackOffset+1 for an ack of a later
// offset, past a message whose own ack was lost. Nothing redelivers it,
// and it was consumed: an orderly client acks a later offset only once
// the earlier ones were consumed, sent to the DLQ or dropped.
func (c *Checker) orderPassed(g *group, e *model.Event) {
	if len(g.unplaced) > 0 {
		un := g.unplaced
		g.unplaced = nil
		for _, m := range un {
			g.indexPassable(m)
		}
	}
	k := queueKey{e.Topic, e.Queue}
	list, n := g.passable[k], 0
	for _, m := range list {
		switch {
		case m.settled != unsettled: // settled since: leaves the index
		case m.places[0].offset < e.Offset:
			c.settle(m, settledAck, "")
		default:
			list[n] = m
			n++
		}
	}
	clear(list[n:])
	g.passable[k] = list[:n]
}

// indexPassable adds m to its orderly group's passable index when it was
// consumed successfully and is not settled.
func (g *group) indexPassable(m *msgState) {
	switch {
	case !g.orderly || m.settled != unsettled || m.successes == 0:
	case len(m.places) == 0:
		g.unplaced = append(g.unplaced, m)
	default:
		k := queueKey{m.places[0].topic, m.places[0].queue}
		g.passable[k] = append(g.passable[k], m)
	}
}

// finishLedger reports every message that ended unsettled, in group and id
// order.
func (c *Checker) finishLedger() {
	for _, g := range c.groups {
		g.msgs.each(func(_ uint64, m *msgState) {
			if m.settled != unsettled {
				return
			}
			c.rep.Lost++
			g.counts.Lost++
			c.violate(InvLost, c.lastSeq, m, fmt.Sprintf("group %s: message %d (topic %s) ended neither acked, in a DLQ, nor dropped by a named policy: %s", g.name, m.id, m.topic, m.whereabouts()))
		})
	}
}

// whereabouts says what the ledger last knew of an unsettled message.
func (m *msgState) whereabouts() string {
	live := 0
	for _, l := range m.leases {
		if !l.ended {
			live++
		}
	}
	switch {
	case len(m.leases) == 0:
		return "never lent to a consumer"
	case live > 0:
		return fmt.Sprintf("%d lease(s) still in flight at the end", live)
	case len(m.tokens) > 0:
		return fmt.Sprintf("available at %s but never lent again", m.places[m.tokens[0].at].place)
	case m.held > 0:
		return "a consumer still holds it"
	}
	last := m.leases[len(m.leases)-1]
	return fmt.Sprintf("its last lease %d ended by %s and nothing brings it back", last.id, last.endedBy)
}
