package ref

import (
	"sort"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// The orderly (FIFO) reference: a map of OrderInfo per queue, each with
// the live lease of each message of its batch; when a batch stops
// blocking is recomputed from the OrderInfo whenever it is needed, and
// every "which first" is a sort by (time, group, topic, queue).

// oq is one queue's orderly state.
type oq struct {
	info      model.OrderInfo
	leases    []model.LeaseID // per index: the live lease, 0 none
	deadlines []int64
	notifyAt  int64 // the lock-free timer, -1 unarmed
}

// ordState is the orderly part of the reference broker.
type ordState struct {
	tab       map[qk]*oq
	flushed   map[qk]model.OrderInfo
	nextFlush int64
	wheel     int64
	pending   []pop.Lapse
	cleared   []model.LeaseID
	lockDraws uint64
}

func (o *ordState) init() {
	if o.tab == nil {
		o.tab, o.flushed = map[qk]*oq{}, map[qk]model.OrderInfo{}
	}
}

// keys lists the table's queues by group, topic, queue.
func (o *ordState) keys() []qk {
	var ks []qk
	for k := range o.tab {
		ks = append(ks, k)
	}
	sortKeys(ks)
	return ks
}

func sortKeys(ks []qk) {
	sort.Slice(ks, func(i, j int) bool {
		a, c := ks[i], ks[j]
		if a.group != c.group {
			return a.group < c.group
		}
		if a.topic != c.topic {
			return a.topic < c.topic
		}
		return a.qid < c.qid
	})
}

func (q *oq) hasLive() bool {
	for _, l := range q.leases {
		if l != 0 {
			return true
		}
	}
	return false
}

// lapseTime is when q's live leases lapse: the batch's unblock time; false
// with none live.
func (q *oq) lapseTime() (int64, bool) {
	if !q.hasLive() {
		return 0, false
	}
	return q.info.UnblockTime()
}

func (b *Broker) lapseOf(k qk, q *oq, i int, reattempt bool) pop.Lapse {
	off := q.info.QueueOffset(i)
	l := pop.Lapse{Lease: q.leases[i], Group: k.group, Topic: k.topic, QueueID: k.qid, Offset: off,
		Deadline: clock.FromMillis(q.deadlines[i]), Reattempt: reattempt}
	if mq := b.queue(k.topic, k.qid); mq != nil {
		if m := mq.at(off); m != nil {
			l.Msg = m.ID
		}
	}
	return l
}

// lapseQueue ends every live lease of q, in index order.
func (b *Broker) lapseQueue(k qk, q *oq, reattempt bool, out []pop.Lapse) []pop.Lapse {
	for i, l := range q.leases {
		if l != 0 {
			out = append(out, b.lapseOf(k, q, i, reattempt))
			q.leases[i] = 0
		}
	}
	return out
}

// settleOrder lapses, earliest first, every queue whose batch stopped
// blocking by nowMs, after the pending lapses.
func (b *Broker) settleOrder(nowMs int64, out []pop.Lapse) []pop.Lapse {
	o := &b.ord
	o.init()
	out = append(out, o.pending...)
	o.pending = nil
	for {
		var best qk
		var bestAt int64
		found := false
		for _, k := range o.keys() {
			if t, ok := o.tab[k].lapseTime(); ok && t <= nowMs && (!found || t < bestAt) {
				best, bestAt, found = k, t, true
			}
		}
		if !found {
			return out
		}
		out = b.lapseQueue(best, o.tab[best], false, out)
	}
}

// lapseNowIfFree lapses q's live leases when its batch no longer blocks.
func (b *Broker) lapseNowIfFree(nowMs int64, k qk, q *oq, out []pop.Lapse) []pop.Lapse {
	if t, ok := q.lapseTime(); ok && t <= nowMs {
		return b.lapseQueue(k, q, false, out)
	}
	return out
}

// lockFree is the time the lock manager arms for (see pop.Bugs).
func (b *Broker) lockFree(nowMs int64, info *model.OrderInfo) (int64, bool) {
	lf, ok := info.LockFreeTimestamp(nowMs)
	if !ok || b.cfg.Bugs.LockFreeTimerFirstPending {
		return lf, ok
	}
	if u, has := info.UnblockTime(); has && u > nowMs {
		return u, true
	}
	return nowMs, true
}

// arm re-arms q's lock-free timer: due at the end of the 100 ms tick its
// time falls in, counted from the wheel's start.
func (b *Broker) arm(nowMs int64, q *oq) {
	if !b.cfg.EnableNotifyAfterPopOrderLockRelease {
		return
	}
	lf, ok := b.lockFree(nowMs, &q.info)
	if !ok {
		return
	}
	t := max(lf, nowMs)
	w := b.ord.wheel
	q.notifyAt = w + ((t-w)/pop.OrderLockTick+1)*pop.OrderLockTick
}

// blocked is checkBlock.
func (b *Broker) blocked(nowMs int64, k qk, attempt string, invisible int64) bool {
	b.ord.init()
	q := b.ord.tab[k]
	return q != nil && q.info.NeedBlock(attempt, invisible, nowMs)
}

// clearBlock drops k's OrderInfo; its live leases are cleared.
func (b *Broker) clearBlock(k qk) {
	b.ord.init()
	q := b.ord.tab[k]
	if q == nil {
		return
	}
	for _, l := range q.leases {
		if l != 0 {
			b.ord.cleared = append(b.ord.cleared, l)
		}
	}
	delete(b.ord.tab, k)
}

// busy draws a tryLock against Faults.LockBusyPPM.
func (b *Broker) busy() bool {
	if b.faults.LockBusyPPM <= 0 {
		return false
	}
	b.ord.lockDraws++
	return pop.FaultDraw(b.faults.Seed^0x6c6f636b62757379, b.ord.lockDraws) < b.faults.LockBusyPPM
}

// attemptMatched: an OrderInfo of (group, topic) (queue qid, or any) has
// this attemptId.
func (b *Broker) attemptMatched(group, topicName string, qid int32, attempt string) bool {
	if attempt == "" {
		return false
	}
	b.ord.init()
	for k, q := range b.ord.tab { // any match: order does not matter
		if k.group == group && k.topic == topicName && (qid < 0 || k.qid == qid) && q.info.AttemptID == attempt {
			return true
		}
	}
	return false
}

// orderUpdate records a found FIFO read (update) and adds its messages to
// the response.
func (b *Broker) orderUpdate(nowMs int64, req *pop.PopRequest, p *popping, k qk, start int64, r readResult, lapsed *[]pop.Lapse, ocount *[]model.OrderCount) {
	o := &b.ord
	o.init()
	var offs []int64
	for _, m := range r.msgs {
		offs = append(offs, m.QueueOffset)
	}
	info := model.OrderInfo{PopTime: p.popTime, InvisibleTime: p.invisible, HasInvisibleTime: true, OffsetList: model.BuildOffsetList(offs),
		LastConsumeTimestamp: nowMs, AttemptID: req.AttemptID}
	if old := o.tab[k]; old != nil {
		*lapsed = b.lapseQueue(k, old, true, *lapsed)
		info.MergeConsumedCount(&old.info)
	}
	q := &oq{info: info, notifyAt: -1}
	if old := o.tab[k]; old != nil {
		q.notifyAt = old.notifyAt
	}
	o.tab[k] = q
	flag := model.RetryFlagOf(k.topic)
	for range offs {
		b.lastLease++
		q.leases = append(q.leases, b.lastLease)
		q.deadlines = append(q.deadlines, p.popTime+p.invisible)
	}
	*ocount = q.info.AppendOrderCounts(*ocount, flag, k.qid)
	b.arm(nowMs, q)
	for i, m := range r.msgs {
		shown := deepCopy(m)
		shown.Topic = req.Topic
		if c := countOf(&q.info, m.QueueOffset); c > 0 {
			shown.ReconsumeTimes = c
		}
		p.msgs = append(p.msgs, pop.PoppedMessage{Message: shown, RealTopic: m.Topic, Lease: q.leases[i], Deadline: clock.FromMillis(p.popTime + p.invisible),
			Handle: model.ReceiptHandle{CkQueueOffset: start, PopTime: p.popTime, InvisibleTime: p.invisible, ReviveQueueID: model.PopOrderReviveQueue,
				RetryFlag: flag, BrokerName: b.cfg.BrokerName, QueueID: k.qid, QueueOffset: m.QueueOffset, CommitLogOffset: -1}})
	}
	p.found += int32(len(r.msgs))
	p.start = append(p.start, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: []int64{start}})
	p.msgInfos = append(p.msgInfos, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: offs})
}

