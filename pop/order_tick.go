package pop

import (
	"popsim/clock"
	"popsim/model"
)

// OrderTickResult reports one OrderTick.
type OrderTickResult struct {
	// Lapsed are the FIFO leases whose queues stopped blocking, in the
	// order they lapsed (by time, then queue, then offset).
	Lapsed []Lapse
	// Woken are parked pops the lock-free notifications woke
	// (notifyLongPollingRequestIfNeed: the all-queue key, else the queue's
	// own), which the driver re-runs.
	Woken []Wakeup
}

// OrderTick runs the orderly path's timed work due at or before now: the
// lapses of FIFO leases whose queues stopped blocking, then the lock-free
// timer's notifications (ConsumerOrderInfoLockManager, with
// enableNotifyAfterPopOrderLockRelease), by time then queue.
func (b *Broker) OrderTick(now clock.Time) OrderTickResult {
	nowMs := now.Millis()
	b.touch(nowMs)
	var res OrderTickResult
	res.Lapsed = b.settleLapses(nowMs, res.Lapsed)
	for {
		var next *orderQueue
		for _, q := range b.order.qs {
			if q.notifyAt >= 0 && q.notifyAt <= nowMs && (next == nil || q.notifyAt < next.notifyAt) {
				next = q
			}
		}
		if next == nil {
			return res
		}
		next.notifyAt = -1
		if !b.cfg.EnableNotifyAfterPopOrderLockRelease {
			continue // the task checks the switch when it runs
		}
		if w, ok := b.notifyLockFree(next.k); ok {
			res.Woken = append(res.Woken, w)
		}
	}
}

// notifyLockFree is notifyLongPollingRequestIfNeed: when the queue holds
// messages past max(the buffer's latest offset, the commit offset), one
// request parked on the all-queue key is woken, else one on the queue's
// own key.
func (b *Broker) notifyLockFree(k qkey) (Wakeup, bool) {
	p := b.names.pairs[k.pair]
	q := b.queue(p.topic, k.qid)
	if q == nil || q.maxOffset() <= max(b.buf.latest(k), b.queryOffset(k)) {
		return Wakeup{}, false
	}
	if w, ok := b.polls.notifyKey(qkey{k.pair, -1}, nil, true); ok {
		return w, true
	}
	return b.polls.notifyKey(k, nil, true)
}

// OrderIdle reports whether the broker holds no orderly state (no FIFO
// queue and no pending lapse): NextOrderTick has nothing then. It inlines,
// so that a caller asking after every call (the simulator's adapter) pays
// a test where most brokers never serve a FIFO pop.
func (b *Broker) OrderIdle() bool { return len(b.order.pending)|len(b.order.qs) == 0 }

// NextOrderTick is when OrderTick next has work: the earliest lapse or
// lock-free notification, or now when lapses wait to be reported; false
// when nothing is pending.
func (b *Broker) NextOrderTick() (clock.Time, bool) {
	t := &b.order
	best, ok := int64(0), false
	if len(t.pending) > 0 {
		best, ok = b.lastNow, true
	}
	for _, q := range t.qs {
		for _, at := range [2]int64{q.lapseAt, q.notifyAt} {
			if at >= 0 && (!ok || at < best) {
				best, ok = at, true
			}
		}
	}
	if !ok {
		return 0, false
	}
	return clock.FromMillis(max(best, b.lastNow)), true
}

// flushOrder persists the OrderInfo table when a flush came due before
// nowMs (every OrderInfoFlushInterval from the broker's start): nothing
// changes between calls, so the table as it stands is what the last flush
// before nowMs wrote. Persisting runs autoClean first, which drops queues
// no longer readable and OrderInfos idle for a day from the live table
// too (their live leases lapse, reported by the next call that reports
// lapses).
func (b *Broker) flushOrder(nowMs int64) {
	t := &b.order
	if t.nextFlush == 0 || nowMs < t.nextFlush {
		return
	}
	at := t.nextFlush + (nowMs-t.nextFlush)/OrderInfoFlushInterval*OrderInfoFlushInterval
	t.nextFlush = at + OrderInfoFlushInterval
	for _, q := range append([]*orderQueue(nil), t.qs...) {
		tp := b.topics[b.names.pairs[q.k.pair].topic]
		if (tp == nil || q.k.qid < tp.cfg.ReadQueueNums) && at-q.info.LastConsumeTimestamp <= OrderInfoCleanSpan {
			continue
		}
		t.pending = b.lapseAll(q, false, t.pending)
		t.remove(q)
	}
	t.flushed = t.flushed[:0]
	for _, q := range t.qs {
		t.flushed = append(t.flushed, flushedOrder{k: q.k, info: q.info.Clone()})
	}
}

// startOrder (re)starts the order manager's timers at startMs: the flush
// schedule and the lock manager's wheel.
func (b *Broker) startOrder(startMs int64) {
	b.order.nextFlush = startMs + OrderInfoFlushInterval
	b.order.wheel = startMs
}

// restartOrder is a broker restart of the order manager: the table comes
// back as last flushed. A live lease survives only where the flushed
// OrderInfo is the same batch and still holds its message unacked until
// the same deadline; the others are lost (returned). The lock manager
// re-arms the timers of OrderInfos whose lock-free time is still ahead
// (recover). Lapses due by then come first in r.Lapsed.
func (b *Broker) restartOrder(nowMs int64, r *RestartResult) {
	t := &b.order
	old, flushed := t.byKey, t.flushed
	var lost []model.LeaseID
	for _, q := range t.qs {
		for i := range q.leases {
			if q.leases[i] != 0 && !b.survives(q, i) {
				lost = append(lost, b.endOrderLease(q, i))
			}
		}
	}
	r.LostLeases = append(r.LostLeases, lost...)
	live := t.liveCount
	*t = newOrderTable(b.names)
	t.liveCount, t.flushed = live, flushed
	b.startOrder(nowMs)
	for _, f := range flushed {
		q := t.add(f.k)
		q.info = f.info.Clone()
		q.leases, q.deadlines = make([]model.LeaseID, len(q.info.OffsetList)), make([]int64, len(q.info.OffsetList))
		if o := old[f.k]; o != nil && len(o.leases) == len(q.leases) {
			copy(q.leases, o.leases)
			copy(q.deadlines, o.deadlines)
		}
		r.Lapsed = b.reschedule(nowMs, q, r.Lapsed)
		if lf, ok := b.lockFreeTime(nowMs, &q.info); ok && lf > nowMs && b.cfg.EnableNotifyAfterPopOrderLockRelease {
			q.notifyAt = b.wheelFire(lf)
		}
	}
}

// survives: index i's live lease is still what the flushed table holds.
func (b *Broker) survives(q *orderQueue, i int) bool {
	for _, f := range b.order.flushed {
		if f.k != q.k {
			continue
		}
		o := &f.info
		return o.PopTime == q.info.PopTime && o.AttemptID == q.info.AttemptID && equalOffsets(o.OffsetList, q.info.OffsetList) &&
			o.IsNotAck(i) && o.NextVisibleTime(i) == q.deadlines[i]
	}
	return false
}

func equalOffsets(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
