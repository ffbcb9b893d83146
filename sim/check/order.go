package check

import (
	"fmt"
	"slices"

	"popsim/clock"
	"popsim/model"
)

// Orderly (FIFO) groups: a subscribe event with Reason orderly marks its
// group. For such a group the checker keeps, per queue of its topic, the
// live leases and the messages owed an ack, and checks:
//
//   - fifo-order (safety): a lease is never granted for an offset while an
//     earlier offset of the queue is still lent under another batch's
//     live lease, nor while an earlier offset that is owed an ack (lent
//     before, not acked, in a DLQ or dropped) is not lent again first in
//     the same batch (a redelivery comes back in its original order); and
//     one batch lends a queue's offsets in increasing order. A broker
//     restart since the earlier offset was last lent excuses it (the
//     broker loses its order state by design).
//   - fifo-reentry (safety): a receive that retries the attemptId of one
//     whose answer was lost (receive r=reattempt) is answered empty while
//     a lease the lost answer carried is still live: the retry should
//     have re-entered the batch.
//   - fifo-stall (liveness): once the run is in its liveness phase, a
//     queue's live leases lapse no later than their latest deadline plus
//     the group's slack (the subscribe event's Span), and none is left
//     live past it at the end.
//
// By design for orderly groups: a lease may lapse before its deadline when
// a re-entrant retry replaced it (lapse r=reattempt); a message acked
// while an earlier one of its queue was not is lent again behind it
// (cause order_gap), and an ack by the handle of an earlier pop than the
// queue's latest acks nothing, answered SUCCESS; a message produced into a
// queue that is blocked (it has live leases) is not visible, so no parked
// receive owes it a wakeup, while an ack that ends a queue's last live
// lease with messages waiting behind it makes them visible.

// orderQueue is one queue of an orderly group.
type orderQueue struct {
	live                 []*lease            // leases in flight at the queue
	owed                 map[int64]*msgState // offsets lent at least once and not settled
	held                 clock.Time          // the latest deadline of the leases since the queue was last free
	maxProduced, maxLent int64               // the highest offsets produced and lent (-1: none)
	// gaps are offsets acked while an earlier offset of the queue was owed
	// an ack, until the commit offset passes them: a later answer may
	// lend them again (a new batch's order state forgets their ack bit).
	gaps map[int64]bool
	// popMs is the popTime (in ms, +1; 0: none yet) of the latest answer
	// that lent at the queue: the pop whose order state (RocketMQ's
	// OrderInfo) the broker keeps for it. An ack by the handle of a pop
	// with another popTime is ignored (commitAndNext's -2). A re-entrant
	// retry in the same millisecond has the same popTime: the old
	// handles still ack.
	popMs int64
}

// groupQueue is one group's view of one queue: orderly state and Pull
// rebalances are per group, since groups on a topic consume it apart.
type groupQueue struct {
	group int32
	q     queueKey
}

// orderBook is the checker's orderly state.
type orderBook struct {
	queues map[groupQueue]*orderQueue
	// The current batch: the leases of one engine answer are consecutive
	// lease events of one client at one instant.
	batch           int64
	lastLeaseSeq    int64
	lastLeaseClient int32
	lastLeaseAt     clock.Time
	liveness        bool
	livenessAt      clock.Time
}

func (b *orderBook) queue(g *group, p place) *orderQueue {
	if b.queues == nil {
		b.queues = map[groupQueue]*orderQueue{}
	}
	k := groupQueue{g.idx, queueKey{p.topic, p.queue}}
	q := b.queues[k]
	if q == nil {
		q = &orderQueue{owed: map[int64]*msgState{}, maxProduced: -1, maxLent: -1}
		b.queues[k] = q
	}
	return q
}

// orderPlace is the message's place in its produced topic: the place
// orderly leases lend it at. ok is false for a message not (yet) known
// there.
func orderPlace(m *msgState) (place, bool) {
	for i := range m.places {
		if p := m.places[i].place; p.topic == m.topic {
			return p, true
		}
	}
	return place{}, false
}

// leaseBatch numbers the batch a lease event belongs to.
func (c *Checker) leaseBatch(e *model.Event) int64 {
	b := &c.order
	if !(e.Seq == b.lastLeaseSeq+1 && e.Client == b.lastLeaseClient && e.At == b.lastLeaseAt) || b.batch == 0 {
		b.batch++
	}
	b.lastLeaseSeq, b.lastLeaseClient, b.lastLeaseAt = e.Seq, e.Client, e.At
	return b.batch
}

