package pop

import (
	"fmt"
	"sort"

	"popsim/clock"
	"popsim/model"
)

// Orderly (FIFO) POP on both paths: ConsumerOrderInfoManager's table of
// OrderInfo per (topic@group, queue), its lock-free notification
// (ConsumerOrderInfoLockManager) and its persistence. A FIFO pop writes no
// record and no checkpoint: the OrderInfo it leaves blocks the queue until
// the batch is acked or its next-visible times pass, and an unacked message
// is read again in place from the commit offset
// (docs/rocketmq/fifo.md).
//
// Leases. Each FIFO pop lends each message a new lease. A lease ends when
// its message is acked (commitAndNext sets its bit), when a renewal
// replaces it (changeInvisibleTime: a new lease until the new next-visible
// time), when the batch stops blocking its queue (every message not acked
// is past its next-visible time: the leases still live lapse at that
// instant, reported as Lapses in offset order), when a pop re-entering the
// queue with the batch's attemptId replaces the OrderInfo (the old leases
// lapse, Reattempt: the retry reads the same offsets from the commit
// offset with new handles, and the old handles no longer ack anything
// since their popTime is gone), when a broker restart loses the OrderInfo
// change that made it, or when an admin reset clears the queue's order
// state. Lapses due at a call's start are settled by the call (Pop, the
// acks, ChangeInvisibleTime) or by OrderTick, which a driver runs at
// NextOrderTick.

// Orderly constants, RocketMQ's.
const (
	// OrderLockTick is ConsumerOrderInfoLockManager's HashedWheelTimer
	// tick: a lock-free notification fires at the first tick after its
	// time.
	OrderLockTick = 100
	// OrderInfoFlushInterval is BrokerController's period for persisting
	// the OrderInfo table (consumerOrderInfo.json); a restart loses what
	// changed since the last flush.
	OrderInfoFlushInterval = 10000
	// OrderInfoCleanSpan is autoClean's idle limit (CLEAN_SPAN_FROM_LAST, 24 h).
	OrderInfoCleanSpan = 24 * 3600 * 1000
)

// Lapse is a FIFO lease that ended in place: its message is available
// again where it lives (its queue unblocked, or a re-entrant retry took
// the queue over).
type Lapse struct {
	Lease model.LeaseID
	Msg   model.MsgID // the message (0 when it is gone)
	// Group, Topic, QueueID and Offset locate the message.
	Group, Topic string
	QueueID      int32
	Offset       int64
	Deadline     clock.Time // the lease's deadline
	// Reattempt: a pop with the batch's attemptId re-entered the queue and
	// replaced the OrderInfo before the deadline.
	Reattempt bool
}

// orderQueue is one queue's orderly state: its OrderInfo and the live
// lease of each index of its batch.
type orderQueue struct {
	k    qkey
	info model.OrderInfo
	// leases[i] is index i's live lease (0: none: acked, lapsed, replaced
	// or lost), deadlines[i] its deadline (ms).
	leases    []model.LeaseID
	deadlines []int64
	// lapseAt is when the live leases lapse (the batch's unblock time), -1
	// with none live; notifyAt is when the lock-free timer fires, -1 when
	// it is not armed.
	lapseAt, notifyAt int64
}

func (q *orderQueue) live() int {
	n := 0
	for _, l := range q.leases {
		if l != 0 {
			n++
		}
	}
	return n
}

// orderTable is ConsumerOrderInfoManager plus its lock manager and its
// persisted copy. qs and byKey hold the same queues; qs is in name order
// (group, topic, queue), which is the order lapses and notifications of
// one instant come out in.
type orderTable struct {
	names *names
	byKey map[qkey]*orderQueue
	qs    []*orderQueue
	// flushed is the table as last persisted, in key order; nextFlush the
	// next flush time; wheel the lock manager's timer start.
	flushed   []flushedOrder
	nextFlush int64
	wheel     int64
	// pending are lapses made outside a call that reports them (autoClean
	// during a flush); cleared are leases a reset cleared during a pop.
	pending []Lapse
	cleared []model.LeaseID
	// liveCount counts live leases over all queues.
	liveCount int
}

type flushedOrder struct {
	k    qkey
	info model.OrderInfo
}

func newOrderTable(n *names) orderTable { return orderTable{names: n, byKey: map[qkey]*orderQueue{}} }

// get returns k's orderly state, nil when it has no OrderInfo.
func (t *orderTable) get(k qkey) *orderQueue { return t.byKey[k] }

// add makes an empty entry for k, kept in key order.
func (t *orderTable) add(k qkey) *orderQueue {
	q := &orderQueue{k: k, lapseAt: -1, notifyAt: -1}
	t.byKey[k] = q
	i := sort.Search(len(t.qs), func(i int) bool { return !t.less(t.qs[i].k, k) })
	t.qs = append(t.qs, nil)
	copy(t.qs[i+1:], t.qs[i:])
	t.qs[i] = q
	return q
}

