package check

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// lease is one lease an engine granted, as the trace tells its story.
//
// What a client's event and an engine's answer read of it (its id,
// message, delivery, place, holder, line, deadline and flags) comes
// first, in 64 bytes: a lease starts a cache line (its own allocation, or
// msgState's firstLease; TestLeaseLayout), so those events touch one line
// of it. The rest (its cause, grant time, successor, batch and reopening)
// is read when it is delivered, renewed or judged.
type lease struct {
	id       model.LeaseID
	m        *msgState
	dlv      *delivery // the client's handling; nil until delivered
	at       int       // index into m.places
	deadline clock.Time
	client   int32
	line     int32

	ended   bool
	endedBy model.EventKind
	// settledByClient: acked, renewed away, released or rejected: the
	// promise to its holder ended before its deadline, on purpose.
	settledByClient bool
	nack            bool // made by a renewal that asks for a retry (RECONSUME_LATER)
	renewNack       bool // the client's latest renewal of it asks for a retry
	// survived: the client acked or renewed it and the engine said it
	// removed a different lease (the KV cache deletes by offset only).
	survived bool
	// ignored: an ack or renewal the engine accepted left it in flight: a
	// violation already reported; its redelivery is unexplained.
	ignored bool
	// forkRoot: a renewal of a lease that had already ended made it, which
	// started a line of its own: its redelivery is that line's origin.
	forkRoot bool
	// awaiting: lent, and the answer carrying it has not reached its client
	// yet (nor been lost): the client may still be given it.
	awaiting bool
	// deadLettered: the engine's own policy ended the message with this
	// lease (its answer to a release at the limit then makes nothing
	// available).
	deadLettered bool
	// attempt is the engine's delivery count of this lease (here, beside
	// the flags, it fills what would be padding).
	attempt int32

	cause   string // why it was granted: first, or the redelivery's cause
	granted clock.Time
	next    *lease // what replaced it: a renewal's lease, a failed revive's retry
	// batch numbers the engine answer that lent it (orderly groups; a
	// renewal's lease has a batch of its own, 0 or less: minus the popTime
	// in ms +1 of the answer that lent its predecessor, 0 when not known;
	// popTimeOf).
	batch int64
	// reopened: the engine broke the accepted ack that had ended it
	// (EvLeaseReopened): it is in flight again on a line of its own, and
	// its redelivery has this cause (broker_restart, revive_cut_off).
	reopened string
}

// delivery is a lease's message in a client's hands: what the client did
// with it. A renewal's lease shares its predecessor's delivery.
type delivery struct {
	m       *msgState
	client  int32
	ok      bool // consumed successfully
	failed  bool // consumed without success
	held    bool // the client may still act on it
	crashed bool // its holder crashed before finishing it
	ackSent bool
	ackDone bool // the engine answered an ack of it
	ackLost bool
	ackBad  bool // the engine answered an ack sent in time with an error
	// ackLate: the client sent its ack at or after the lease's deadline;
	// the engine's refusal of it is the expiry's doing, not a cause of its
	// own (a Kafka poll's acks held back past the lock by a slow record).
	ackLate bool
	// marks: dlvStaleAck, dlvSkew (two flags in one byte keep a delivery,
	// and the message record that holds one, in their allocation class).
	marks     dlvMarks
	dropped   bool // a rebalance dropped the queue it was popped for: the client let it go unacked
	acked     bool // an ack of it was accepted
	lastLease *lease
}

// dlvMarks are rarer flags of a delivery.
type dlvMarks uint8

const (
	dlvStaleAck dlvMarks = 1 << iota // the client acked or renewed a lease that a renewal had replaced
	dlvSkew                          // the client judged the lease expired before its deadline
)

// leaseTable holds the leases of messages still held.
type leaseTable struct {
	w window[lease]
}

// get is the lease id if it is held (New makes the table's window).
func (t *leaseTable) get(id model.LeaseID) *lease {
	l, _ := t.w.get(uint64(id))
	return l
}

func (t *leaseTable) put(l *lease) { t.w.put(uint64(l.id), l) }

// putNext is put's common case (window.putNext), inlined: a new lease's
// id is mostly the next.
func (t *leaseTable) putNext(l *lease) bool { return t.w.putNext(uint64(l.id), l) }

func (t *leaseTable) forget(l *lease) { t.w.forget(uint64(l.id), t.w.top) }

