package check

import (
	"fmt"
	"slices"

	"popsim/model"
)

// otherLease judges a client event e whose lease, l, is not held (nil)
// or was lent to another client (onDeliver, lookupDelivery): an
// ack-location violation, unless it is a late word. It answers nil.
func (c *Checker) otherLease(l *lease, e *model.Event) *lease {
	if l == nil {
		if _, forgotten := c.leases.w.get(uint64(e.Lease)); forgotten {
			return nil // a late word about a settled message: nothing to judge
		}
		c.violate(InvAckLocation, e.Seq, nil, fmt.Sprintf("client %d: %s names lease %d, which was never granted", e.Client, e.Kind, e.Lease))
		return nil
	}
	l.m.note(e)
	if l.reopened != "" && l.client < 0 {
		return nil // a late word about a lease a restart reopened after the checker forgot it
	}
	c.violate(InvAckLocation, e.Seq, l.m, fmt.Sprintf("client %d: %s names lease %d, which was lent to client %d", e.Client, e.Kind, l.id, l.client))
	return nil
}

// onDeliver: the client has the message. Pull deliveries carry no lease.
func (c *Checker) onDeliver(e *model.Event) {
	if e.Lease == 0 {
		c.onPullDeliver(e)
		return
	}
	// The lease e names, if the client was given it; anything else is an
	// ack-location violation (otherLease). Written here, at the one
	// caller, as in lookupDelivery: a call fewer a delivery.
	l := c.leases.get(e.Lease)
	if l == nil || l.client != e.Client {
		c.otherLease(l, e)
		return
	}
	m := l.m
	if !m.seqs.noteNear(e.Seq) {
		m.note(e)
	}
	if l.dlv != nil {
		c.violate(InvTraceForm, e.Seq, m, fmt.Sprintf("lease %d delivered twice", l.id))
		return
	}
	if p := placeOf(e); !samePlace(p, m.places[l.at].place) {
		c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("client %d was delivered message %d at %s but lease %d lent it at %s", e.Client, m.id, p, l.id, m.places[l.at].place))
	}
	if !c.shown.equal(e.Shown, m.topic) {
		c.violate(InvPresentedTopic, e.Seq, m, fmt.Sprintf("client %d was shown topic %q for message %d, produced on %q", e.Client, e.Shown, m.id, m.topic))
	}
	d := m.newDelivery()
	*d = delivery{client: e.Client, held: true, m: m, lastLease: l}
	l.awaiting = false
	for n := l; n != nil; n = n.next {
		n.dlv = d
	}
	if c.clients[d.client].held.tryPush(heldRef{d, m.gen}) { // hold's common case
		m.held++
	} else {
		c.hold(m, d)
	}
	c.countDelivery(m, l.cause)
}

// hold puts a delivery in its client's hands. The client's list keeps it
// until an ack is sent or its lease ends, so that a crash can be blamed.
// It inlines (cost 80, with no local for the client's record): the
// default scenario's 61 k deliveries make a call fewer each (callgrind:
// 0.67 M instructions outside the runtime).
func (c *Checker) hold(m *msgState, d *delivery) {
	m.held++
	c.clients[d.client].held.push(heldRef{d, m.gen}, pruneHeld)
}

// pruneHeld keeps the entries of ds that its client may still act on. A
// list that keeps half its storage or more gets twice the
// storage: a push consumer holds some thirty deliveries at once (its
// threads' and its local cache's), and pruning every 64 entries
// visited two entries a delivery (2.5 M instructions of the default
// scenario, callgrind).
func pruneHeld(ds []heldRef) []heldRef {
	out := ds[:0]
	for _, r := range ds {
		if d := r.d; r.live() && (d.held || !d.ackSent && d.lastLease != nil && !d.lastLease.ended) {
			out = append(out, r)
		}
	}
	clear(ds[len(out):])
	if 2*len(out) >= cap(ds) {
		out = slices.Grow(out, cap(ds))
	}
	return out
}

// release takes a delivery out of its client's hands. d is not nil
// (every caller has one at hand). It inlines (cost 85 -> 78, without the
// test of d and with maybeForget's test written out): a call fewer a
// consumption's end.
func (c *Checker) release(m *msgState, d *delivery) {
	if d.held {
		d.held = false
		m.held--
		if m.settled != unsettled { // maybeForget
			c.forgetSettled(m)
		}
	}
}