// countOf is the reconsumeTimes a client reads from orderCountInfo: the
// offset's entry, else the queue's (the smallest count, 0 when an offset
// has none).
func countOf(o *model.OrderInfo, off int64) int32 {
	if c := o.Count(off); c > 0 {
		return int32(c)
	}
	if o.ConsumedCount == nil || len(o.ConsumedCount) != len(o.OffsetList) {
		return 0
	}
	least := int64(1<<31 - 1)
	for _, e := range o.ConsumedCount {
		least = min(least, e.Value)
	}
	return int32(least)
}

// orderPopKV is the KV FIFO pop (after validation and the lock): the
// requested queue, or every queue from the request count on.
func (b *Broker) orderPopKV(nowMs int64, req *pop.PopRequest, f *filter.Filter) pop.PopResult {
	p := &popping{popTime: nowMs, invisible: req.InvisibleTime.Millis(), ff: f}
	pk := pk{req.ConsumerGroup, req.Topic}
	b.locks[pk] = nowMs
	n := b.requests[pk]
	b.requests[pk] = n + 1
	var lapsed []pop.Lapse
	var ocount []model.OrderCount
	stage := func(qid int32) {
		q := b.queue(req.Topic, qid)
		if q == nil {
			return
		}
		k := qk{req.ConsumerGroup, req.Topic, qid}
		if b.cfg.EnablePopMessageThreshold && b.cfg.EnablePopBufferMerge && int64(len(b.cachedOf(k))) >= b.cfg.PopInflightMessageThreshold {
			return
		}
		if b.blocked(nowMs, k, req.AttemptID, p.invisible) {
			return
		}
		remain := int(req.MaxMsgNums - p.found)
		if remain <= 0 {
			p.rest += q.max() - max(b.queryOffset(k), 0)
			return
		}
		offset := b.queryOffset(k)
		if offset < 0 {
			offset = initOffset(q, k.topic, req.InitMode, b.cfg.InitPopOffsetByCheckMsgInMem)
			b.setCommit(k, offset)
		}
		if v, ok := b.reset[k]; ok {
			delete(b.reset, k)
			_, replaced := b.flushCached(k)
			p.replaced = append(p.replaced, replaced...)
			b.clearBlock(k)
			b.setCommit(k, v)
			offset = v
		}
		r := b.read(q, offset, remain, int64(remain), f)
		if r.status == stOffsetTooSmall || r.status == stOffsetOverflowBadly || r.status == stOffsetFoundNull {
			b.setCommit(k, r.next)
			offset = r.next
			r = b.read(q, offset, remain, int64(remain), f)
		}
		commit := r.next
		if r.status == stFound {
			p.rest += q.max() - r.next
			b.orderUpdate(nowMs, req, p, k, offset, r, &lapsed, &ocount)
			commit = offset
		}
		b.setCommit(k, commit)
	}
	if req.QueueID != -1 {
		stage(req.QueueID)
	} else {
		for _, q := range b.scanOrder(b.topics[req.Topic].cfg.ReadQueueNums, n) {
			stage(q)
		}
	}
	res := b.respond(nowMs, req, p)
	res.ReviveQid, res.Lapsed, res.OrderCounts = model.PopOrderReviveQueue, lapsed, ocount
	return res
}