// orderGap explains a lease of an orderly group's message at its place
// with no token: the message was acked while an earlier message of its
// queue was not, so the broker's commit offset stayed before it and this
// batch, which reads from that earlier message (or a later one, when the
// batch in between did not reach it and so forgot its ack), lends it
// again.
func (c *Checker) orderGap(m *msgState, l *lease, p place) bool {
	if !m.g.orderly || p.topic != m.topic {
		return false
	}
	q := c.order.queue(m.g, p)
	if q.gaps[p.offset] {
		return true
	}
	for _, x := range q.live {
		if x.batch == l.batch && x.m != m {
			if xp, ok := orderPlace(x.m); ok && xp.offset < p.offset {
				return true
			}
		}
	}
	return false
}

// orderLease checks and records a lease of an orderly group.
// It is inlined at its caller: only an orderly group pays a call.
func (c *Checker) orderLease(m *msgState, l *lease, e *model.Event) {
	if m.g.orderly {
		c.orderLeaseOrderly(m, l, e)
	}
}

// orderLeaseOrderly is orderLease for an orderly group.
func (c *Checker) orderLeaseOrderly(m *msgState, l *lease, e *model.Event) {
	p := m.places[l.at].place
	if p.topic != m.topic {
		return
	}
	q := c.order.queue(m.g, p)
	for _, x := range q.live {
		xp, ok := orderPlace(x.m)
		if !ok || xp.offset == p.offset {
			continue
		}
		switch {
		case x.batch != l.batch && xp.offset < p.offset:
			c.violate(InvFifoOrder, e.Seq, m, fmt.Sprintf("lease %d lends %s to client %d while the earlier offset %d of its queue is still lent to client %d (lease %d, until %v)",
				l.id, p, l.client, xp.offset, x.client, x.id, x.deadline))
		case x.batch == l.batch && xp.offset > p.offset:
			c.violate(InvFifoOrder, e.Seq, m, fmt.Sprintf("lease %d lends %s after offset %d in the same answer: out of order", l.id, p, xp.offset))
		}
	}
	for _, off := range q.owedBelow(p.offset) {
		o := q.owed[off]
		if c.liveAt(q, o, l.batch) {
			continue
		}
		if op, ok := orderPlace(o); ok && c.restartSince(o.places[o.lookupPlace(op)].leased) {
			continue
		}
		c.violate(InvFifoOrder, e.Seq, m, fmt.Sprintf("lease %d lends %s while the earlier offset %d (message %d, owed an ack) was not lent again first",
			l.id, p, off, o.id))
	}
	c.orderAdd(q, l)
	q.owed[p.offset] = m
	q.maxLent = max(q.maxLent, p.offset)
	q.popMs = l.granted.Millis() + 1
}

