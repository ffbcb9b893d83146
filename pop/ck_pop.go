package pop

import (
	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// RandomQ is the checkpoint pop's randomQ (random.nextInt(100) upstream)
// as a pure function of the broker's seed (Config.Seed) and the draw's
// ordinal (1, 2, 3 … over the broker's life, kept across restarts): the
// SplitMix64 finaliser of a seed-derived stream, reduced modulo 100.
func RandomQ(seed, ordinal uint64) int32 {
	return int32(FaultDraw(seed^0x72616e646f6d5121, ordinal) % 100)
}

// popCK is PopMessageProcessor.processRequest's checkpoint (FS) branch for
// a non-FIFO request on topic t with subscription f (docs/rocketmq/
// checkpoint-path.md §3).
func (b *Broker) popCK(nowMs int64, t *topic, f *pfilter.Filter, ctx *popContext) {
	req := ctx.req
	ctx.filter = f
	ctx.pair = b.popPair(t, ctx.group, req)
	b.draws++
	randomQ := RandomQ(b.cfg.Seed, b.draws)
	if req.Order {
		b.ckOrderStages(nowMs, ctx, t, randomQ, f)
		return
	}
	ctx.reviveQid = int32(b.ckMessageNumber % int64(b.cfg.ReviveQueueNum))
	b.ckMessageNumber++
	needRetry, rotation := b.ckRetryChoice(t, ctx.group, randomQ)
	v := retryV2 // the retry topic's version
	if !b.cfg.EnableRetryTopicV2 || b.cfg.RetrieveMessageFromPopRetryTopicV1 && randomQ%2 == 0 {
		v = retryV1
	}
	randomQ = rotation // priority mode resets it, after the V1 choice
	if needRetry {
		b.ckRetryStages(ctx, v, randomQ)
	}
	if req.QueueID < 0 {
		if !b.skippedAll(ctx, t, ctx.pair) {
			b.ckTopicStages(ctx, req.Topic, t, ctx.pair, randomQ)
		}
	} else {
		b.ckQueueStage(ctx, req.Topic, ctx.pair, t, req.QueueID)
	}
	if !needRetry && ctx.found < req.MaxMsgNums {
		b.ckRetryStages(ctx, v, randomQ)
	}
}

// ckRetryStages is ckTopicStages on the request's retry topic of version
// v; one that does not exist yet has no queues.
func (b *Broker) ckRetryStages(ctx *popContext, v int, randomQ int32) {
	r := b.names.retryFound(ctx.pair, v)
	if r == nil {
		r = b.retryTopic(ctx.pair, v)
	}
	if r != nil && !b.skippedAll(ctx, r.t, r.pair) {
		b.ckTopicStages(ctx, r.t.cfg.Name, r.t, r.pair, randomQ)
	}
}

// ckTopicStages reads every readable queue of topic t (named name; pair
// is the request's group with it) in the scan order from randomQ
// (popMsgFromTopic). Queues marked idle are skipped as popAllQueues skips
// them. Its callers skip the most common visit, one that skips every
// queue, with skippedAll: a test that calls nothing, where this
// function spills all its arguments.
func (b *Broker) ckTopicStages(ctx *popContext, name string, t *topic, pair uint32, randomQ int32) {
	n := t.cfg.ReadQueueNums
	if !b.skipsIdle(t) {
		for i := int32(0); i < n; i++ {
			b.ckQueueStage(ctx, name, pair, t, b.scanQueue(n, int64(randomQ), i))
		}
		return
	}
	b.scanUnmarked(ctx, name, t, pair, n, int64(randomQ))
}

// ckQueueStage is popMsgFromQueue for queue qid of stageTopic (§3.1);
// pair is the request's group with stageTopic.
func (b *Broker) ckQueueStage(ctx *popContext, stageTopic string, pair uint32, t *topic, qid int32) {
	if int(qid) >= len(t.queues) {
		return
	}
	req := ctx.req
	q := t.queues[qid]
	k := qkey{pair, qid}
	// QueueLockManager.tryLock(topic@group@qid) always succeeds (the
	// broker is single-threaded and no pop holds a lock across calls)
	// unless the faults say a concurrent request holds it. The offset
	// read before it (getPopOffset without init) only counts restNum when
	// the stage stops there: neither the lock's draw nor the in-flight
	// count reads what it reads, so it is taken only then.
	if b.lockBusy() {
		b.stats.LockBusy++
		ctx.restCount += q.maxOffset() - b.ckPopOffset(k, q, stageTopic, req.InitMode, false)
		return
	}
	if b.cfg.EnablePopMessageThreshold && b.inflight.get(k) > b.cfg.PopInflightMessageThreshold {
		ctx.restCount += q.maxOffset() - b.ckPopOffset(k, q, stageTopic, req.InitMode, false)
		return
	}
	offset := b.ckPopOffset(k, q, stageTopic, req.InitMode, true)
	if ctx.found >= req.MaxMsgNums {
		ctx.restCount += q.maxOffset() - offset
		return
	}
	remain := int(req.MaxMsgNums - ctx.found)
	final := offset
	var r getResult
	b.readCorrected(&r, k, q, offset, remain, ctx.filter)
	switch {
	case r.status == getFound:
		if !b.ckAddResult(ctx, k, stageTopic, t.flag, final, &r) {
			ctx.restCount += int64(len(r.msgs))
			b.releaseRead(&r)
			return
		}
	case r.status == getNoMatchedMessage || r.status == getOffsetFoundNull || r.status == getMessageWasRemoving || r.status == getNoMatchedLogicQueue:
		if r.nextBegin > -1 {
			ck := model.PopCheckPoint{PopTime: ctx.popTime, InvisibleTime: ctx.invisible, StartOffset: final, CID: req.ConsumerGroup,
				Topic: stageTopic, QueueID: qid, BrokerName: b.cfg.BrokerName}
			b.addCkMock(&ck, k, ctx.reviveQid, r.nextBegin)
		}
	}
	ctx.restCount += r.max - r.nextBegin
	b.inflightAdd(k, int64(len(r.msgs)))
	b.releaseRead(&r)
}

// readCorrected is the checkpoint path's stage read into r: from offset,
// and after an offset correction from the committed nextBegin.
func (b *Broker) readCorrected(r *getResult, k qkey, q *queue, offset int64, n int, f *pfilter.Filter) {
	b.readFor(r, q, offset, n, f)
	if r.offsetCorrected() {
		b.commitOffset(k, r.nextBegin)
		b.readFor(r, q, r.nextBegin, n, f)
	}
}

// readFor is the store read of a pop stage into r, counted as broker work
// (countRead's count, written out: with the call of countRead, inlined,
// readFor cost 82 and did not inline, a call each stage).
func (b *Broker) readFor(r *getResult, q *queue, offset int64, n int, f *pfilter.Filter) {
	q.get(r, offset, n, int64(n), f, b.scratch.msgs)
	b.stats.ReadCalls++
	b.stats.ReadMessages += int64(len(r.msgs))
}

// countRead counts a store read and what it returned as broker work.
func (b *Broker) countRead(r *getResult) {
	b.stats.ReadCalls++
	b.stats.ReadMessages += int64(len(r.msgs))
}

func (b *Broker) releaseRead(r *getResult) { b.scratch.dropMsgs(r.msgs) }

// ckPopOffset is getPopOffset (§3.4): the commit offset (or a pending
// reset), else the initial offset (committed when init); with init, a
// pending reset is taken (its commit queue cleared); then the newest
// buffered wrapper's nextBeginOffset when it is further.
func (b *Broker) ckPopOffset(k qkey, q *queue, stageTopic string, initMode int32, init bool) int64 {
	s := b.offsets.at(k)
	o := s.queryOffset(b.cfg.UseServerSideResetOffset)
	if o < 0 {
		o = b.initOffset(q, stageTopic, initMode)
		if init {
			b.commitOffset(k, o)
		}
	}
	if init {
		if v, ok := s.takeReset(); ok {
			b.buf.clearQueue(k)
			b.clearBlock(k)
			b.commitOffset(k, v)
			return v
		}
	}
	if l := b.buf.latest(k); l >= 0 {
		return max(l, o)
	}
	return o
}

// ckAddResult is appendCheckPoint plus the response's part of a found
// read: it makes the CK (buffered, or written at once) and copies the
// messages into the result with their handles and leases. It reports
// false when the buffer refused the CK (a merge-key conflict): the
// messages are then not returned. flag is stageTopic's retry flag
// (topic.flag, as the KV path's readStage takes it).
func (b *Broker) ckAddResult(ctx *popContext, k qkey, stageTopic string, flag model.RetryType, start int64, r *getResult) bool {
	req := ctx.req
	if invariants {
		assertf(flag == model.RetryFlagOf(stageTopic), "pop: CK stage of %s with retry flag %d", stageTopic, flag)
	}
	d := b.nextCkBody() // the CK is built in the body its ref will have
	ck := &d.ck
	*ck = model.PopCheckPoint{Num: int8(len(r.msgs)), PopTime: ctx.popTime, InvisibleTime: ctx.invisible, StartOffset: start,
		CID: req.ConsumerGroup, Topic: stageTopic, QueueID: k.qid, BrokerName: b.cfg.BrokerName}
	ck.QueueOffsetDiff = b.arena.int32s(len(r.msgs))
	for i, m := range r.msgs {
		ck.QueueOffsetDiff[i] = int32(m.QueueOffset - start)
	}
	key, h, e := b.freeMergeKey(ck) // the table unchanged until addCk or addCkJustOffset makes the ref
	ref := b.addCk(ctx.popTime, d, key, h, e, k, ctx.reviveQid, r.nextBegin)
	if ref == nil {
		ref = b.addCkJustOffset(ctx.popTime, d, key, h, e, k, ctx.reviveQid, r.nextBegin, &ctx.res.Failures)
	}
	if ref == nil {
		return false
	}
	res := ctx.res
	for i, m := range r.msgs {
		p := res.addMessage(m, req.Topic)
		p.Lease = ref.lease(i)
		ctx.setHandle(&p.Handle, ck.PopTime, ctx.reviveQid, flag, b.cfg.BrokerName, k.qid, start, m.QueueOffset)
		p.Deadline = clock.FromMillis(ck.ReviveTime())
	}
	ctx.found += int32(len(r.msgs))
	res.addStage(flag, k.qid, start, len(r.msgs))
	return true
}

// inflightAdd is PopInflightMessageCounter.incrementInFlightMessageNum.
func (b *Broker) inflightAdd(k qkey, n int64) {
	if n <= 0 {
		return
	}
	b.offsets.touch(k)
	b.inflight.add(k, n)
}

// inflightSub is decrementInFlightMessageNum: ignored for pops from before
// the broker (re)started, and the entry goes once it reaches 0.
func (b *Broker) inflightSub(k qkey, popTime, n int64) {
	if popTime < b.shouldStartTime {
		return
	}
	b.inflight.sub(k, n)
}