// promised is whether l's holder may still rely on it at now: not ended by
// the client's own doing, and before its deadline. A lease the engine ended
// early (a revive before the deadline) stays promised.
func (l *lease) promised(now clock.Time) bool {
	return !l.settledByClient && l.deadline > now
}

func (c *Checker) onLease(e *model.Event) {
	cl := c.clientOf(e)
	if !cl.known {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("lease %d granted to client %d, which never subscribed", e.Lease, e.Client))
		return
	}
	if x := c.leases.get(e.Lease); x != nil && c.relent(x, cl, e) {
		return
	} else if e.Lease == 0 || x != nil {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("lease %d granted twice or without an id", e.Lease))
		return
	}
	g := c.groups[cl.group]
	m, _ := g.msgs.get(uint64(e.Msg)) // msgOf's common case, without its call
	if m == nil {
		if m = c.msgOf(g, e); m == nil {
			return
		}
	}
	if !m.seqs.noteNear(e.Seq) {
		m.note(e)
	}
	// servedMsg's common case, inlined (its call cost some ten
	// instructions a lease): the group's remembered entry is the topic's.
	if t := remembered(c.wake.lastMsg, waitKey{group: g.idx, topic: m.topic}); t != nil {
		t.gen++
	} else {
		c.wake.servedMsg(waitKey{group: g.idx, topic: m.topic})
	}
	l := m.newLease()
	// Cleared, then written field by field: a literal with values (a
	// lease holds pointers) is built on the stack and copied in.
	*l = lease{}
	l.id, l.m, l.client, l.granted, l.deadline, l.attempt, l.awaiting = e.Lease, m, e.Client, e.At, e.Deadline, e.Attempt, true
	l.batch = c.leaseBatch(e)
	c.grant(m, l, placeOf(e), e)
	if g.ordered {
		g.busy[queueKey{e.Topic, e.Queue}]++
	}
	c.orderLease(m, l, e)
	if !c.leases.putNext(l) {
		c.leases.put(l)
	}
	m.leases = append(m.leases, l)
	if !cl.pending.tryPush(pendRef{l, m.gen}) { // else lend's common case
		cl.lend(l)
	}
}

// relent: the engine lent a lease again to the client it had lent it to,
// which never received it (SQS FIFO's ReceiveRequestAttemptId retry
// returns the same lease with a new deadline). The lease goes on.
func (c *Checker) relent(x *lease, cl *client, e *model.Event) bool {
	if x.client != e.Client || x.ended || x.dlv != nil || x.m.id != e.Msg || placeOf(e) != x.m.places[x.at].place {
		return false
	}
	x.m.note(e)
	x.deadline, x.awaiting = e.Deadline, true
	c.wake.servedMsg(waitKey{group: x.m.g.idx, topic: x.m.topic})
	cl.lend(x)
	return true
}

// grant finds what lets the engine lend m at p: a token there, or a broker
// restart since the place was last leased. It sets the lease's line and
// cause and checks that no other lease of the line is promised.
func (c *Checker) grant(m *msgState, l *lease, p place, e *model.Event) {
	i := 0 // mostly the produced place, found without lookupPlace's call
	if len(m.places) == 0 || !samePlace(m.places[0].place, p) {
		i = m.lookupPlace(p)
	}
	poor := false
	if i < 0 {
		c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("lease %d lends message %d at %s, where it never lived (it lives at %s)", l.id, m.id, p, m.placeList()))
		i = m.placeIndex(p, true)
		l.at, l.cause, poor = i, CauseUnexplained, true
		m.places[i].leased = e.Seq + 1
		c.checkConcurrent(m, l, e)
		return
	}
	l.at = i
	if t, ok := m.takeToken(i); ok {
		l.line, l.cause, poor = t.line, t.cause, t.poor
		switch {
		case poor:
			l.cause = CauseUnexplained // the event that made the token was a violation
		case l.cause == "":
			l.cause = c.story(t.prev)
		}
		// RocketMQ's orderly count (orderCountInfo) carries over only the
		// offsets of the queue's previous batch (mergeOffsetConsumedCount):
		// a batch read in between resets it by design, so orderly groups
		// are judged by the order invariants, not by this one.
		if p := t.prev; t.inPlace && !m.g.orderly && p != nil && p.attempt > 0 {
			c.checkCount(m, l, p, t, e)
		}
	} else if c.restartSince(m.places[i].leased) {
		l.line, l.cause = m.fork(CauseBrokerRestart), CauseBrokerRestart
		c.checkReloadedCount(m, l, e)
	} else if c.orderGap(m, l, p) {
		l.line, l.cause = m.fork(CauseOrderGap), CauseOrderGap
	} else if m.g.switched != 0 && m.pulledAt != 0 && m.pulledAt == m.places[i].leased {
		l.line, l.cause = m.fork(CauseModeSwitch), CauseModeSwitch
	} else {
		l.line, l.cause, poor = c.lineAt(m, i), CauseUnexplained, true
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("lease %d lends message %d at %s again with nothing to explain it: no copy or release made it available there and no broker restart came since it was lent there at event #%d", l.id, m.id, p, m.places[i].leased-1))
	}
	m.places[i].leased = e.Seq + 1
	// Mostly m's first lease: no other to check, and no call.
	concurrent := len(m.leases) > 0 && c.checkConcurrent(m, l, e)
	if l.cause == CauseUnexplained && !poor && !concurrent {
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("lease %d lends message %d again, but the lease it came back from had been settled: %s", l.id, m.id, c.unexplainedWhy(m)))
	}
	if m.successes > 0 && l.cause != CauseReconsumeLater && l.cause != causeFirst {
		m.lines[l.line].since = l.cause
	}
}