// remove drops k's entry (clearBlock, autoClean, a restart).
func (t *orderTable) remove(q *orderQueue) {
	delete(t.byKey, q.k)
	for i, x := range t.qs {
		if x == q {
			t.qs = append(t.qs[:i], t.qs[i+1:]...)
			return
		}
	}
}

// less orders queues by group, topic and queue id.
func (t *orderTable) less(a, b qkey) bool {
	if a.pair != b.pair {
		pa, pb := t.names.pairs[a.pair], t.names.pairs[b.pair]
		if pa.group != pb.group {
			return pa.group < pb.group
		}
		return pa.topic < pb.topic
	}
	return a.qid < b.qid
}

// orderLapse describes lease i of q as a Lapse.
func (b *Broker) orderLapse(q *orderQueue, i int, reattempt bool) Lapse {
	p := b.names.pairs[q.k.pair]
	off := q.info.QueueOffset(i)
	lp := Lapse{Lease: q.leases[i], Group: p.group, Topic: p.topic, QueueID: q.k.qid, Offset: off,
		Deadline: clock.FromMillis(q.deadlines[i]), Reattempt: reattempt}
	if mq := b.queue(p.topic, q.k.qid); mq != nil {
		if m := mq.at(off); m != nil {
			lp.Msg = m.ID
		}
	}
	return lp
}

// endLease ends index i's live lease and returns it (0 when none).
func (b *Broker) endOrderLease(q *orderQueue, i int) model.LeaseID {
	l := q.leases[i]
	if l != 0 {
		q.leases[i] = 0
		b.order.liveCount--
	}
	return l
}

// lapseAll ends every live lease of q as a lapse, in index order.
func (b *Broker) lapseAll(q *orderQueue, reattempt bool, out []Lapse) []Lapse {
	for i, l := range q.leases {
		if l != 0 {
			out = append(out, b.orderLapse(q, i, reattempt))
			b.endOrderLease(q, i)
		}
	}
	q.lapseAt = -1
	return out
}

// reschedule recomputes when q's live leases lapse; a batch that already
// stopped blocking lapses them now, into out.
func (b *Broker) reschedule(nowMs int64, q *orderQueue, out []Lapse) []Lapse {
	q.lapseAt = -1
	if q.live() == 0 {
		return out
	}
	u, ok := q.info.UnblockTime()
	if !ok {
		panic("pop: internal: a live FIFO lease on an acked index")
	}
	if u <= nowMs {
		return b.lapseAll(q, false, out)
	}
	q.lapseAt = u
	return out
}

// settleLapses ends every lease due to lapse by nowMs (and the pending
// ones), appending them to out: by lapse time, then queue order, then
// offset. With no pending lapse and no live FIFO lease (every call of a
// run without orderly consumers) it returns out here, inlined: every pop
// and ack calls it.
func (b *Broker) settleLapses(nowMs int64, out []Lapse) []Lapse {
	if t := &b.order; len(t.pending)|t.liveCount == 0 { // both counts 0 (one test: inlined)
		return out
	}
	return b.settleSome(nowMs, out)
}

// settleSome is settleLapses with lapses pending or FIFO leases live.
func (b *Broker) settleSome(nowMs int64, out []Lapse) []Lapse {
	t := &b.order
	if len(t.pending) > 0 {
		out = append(out, t.pending...)
		t.pending = t.pending[:0]
	}
	if t.liveCount == 0 {
		return out
	}
	for {
		var next *orderQueue
		for _, q := range t.qs {
			if q.lapseAt >= 0 && q.lapseAt <= nowMs && (next == nil || q.lapseAt < next.lapseAt) {
				next = q
			}
		}
		if next == nil {
			return out
		}
		out = b.lapseAll(next, false, out)
	}
}

// armLockFree is updateLockFreeTimestamp: with
// enableNotifyAfterPopOrderLockRelease the queue's timer is (re)armed for
// its lock-free time, and fires at the first wheel tick after it. A null
// lock-free time leaves the timer as it was. Fixed, the lock-free time is
// when the whole batch stops blocking; with the LockFreeTimerFirstPending
// bug it is upstream's getLockFreeTimestamp, the first pending message's
// time.
func (b *Broker) armLockFree(nowMs int64, q *orderQueue) {
	if !b.cfg.EnableNotifyAfterPopOrderLockRelease {
		return
	}
	lf, ok := b.lockFreeTime(nowMs, &q.info)
	if !ok {
		return
	}
	q.notifyAt = b.wheelFire(max(lf, nowMs))
}