func (c *Checker) countDelivery(m *msgState, cause string) {
	c.rep.Deliveries++
	m.g.counts.Deliveries++
	if m.delivered && cause != causeFirst {
		c.rep.Redeliveries++
		c.rep.RedeliveriesByCause[cause]++
	}
	m.delivered = true
}

// lookupDelivery returns the delivery a consumer event names: the
// lease's lookup is written out, as in onDeliver (otherLease, which
// answers nil, judges the rest): a call level less for the 91 k consumer
// events of the default scenario.
func (c *Checker) lookupDelivery(e *model.Event) (*lease, *delivery) {
	if e.Lease == 0 {
		return nil, nil
	}
	l := c.leases.get(e.Lease)
	if l == nil || l.client != e.Client {
		c.otherLease(l, e)
		return nil, nil
	}
	if !l.m.seqs.noteNear(e.Seq) {
		l.m.note(e)
	}
	return c.delivered(l, e)
}

// givenTo reports whether l, the lease client event e names (nil when
// not held), was lent to e's client and delivered. With the event noted
// near its message's first event (noteNear, which does nothing else when
// it cannot), that is the common case of lookupDelivery and
// engineAnswer: their hot callers take it before calling them for the
// rest (a call fewer each).
func (l *lease) givenTo(e *model.Event) bool {
	return l != nil && l.client == e.Client && l.dlv != nil
}

// delivered is the delivery of l, the lease client event e names and was
// given (lookupDelivery).
func (c *Checker) delivered(l *lease, e *model.Event) (*lease, *delivery) {
	if l.dlv == nil {
		c.neverDelivered(l, e)
		return nil, nil
	}
	return l, l.dlv
}

// neverDelivered reports client event e on lease l, which its client was
// lent and never given.
func (c *Checker) neverDelivered(l *lease, e *model.Event) {
	c.violate(InvAckLocation, e.Seq, l.m, fmt.Sprintf("client %d: %s of lease %d, which it was never delivered", e.Client, e.Kind, l.id))
}

// onConsumeEnd counts a success, and a duplicate when the group had
// already consumed the message successfully.
func (c *Checker) onConsumeEnd(e *model.Event) {
	if e.Lease == 0 {
		c.onPullConsumed(e)
		return
	}
	l, d := c.leases.get(e.Lease), (*delivery)(nil)
	if l.givenTo(e) && l.m.seqs.noteNear(e.Seq) { // lookupDelivery's common case
		d = l.dlv
	} else {
		l, d = c.lookupDelivery(e)
	}
	if d == nil {
		return
	}
	m := l.m
	if !e.Reason.Consumed() {
		d.failed = true
		c.release(m, d)
		return
	}
	d.ok = true
	cur := d.lastLease // the client's consumption follows its renewals
	if !m.firstSuccess(cur.line) {
		c.success(m, cur.line, cur, "")
	}
	c.commit(m, e.Reason)
	c.release(m, d) // last: it may forget the message
}

// commit records whether a successful consumption's application commit
// held (success) or failed after the client acked (not-done): a message
// is acked but not done while every successful consumption of it failed
// its commit. That is the application's side of the at-least-once
// boundary (it acked before committing), never a violation; the report
// counts it (Report.AckedNotDone).
func (c *Checker) commit(m *msgState, r model.Reason) {
	switch {
	case r == model.RNotDone && m.commit == commitNone:
		m.commit = commitFailed
		c.rep.AckedNotDone++
	case r == model.RSuccess && m.commit != commitDone:
		if m.commit == commitFailed {
			c.rep.AckedNotDone--
		}
		m.commit = commitDone
	}
}

// success records one successful consumption on a line; cause is what a
// duplicate would be blamed on, in case it is one: dupCause(l) when the
// consumption was of lease l (worked out only then: a message's first
// success is no duplicate).
func (c *Checker) success(m *msgState, ln int32, l *lease, cause string) {
	m.successes++
	if m.successes == 1 {
		m.firstOKLine = ln
		m.g.indexPassable(m)
		return
	}
	if l != nil {
		cause = dupCause(l)
	}
	if ln != m.firstOKLine {
		// Two lines consumed it: blame the fork (the later one when both
		// are forks).
		cause = m.lines[ln].origin
		if ln == 0 {
			cause = m.lines[m.firstOKLine].origin
		}
	}
	c.rep.Duplicates++
	m.g.counts.Duplicates++
	c.rep.DuplicatesByCause[cause]++
}