// checkCount: a lease lent again in place counts one more delivery than
// the lease p it came back from, unless a broker restart came since p ran
// out: the engine then reloads the state it last wrote (checkReloadedCount).
func (c *Checker) checkCount(m *msgState, l, p *lease, t token, e *model.Event) {
	if int(t.restarts) < len(c.restarts) {
		c.checkReloadedCount(m, l, e)
		return
	}
	if l.attempt <= p.attempt {
		c.violate(InvDeliveryCount, e.Seq, m, fmt.Sprintf("lease %d lends message %d again in place with delivery count %d, but lease %d it came back from had count %d already: the engine lost a delivery from its count", l.id, m.id, l.attempt, p.id, p.attempt))
	}
}

// checkReloadedCount: after a broker restart, an engine that lends in
// place reloads the delivery count it last wrote (m.kept) and counts the
// new lease on top of it. Kafka never writes an acquisition, and a lock
// timeout whose write failed (r=unpersisted) stands in memory only, so the
// count may fall back to what was written before them, never below.
func (c *Checker) checkReloadedCount(m *msgState, l *lease, e *model.Event) {
	if m.g.orderly || m.kept == 0 || l.attempt > m.kept {
		return
	}
	c.violate(InvDeliveryCount, e.Seq, m, fmt.Sprintf("lease %d lends message %d after a broker restart with delivery count %d, but the engine had written count %d for it before: the restart lost a delivery it had persisted", l.id, m.id, l.attempt, m.kept))
}

// keep notes that the engine wrote lease l's delivery count for good: it
// ran out in place (not r=unpersisted) or was released.
func keep(m *msgState, l *lease) {
	if !m.g.orderly && l.attempt > m.kept {
		m.kept = l.attempt
	}
}

// restartSince reports whether a broker restart came after trace
// position t (a place never leased is at 0).
func (c *Checker) restartSince(t int64) bool {
	return t != 0 && len(c.restarts) > 0 && c.restarts[len(c.restarts)-1] > t
}

// lineAt is the line of the latest lease at place i (for an unexplained
// lease, so that concurrency is still judged).
func (c *Checker) lineAt(m *msgState, i int) int32 {
	for k := len(m.leases) - 1; k >= 0; k-- {
		if m.leases[k].at == i {
			return m.leases[k].line
		}
	}
	return 0
}

// checkConcurrent reports a lease granted while another of its line is
// still promised.
func (c *Checker) checkConcurrent(m *msgState, l *lease, e *model.Event) bool {
	for _, o := range m.leases {
		if o.line == l.line && o.promised(e.At) {
			c.violate(InvConcurrentLease, e.Seq, m, fmt.Sprintf("lease %d lends message %d to client %d at %v while lease %d (client %d, until %v) is still promised on the same line", l.id, m.id, l.client, e.At, o.id, o.client, o.deadline))
			return true
		}
	}
	return false
}

func (c *Checker) unexplainedWhy(m *msgState) string {
	for k := len(m.leases) - 1; k >= 0; k-- {
		if o := m.leases[k]; o.ignored {
			return fmt.Sprintf("the engine accepted an ack or renewal of lease %d and kept it", o.id)
		}
	}
	return "no cause"
}