// setCommit stores a commit offset the way a client's commit does.
func (b *Broker) setCommit(k qk, v int64) {
	b.commit[k] = v
}

// orderPopFS is the FS FIFO pop: no retry topic, no checkpoint; every
// queue from randomQ, or the requested one.
func (b *Broker) orderPopFS(nowMs int64, req *pop.PopRequest, f *filter.Filter, randomQ int32) pop.PopResult {
	p := &popping{popTime: nowMs, invisible: req.InvisibleTime.Millis(), ff: f}
	var lapsed []pop.Lapse
	var ocount []model.OrderCount
	stage := func(qid int32) {
		q := b.queue(req.Topic, qid)
		if q == nil {
			return
		}
		k := qk{req.ConsumerGroup, req.Topic, qid}
		offset := b.fsPopOffset(k, q, req.InitMode, false)
		if b.busy() {
			b.stats.LockBusy++
			return
		}
		if b.cfg.EnablePopMessageThreshold && b.ck.inflight[k] > b.cfg.PopInflightMessageThreshold {
			p.rest += q.max() - offset
			return
		}
		offset = b.fsPopOffset(k, q, req.InitMode, true)
		if b.blocked(nowMs, k, req.AttemptID, p.invisible) {
			return
		}
		delete(b.ck.inflight, k)
		if p.found >= req.MaxMsgNums {
			p.rest += q.max() - offset
			return
		}
		remain := int(req.MaxMsgNums - p.found)
		start := offset
		r := b.readF(q, offset, remain, f)
		if r.status == stOffsetTooSmall || r.status == stOffsetOverflowBadly || r.status == stOffsetFoundNull {
			b.commit[k] = r.next
			r = b.readF(q, r.next, remain, f)
		}
		if r.status == stFound {
			b.orderUpdate(nowMs, req, p, k, start, r, &lapsed, &ocount)
			b.commit[k] = start
		} else if r.status == stNoMatchedMessage || r.status == stOffsetFoundNull {
			b.commit[k] = r.next
		}
		p.rest += q.max() - r.next
		b.inflightAdd(k, int64(len(r.msgs)))
	}
	if req.QueueID < 0 {
		for _, q := range b.scanOrder(b.topics[req.Topic].cfg.ReadQueueNums, int64(randomQ)) {
			stage(q)
		}
	} else {
		stage(req.QueueID)
	}
	res := b.respond(nowMs, req, p)
	res.ReviveQid, res.Lapsed, res.OrderCounts = model.PopOrderReviveQueue, lapsed, ocount
	if res.Status == pop.PopSuspended && res.RestNum > 0 {
		if w, ok := b.wakeOne(pollKey{req.Topic, req.ConsumerGroup, req.QueueID}, nil, true); ok {
			res.Woken = append(res.Woken, w)
		}
	}
	return res
}