// firstSuccess is success's common case, inlined (a call fewer a
// consumption): it records m's first successful consumption, on line ln,
// and reports true, when m's group is not orderly (indexPassable has
// nothing to do then); false leaves it to success.
func (m *msgState) firstSuccess(ln int32) bool {
	if m.successes != 0 || m.g.orderly {
		return false
	}
	m.successes, m.firstOKLine = 1, ln
	return true
}

// dupCause is what a duplicate consumption of l's delivery is blamed on,
// if it is one and on the line of the first success: what brought the
// message back after that success (a retry passes on the cause before it),
// else l's own cause, else that of the latest redelivery on its line (the
// first success was of a later lease than l).
func dupCause(l *lease) string {
	m := l.m
	if s := m.lines[l.line].since; s != "" {
		return s
	}
	if l.cause != causeFirst {
		return l.cause
	}
	for k := len(m.leases) - 1; k >= 0; k-- {
		if o := m.leases[k]; o.line == l.line && o.cause != causeFirst {
			return o.cause
		}
	}
	if p := m.pull; p != nil && p.cause != causeFirst && p.cause != CauseReconsumeLater {
		return p.cause // a pull consumer read it again, before this success (a group switched to POP)
	}
	return CauseUnexplained
}

// onExpiredLocal: the client gave the lease up by its own clock. Before
// consuming, it lets go of the message; before the deadline, its clock is
// off.
func (c *Checker) onExpiredLocal(e *model.Event) {
	if e.Lease == 0 && e.Reason == model.RDropped {
		c.onPullLetGo(e)
		return
	}
	l, d := c.lookupDelivery(e)
	if d == nil {
		return
	}
	if e.Reason == model.RSkipped { // orderly: let go behind a failed message, on purpose
		c.release(l.m, d)
		return
	}
	if e.Reason == model.RDropped { // its queue was rebalanced away: let go unacked, on purpose
		d.dropped = true
		c.release(l.m, d)
		return
	}
	if e.At < l.deadline {
		d.marks |= dlvSkew
	}
	if e.Reason == model.RBefore {
		c.release(l.m, d)
	}
}

// onClientSettle notes what the client asked of a lease, or that the
// request was lost.
func (c *Checker) onClientSettle(e *model.Event) {
	l := c.leases.get(e.Lease)
	if !l.givenTo(e) || !l.m.seqs.noteNear(e.Seq) { // else lookupDelivery's common case
		if l, _ = c.lookupDelivery(e); l == nil {
			return
		}
	}
	d := l.dlv
	if l.ended && l.endedBy == model.EvRenewed && e.Kind != model.EvRenewLost && e.Kind != model.EvAckLost {
		d.marks |= dlvStaleAck // a renewal had replaced the lease the client names
	}
	switch e.Kind {
	case model.EvAck:
		d.ackSent = true
		d.ackLate = e.At >= l.deadline
	case model.EvAckLost:
		// An ack that died with its client's connection is the crash's doing.
		d.ackLost = e.Reason != model.RClientGone
		d.crashed = d.crashed || e.Reason == model.RClientGone
	case model.EvRenew:
		l.renewNack = e.Reason == model.RNack
	}
}

// engineAnswer finds the lease an engine answer names. The engine's effect
// (Ended) is a fact even when the client had no right to the lease: then
// it is applied, and the client gains nothing from it (d is nil).
func (c *Checker) engineAnswer(e *model.Event) (*lease, *delivery) {
	l := c.leases.get(e.Lease)
	if l == nil {
		c.removedByForgotten(e)
		return c.lookupDelivery(e)
	}
	if l.client == e.Client { // lookupDelivery, with l found already
		if !l.m.seqs.noteNear(e.Seq) {
			l.m.note(e)
		}
		return c.delivered(l, e)
	}
	l.m.note(e)
	if l.reopened != "" && l.client < 0 {
		// A late word about a lease a restart reopened after the checker
		// forgot its message: what the answer removed ends, as for a
		// forgotten lease.
		if e.Code == 0 && e.Ended != 0 {
			if x := c.leases.get(e.Ended); x != nil && x.m == l.m && !x.ended {
				x.settledByClient = true
				c.end(x, e)
				c.maybeForget(x.m)
			}
		}
		return nil, nil
	}
	c.violate(InvAckLocation, e.Seq, l.m, fmt.Sprintf("client %d: %s names lease %d, which was lent to client %d", e.Client, e.Kind, l.id, l.client))
	if e.Code == 0 && e.Ended != 0 {
		c.removed(l, e)
	}
	return nil, nil
}

