package check

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"popsim/clock"
	"popsim/model"
)

// Options configure a Checker.
type Options struct {
	Seed   uint64
	Replay string // the command that replays this run, copied into every violation
	// WakeupSlack is how long a message that became visible may wait while a
	// matching receive is parked (default 100ms when 0).
	WakeupSlack clock.Duration
	// MaxViolations caps the violations kept per invariant (default 100 when
	// 0). The rest are counted in Report.Suppressed, never dropped silently.
	MaxViolations int
	// HistoryEvents is how many recent trace events the checker keeps to
	// print a violating message's history (default 1<<16 when 0).
	HistoryEvents int
}

// Defaults of Options.
const (
	DefaultWakeupSlack   = 100 * clock.Millisecond
	DefaultMaxViolations = 100
	DefaultHistory       = 1 << 16
)

// Final is what the simulator knows at the end of the liveness phase.
type Final struct {
	CommitLag []QueueLag // per group/topic/queue: maxOffset - commitOffset at the end of the liveness phase
	Drained   bool       // the simulator reached quiescence within its drain budget
}

// QueueLag is one queue's consumer lag.
type QueueLag struct {
	Group, Topic string
	Queue        int32
	Lag          int64
}

// Report is the ledger and every violation. Produced = Acked + DLQ +
// Dropped + Lost always holds (counted per group and message).
type Report struct {
	Produced, Acked, DLQ, Dropped, Lost, Deliveries, Duplicates int64
	DuplicatesByCause, DroppedByPolicy                          map[string]int64
	Violations                                                  []model.Violation

	// Redeliveries counts deliveries after a message's first, by cause
	// (duplicates are the redeliveries the business logic saw twice).
	Redeliveries        int64
	RedeliveriesByCause map[string]int64
	// Suppressed counts violations beyond Options.MaxViolations, by invariant.
	Suppressed map[string]int64
	// PeakTracked is the largest number of messages held at once (settled
	// messages with nothing left in flight are forgotten).
	PeakTracked int
	// AckedNotDone counts the messages (per group) whose every successful
	// consumption was acked and then failed the application's commit
	// (consume-end r=not-done): at-least-once held on the broker's side;
	// the work is lost on the application's. Not a violation.
	AckedNotDone int64
	// Groups is each group's share of the counts above, in subscribe
	// order: with several groups on a topic each is an independent
	// consumer of every message it subscribes to.
	Groups []GroupReport
}

// GroupReport is one group's ledger: Produced = Acked + DLQ + Dropped +
// Lost.
type GroupReport struct {
	Group                                                       string
	Produced, Acked, DLQ, Dropped, Lost, Deliveries, Duplicates int64
}

// Checker is the at-least-once ledger of a run: every consumer group,
// every message, every lease. It reads the trace and owns no simulator or
// engine state. Not safe for concurrent use.
type Checker struct {
	opt Options
	rep Report

	groups []*group           // by index, in subscribe order
	byName map[string]int32   // group name -> index (lookup only)
	topics map[string][]int32 // topic -> the groups consuming it, in subscribe order
	// lastTopic is the last topic groupsOf looked up, and its groups.
	lastTopic topicGroups
	clients   []client // by client index

	leases leaseTable
	// restarts are the broker restarts' trace positions (Seq+1), ascending.
	// Positions, not times: a restart and a lease can share an instant.
	restarts []int64
	// rebalances holds, per group and queue, the trace position (Seq+1)
	// at which a Pull consumer of the group last took it over: another
	// group on the topic owns its queues on its own.
	rebalances map[groupQueue]int64
	// pullOwners are, per group, the owners of the queues a broker
	// assigns in PULL mode (rebalance r=pull, until r=dropped or a
	// crash), and when each queue last had two (pull.go).
	pullOwners map[groupQueue]*owners
	ownerList  []*owners // pullOwners' values in first-use order
	// lostBatches are the clients' lost batches (client.lost).
	lostBatches [][]*lease
	wake        wakeup
	hist        history
	shown       namePair  // the last shown and produced topics found equal (onDeliver)
	order       orderBook // orderly groups' queues (order.go)

	viol   []model.Violation
	perInv map[string]int

	// forgotten are the records of the messages forgotten during the
	// current event; at its end they join free, to be reused for the
	// next messages (recycle). made counts the records ever allocated.
	forgotten, free []*msgState
	made            int

	tracked int // messages held now
	// endWork: the current event forgot a record (forgotten) or counted
	// a message in (tracked): ObserveEncoded's end calls endEvent only
	// then, instead of testing both at every event.
	endWork bool
	topMsg  model.MsgID // the largest message id produced so far
	lastAt  clock.Time
	seen    bool // set by outOfOrder, which the first event always reaches
	done    bool
	// floorSeq is the Seq an event must pass for ObserveEncoded to skip
	// outOfOrder: the last event's, MaxInt64 before the first and once
	// finished. lastSeq is the last event's, set by Finish (the liveness
	// checks' violations are at it).
	floorSeq, lastSeq int64
}