// lockFreeTime is the time the lock manager arms a queue's timer for.
func (b *Broker) lockFreeTime(nowMs int64, o *model.OrderInfo) (int64, bool) {
	if b.cfg.Bugs.LockFreeTimerFirstPending {
		return o.LockFreeTimestamp(nowMs)
	}
	if _, ok := o.LockFreeTimestamp(nowMs); !ok {
		return 0, false
	}
	if u, ok := o.UnblockTime(); ok && u > nowMs {
		return u, true
	}
	return nowMs, true
}

// wheelFire is when a HashedWheelTimer started at wheel with 100 ms ticks
// runs a timeout due at t: at the end of the tick t falls in.
func (b *Broker) wheelFire(t int64) int64 {
	w := b.order.wheel
	return w + ((t-w)/OrderLockTick+1)*OrderLockTick
}

// update is ConsumerOrderInfoManager.update for a found FIFO read of
// queue k: the new OrderInfo replaces the old one (whose live leases
// lapse, Reattempt: only a pop with their attemptId can replace a batch
// that still blocks), consumed counts are merged, the orderCountInfo
// entries are added to the response, a lease is granted per message and
// the timer re-armed. It returns the queue's entry.
func (b *Broker) orderUpdate(nowMs int64, ctx *popContext, k qkey, flag model.RetryType, offsets []int64) *orderQueue {
	t := &b.order
	q := t.get(k)
	info := model.OrderInfo{PopTime: ctx.popTime, InvisibleTime: ctx.invisible, HasInvisibleTime: true,
		OffsetList: model.BuildOffsetList(offsets), LastConsumeTimestamp: nowMs, AttemptID: ctx.req.AttemptID}
	if q == nil {
		q = t.add(k)
	} else {
		ctx.res.Lapsed = b.lapseAll(q, true, ctx.res.Lapsed)
		info.MergeConsumedCount(&q.info)
	}
	q.info = info
	q.leases, q.deadlines = q.leases[:0], q.deadlines[:0]
	for range offsets {
		q.leases = append(q.leases, b.newLease())
		q.deadlines = append(q.deadlines, ctx.popTime+ctx.invisible)
	}
	t.liveCount += len(offsets)
	q.lapseAt = ctx.popTime + ctx.invisible
	ctx.res.OrderCounts = q.info.AppendOrderCounts(ctx.res.OrderCounts, flag, k.qid)
	b.armLockFree(nowMs, q)
	return q
}

// orderCount is the reconsumeTimes a client sets from orderCountInfo for
// offset off of q's batch (MQClientAPIImpl.processPopResponse): the
// offset's count, else the queue's minimum; applied when above 0.
func orderCount(q *orderQueue, off int64) int32 {
	if c := q.info.Count(off); c > 0 {
		return int32(c)
	}
	least := int64(0)
	if q.info.ConsumedCount != nil && len(q.info.ConsumedCount) == len(q.info.OffsetList) {
		least = int64(1<<31 - 1)
		for _, e := range q.info.ConsumedCount {
			least = min(least, e.Value)
		}
	}
	return int32(least)
}

// checkBlock is ConsumerOrderInfoManager.checkBlock: false without an
// OrderInfo, else needBlock. needBlock gives a batch popped with no
// invisible time (null or <= 0) the caller's, which moves its unblock time
// later: the live leases then lapse at the new time (a lapse it makes due
// at once waits in pending for the next settle).
func (b *Broker) checkBlock(nowMs int64, k qkey, attemptID string, invisibleMs int64) bool {
	q := b.order.get(k)
	if q == nil {
		return false
	}
	before := q.info.InvisibleTime
	blocked := q.info.NeedBlock(attemptID, invisibleMs, nowMs)
	if q.info.InvisibleTime != before {
		b.order.pending = b.reschedule(nowMs, q, b.order.pending)
	}
	return blocked
}

// clearBlock is ConsumerOrderInfoManager.clearBlock (a pending reset
// applied): the queue's OrderInfo goes, and its live leases end with it.
func (b *Broker) clearBlock(k qkey) {
	q := b.order.get(k)
	if q == nil {
		return
	}
	for i := range q.leases {
		if l := b.endOrderLease(q, i); l != 0 {
			b.order.cleared = append(b.order.cleared, l)
		}
	}
	b.order.remove(q)
}

// attemptMatched is PR #10828's isAttemptIdMatched: attemptID is the
// attemptId of an OrderInfo of pair (on queue qid, or any queue for -1).
func (b *Broker) attemptMatched(pair uint32, qid int32, attemptID string) bool {
	if attemptID == "" {
		return false
	}
	for _, q := range b.order.qs {
		if q.k.pair == pair && (qid < 0 || q.k.qid == qid) && q.info.AttemptID == attemptID {
			return true
		}
	}
	return false
}