// story is the cause of a redelivery after lease l ended without an ack,
// decided from what the trace has told of l so far.
func (c *Checker) story(l *lease) string {
	switch {
	case l == nil:
		return CauseUnexplained
	case l.reopened != "":
		return l.reopened
	case l.nack:
		return CauseReconsumeLater
	case l.ignored:
		return CauseUnexplained
	case l.survived, l.forkRoot:
		return l.m.lines[l.line].origin
	}
	d := l.dlv
	switch {
	case d == nil:
		return CausePopLost
	case d.crashed:
		return CauseConsumerCrash
	case d.dropped:
		return CauseRebalance
	case d.ackLost:
		return CauseAckLost
	case d.ackBad:
		return CauseAckRejected
	case d.marks&dlvStaleAck != 0:
		return CauseStaleHandle
	case d.marks&dlvSkew != 0:
		return CauseClockSkew
	case d.ackSent && !d.ackDone:
		return CauseAckLost
	case d.failed:
		return CauseReconsumeLater
	}
	return CauseLeaseExpiry
}

// onLeaseRanOut is the engine ending a lease on its own: a revive (with or
// without a copy), a retry of a failed revive, a lapse in place, a lease
// forgotten.
func (c *Checker) onLeaseRanOut(e *model.Event) {
	l := c.leases.get(e.Lease)
	if l == nil {
		c.ranOutUnknown(e)
		return
	}
	m := l.m
	m.note(e)
	poor := false
	// A lapse before the deadline must say why: its holder's share session
	// closed (Kafka releases the lease with the connection).
	early := e.Kind == model.EvLeaseLost || e.Kind == model.EvLapse && e.Reason == model.RSessionClosed
	if l.ended {
		poor = true
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("%s of lease %d, which had already ended by %s", e.Kind, l.id, l.endedBy))
	} else if reattempt := e.Kind == model.EvLapse && e.Reason == model.RReattempt && m.g.orderly; reattempt {
		// A re-entrant retry took the batch over: the answer carrying this
		// lease was lost, so nobody relies on it any more.
		l.settledByClient = true
	} else if !early && e.At < l.deadline {
		poor = true
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("%s of lease %d at %v, before its deadline %v", e.Kind, l.id, e.At, l.deadline))
	}
	c.end(l, e)
	switch e.Kind {
	case model.EvRevive:
		t := m.addToken(placeOf(e), l.line, l, "")
		t.poor = poor
		c.wake.arrival(c, e, m, placeOf(e))
	case model.EvLapse:
		if e.Reason == model.RSessionClosed {
			l.settledByClient = true // its holder is gone: nothing is promised
		}
		t := m.addToken(m.places[l.at].place, l.line, l, "")
		t.poor, t.inPlace, t.restarts = poor, true, int32(len(c.restarts))
		if e.Reason != model.RUnpersisted {
			keep(m, l)
		}
		c.wake.arrival(c, e, m, m.places[l.at].place)
	case model.EvLeaseLost:
		if e.Reason == model.RSuperseded {
			// SQS delivers the message again while the lease is in flight
			// (a copy on a server that missed the receive): a second copy
			// by design, on a line of its own.
			ln := m.fork(CauseDuplicateCopy)
			m.addToken(m.places[l.at].place, ln, nil, CauseDuplicateCopy)
		}
	case model.EvReviveRetried:
		c.successor(l, e, l.nack)
	}
	c.maybeForget(m)
}

// ranOutUnknown: the engine ended a lease nobody granted (or one already
// forgotten); a copy it made is still a copy, but an unexplained one.
func (c *Checker) ranOutUnknown(e *model.Event) {
	if e.Kind != model.EvRevive && e.Kind != model.EvLapse {
		return
	}
	why := "which was never granted for message %d"
	if _, forgotten := c.leases.w.get(uint64(e.Lease)); forgotten {
		why = "which had already ended: message %d was settled with nothing in flight"
	}
	for _, g := range c.groupsAt(e.Topic) {
		m := c.msgOf(g, e)
		if m == nil {
			continue
		}
		m.note(e)
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("%s of lease %d, "+why, e.Kind, e.Lease, m.id))
		t := m.addToken(placeOf(e), 0, nil, CauseUnexplained)
		t.poor = true
	}
}