// client is what the checker knows of one consumer: one cache line (64
// bytes, TestClientSize), so that a record in the clients' array never
// takes two. A lease (lend), a delivery (hold) and a receive read and
// write it; in the hot topic's 500 clients, at 112 bytes, two lines a
// lease.
type client struct {
	known bool
	alive bool
	// retrying: the client's current receive retries the attemptId of an
	// answer that was lost.
	retrying bool
	lostSome bool // the lost batch has leases
	group    int32
	// held lists the deliveries the client may still be working on; it is
	// pruned as they finish. An entry whose message's record was reused
	// since (heldRef.gen) is no longer the client's: it is passed over.
	held list[heldRef]
	// pending lists leases lent to the client whose answer has not reached
	// it yet (awaiting): their message is not forgotten meanwhile. An entry
	// whose lease is no longer awaited (delivered, let go), or whose
	// message's record was reused since (pendRef.gen), is passed over, and
	// pruned when the list fills its storage (lend).
	pending list[pendRef]
	// rx counts the client's receive requests: when pending's leases may
	// be let go.
	rx receives
	// lost is 1 + the index in Checker.lostBatches of the client's lost
	// batch, the orderly leases a lost receive answer carried (0: it never
	// had one; lostBatch).
	lost int32
}

// list is a slice kept in 16 bytes: its array, and its length and
// capacity as int32s. get and set convert, so that the slice's growth
// (append's) and its pruning are a plain slice's.
type list[T any] struct {
	p    unsafe.Pointer // *T
	n, c int32
}

// refSize is the size of heldRef and pendRef, the lists' entries
// (TestClientSize).
const refSize = 16

func (l *list[T]) get() []T { return unsafe.Slice((*T)(l.p), l.c)[:l.n] }

func (l *list[T]) set(s []T) {
	l.p, l.n, l.c = unsafe.Pointer(unsafe.SliceData(s)), int32(len(s)), int32(cap(s))
}

// push appends x, as the slice's append would after pruning it when it
// is full (at 64 entries or more, by prune: makeRoom); an entry is
// refSize bytes.
func (l *list[T]) push(x T, prune func([]T) []T) {
	if l.n == l.c {
		l.makeRoom(prune)
	}
	*(*T)(unsafe.Add(l.p, uintptr(l.n)*refSize)) = x // n < c
	l.n++
}

// tryPush is push's common case: it appends x, and reports true, when
// the list has room. It inlines (no call) where push does not (cost 85:
// hold and lend inline it with little else), so that the hottest callers
// (a delivery's hold, a lease's lend) call push only when the list is
// full.
func (l *list[T]) tryPush(x T) bool {
	if l.n == l.c {
		return false
	}
	*(*T)(unsafe.Add(l.p, uintptr(l.n)*refSize)) = x
	l.n++
	return true
}

// makeRoom gives full list l room for one more entry (push).
func (l *list[T]) makeRoom(prune func([]T) []T) {
	s := l.get()
	if len(s) >= 64 {
		s = prune(s)
	}
	l.set(slices.Grow(s, 1)) // append's growth: growslice to cap+1 when full
}

// heldRef is a delivery in a client's hands, and the generation of its
// message's record when it was put there (msgState.gen).
type heldRef struct {
	d   *delivery
	gen uint32
}

// live reports whether the entry is still about the message it was made
// for: the record was not reused since.
func (r heldRef) live() bool { return r.gen == r.d.m.gen }

// lend puts lease l, lent to the client, in its pending list. Every reader
// of the list passes over the entries no longer awaited or stale (most
// are delivered at once), so they are pruned only when the list fills
// its storage, at 64 entries or more, as held is (hold): pruning at each
// answer cost some 70 instructions a receive (callgrind).
func (cl *client) lend(l *lease) {
	cl.pending.push(pendRef{l, l.m.gen}, prunePending)
}