// lockBusy draws whether a tryLock finds the lock held by a concurrent
// request (Faults.LockBusyPPM).
func (b *Broker) lockBusy() bool {
	if b.faults.LockBusyPPM <= 0 {
		return false
	}
	b.lockDraws++
	return FaultDraw(b.faults.Seed^lockSalt, b.lockDraws) < b.faults.LockBusyPPM
}

const lockSalt = 0x6c6f636b62757379

// OrderQueueState is one queue's orderly state, for State.
type OrderQueueState struct {
	Group, Topic string
	QueueID      int32
	Info         model.OrderInfo
	// Leases holds each index's live lease (0: none) and Deadlines their
	// deadlines (ms); LapseAt is when they lapse and NotifyAt when the
	// lock-free timer fires (-1: none).
	Leases            []model.LeaseID
	Deadlines         []int64
	LapseAt, NotifyAt int64
}

// OrderState is the orderly part of State: the live table, the table as
// last persisted (what a restart brings back) and the next flush.
type OrderState struct {
	Queues    []OrderQueueState
	Flushed   []OrderQueueState // Info only
	NextFlush int64
}

func (b *Broker) orderState() OrderState {
	st := OrderState{NextFlush: b.order.nextFlush}
	for _, q := range b.order.qs {
		p := b.names.pairs[q.k.pair]
		st.Queues = append(st.Queues, OrderQueueState{Group: p.group, Topic: p.topic, QueueID: q.k.qid, Info: q.info.Clone(),
			Leases: append([]model.LeaseID(nil), q.leases...), Deadlines: append([]int64(nil), q.deadlines...), LapseAt: q.lapseAt, NotifyAt: q.notifyAt})
	}
	for _, f := range b.order.flushed {
		p := b.names.pairs[f.k.pair]
		st.Flushed = append(st.Flushed, OrderQueueState{Group: p.group, Topic: p.topic, QueueID: f.k.qid, Info: f.info.Clone()})
	}
	sortOrder(st.Queues)
	sortOrder(st.Flushed)
	return st
}

func sortOrder(xs []OrderQueueState) {
	sort.Slice(xs, func(i, j int) bool {
		a, c := &xs[i], &xs[j]
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Topic != c.Topic {
			return a.Topic < c.Topic
		}
		return a.QueueID < c.QueueID
	})
}

// checkOrder: every queue is indexed once and in key order, has a lease
// and a deadline slot per index, live leases only on indexes not acked and
// within the leases granted, counted right, and a lapse time exactly when
// it has live leases.
func (b *Broker) checkOrder() error {
	t := &b.order
	if len(t.qs) != len(t.byKey) {
		return fmt.Errorf("pop: invariant: FIFO table lists %d queues, indexes %d", len(t.qs), len(t.byKey))
	}
	live := 0
	for i, q := range t.qs {
		if t.byKey[q.k] != q || i > 0 && !t.less(t.qs[i-1].k, q.k) {
			return fmt.Errorf("pop: invariant: FIFO queue %s out of order or not indexed", b.describe(q.k))
		}
		if len(q.leases) != len(q.info.OffsetList) || len(q.deadlines) != len(q.leases) {
			return fmt.Errorf("pop: invariant: FIFO queue %s has %d leases for %d offsets", b.describe(q.k), len(q.leases), len(q.info.OffsetList))
		}
		for j, l := range q.leases {
			if l == 0 {
				continue
			}
			live++
			if !q.info.IsNotAck(j) || l > b.lease.last {
				return fmt.Errorf("pop: invariant: FIFO queue %s: lease %d live on index %d (acked %v, last lease %d)", b.describe(q.k), l, j, !q.info.IsNotAck(j), b.lease.last)
			}
		}
		if (q.lapseAt >= 0) != (q.live() > 0) {
			return fmt.Errorf("pop: invariant: FIFO queue %s: lapse time %d with %d live leases", b.describe(q.k), q.lapseAt, q.live())
		}
		if u, ok := q.info.UnblockTime(); q.lapseAt >= 0 && (!ok || u != q.lapseAt) {
			return fmt.Errorf("pop: invariant: FIFO queue %s lapses at %d, unblocks at %d", b.describe(q.k), q.lapseAt, u)
		}
	}
	if live != t.liveCount {
		return fmt.Errorf("pop: invariant: %d live FIFO leases counted as %d", live, t.liveCount)
	}
	return nil
}

// orderLeases lists the live FIFO leases, for the lease uniqueness check.
func (b *Broker) orderLeases(dst []model.LeaseID) []model.LeaseID {
	for _, q := range b.order.qs {
		for _, l := range q.leases {
			if l != 0 {
				dst = append(dst, l)
			}
		}
	}
	return dst
}
