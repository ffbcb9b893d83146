package pop

import (
	"popsim/clock"
	"popsim/model"
)

// popKV is PopConsumerService.popAsync for a non-FIFO request on topic t.
func (b *Broker) popKV(nowMs int64, t *topic, f filter, ctx *popContext) {
	req := &ctx.req
	pair := b.names.pair(req.ConsumerGroup, req.Topic)
	ctx.pair = pair
	b.locks[pair] = nowMs // tryLock(group@topic) always succeeds single-threaded
	n := b.requestCount[pair]
	b.requestCount[pair] = n + 1
	preferRetry := n%5 == 0
	if preferRetry {
		b.popRetryStages(nowMs, req, ctx, pair)
	}
	if req.QueueID != -1 {
		b.popStage(nowMs, req, ctx, req.Topic, t, pair, req.QueueID, f)
	} else {
		b.popAllQueues(nowMs, req, ctx, t, pair, n, f)
		if !preferRetry {
			b.popRetryStages(nowMs, req, ctx, pair)
		}
	}
	if len(ctx.records) > 0 {
		b.storeRecords(ctx)
	}
}

// popAllQueues runs a stage on every readable queue of t, starting at queue
// n % readQueueNums (the request rotation). Without the in-flight
// threshold, a stage that only reads is done here: past a full batch it
// adds the queue's backlog to restNum, and a caught-up queue is skipped.
func (b *Broker) popAllQueues(nowMs int64, req *PopRequest, ctx *popContext, t *topic, pair uint32, n int64, f filter) {
	rq := t.cfg.ReadQueueNums
	row := b.offsets.row(pair, rq) // stages touch only slots of this row below rq: it does not move
	inline := !b.inflightThreshold()
	qid := int32(n % int64(rq))
	for range rq {
		if !inline || !b.readOnlyStage(ctx, req, &row[qid], t.queues[qid]) {
			b.popStage(nowMs, req, ctx, req.Topic, t, pair, qid, f)
		}
		if qid++; qid == rq {
			qid = 0
		}
	}
}

// inflightThreshold reports that popStage may skip a queue for its cached
// in-flight count (the threshold counts cached records, so it needs the
// cache). When it is off, a stage past a full batch or on a caught-up
// queue only reads, which is what lets popAllQueues do it inline.
func (b *Broker) inflightThreshold() bool {
	return b.cfg.EnablePopMessageThreshold && b.cfg.EnablePopBufferMerge
}

// readOnlyStage does popStage's work for queue q (slot s) when the stage
// only reads, and reports whether it did. A caught-up queue is recognised
// by its slot's caughtUpMark (set by popStage's full check) and an
// unchanged end; a queue not yet marked goes through popStage.
func (b *Broker) readOnlyStage(ctx *popContext, req *PopRequest, s *slot, q *queue) bool {
	if ctx.found >= req.MaxMsgNums {
		ctx.restCount += backlog(q, s.queryOffset(b.cfg.UseServerSideResetOffset))
		return true
	}
	if s.has&caughtUpMark != 0 && s.pull == q.maxOffset() {
		b.stats.ReadCalls++ // the read upstream makes finds nothing
		return true
	}
	return false
}

func (b *Broker) popRetryStages(nowMs int64, req *PopRequest, ctx *popContext, pair uint32) {
	v1, v2 := b.names.retryTopics(pair)
	if b.cfg.RetrieveMessageFromPopRetryTopicV1 {
		b.popRetryStage(nowMs, req, ctx, pair, 0, v1)
	}
	if b.cfg.EnableRetryTopicV2 {
		b.popRetryStage(nowMs, req, ctx, pair, 1, v2)
	}
}

// retryRef is a pair's retry topic (V1 or V2) and its pair id, known once
// the topic exists. Topics are never removed or replaced and pair ids are
// permanent, so a filled retryRef never goes stale (restarts included).
type retryRef struct {
	t    *topic
	pair uint32
}

// popRetryStage reads queue 0 of pair's retry topic v (0: V1, 1: V2),
// unless it does not exist yet.
func (b *Broker) popRetryStage(nowMs int64, req *PopRequest, ctx *popContext, pair uint32, v int, retryTopic string) {
	for int(pair) >= len(b.retryRefs) {
		b.retryRefs = append(b.retryRefs, [2]retryRef{})
	}
	r := b.retryRefs[pair][v]
	if r.t == nil {
		if r.t = b.topicNamed(retryTopic); r.t == nil {
			return
		}
		r.pair = b.names.pair(req.ConsumerGroup, retryTopic)
		b.retryRefs[pair][v] = r
	}
	b.popStage(nowMs, req, ctx, retryTopic, r.t, r.pair, 0, nil)
}