// orderAck is ackOrderly / ackOrderlyNew of a validated request.
func (b *Broker) orderAck(nowMs int64, group, name string, qid int32, off, popTime, invisible int64, res *pop.AckResult) {
	b.ord.init()
	b.stats.Acked++
	k := qk{group, name, qid}
	if off < b.queryOffset(k) {
		b.stats.AckMisses++
		return
	}
	q := b.ord.tab[k]
	var next int64
	switch {
	case q == nil:
		next = off + 1
	case len(q.info.OffsetList) == 0:
		next = -1
	case popTime != q.info.PopTime:
		next = -2
	default:
		i := q.info.Index(off)
		if i < 0 {
			next = -1
			break
		}
		q.info.CommitOffsetBit |= 1 << uint(i)
		res.Removed, q.leases[i] = q.leases[i], 0
		next = q.info.NextOffset()
		b.arm(nowMs, q)
	}
	if res.Removed == 0 {
		b.stats.AckMisses++
	}
	if q != nil {
		res.Lapsed = b.lapseNowIfFree(nowMs, k, q, res.Lapsed)
	}
	if next == -1 {
		res.Code = model.MessageIllegal
		return
	}
	if next >= 0 {
		if _, pending := b.reset[k]; !pending {
			b.setCommit(k, next)
		}
		if !b.blocked(nowMs, k, "", invisible) {
			if w, ok := b.wakeOne(pollKey{name, group, qid}, nil, true); ok {
				res.Woken = append(res.Woken, w)
			}
		}
	}
	if !b.cfg.UsesKV() {
		b.inflightSub(k, popTime, 1)
	}
}