// listRoom is the storage a client's held and pending lists start with:
// the length at which they are pruned (hold, lend). Grown from nothing
// by doubling, they took seven allocations each before their first
// prune: 3.9 M instructions of the 500-client hot topic's checker
// (callgrind), for lists that reach 64 entries anyway.
const listRoom = 64

// room gives a client that subscribes for the first time its lists'
// storage (listRoom entries each). Only a subscribed client is lent
// leases (onLease), and so delivered messages.
func (cl *client) room() {
	cl.held.set(make([]heldRef, 0, listRoom))
	cl.pending.set(make([]pendRef, 0, listRoom))
}

// prunePending keeps the entries of ps whose lease is still awaited.
func prunePending(ps []pendRef) []pendRef {
	out := ps[:0]
	for _, r := range ps {
		if r.l.awaiting && r.live() {
			out = append(out, r)
		}
	}
	clear(ps[len(out):])
	return out
}

// pendRef is a lease lent to a client, and the generation of its
// message's record when it was lent (msgState.gen).
type pendRef struct {
	l   *lease
	gen uint32
}

// live reports whether the entry is still about the lease it was made
// for: its message's record was not reused since.
func (r pendRef) live() bool { return r.gen == r.l.m.gen }

// New returns a Checker.
func New(o Options) *Checker {
	if o.WakeupSlack == 0 {
		o.WakeupSlack = DefaultWakeupSlack
	}
	if o.MaxViolations <= 0 {
		o.MaxViolations = DefaultMaxViolations
	}
	if o.HistoryEvents <= 0 {
		o.HistoryEvents = DefaultHistory
	}
	return &Checker{
		floorSeq: math.MaxInt64,
		leases:   leaseTable{w: newWindow[lease]()},
		opt:      o,
		byName:   map[string]int32{},
		topics:   map[string][]int32{},
		wake:     newWakeup(o.WakeupSlack),
		hist:     newHistory(o.HistoryEvents),
		perInv:   map[string]int{},
		rep: Report{
			DuplicatesByCause:   map[string]int64{},
			DroppedByPolicy:     map[string]int64{},
			RedeliveriesByCause: map[string]int64{},
			Suppressed:          map[string]int64{},
		},
	}
}

// Observe takes every trace event, in order. Safety invariants are checked
// here, at the event that breaks them. The checker copies what it keeps.
func (c *Checker) Observe(e *model.Event) { c.ObserveEncoded(e, nil) }

// ObserveEncoded is Observe for a caller that has the event's binary form
// (model's AppendBinary) at hand: bin, or nil. The checker's history
// keeps a copy instead of encoding the event again; a checker that
// shares its caller's buffer (ShareBuffer) takes bin's length alone
// (ObserveShared).
func (c *Checker) ObserveEncoded(e *model.Event, bin []byte) {
	if c.hist.peek != nil {
		if bin == nil {
			panic("check: an event without its binary form, given to a checker that shares its caller's buffer")
		}
		c.ObserveShared(e, len(bin))
		return
	}
	if c.done {
		panic("check: Observe after Finish")
	}
	if !receiveKind(e.Kind) {
		c.hist.add(e, bin)
	}
	c.ObserveShared(e, 0)
}