// owedBelow lists the queue's owed offsets below off, ascending.
func (q *orderQueue) owedBelow(off int64) []int64 {
	var out []int64
	for o := range q.owed { // collected, then sorted
		if o < off {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// liveAt: message o has a live lease of batch at q.
func (c *Checker) liveAt(q *orderQueue, o *msgState, batch int64) bool {
	for _, x := range q.live {
		if x.m.id == o.id && x.batch == batch {
			return true
		}
	}
	return false
}

// orderAdd records a live lease at its queue.
func (c *Checker) orderAdd(q *orderQueue, l *lease) {
	q.live = append(q.live, l)
	if l.deadline > q.held {
		q.held = l.deadline
	}
}

// orderSuccessor: a renewal's lease replaces its predecessor at the queue
// (a late renewal of a forgotten message's lease has none: it joins the
// queue's live leases all the same). popMs is popTimeOf the predecessor
// (0: not known).
func (c *Checker) orderSuccessor(n *lease, popMs int64) {
	m := n.m
	if !m.g.orderly || n.at >= len(m.places) || m.places[n.at].place.topic != m.topic {
		return
	}
	// A batch of its own (it lends nothing new), negative so that no
	// answer's batch equals it, that remembers the popTime of the pop it
	// descends from: an orderly renewal keeps the handle's popTime.
	n.batch = -popMs
	c.orderAdd(c.order.queue(m.g, m.places[n.at].place), n)
}

// popTimeOf is the popTime, in ms +1, of the answer that lent l or the
// lease l renews (0: not known): an answer's lease has its grant time, a
// renewal's lease keeps its predecessor's (orderSuccessor).
func popTimeOf(l *lease) int64 {
	if l.batch <= 0 {
		return -l.batch
	}
	return l.granted.Millis() + 1
}

// orderEnd takes an ended lease out of its queue; a lapse more than the
// group's slack after the queue's latest deadline, in the liveness phase,
// is a stall. An accepted ack that ends the queue's last live lease with
// messages produced behind it makes them visible (a wakeup is owed).
// It is inlined at its caller: only an orderly group pays a call.
func (c *Checker) orderEnd(l *lease, by model.EventKind, e *model.Event) {
	if l.m.g.orderly {
		c.orderEndOrderly(l, by, e)
	}
}

// orderEndOrderly is orderEnd for an orderly group.
func (c *Checker) orderEndOrderly(l *lease, by model.EventKind, e *model.Event) {
	m := l.m
	if l.at >= len(m.places) || m.places[l.at].place.topic != m.topic {
		return
	}
	p := m.places[l.at].place
	q := c.order.queue(m.g, p)
	i := -1
	for k, x := range q.live {
		if x == l {
			i = k
		}
	}
	if i < 0 {
		return
	}
	if by == model.EvLapse && e != nil && c.order.liveness && e.At > q.held.Add(m.g.orderSlack) {
		c.violate(InvFifoStall, e.Seq, m, fmt.Sprintf("queue %s/%d unblocked at %v, later than its leases' latest deadline %v plus the group's slack %v",
			p.topic, p.queue, e.At, q.held, m.g.orderSlack))
	}
	q.live = append(q.live[:i], q.live[i+1:]...)
	if len(q.live) == 0 && (by == model.EvAcked || by == model.EvLapse) {
		// The queue is free: the blocking episode ends and its latest
		// deadline is forgotten. A renewal's successor continues it, and a
		// restart reloads the flushed order state, which may still block
		// until then.
		q.held = 0
	}
	if len(q.live) == 0 && by == model.EvAcked && e != nil && q.maxProduced > q.maxLent {
		ev := *e
		ev.Topic, ev.Queue = p.topic, p.queue
		c.wake.arrival(c, &ev, m, p)
	}
}

// orderQueueOf is the orderly queue an arrival of m at e's place is in
// (nil: not orderly, or a copy elsewhere).
// It is inlined at its caller: only an orderly group pays a call.
func (c *Checker) orderQueueOf(m *msgState, e *model.Event) *orderQueue {
	if !m.g.orderly {
		return nil
	}
	return c.orderQueueOfOrderly(m, e)
}

// orderQueueOfOrderly is orderQueueOf for an orderly group.
func (c *Checker) orderQueueOfOrderly(m *msgState, e *model.Event) *orderQueue {
	if e.Topic != "" && e.Topic != m.topic {
		return nil
	}
	p, ok := orderPlace(m)
	if !ok {
		return nil
	}
	return c.order.queue(m.g, p)
}

// orderProduce notes a produce for an orderly group g (its caller tests
// that: only an orderly group pays a call); it reports whether the queue
// is blocked (its message is not visible yet).
func (c *Checker) orderProduce(g *group, p place) bool {
	q := c.order.queue(g, p)
	q.maxProduced = max(q.maxProduced, p.offset)
	return len(q.live) > 0
}

// orderAcked drops a message the engine accepted an ack of (by lease l)
// from its queue's owed offsets (a message dropped or sent to a DLQ by its
// client stays owed until the client's ack of it reaches the engine).
// It is inlined at its caller: only an orderly group pays a call.
func (c *Checker) orderAcked(m *msgState, l *lease) {
	if m.g.orderly {
		c.orderAckedOrderly(m, l)
	}
}

// orderAckedOrderly is orderAcked for an orderly group. An ack by the
// handle of a pop whose popTime is not the queue's latest pop's: the
// broker answers it SUCCESS and changes nothing (commitAndNext's -2), so
// the offset stays owed. A broker restart may have reloaded an older
// pop's order state, which such an ack does match: the offset then stays
// owed in the checker only, which restartSince excuses.
func (c *Checker) orderAckedOrderly(m *msgState, l *lease) {
	p, ok := orderPlace(m)
	if !ok {
		return
	}
	q := c.order.queue(m.g, p)
	if pt := popTimeOf(l); pt != 0 && q.popMs != 0 && pt != q.popMs && samePlace(m.places[l.at].place, p) {
		return
	}
	delete(q.owed, p.offset)
	for off := range q.owed { // any one will do: order does not matter
		if off < p.offset {
			if q.gaps == nil {
				q.gaps = map[int64]bool{}
			}
			q.gaps[p.offset] = true // acked out of order: the commit offset stays before it
			return
		}
	}
}

// orderAckedLate drops a message the checker had forgotten (settled, its
// ack lost or late) from its queue's owed offsets, by id.
func (c *Checker) orderAckedLate(e *model.Event) {
	cl := c.clientOf(e)
	if !cl.known || !c.groups[cl.group].orderly {
		return
	}
	for k, q := range c.order.queues { // deletion only: order does not matter
		if k.group != cl.group {
			continue
		}
		for off, o := range q.owed {
			if o.id == e.Msg {
				delete(q.owed, off)
			}
		}
	}
}

// orderCommit forgets the out-of-order acks a group's commit offset passed.
func (c *Checker) orderCommit(g *group, k queueKey, offset int64) {
	if !g.orderly {
		return
	}
	q := c.order.queues[groupQueue{g.idx, k}]
	if q == nil {
		return
	}
	for off := range q.gaps { // deletion only: order does not matter
		if off < offset {
			delete(q.gaps, off)
		}
	}
}

// orderPhase notes the liveness phase's start.
func (c *Checker) orderPhase(e *model.Event) {
	if e.Reason == model.RLiveness && !c.order.liveness {
		c.order.liveness, c.order.livenessAt = true, e.At
	}
}

// orderReceive follows a client's re-entrant retries (fifo-reentry). A
// client that is not retrying and keeps no lost batch has nothing to
// follow but a retry's start or a lost answer: that test is inlined at
// the callers (nearly every receive and answer).
func (c *Checker) orderReceive(cl *client, e *model.Event) {
	if cl.retrying || cl.lostSome || e.Kind == model.EvReceiveLost || e.Reason == model.RReattempt {
		c.followRetry(cl, e)
	}
}

// lostBatch is client cl's lost batch (client.lost).
func (c *Checker) lostBatch(cl *client) []*lease {
	if cl.lost == 0 {
		return nil
	}
	return c.lostBatches[cl.lost-1]
}

// setLostBatch makes b client cl's lost batch, giving it one the first
// time it has leases.
func (c *Checker) setLostBatch(cl *client, b []*lease) {
	if cl.lost == 0 {
		if len(b) == 0 {
			return
		}
		c.lostBatches = append(c.lostBatches, nil)
		cl.lost = int32(len(c.lostBatches))
	}
	c.lostBatches[cl.lost-1], cl.lostSome = b, len(b) > 0
}

// followRetry is orderReceive's work.
func (c *Checker) followRetry(cl *client, e *model.Event) {
	switch e.Kind {
	case model.EvReceive:
		if e.Reason != model.RReattempt {
			c.setLostBatch(cl, c.lostBatch(cl)[:0])
			cl.retrying = false
			return
		}
		cl.retrying = true
	case model.EvReceiveLost:
		ps := cl.pending.get()
		if !cl.rx.allLost(ps) {
			// Another receive's answer may carry some of them: which
			// ones this loss took is unknown, and none is blamed.
			return
		}
		b := c.lostBatch(cl)
		for _, r := range ps {
			if l := r.l; r.live() && l.awaiting && l.m.g.orderly {
				b = append(b, l)
			}
		}
		c.setLostBatch(cl, b)
	case model.EvReceived:
		if cl.retrying && e.Count == 0 { // empty, whatever the code (a poll timeout too)
			for _, l := range c.lostBatch(cl) {
				if !l.ended {
					c.violate(InvFifoReentry, e.Seq, l.m, fmt.Sprintf("client %d retried its receive with the same attemptId and was answered empty while lease %d (message %d), which the lost answer carried, was still live: the retry should have re-entered its batch",
						e.Client, l.id, l.m.id))
					break
				}
			}
		}
		c.setLostBatch(cl, c.lostBatch(cl)[:0])
		cl.retrying = false
	}
}

// finishOrder reports queues whose leases outlived their deadline past the
// group's slack at the end of the trace (liveness).
func (c *Checker) finishOrder() {
	if !c.order.liveness {
		return
	}
	var keys []groupQueue
	for k := range c.order.queues { // collected, then sorted
		keys = append(keys, k)
	}
	sortGroupQueues(keys)
	for _, k := range keys {
		q := c.order.queues[k]
		if len(q.live) == 0 {
			continue
		}
		g := c.groups[k.group]
		if c.lastAt > q.held.Add(g.orderSlack) && c.lastAt > c.order.livenessAt {
			c.violate(InvFifoStall, c.lastSeq, q.live[0].m, fmt.Sprintf("queue %s/%d is still blocked at the end (%v): its leases' latest deadline was %v, the group's slack %v",
				k.q.topic, k.q.queue, c.lastAt, q.held, g.orderSlack))
		}
	}
}

func sortGroupQueues(ks []groupQueue) {
	for i := 1; i < len(ks); i++ { // insertion sort: a handful of queues
		for j := i; j > 0 && groupQueueLess(ks[j], ks[j-1]); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

func groupQueueLess(a, b groupQueue) bool {
	if a.group != b.group {
		return a.group < b.group
	}
	if a.q.topic != b.q.topic {
		return a.q.topic < b.q.topic
	}
	return a.q.queue < b.q.queue
}