// removedByForgotten applies an answer to a late word about a forgotten
// lease that removed another, live lease (the KV cache deletes by offset):
// that lease ended.
func (c *Checker) removedByForgotten(e *model.Event) {
	if e.Code != 0 || e.Ended == 0 || e.Ended == e.Lease {
		return
	}
	if x := c.leases.get(e.Ended); x != nil && !x.ended {
		x.m.note(e)
		x.settledByClient = true
		c.end(x, e)
		c.maybeForget(x.m)
	}
}

// onSettled is the engine's answer to an ack, a release or a reject.
func (c *Checker) onSettled(e *model.Event) {
	l, d := c.leases.get(e.Lease), (*delivery)(nil)
	if l.givenTo(e) && l.m.seqs.noteNear(e.Seq) { // engineAnswer's common case
		d = l.dlv
	} else {
		l, d = c.engineAnswer(e)
	}
	if d == nil {
		if e.Kind == model.EvAcked && e.Code == 0 {
			c.orderAckedLate(e) // a late ack of a forgotten message: the engine owes it no more
		}
		return
	}
	m := l.m
	if e.Kind == model.EvAcked {
		d.ackDone = true
	}
	if e.Code != 0 {
		if e.Kind == model.EvAcked && !d.ackLate {
			d.ackBad = true
		}
		return
	}
	if e.Ended != 0 && e.Ended == l.id { // removed's common case, without its call
		l.settledByClient = true
		c.end(l, e)
	} else {
		c.removed(l, e)
	}
	switch e.Kind {
	case model.EvAcked:
		c.orderAcked(m, l)
		d.acked = true
		if d.ok {
			c.settle(m, settledAck, "")
		} else if o := consumedUnacked(m, e.Client); o != nil {
			// A proxy keys handles by message id: the client's ack of the
			// delivery it consumed can reach the engine with the handle of
			// its other delivery of the message.
			o.acked = true
			c.settle(m, settledAck, "")
		}
	case model.EvReleased:
		if x := c.leases.get(e.Ended); x != nil && !x.deadLettered {
			t := m.addToken(m.places[x.at].place, x.line, x, CauseReconsumeLater)
			t.inPlace, t.restarts = true, int32(len(c.restarts))
			keep(m, x)
			c.wake.arrival(c, e, m, m.places[x.at].place)
		}
	case model.EvRejected:
		c.settle(m, settledDrop, model.RRejectPolicy.String())
	}
	c.maybeForget(m)
}

// consumedUnacked is a delivery of m to client that was consumed
// successfully and not acked yet.
func consumedUnacked(m *msgState, client int32) *delivery {
	for _, l := range m.leases {
		if d := l.dlv; d != nil && d.client == client && d.ok && !d.acked {
			return d
		}
	}
	return nil
}

// removed applies an engine answer that names the lease it removed
// (Ended): normally the one the client named; the KV cache's offset-only
// delete may remove another lease of the message at the same place, and
// then the two swap lines (the client's line ends, the other goes on).
func (c *Checker) removed(l *lease, e *model.Event) {
	if e.Ended == 0 {
		if !l.ended {
			l.ignored = true
			inv := InvAckIgnored
			if e.Kind == model.EvRenewed {
				inv = InvRenewIgnored
			}
			c.violate(inv, e.Seq, l.m, fmt.Sprintf("the engine accepted %s of lease %d (in flight until %v) but removed no lease", e.Kind, l.id, l.deadline))
			l.settledByClient = true
		}
		return
	}
	x := l // l is held: it was found for this event
	if e.Ended != l.id {
		x = c.leases.get(e.Ended)
	}
	if x == nil || x.m != l.m {
		c.violate(InvTraceForm, e.Seq, l.m, fmt.Sprintf("%s of lease %d removed lease %d, which is not a lease of message %d", e.Kind, l.id, e.Ended, l.m.id))
		return
	}
	if x != l && !l.ended {
		x.line, l.line = l.line, x.line
		l.survived = true
		l.settledByClient = true
	}
	x.settledByClient = true
	c.end(x, e)
}