// storeRecords writes a pop's records to the cache when it is on and not
// full, else to the store.
func (b *Broker) storeRecords(ctx *popContext) {
	recs, res := ctx.records, ctx.res
	toCache := b.cfg.EnablePopBufferMerge && !b.cache.full(b.cfg.PopCkMaxBufferSize)
	for i := range recs {
		var l model.LeaseID
		if toCache {
			l = b.cache.add(recs[i])
		} else {
			l = b.index.putRef(&recs[i])
			b.stats.RecordPuts++
		}
		if l != 0 {
			res.Replaced = append(res.Replaced, l)
		}
	}
}

// popStage reads queue qid of stageTopic (t, interned with the request's
// group as pair) for the request (docs/rocketmq/kv-path.md §4 step 5).
func (b *Broker) popStage(nowMs int64, req *PopRequest, ctx *popContext, stageTopic string, t *topic, pair uint32, qid int32, f filter) {
	if qid >= int32(len(t.queues)) {
		return
	}
	q := t.queues[qid]
	k := qkey{pair, qid}
	if b.inflightThreshold() && int64(b.cache.count(k)) >= b.cfg.PopInflightMessageThreshold {
		return
	}
	remain := int(req.MaxMsgNums - ctx.found)
	if remain <= 0 {
		ctx.restCount += backlog(q, b.queryOffset(k))
		return
	}
	s := b.offsets.at(k)
	if b.caughtUp(s, q) {
		s.has |= caughtUpMark
		b.stats.ReadCalls++ // the read upstream makes finds nothing
		return
	}
	s.has &^= caughtUpMark
	offset := b.getPopOffset(ctx, k, s, q, stageTopic)
	r := q.get(offset, remain, int64(remain), f, b.scratch.msgs)
	b.countRead(&r)
	if r.status == getOffsetTooSmall || r.status == getOffsetOverflowBadly || r.status == getOffsetFoundNull {
		s.setCommit(r.nextBegin)
		offset = r.nextBegin
		r = q.get(offset, remain, int64(remain), f, r.msgs)
		b.countRead(&r)
	}
	if r.status == getFound {
		b.addResult(ctx, req, k, stageTopic, offset, &r)
	}
	s.pull, s.has = r.nextBegin, s.has|hasPull
	b.advanceCommit(k, s, offset, r.nextBegin, &r)
	clear(r.msgs)
	b.scratch.msgs = r.msgs[:0]
}

// backlog is a full batch's restNum share for queue q read from offset o:
// the messages past o, all of them when there is no offset (o < 0).
func backlog(q *queue, o int64) int64 { return q.maxOffset() - max(o, 0) }

// queryOffset is offsets' queryOffset for k, -1 when k has no slot.
func (b *Broker) queryOffset(k qkey) int64 {
	if s := b.offsets.peek(k); s != nil {
		return s.queryOffset(b.cfg.UseServerSideResetOffset)
	}
	return -1
}

// caughtUp reports that a stage on queue q (slot s) would change nothing,
// so popStage may skip it: most queues an all-queue pop visits are empty.
// That holds (fixed behaviour) when the pull offset is the queue's end (the
// read is OFFSET_OVERFLOW_ONE or NO_MESSAGE_IN_QUEUE: nothing found, no
// offset correction, the pull offset written back unchanged), no reset is
// pending, and covering [end, end) leaves the window and the commit offset
// (its start) as they are. A window is advanced after every change, so
// advance is a no-op on it; one that never owed an offset (nil pending) is
// restarted by cover, which is a no-op only if it already sits at end.
func (b *Broker) caughtUp(s *slot, q *queue) bool {
	if b.cfg.Bugs.CommitOffsetLag || s.has&(hasPull|hasReset|hasCommit) != hasPull|hasCommit {
		return false
	}
	o, w := s.pull, s.win
	if o != q.maxOffset() || w == nil || s.commit != w.start {
		return false
	}
	if w.pending == nil {
		return w.start == o && w.end == o && w.base == o&^63
	}
	return w.start <= o && o <= w.end
}