// orderBatch acks an orderly BatchAck entry one offset at a time.
func (b *Broker) orderBatch(nowMs int64, a pop.BatchAck, res *pop.BatchAckResult) model.ResponseCode {
	name := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
	q := b.queue(name, a.QueueID)
	code := model.Success
	if q == nil {
		return code
	}
	for i := 0; i < 64*len(a.Bits); i++ {
		if a.Bits[i/64]&(1<<uint(i%64)) == 0 {
			continue
		}
		o := a.StartOffset + int64(i)
		e := pop.AckedOffset{Topic: name, QueueID: a.QueueID, Offset: o}
		if o < q.min || o > q.max() {
			res.Skipped++
			e.Skipped = true
		} else {
			r := pop.AckResult{Code: model.Success}
			b.orderAck(nowMs, a.ConsumerGroup, name, a.QueueID, o, a.PopTime, a.InvisibleTime, &r)
			if e.Removed = r.Removed; e.Removed != 0 {
				res.Deleted++
			}
			res.Lapsed, res.Woken = append(res.Lapsed, r.Lapsed...), append(res.Woken, r.Woken...)
			if r.Code != model.Success {
				code = r.Code
			}
		}
		res.Offsets = append(res.Offsets, e)
	}
	return code
}

// orderChange is the orderly changeInvisibleTime of a validated request.
func (b *Broker) orderChange(nowMs int64, req *pop.ChangeInvisibleTimeRequest, h model.ReceiptHandle, invisible int64) pop.ChangeInvisibleTimeResult {
	b.ord.init()
	k := qk{req.ConsumerGroup, req.Topic, req.QueueID}
	res := pop.ChangeInvisibleTimeResult{Code: model.Success}
	if req.Offset < b.queryOffset(k) {
		res.Handle = model.ReceiptHandle{CkQueueOffset: req.Offset, RetryFlag: model.RetryFlagOf(req.Topic), BrokerName: h.BrokerName,
			QueueID: req.QueueID, QueueOffset: req.Offset, CommitLogOffset: -1}
		if !b.cfg.Bugs.FifoChangeBelowCommitEmptyHandle { // the handle's own fields: it stays orderly
			res.PopTime, res.InvisibleTime, res.ReviveQid = clock.FromMillis(h.PopTime), clock.MillisDuration(h.InvisibleTime), h.ReviveQueueID
			res.Handle.PopTime, res.Handle.InvisibleTime, res.Handle.ReviveQueueID = h.PopTime, h.InvisibleTime, h.ReviveQueueID
		}
		return res
	}
	nv := nowMs + invisible
	if q := b.ord.tab[k]; q != nil && q.info.PopTime == h.PopTime {
		q.info.SetNextVisible(req.Offset, nv)
		if i := q.info.Index(req.Offset); i >= 0 && q.info.IsNotAck(i) && (q.leases[i] != 0 || nv > nowMs) {
			res.Removed = q.leases[i]
			res.OldDeleted = res.Removed != 0
			b.lastLease++
			q.leases[i], q.deadlines[i] = b.lastLease, nv
			res.Lease, res.Deadline = b.lastLease, clock.FromMillis(nv)
			b.stats.Changed++
		}
		b.arm(nowMs, q)
		res.Lapsed = b.lapseNowIfFree(nowMs, k, q, res.Lapsed)
	}
	res.PopTime, res.InvisibleTime, res.ReviveQid = clock.FromMillis(h.PopTime), clock.MillisDuration(nv-h.PopTime), h.ReviveQueueID
	res.Handle = model.ReceiptHandle{CkQueueOffset: req.Offset, PopTime: h.PopTime, InvisibleTime: nv - h.PopTime, ReviveQueueID: h.ReviveQueueID,
		RetryFlag: model.RetryFlagOf(req.Topic), BrokerName: h.BrokerName, QueueID: req.QueueID, QueueOffset: req.Offset, CommitLogOffset: -1}
	return res
}