// ObserveShared is Observe for a caller that shares its buffer of binary
// forms with the checker (ShareBuffer): e's binary form is the next n > 0
// bytes written into it. The history needs their length alone, so that
// the caller hands over no slice of them (the simulator's tracer, at
// every event). n is 0 only in ObserveEncoded's own call for a checker
// that shares no buffer, whose history has taken the event already.
func (c *Checker) ObserveShared(e *model.Event, n int) {
	// e's Seq and time are taken here, where the test has them in
	// registers, not after the handler's call: nothing between reads the
	// two (Finish and outOfOrder do). outOfOrder takes them itself, so
	// that the common case does not load them again after its call.
	if seq, at := e.Seq, e.At; seq <= c.floorSeq || at < c.lastAt {
		c.outOfOrder(e) // the first event, one after Finish, or one out of order
	} else {
		c.lastAt, c.floorSeq = at, seq
	}
	if h := &c.hist; h.peek == nil {
		if n != 0 {
			panic("check: ObserveShared of a checker that shares no buffer")
		}
	} else if to := h.used + n; !h.fastShared(to, n) {
		h.addShared(e, n)
	} else if receiveKind(e.Kind) {
		h.used = to // in the open chunk, not kept
	} else {
		// addShared's common case, written out (history.addShared says
		// why): e is kept in the open chunk, at the ring's next slot.
		h.starts[h.pos] = int32(h.used)
		h.pos++
		h.used = to
		if h.n++; h.n >= h.dropAt {
			h.drop()
		}
	}
	if c.wake.due < e.At {
		c.wake.expire(c, e.At) // mostly nothing is due: the call is skipped
	}
	// The one switch over event kinds, here rather than in a function of
	// its own: that call cost 2.4 M instructions of the default scenario
	// (callgrind).
	switch e.Kind {
	case model.EvSubscribe:
		c.onSubscribe(e)
	case model.EvProduce:
		c.onProduce(e)
	case model.EvReceive:
		cl := c.clientOf(e)
		c.wake.client(e.Client).receive(cl, e)
		cl.rx.sent()
		c.orderReceive(cl, e)
	case model.EvParked:
		c.wake.parked(e)
	case model.EvReceived, model.EvReceiveLost:
		if !c.wake.client(e.Client).answerOne() {
			c.wake.answer(e)
		}
		cl := c.clientOf(e)
		if e.Kind == model.EvReceiveLost {
			cl.rx.lostAnswer(e) // first: the order checks ask which leases it lost
		}
		c.orderReceive(cl, e)
		if e.Kind == model.EvReceived && cl.rx.lost == 0 {
			cl.rx.answered() // onReceiveAnswer's common case, without its call
		} else {
			c.onReceiveAnswer(cl, e)
		}
	case model.EvLease:
		c.onLease(e)
	case model.EvDeliver:
		c.onDeliver(e)
	case model.EvConsumeStart:
		// Judged by lookupDelivery alone: its common case first, without
		// its call (givenTo).
		if x := c.leases.get(e.Lease); !x.givenTo(e) || !x.m.seqs.noteNear(e.Seq) {
			c.lookupDelivery(e)
		}
	case model.EvConsumeEnd:
		c.onConsumeEnd(e)
	case model.EvExpiredLocal:
		c.onExpiredLocal(e)
	case model.EvAck, model.EvAckLost, model.EvRenew, model.EvRenewLost, model.EvRelease, model.EvReject:
		c.onClientSettle(e)
	case model.EvAcked, model.EvReleased, model.EvRejected:
		c.onSettled(e)
	case model.EvRenewed:
		c.onRenewed(e)
	case model.EvRevive, model.EvReviveSkipped, model.EvReviveRetried, model.EvReviveDropped, model.EvLapse, model.EvLeaseLost:
		c.onLeaseRanOut(e)
	case model.EvDeadLetter, model.EvDLQ, model.EvDrop:
		c.onPolicy(e)
	case model.EvCrash:
		c.onCrash(e)
	case model.EvRestart:
		c.clientOf(e).alive = true
	case model.EvPause, model.EvResume:
		c.wake.pause(e.Client, e.Kind == model.EvPause)
	case model.EvBrokerRestart:
		c.restarts = append(c.restarts, e.Seq+1)
		c.wake.reset()
	case model.EvLeaseReopened:
		c.onLeaseReopened(e)
	case model.EvRebalance:
		c.onRebalance(e)
	case model.EvRequestMode:
		c.onRequestMode(e)
	case model.EvCommit:
		c.onCommit(e)
	case model.EvPhase:
		c.orderPhase(e)
	}
	// Phases, pulls, responses without messages, cache flushes, put
	// failures, producer failures and pauses carry no obligation.
	if c.endWork {
		c.endEvent()
	}
}

// endEvent ends an event that forgot a record or counted a message in
// (endWork): the records forgotten join the free list, and the peak of
// messages held is taken. An event that did neither held no more
// messages at its end than the one before it, whose end took the peak.
func (c *Checker) endEvent() {
	c.endWork = false
	if len(c.forgotten) > 0 {
		c.recycle()
	}
	c.rep.PeakTracked = max(c.rep.PeakTracked, c.tracked)
}