// onRenewed: the engine answered a renewal with a new lease (Next) and the
// lease it removed (Ended), or (Kafka RENEW, SQS ChangeMessageVisibility)
// with a lease it kept and gave a new deadline (Next names a lease already
// granted: the one named, or the member's current lease of the record,
// as Kafka acknowledges by offset).
func (c *Checker) onRenewed(e *model.Event) {
	if e.Code == 0 && e.Next != 0 && e.Ended == 0 {
		if x := c.leases.get(e.Next); x != nil {
			c.kept(x, e)
			return
		}
	}
	l, d := c.engineAnswer(e)
	if d != nil && e.Code == 0 && e.Next == 0 && e.Ended == 0 && l.m.g.orderly {
		return // an orderly renewal that made and ended no lease (acked, or another pop's)
	}
	if d == nil && e.Code == 0 && e.Next != 0 {
		c.renewForgotten(e)
	}
	if d == nil || e.Code != 0 {
		return
	}
	if e.Next == 0 && e.Ended == 0 {
		// Accepted and renewed nothing (Kafka skips acknowledgements of
		// offsets below the start offset): fine for a lease that had ended.
		if !l.ended {
			l.ignored, l.settledByClient = true, true
			c.violate(InvRenewIgnored, e.Seq, l.m, fmt.Sprintf("the engine accepted %s of lease %d (in flight until %v) but renewed and removed nothing", e.Kind, l.id, l.deadline))
		}
		return
	}
	m := l.m
	wasLive := !l.ended
	n := c.successor(l, e, l.renewNack)
	if !wasLive {
		origin := CauseRenewAfterRevive
		if l.endedBy == model.EvRenewed {
			origin = CauseStaleHandle
		}
		n.line, n.cause, n.forkRoot = m.fork(origin), origin, true
		if l.endedBy == model.EvLapse && m.g.orderly {
			m.takeToken(l.at) // orderly: the renewer holds the lapsed message again, in place
		}
	}
	c.removed(l, e)
	if l.next == n {
		c.orderSuccessor(n, popTimeOf(l))
	}
	c.maybeForget(m)
}

// kept applies a renewal that kept lease x and set its deadline.
func (c *Checker) kept(x *lease, e *model.Event) {
	x.m.note(e)
	l := c.leases.get(e.Lease)
	switch {
	case l != nil && l.client != e.Client:
		c.violate(InvAckLocation, e.Seq, x.m, fmt.Sprintf("client %d: %s names lease %d, which was lent to client %d", e.Client, e.Kind, l.id, l.client))
	case x.m.id != e.Msg || x.client != e.Client:
		c.violate(InvTraceForm, e.Seq, x.m, fmt.Sprintf("%s of lease %d for client %d extended lease %d of message %d (client %d)", e.Kind, e.Lease, e.Client, x.id, x.m.id, x.client))
	case x.ended:
		c.violate(InvUnexplained, e.Seq, x.m, fmt.Sprintf("%s of lease %d extended lease %d, which had already ended by %s", e.Kind, e.Lease, x.id, x.endedBy))
	default:
		x.deadline = e.Deadline
		if l == x {
			x.nack = l.renewNack
		}
	}
}

// renewForgotten: the engine renewed a lease of a message the checker
// had already forgotten (settled, nothing in flight): a late renewal of an
// ended lease, which the engine answers with a new lease all the same (no
// existence check). The message comes back on an extra line whose
// redelivery is renew_after_revive.
func (c *Checker) renewForgotten(e *model.Event) {
	if _, forgotten := c.leases.w.get(uint64(e.Lease)); !forgotten || !e.HasLocation() {
		return
	}
	cl := c.clientOf(e)
	if !cl.known || c.leases.get(e.Next) != nil {
		return
	}
	m := c.msgOf(c.groups[cl.group], e)
	if m == nil {
		return
	}
	m.note(e)
	at := m.lookupPlace(placeOf(e))
	if at < 0 {
		at = m.placeIndex(placeOf(e), true)
	}
	n := m.newLease()
	*n = lease{id: e.Next, m: m, at: at, client: e.Client, granted: e.At, deadline: e.Deadline, forkRoot: true}
	n.line, n.cause = m.fork(CauseRenewAfterRevive), CauseRenewAfterRevive
	c.leases.put(n)
	m.leases = append(m.leases, n)
	// Orderly: the lease blocks its queue like any other until it lapses
	// (RocketMQ's changeInvisibleTime moves the offset's next-visible time
	// in the OrderInfo whatever its ack bit, and a restart that reloaded
	// an older OrderInfo forgot the ack), so its deadline counts towards
	// the queue's fifo-stall limit.
	c.orderSuccessor(n, 0)
}