// advanceCommit sets the commit offset after a stage. Fixed: the smallest
// offset still owed an ack. With the #10949 bug: the batch start, or the
// smallest cached offset.
func (b *Broker) advanceCommit(k qkey, s *slot, offset, nextBegin int64, r *getResult) {
	if b.cfg.Bugs.CommitOffsetLag {
		// #10949: only a batch that found messages commits (its start), and
		// acks never advance the offset, so a drained queue keeps its lag.
		if r.status != getFound {
			return
		}
		if cacheMin := b.cache.minOffset(k); cacheMin >= 0 && b.cfg.EnablePopBufferMerge {
			offset = cacheMin
		}
		s.setCommit(offset)
		return
	}
	w := s.win
	if w == nil {
		w = &window{}
		s.win = w
	}
	popped := b.scratch.offs[:0]
	if r.status == getFound {
		for _, m := range r.msgs {
			popped = append(popped, m.QueueOffset)
		}
	}
	w.cover(offset, nextBegin, popped)
	b.scratch.offs = popped[:0]
	s.setCommit(w.start)
}

// windowDone marks an offset acked or revived and moves the commit offset
// when the window's start moves (fixed behaviour only).
func (b *Broker) windowDone(k qkey, offset int64) {
	if b.cfg.Bugs.CommitOffsetLag {
		return
	}
	s := b.offsets.peek(k)
	if s == nil || s.win == nil {
		return
	}
	s.has &^= caughtUpMark
	if s.win.done(offset) {
		s.setCommit(s.win.start)
	}
}

// addResult is PopConsumerContext.addGetMessageResult plus the handle the
// client builds for each message: it copies the messages into the result.
func (b *Broker) addResult(ctx *popContext, req *PopRequest, k qkey, stageTopic string, start int64, r *getResult) {
	flag := model.RetryFlagOf(stageTopic)
	ctx.restCount += r.max - r.nextBegin
	res := ctx.res
	vt := ctx.popTime + ctx.invisible
	shown := b.presentedTopic(stageTopic, req.Topic, flag)
	offs := b.scratch.offs[:0]
	for _, m := range r.msgs {
		offs = append(offs, m.QueueOffset)
		lease := b.newLease()
		ctx.records = append(ctx.records, rec{
			recKey: recKey{vt: vt, pair: k.pair, qid: k.qid, offset: m.QueueOffset},
			lease:  lease, invisible: ctx.invisible, retry: flag, attemptID: req.AttemptID,
		})
		p := res.addMessage(m, shown)
		p.Lease = lease
		p.Handle = model.ReceiptHandle{
			CkQueueOffset: start, PopTime: ctx.popTime, InvisibleTime: ctx.invisible,
			RetryFlag: flag, BrokerName: b.cfg.BrokerName, QueueID: k.qid, QueueOffset: m.QueueOffset, CommitLogOffset: -1,
		}
		p.Deadline = clock.FromMillis(vt)
	}
	ctx.found += int32(len(r.msgs))
	offs = append(offs, start) // the start info's one offset, after the batch's
	n := len(offs) - 1
	res.StartOffsetInfo = model.AppendOffsetInfo(res.StartOffsetInfo, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: offs[n:]})
	res.MsgOffsetInfo = model.AppendOffsetInfo(res.MsgOffsetInfo, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: offs[:n]})
	b.scratch.offs = offs[:0]
}

// presentedTopic is the topic a client is shown for a message read from
// stageTopic: a retry message appears under the request's (original)
// topic; its handle keeps the retry flag so ack and renew reach the retry
// topic. With the #11195 bug the retry topic name leaks through.
func (b *Broker) presentedTopic(stageTopic, reqTopic string, flag model.RetryType) string {
	if !flag.IsRetry() || b.cfg.Bugs.RetryTopicReencoding {
		return stageTopic
	}
	return reqTopic
}

// getPopOffset is the KV getPopOffset for non-FIFO requests (docs/rocketmq/kv-path.md §5.2).
func (b *Broker) getPopOffset(ctx *popContext, k qkey, s *slot, q *queue, stageTopic string) int64 {
	o := s.queryPullOffset(b.cfg.UseServerSideResetOffset)
	if o < 0 {
		o = b.initOffset(q, stageTopic, ctx.req.InitMode)
		s.setCommit(o)
	}
	if v, ok := s.takeReset(); ok {
		ctx.res.Replaced = b.flushCacheQueue(k, ctx.res.Replaced)
		s.win = nil
		s.setCommit(v)
		return v
	}
	return o
}
