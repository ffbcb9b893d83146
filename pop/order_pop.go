package pop

import (
	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// The orderly (FIFO) branches of pop: PopConsumerService.popAsync with
// fifo (KV) and PopMessageProcessor.popMsgFromQueue with isOrder (FS).
// Neither writes a record or a checkpoint and neither reads a retry topic;
// both skip a queue whose OrderInfo blocks the request (checkBlock), read
// from the commit offset, record the batch (update) and leave the commit
// offset at the batch's start.

// kvOrderStages runs the KV FIFO stages: the requested queue, or every
// readable queue in the scan order from requestCount (scanQueue; a FIFO
// request is never in priority mode).
func (b *Broker) kvOrderStages(nowMs int64, ctx *popContext, t *topic, n int64, f *pfilter.Filter) {
	req := ctx.req
	ctx.reviveQid = model.PopOrderReviveQueue
	if req.QueueID != -1 {
		b.kvOrderStage(nowMs, ctx, t, req.QueueID, f)
		return
	}
	rq := t.cfg.ReadQueueNums
	for i := int32(0); i < rq; i++ {
		b.kvOrderStage(nowMs, ctx, t, b.scanQueue(rq, n, i), f)
	}
}

// kvOrderStage is one FIFO stage of popAsync (getMessageAsync with fifo).
func (b *Broker) kvOrderStage(nowMs int64, ctx *popContext, t *topic, qid int32, f *pfilter.Filter) {
	if qid >= int32(len(t.queues)) {
		return
	}
	req := ctx.req
	q := t.queues[qid]
	k := qkey{ctx.pair, qid}
	if b.inflightThreshold() && int64(b.cache.count(k)) >= b.cfg.PopInflightMessageThreshold {
		return
	}
	if b.checkBlock(nowMs, k, req.AttemptID, ctx.invisible) {
		return // a blocked queue adds nothing to restNum
	}
	remain := int(req.MaxMsgNums - ctx.found)
	if remain <= 0 {
		ctx.restCount += backlog(q, b.queryOffset(k))
		return
	}
	s := b.offsets.at(k)
	offset := b.kvOrderPopOffset(ctx, k, s, q)
	var r getResult
	q.get(&r, offset, remain, int64(remain), f, b.scratch.msgs)
	b.countRead(&r)
	if r.offsetCorrected() {
		b.storeCommit(s, r.nextBegin)
		offset = r.nextBegin
		q.get(&r, offset, remain, int64(remain), f, r.msgs)
		b.countRead(&r)
	}
	commit := r.nextBegin
	if r.status == getFound {
		ctx.restCount += r.max - r.nextBegin
		b.orderFound(nowMs, ctx, k, req.Topic, offset, &r)
		commit = offset // the commit offset stays at the batch start until acks move it
	}
	b.storeCommit(b.offsets.at(k), commit)
	b.releaseRead(&r)
}

// kvOrderPopOffset is getPopOffset with fifo: the commit offset (not the
// pull offset, since apache/rocketmq#9695), the initial offset committed
// when there is none, and a pending reset applied (clearCache, clearBlock).
func (b *Broker) kvOrderPopOffset(ctx *popContext, k qkey, s *slot, q *queue) int64 {
	o := s.queryOffset(b.cfg.UseServerSideResetOffset)
	if o < 0 {
		o = b.initOffset(q, ctx.req.Topic, ctx.req.InitMode)
		b.storeCommit(s, o)
	}
	if v, ok := s.takeReset(); ok {
		ctx.res.Replaced = b.flushCacheQueue(k, ctx.res.Replaced)
		b.clearBlock(k)
		b.storeCommit(b.offsets.at(k), v)
		return v
	}
	return o
}

// ckOrderStages runs the FS FIFO stages: the requested queue, or every
// readable queue in the scan order from randomQ.
func (b *Broker) ckOrderStages(nowMs int64, ctx *popContext, t *topic, randomQ int32, f *pfilter.Filter) {
	req := ctx.req
	ctx.reviveQid = model.PopOrderReviveQueue
	if req.QueueID >= 0 {
		b.ckOrderStage(nowMs, ctx, t, req.QueueID, f)
		return
	}
	n := t.cfg.ReadQueueNums
	for i := int32(0); i < n; i++ {
		b.ckOrderStage(nowMs, ctx, t, b.scanQueue(n, int64(randomQ), i), f)
	}
}

// ckOrderStage is popMsgFromQueue with isOrder (checkpoint-path.md §3.1).
func (b *Broker) ckOrderStage(nowMs int64, ctx *popContext, t *topic, qid int32, f *pfilter.Filter) {
	if int(qid) >= len(t.queues) {
		return
	}
	req := ctx.req
	q := t.queues[qid]
	k := qkey{ctx.pair, qid}
	offset := b.ckPopOffset(k, q, req.Topic, req.InitMode, false)
	if b.lockBusy() {
		b.stats.LockBusy++
		return // the queue lock is taken: skipped, restNum unchanged (5.3.3+)
	}
	if b.cfg.EnablePopMessageThreshold && b.inflight.get(k) > b.cfg.PopInflightMessageThreshold {
		ctx.restCount += q.maxOffset() - offset
		return
	}
	offset = b.ckPopOffset(k, q, req.Topic, req.InitMode, true)
	if b.checkBlock(nowMs, k, req.AttemptID, ctx.invisible) {
		return // restNum unchanged (5.3.1+)
	}
	b.inflight.drop(k) // clearInFlightMessageNum
	if ctx.found >= req.MaxMsgNums {
		ctx.restCount += q.maxOffset() - offset
		return
	}
	remain := int(req.MaxMsgNums - ctx.found)
	final := offset
	var r getResult
	b.readCorrected(&r, k, q, offset, remain, f)
	switch {
	case r.status == getFound:
		b.orderFound(nowMs, ctx, k, req.Topic, final, &r)
		b.commitOffset(k, final)
	case r.status == getNoMatchedMessage || r.status == getOffsetFoundNull || r.status == getMessageWasRemoving || r.status == getNoMatchedLogicQueue:
		if r.nextBegin > -1 {
			b.commitOffset(k, r.nextBegin) // directly (apache/rocketmq#8268)
		}
	}
	ctx.restCount += r.max - r.nextBegin
	b.inflightAdd(k, int64(len(r.msgs)))
	b.releaseRead(&r)
}

// orderFound records a found FIFO read of queue k (update) and copies its
// messages into the result: a lease per message, handles with reviveQid
// 999, reconsumeTimes from the orderCountInfo counts as the client sets
// them, and the stage.
func (b *Broker) orderFound(nowMs int64, ctx *popContext, k qkey, stageTopic string, start int64, r *getResult) {
	flag := model.RetryFlagOf(stageTopic)
	offs := b.scratch.offs[:0]
	for _, m := range r.msgs {
		offs = append(offs, m.QueueOffset)
	}
	oq := b.orderUpdate(nowMs, ctx, k, flag, offs)
	res := ctx.res
	deadline := ctx.popTime + ctx.invisible
	for i, m := range r.msgs {
		p := res.addMessage(m, ctx.req.Topic)
		if c := orderCount(oq, m.QueueOffset); c > 0 {
			p.Message.ReconsumeTimes = c
		}
		p.Lease = oq.leases[i]
		ctx.setHandle(&p.Handle, ctx.popTime, model.PopOrderReviveQueue, flag, b.cfg.BrokerName, k.qid, start, m.QueueOffset)
		p.Deadline = clock.FromMillis(deadline)
	}
	ctx.found += int32(len(r.msgs))
	res.addStage(flag, k.qid, start, len(r.msgs))
	b.scratch.offs = offs[:0]
}