// outOfOrder is ObserveEncoded's check of e against the events before
// it, reached when e's Seq or time fails the fast test there (floorSeq,
// lastAt): a checker that has finished takes no more events, and e must
// follow the last event observed (floorSeq, once one was seen).
func (c *Checker) outOfOrder(e *model.Event) {
	if c.done {
		panic("check: Observe after Finish")
	}
	if c.seen && (e.Seq <= c.floorSeq || e.At < c.lastAt) {
		c.hist.unordered = c.hist.unordered || e.Seq <= c.floorSeq
		c.orderBroken(e)
	}
	c.seen = true
	c.lastAt, c.floorSeq = e.At, e.Seq
}

// ShareBuffer tells the checker that its caller writes the binary form
// of every event it observes (ObserveEncoded's bin) into a buffer of its
// own, back to back in the order observed, and does not reuse the buffer
// before handing it over (Seal): the history then keeps no copy. open
// returns that buffer as it is now. Call it before the first event.
func (c *Checker) ShareBuffer(open func() []byte) {
	if c.seen {
		panic("check: ShareBuffer after the first event")
	}
	c.hist.peek = open
}

// Seal takes buf, the shared buffer (ShareBuffer), which the caller is
// done with, for the history, and returns the empty buffer, with room
// for at least room bytes, that the caller writes the next events' binary
// forms into: one the history no longer needs, or a new one. An empty buf
// is returned as it is.
func (c *Checker) Seal(buf []byte, room int) []byte {
	if c.hist.peek == nil {
		panic("check: Seal of a checker that shares no buffer")
	}
	if len(buf) == 0 {
		return buf
	}
	if len(c.hist.chunks) == 0 {
		c.hist.start()
	}
	c.hist.seal(buf)
	return c.hist.fresh(room)
}

// orderBroken reports e, which follows the last event with a lower or
// equal sequence number or at an earlier time (ObserveEncoded tests it).
func (c *Checker) orderBroken(e *model.Event) {
	c.violate(InvTraceOrder, e.Seq, nil, fmt.Sprintf("event #%d at %v follows event #%d at %v: sequence numbers must grow and time must not go back", e.Seq, e.At, c.floorSeq, c.lastAt))
}

// receiveKind: a client's receive and its answer, which no message's story
// lists (none is noted by a message), so the history does not keep them:
// a short-polling SQS consumer sends tens of thousands of empty receives.
func receiveKind(k model.EventKind) bool { return receiveKinds[k] }

// receiveKinds is true at each kind that receiveKind names: a table, one
// load and test, where a bit set in a constant took a bound test, the
// constant and a bit test (ObserveShared: 1.0 M instructions a default
// run).
var receiveKinds = func() (t [256]bool) {
	for _, k := range []model.EventKind{model.EvReceive, model.EvReceived, model.EvReceiveLost, model.EvParked} {
		t[k] = true
	}
	return t
}()

// clientOf is the event's client, growing the table as needed.
func (c *Checker) clientOf(e *model.Event) *client {
	if e.Client < 0 {
		return &client{}
	}
	for int(e.Client) >= len(c.clients) {
		c.clients = append(c.clients, client{})
	}
	return &c.clients[e.Client]
}

// Violations returns the violations found so far.
func (c *Checker) Violations() []model.Violation {
	return append([]model.Violation(nil), c.viol...)
}

// Tracked is the number of messages held now.
func (c *Checker) Tracked() int { return c.tracked }

// Finish runs the liveness checks and closes the ledger. The Checker takes
// no more events afterwards.
func (c *Checker) Finish(f Final) Report {
	if c.done {
		panic("check: Finish called twice")
	}
	if c.seen {
		c.lastSeq = c.floorSeq
	}
	c.done, c.floorSeq = true, math.MaxInt64
	if !f.Drained {
		c.violate(InvNoDrain, c.lastSeq, nil, fmt.Sprintf("the simulator did not reach quiescence within its drain budget (trace ends at %v, event #%d)", c.lastAt, c.lastSeq))
	}
	for _, q := range f.CommitLag {
		if q.Lag != 0 {
			c.violate(InvCommitLag, c.lastSeq, nil, fmt.Sprintf("group %s topic %s queue %d: maxOffset - commitOffset = %d after the liveness phase, want 0 (the commit offset does not converge once the consumers drained)", q.Group, q.Topic, q.Queue, q.Lag))
		}
	}
	c.finishOrder()
	c.finishLedger()
	r := c.rep
	r.Violations = c.Violations()
	for _, g := range c.groups {
		r.Groups = append(r.Groups, g.counts)
	}
	return r
}