// onPolicy: a message sent to a DLQ or dropped by the client, its proxy or
// the engine. An engine's dead letter that names no lease (SQS moves or
// deletes a message that is not in flight) names the group instead.
func (c *Checker) onPolicy(e *model.Event) {
	var m *msgState
	var l *lease
	if (e.Kind == model.EvDeadLetter || e.Kind == model.EvDrop && e.Reason == model.RNoMatch) && e.Lease == 0 {
		gi, ok := c.byName[e.Group]
		if !ok {
			c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("%s of message %d names no lease and no known group (%q)", e.Kind, e.Msg, e.Group))
			return
		}
		if m = c.msgOf(c.groups[gi], e); m == nil {
			return
		}
	} else if e.Lease != 0 {
		l = c.leases.get(e.Lease)
		if l == nil {
			if _, forgotten := c.leases.w.get(uint64(e.Lease)); forgotten {
				return // a late word about a settled message: nothing to judge
			}
			c.violate(InvAckLocation, e.Seq, nil, fmt.Sprintf("%s names lease %d, which was never granted", e.Kind, e.Lease))
			return
		}
		m = l.m
		if l.dlv == nil && l.client == e.Client {
			// The client's proxy took the lease itself (a DLQ on receipt):
			// no delivery to count, but the proxy acks it next.
			l.dlv = m.newDelivery()
			*l.dlv = delivery{client: e.Client, m: m, lastLease: l}
			l.awaiting = false
		}
	} else {
		m = c.pullMsg(e)
		if m == nil {
			return
		}
	}
	m.note(e)
	switch {
	case e.Kind == model.EvDrop && e.Reason == model.RNone, e.Kind == model.EvDeadLetter && e.Reason == model.RNone:
		c.violate(InvUnnamedDrop, e.Seq, m, fmt.Sprintf("message %d %s without a named policy", m.id, e.Kind))
		c.settle(m, settledDrop, "unnamed")
	case e.Kind == model.EvDrop:
		c.settle(m, settledDrop, e.Reason.String())
	case e.Kind == model.EvDLQ, e.Kind == model.EvDeadLetter && e.HasLocation():
		c.settle(m, settledDLQ, "")
	default:
		c.settle(m, settledDrop, e.Reason.String())
	}
	if e.Kind == model.EvDeadLetter || e.Reason == model.RNoMatch && e.Lease == 0 {
		// The engine ended the message, or the group's filter never lets
		// it out: nothing of it is available any more. (A client that
		// drops a message it was lent, as no-match too, acks it next.)
		clear(m.tokens)
		m.tokens = m.tokens[:0]
		if l != nil {
			l.deadLettered = true
			c.end(l, e)
		}
	}
	c.maybeForget(m)
}

// onReceiveAnswer: the answer to a client's receive reached it (its
// deliveries follow at once) or was lost, which the caller has counted
// already (receives.lostAnswer: the order checks read the count first).
// The client's leases that no answer on its way can carry any more are
// let go; an answer that arrived is counted only after that test, while
// its own leases still count as on their way.
func (c *Checker) onReceiveAnswer(cl *client, e *model.Event) {
	if e.Kind == model.EvReceiveLost {
		c.releaseLost(cl)
		return
	}
	if cl.rx.lost > 0 {
		c.releaseLost(cl) // before this answer's deliveries, which it counts as on their way
	}
	cl.rx.answered()
}

// noneAwaited: no lease lent to client cl is on its way to it any more
// (its answer was lost, or it crashed); their messages may be forgotten.
func (c *Checker) noneAwaited(cl *client) {
	ps := cl.pending.get()
	for _, r := range ps {
		if l := r.l; r.live() && l.awaiting {
			l.awaiting = false
			c.maybeForget(l.m)
		}
	}
	clear(ps)
	cl.pending.set(ps[:0])
	cl.rx.released()
}

// onCrash: the client's deliveries die with it.
func (c *Checker) onCrash(e *model.Event) {
	cl := c.clientOf(e)
	cl.alive = false
	c.crashOwner(e)
	c.noneAwaited(cl)
	cl.rx.crashed()
	ds := cl.held.get()
	for _, r := range ds {
		if !r.live() {
			continue // a delivery of a message forgotten since
		}
		d := r.d
		if d.held || !d.ackSent && d.lastLease != nil && !d.lastLease.ended {
			d.crashed = true
		}
		c.release(d.m, d)
	}
	cl.held.set(ds[:0])
	c.wake.forgetClient(e.Client)
}