// OrderTick lapses what is due, then fires the due lock-free timers
// (earliest first) with notifyLongPollingRequestIfNeed.
func (b *Broker) OrderTick(now clock.Time) pop.OrderTickResult {
	nowMs := now.Millis()
	b.touch(nowMs)
	res := pop.OrderTickResult{Lapsed: b.settleOrder(nowMs, nil)}
	for {
		var best qk
		var bestAt int64
		found := false
		for _, k := range b.ord.keys() {
			if t := b.ord.tab[k].notifyAt; t >= 0 && t <= nowMs && (!found || t < bestAt) {
				best, bestAt, found = k, t, true
			}
		}
		if !found {
			return res
		}
		b.ord.tab[best].notifyAt = -1
		if !b.cfg.EnableNotifyAfterPopOrderLockRelease {
			continue
		}
		q := b.queue(best.topic, best.qid)
		buffered := int64(-1)
		if cq := b.commitQOf(best); cq != nil && len(cq.ws) > 0 {
			buffered = cq.ws[len(cq.ws)-1].next
		}
		if q == nil || q.max() <= max(buffered, b.queryOffset(best)) {
			continue
		}
		if w, ok := b.wakeOne(pollKey{best.topic, best.group, -1}, nil, true); ok {
			res.Woken = append(res.Woken, w)
		} else if w, ok := b.wakeOne(pollKey{best.topic, best.group, best.qid}, nil, true); ok {
			res.Woken = append(res.Woken, w)
		}
	}
}

// NextOrderTick is the earliest lapse or notification, or now with lapses
// pending.
func (b *Broker) NextOrderTick() (clock.Time, bool) {
	b.ord.init()
	best, ok := int64(0), false
	if len(b.ord.pending) > 0 {
		best, ok = b.ck.lastNow, true
	}
	for _, q := range b.ord.tab {
		if t, has := q.lapseTime(); has && (!ok || t < best) {
			best, ok = t, true
		}
		if q.notifyAt >= 0 && (!ok || q.notifyAt < best) {
			best, ok = q.notifyAt, true
		}
	}
	if !ok {
		return 0, false
	}
	return clock.FromMillis(max(best, b.ck.lastNow)), true
}

// flushOrder persists the table at the last flush time before nowMs,
// after autoClean.
func (b *Broker) flushOrder(nowMs int64) {
	o := &b.ord
	o.init()
	if o.nextFlush == 0 || nowMs < o.nextFlush {
		return
	}
	at := o.nextFlush
	for at+pop.OrderInfoFlushInterval <= nowMs {
		at += pop.OrderInfoFlushInterval
	}
	o.nextFlush = at + pop.OrderInfoFlushInterval
	for _, k := range o.keys() {
		q := o.tab[k]
		t := b.topics[k.topic]
		if (t == nil || k.qid < t.cfg.ReadQueueNums) && at-q.info.LastConsumeTimestamp <= pop.OrderInfoCleanSpan {
			continue
		}
		o.pending = b.lapseQueue(k, q, false, o.pending)
		delete(o.tab, k)
	}
	o.flushed = map[qk]model.OrderInfo{}
	for k, q := range o.tab {
		o.flushed[k] = q.info.Clone()
	}
}