// groupsAt is the groups a place's topic concerns: those consuming it, or
// the group whose RocketMQ retry topic it is.
func (c *Checker) groupsAt(topic string) []*group {
	var out []*group
	for _, gi := range c.topics[topic] {
		out = append(out, c.groups[gi])
	}
	if len(out) > 0 {
		return out
	}
	for t, gis := range c.topics { // a match is unique: the order does not matter
		for _, gi := range gis {
			g := c.groups[gi]
			if topic == model.BuildPopRetryTopicV1(t, g.name) || topic == model.BuildPopRetryTopicV2(t, g.name) {
				return []*group{g}
			}
		}
	}
	return nil
}

// end closes a lease, by event e. It inlines: only a group that consumes
// in order (inOrder) pays a call (endInOrder), where every lease's end
// took one (default scenario: 61 k calls).
func (c *Checker) end(l *lease, e *model.Event) {
	if !l.ended {
		l.ended, l.endedBy = true, e.Kind
		if l.m.g.inOrder {
			c.endInOrder(l, e)
		}
	}
}

// endInOrder is the rest of end for a group that consumes in order: its
// queue's leases in flight, and the orderly checks.
func (c *Checker) endInOrder(l *lease, e *model.Event) {
	if g := l.m.g; g.ordered {
		p := l.m.places[l.at].place
		g.busy[queueKey{p.topic, p.queue}]--
	}
	c.orderEnd(l, e.Kind, e)
}

// successor makes the lease that replaces l (a renewal's, a failed
// revive's retry): same message, place, holder and delivery, same line.
func (c *Checker) successor(l *lease, e *model.Event, nack bool) *lease {
	n := l.m.newLease()
	*n = lease{id: e.Next, m: l.m, at: l.at, client: l.client, line: l.line, cause: l.cause, granted: e.At, deadline: e.Deadline, attempt: l.attempt, dlv: l.dlv, nack: nack}
	if e.Next == 0 || c.leases.get(e.Next) != nil {
		c.violate(InvTraceForm, e.Seq, l.m, fmt.Sprintf("%s of lease %d names no new lease, or one granted before (%d)", e.Kind, l.id, e.Next))
		return n
	}
	l.next = n
	c.leases.put(n)
	l.m.leases = append(l.m.leases, n)
	if n.dlv != nil {
		n.dlv.lastLease = n
	}
	return n
}

// onLeaseReopened: the engine broke an ack it had accepted and reported
// (Ended): a broker restart lost it (broker_restart), or the revive round
// stopped before reading it (revive_cut_off). The lease is in flight
// again until its deadline and will run out. Its holder settled it and
// relies on it no more (it is not promised), and its message, settled or
// not, comes back on a line of its own whose redelivery has that cause. A lease of a
// message the checker had forgotten brings the message back, as a late
// renewal does.
func (c *Checker) onLeaseReopened(e *model.Event) {
	l := c.leases.get(e.Lease)
	if l == nil {
		c.reopenForgotten(e)
		return
	}
	m := l.m
	m.note(e)
	if !l.ended {
		c.violate(InvTraceForm, e.Seq, m, fmt.Sprintf("lease %d reopened (%s), but it had not ended", l.id, reopenCause(e)))
		return
	}
	why := reopenCause(e)
	l.ended, l.endedBy, l.reopened, l.settledByClient = false, model.EvNone, why, true
	l.deadline = e.Deadline
	l.line, l.forkRoot = m.fork(why), true
}

// reopenForgotten brings back the message of a reopened lease the checker
// had forgotten (its ack settled it and nothing was left in flight).
func (c *Checker) reopenForgotten(e *model.Event) {
	_, forgotten := c.leases.w.get(uint64(e.Lease))
	gi, known := c.byName[e.Group]
	if !forgotten || !known || !e.HasLocation() {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("lease %d reopened (%s, group %q), but it was never granted or names no place", e.Lease, reopenCause(e), e.Group))
		return
	}
	m := c.msgOf(c.groups[gi], e)
	if m == nil {
		return
	}
	m.note(e)
	at := m.lookupPlace(placeOf(e))
	if at < 0 {
		at = m.placeIndex(placeOf(e), true)
	}
	why := reopenCause(e)
	n := m.newLease()
	*n = lease{id: e.Lease, m: m, at: at, client: -1, granted: e.At, deadline: e.Deadline, settledByClient: true, reopened: why, forkRoot: true}
	n.line, n.cause = m.fork(why), why
	c.leases.put(n)
	m.leases = append(m.leases, n)
}

// reopenCause is the redelivery cause of a lease EvLeaseReopened reopens.
func reopenCause(e *model.Event) string {
	if e.Reason == model.RAckCutOff {
		return CauseReviveCutOff
	}
	return CauseBrokerRestart
}