// restartOrder brings the table back as flushed: a live lease survives
// where the flushed OrderInfo is the same batch holding its message
// unacked until the same deadline.
func (b *Broker) restartOrder(nowMs int64, r *pop.RestartResult) {
	o := &b.ord
	o.init()
	old := o.tab
	o.tab = map[qk]*oq{}
	for _, k := range sortedOrderKeys(old) {
		q := old[k]
		f, has := o.flushed[k]
		for i, l := range q.leases {
			if l == 0 {
				continue
			}
			if !has || f.PopTime != q.info.PopTime || f.AttemptID != q.info.AttemptID || !sameList(f.OffsetList, q.info.OffsetList) ||
				!f.IsNotAck(i) || f.NextVisibleTime(i) != q.deadlines[i] {
				r.LostLeases = append(r.LostLeases, l)
				q.leases[i] = 0
			}
		}
	}
	o.nextFlush, o.wheel = nowMs+pop.OrderInfoFlushInterval, nowMs
	for _, k := range sortedFlushedKeys(o.flushed) {
		f := o.flushed[k]
		q := &oq{info: f.Clone(), notifyAt: -1, leases: make([]model.LeaseID, len(f.OffsetList)), deadlines: make([]int64, len(f.OffsetList))}
		if x := old[k]; x != nil && len(x.leases) == len(q.leases) {
			copy(q.leases, x.leases)
			copy(q.deadlines, x.deadlines)
		}
		o.tab[k] = q
		r.Lapsed = b.lapseNowIfFree(nowMs, k, q, r.Lapsed)
		if lf, ok := b.lockFree(nowMs, &q.info); ok && lf > nowMs && b.cfg.EnableNotifyAfterPopOrderLockRelease {
			q.notifyAt = nowMs + ((lf-nowMs)/pop.OrderLockTick+1)*pop.OrderLockTick
		}
	}
}

func sortedOrderKeys(m map[qk]*oq) []qk {
	var ks []qk
	for k := range m {
		ks = append(ks, k)
	}
	sortKeys(ks)
	return ks
}

func sortedFlushedKeys(m map[qk]model.OrderInfo) []qk {
	var ks []qk
	for k := range m {
		ks = append(ks, k)
	}
	sortKeys(ks)
	return ks
}

func sameList(a, c []int64) bool {
	if len(a) != len(c) {
		return false
	}
	for i := range a {
		if a[i] != c[i] {
			return false
		}
	}
	return true
}

// liveOrder counts the live FIFO leases.
func (b *Broker) liveOrder() int {
	n := 0
	for _, q := range b.ord.tab {
		for _, l := range q.leases {
			if l != 0 {
				n++
			}
		}
	}
	return n
}

// orderState is State.Order.
func (b *Broker) orderState() pop.OrderState {
	b.ord.init()
	st := pop.OrderState{NextFlush: b.ord.nextFlush}
	for _, k := range b.ord.keys() {
		q := b.ord.tab[k]
		at := int64(-1)
		if t, ok := q.lapseTime(); ok {
			at = t
		}
		st.Queues = append(st.Queues, pop.OrderQueueState{Group: k.group, Topic: k.topic, QueueID: k.qid, Info: q.info.Clone(),
			Leases: append([]model.LeaseID(nil), q.leases...), Deadlines: append([]int64(nil), q.deadlines...), LapseAt: at, NotifyAt: q.notifyAt})
	}
	for _, k := range sortedFlushedKeys(b.ord.flushed) {
		f := b.ord.flushed[k]
		st.Flushed = append(st.Flushed, pop.OrderQueueState{Group: k.group, Topic: k.topic, QueueID: k.qid, Info: f.Clone()})
	}
	return st
}
