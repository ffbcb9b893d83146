package pop

import (
	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// popKV is PopConsumerService.popAsync for a request on topic t.
func (b *Broker) popKV(nowMs int64, t *topic, f *pfilter.Filter, ctx *popContext) {
	req := ctx.req
	pair := b.popPair(t, ctx.group, req)
	ctx.pair = pair
	if req.Order {
		ctx.reviveQid = model.PopOrderReviveQueue
	}
	// tryLock(group@topic): a single-threaded broker always gets it, unless
	// the faults say a concurrent request holds it. Then the empty answer
	// long-polls; an orderly retry of a batch in flight spins for it
	// instead (PR #10828), unless the #10827 bug is on.
	if b.lockBusy() && !(req.Order && !b.cfg.Bugs.FifoRetryLockBusy && b.attemptMatched(pair, req.QueueID, req.AttemptID)) {
		b.stats.LockBusy++
		return
	}
	b.setLock(pair, nowMs)
	for int(pair) >= len(b.requestCount) {
		b.requestCount = append(b.requestCount, 0)
	}
	n := b.requestCount[pair]
	b.requestCount[pair] = n + 1
	if req.Order {
		b.kvOrderStages(nowMs, ctx, t, n, f)
		return
	}
	preferRetry, rotation := b.kvRetryChoice(t, ctx.group, n)
	if preferRetry {
		b.popRetryStages(nowMs, req, ctx, pair, f)
	}
	if req.QueueID != -1 {
		b.popStage(nowMs, req, ctx, req.Topic, t, pair, req.QueueID, f)
	} else {
		b.popAllQueues(nowMs, req, ctx, t, pair, rotation, f)
		if !preferRetry {
			b.popRetryStages(nowMs, req, ctx, pair, f)
		}
	}
	if len(ctx.records) > 0 {
		b.storeRecords(ctx)
	}
	for _, k := range ctx.stages {
		s := b.commitPending(k)
		if ctx.markStages && k.pair == ctx.pair { // not a retry topic's stage
			b.markStage(k, s, t.queues[k.qid])
		}
	}
}

// markStage marks queue k (q, slot s) of an all-queue pop whose stage read
// it and left a pending commit (kvQueueStage leaves its marks to popKV),
// once the pop's records are cached and commitPending committed it: a
// queue read to its end is then caught up, so the next pop skips it,
// where before those commits the stage found it neither idle nor quiet.
// It is kvMarks (inline: no in-flight threshold) given a stage's pending
// commit just committed as far as the cache allows: caughtUp's commit
// condition holds.
func (b *Broker) markStage(k qkey, s *slot, q *queue) {
	m := markedNone
	if s.has&(hasPull|hasReset|hasCommit|hasPending) == hasPull|hasCommit|hasPending && s.pull == q.maxOffset() && s.pending == s.pull {
		m = markedQuiet
		if s.commit == s.pull && (!b.cfg.EnablePopBufferMerge || b.cache.count(k) == 0) {
			m = markedIdle // kvIdle's further conditions, as in kvQueueStage
		}
	}
	if invariants {
		assertf(m == b.kvMarks(k, s, q, true), "pop: markStage of %v: %d, kvMarks %d", k, m, b.kvMarks(k, s, q, true))
	}
	switch m {
	case markedIdle:
		b.offsets.markIdle(k)
	case markedQuiet:
		b.offsets.markQuiet(k)
	}
}

// popAllQueues runs a stage on every readable queue of t, in the scan
// order from rotation n (scanQueue). Without the in-flight
// threshold, a stage that only reads is done here: past a full batch it
// adds the queue's backlog to restNum, and a caught-up queue is skipped.
//
// Queues marked idle, or quiet while the batch is not full (idle.go), are
// skipped, with what their stages would have done done in bulk; a queue
// found idle or quiet after its stage is marked.
func (b *Broker) popAllQueues(nowMs int64, req *PopRequest, ctx *popContext, t *topic, pair uint32, n int64, f *pfilter.Filter) {
	rq := t.cfg.ReadQueueNums
	row := b.offsets.slots(pair, rq) // stages touch only slots of this row below rq: it does not move
	inline := !b.inflightThreshold()
	if !b.skipsIdle(t) {
		for i := range rq {
			qid := b.scanQueue(rq, n, i)
			if !inline || !b.readOnlyStage(ctx, req, qkey{pair, qid}, &row[qid], t.queues[qid]) {
				b.popStage(nowMs, req, ctx, req.Topic, t, pair, qid, f)
			}
		}
		return
	}
	// scanUnmarked's loop, with the stage and the marks it leaves inline
	idle, quiet := b.idleBits(pair, t, rq)
	sc := b.newQueueScan(rq, n)
	for pos := int32(0); ; {
		marks := idle
		if ctx.found < req.MaxMsgNums {
			marks = quiet
		}
		at, qid, ok := sc.next(marks, pos)
		b.skipIdle(ctx, at-pos)
		if !ok {
			return
		}
		switch k := (qkey{pair, qid}); b.kvQueueStage(nowMs, ctx, t, k, row, inline, f) {
		case markedIdle:
			b.offsets.markIdle(k)
		case markedQuiet:
			b.offsets.markQuiet(k)
		}
		pos = at + 1
	}
}

// kvQueueStage is popAllQueues' stage on queue k (slots row), and returns
// the marks the queue deserves after it (the tests check them against
// queueMarks, which computes them afresh).
func (b *Broker) kvQueueStage(nowMs int64, ctx *popContext, t *topic, k qkey, row []slot, inline bool, f *pfilter.Filter) int {
	req, q, s := ctx.req, t.queues[k.qid], &row[k.qid]
	switch {
	case !inline:
		b.popStage(nowMs, req, ctx, req.Topic, t, k.pair, k.qid, f)
	case ctx.found >= req.MaxMsgNums:
		ctx.restCount += backlog(q, s.queryOffset(b.cfg.UseServerSideResetOffset)) // readOnlyStage's
	case b.caughtUp(k, s, q):
		// readOnlyStage on a caught-up queue, which it leaves quiet;
		// kvIdle's further conditions given caughtUp and no in-flight
		// threshold: the commit offset at the end, no cached record
		b.stats.ReadCalls++ // the read upstream makes finds nothing
		if s.commit == q.maxOffset() && (!b.cfg.EnablePopBufferMerge || b.cache.count(k) == 0) {
			return markedIdle
		}
		return markedQuiet
	default:
		// popStage, whose checks the cases above made (inline: no
		// in-flight threshold), but for its slot's write: the read
		b.offsets.touch(k)
		n := len(ctx.stages)
		b.readStage(req, ctx, req.Topic, t.flag, q, k, s, f)
		if len(ctx.stages) > n { // a pending commit: popKV marks the queue after it (markStage)
			ctx.markStages = true
			return markedNone
		}
	}
	return b.kvMarks(k, s, q, inline)
}

// kvMarks is queueMarks on the KV path for queue k (q) with its slot s,
// which kvQueueStage holds: kvIdle, else kvQuiet (inline: no in-flight
// threshold) without looking the slot up again.
func (b *Broker) kvMarks(k qkey, s *slot, q *queue, inline bool) int {
	switch {
	case b.kvIdle(k, s, q):
		return markedIdle
	case inline && b.caughtUp(k, s, q):
		return markedQuiet
	}
	return markedNone
}

// inflightThreshold reports that popStage may skip a queue for its cached
// in-flight count (the threshold counts cached records, so it needs the
// cache). When it is off, a stage past a full batch or on a caught-up
// queue only reads, which is what lets popAllQueues do it inline.
func (b *Broker) inflightThreshold() bool {
	return b.cfg.EnablePopMessageThreshold && b.cfg.EnablePopBufferMerge
}

// readOnlyStage does popStage's work for queue q (key k, slot s) when the
// stage only reads, and reports whether it did: past a full batch, or on a
// caught-up queue.
func (b *Broker) readOnlyStage(ctx *popContext, req *PopRequest, k qkey, s *slot, q *queue) bool {
	if ctx.found >= req.MaxMsgNums {
		ctx.restCount += backlog(q, s.queryOffset(b.cfg.UseServerSideResetOffset))
		return true
	}
	if b.caughtUp(k, s, q) {
		b.stats.ReadCalls++ // the read upstream makes finds nothing
		return true
	}
	return false
}

// popRetryStages reads the retry topics through the request's filter, as
// popAsync does (a retry copy keeps its tags and properties).
func (b *Broker) popRetryStages(nowMs int64, req *PopRequest, ctx *popContext, pair uint32, f *pfilter.Filter) {
	v1, v2 := b.names.retryTopics(pair)
	if b.cfg.RetrieveMessageFromPopRetryTopicV1 {
		b.popRetryStage(nowMs, req, ctx, pair, 0, v1, f)
	}
	if b.cfg.EnableRetryTopicV2 {
		b.popRetryStage(nowMs, req, ctx, pair, 1, v2, f)
	}
}

// retryRef is a pair's retry topic (V1 or V2) and its pair id, known once
// the topic exists. Topics are never removed or replaced and pair ids are
// permanent, so a filled retryRef never goes stale (restarts included).
//
// Until the topic exists, missing remembers the broker's topic count at the
// last lookup (plus one; 0: never looked up): topics are only ever added,
// so while the count is the same the topic is still missing and the pop
// skips the lookup by name.
type retryRef struct {
	t       *topic
	pair    uint32
	missing int
}

// popRetryStage reads queue 0 of pair's retry topic v (0: V1, 1: V2),
// unless it does not exist yet.
func (b *Broker) popRetryStage(nowMs int64, req *PopRequest, ctx *popContext, pair uint32, v int, retryTopic string, f *pfilter.Filter) {
	if int(pair) >= len(b.retryRefs) {
		b.growRetryRefs(pair)
	}
	r := &b.retryRefs[pair][v] // in place: nothing below grows retryRefs
	if r.t == nil {
		n := len(b.topicOrder) + 1
		if r.missing == n {
			return
		}
		t := b.topicNamed(retryTopic)
		if t == nil {
			r.missing = n
			return
		}
		r.t, r.pair = t, b.names.pair(req.ConsumerGroup, retryTopic)
	}
	b.popStage(nowMs, req, ctx, retryTopic, r.t, r.pair, 0, f)
}

// growRetryRefs makes room in retryRefs for pair.
func (b *Broker) growRetryRefs(pair uint32) {
	for int(pair) >= len(b.retryRefs) {
		b.retryRefs = append(b.retryRefs, [2]retryRef{})
	}
}

// storeRecords writes a pop's records to the cache when it is on and not
// full, else to the store.
func (b *Broker) storeRecords(ctx *popContext) {
	recs, res := ctx.records, ctx.res
	toCache := b.cfg.EnablePopBufferMerge && !b.cache.full(b.cfg.PopCkMaxBufferSize)
	for i := range recs {
		var l model.LeaseID
		if toCache {
			l = b.cache.add(&recs[i]) // which clears the queue's idle marks
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
func (b *Broker) popStage(nowMs int64, req *PopRequest, ctx *popContext, stageTopic string, t *topic, pair uint32, qid int32, f *pfilter.Filter) {
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
	if s := b.offsets.peek(k); s != nil && b.caughtUp(k, s, q) {
		// the read upstream makes finds nothing; the slot is only read, so
		// the queue keeps its marks (offsets.at would clear them)
		b.stats.ReadCalls++
		return
	}
	b.readStage(req, ctx, stageTopic, t.flag, q, k, b.offsets.at(k), f)
}

// readStage is the rest of popStage on queue q (key k, slot s) of
// stageTopic (retry flag flag: its topic's) once its checks let it read: a
// batch not full, a queue not caught up.
func (b *Broker) readStage(req *PopRequest, ctx *popContext, stageTopic string, flag model.RetryType, q *queue, k qkey, s *slot, f *pfilter.Filter) {
	remain := int(req.MaxMsgNums - ctx.found)
	consume, reset := b.getPopOffset(ctx, k, s, q, stageTopic)
	var r getResult
	q.get(&r, consume, remain, int64(remain), f, b.scratch.msgs)
	b.countRead(&r)
	if r.offsetCorrected() {
		// the offset correction commits the store's next offset and reads
		// again from it; the stage still reports the offset it started from
		s.setCommit(r.nextBegin)
		q.get(&r, r.nextBegin, remain, int64(remain), f, r.msgs)
		b.countRead(&r)
	}
	if r.status == getFound {
		b.addResult(ctx, req, k, stageTopic, flag, consume, &r)
	}
	s.pull, s.has = r.nextBegin, s.has|hasPull
	b.stageCommit(ctx, k, s, consume, r.nextBegin, r.status == getFound, reset)
	b.scratch.dropMsgs(r.msgs)
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

// caughtUp reports that a stage on queue q (key k, slot s) would change
// nothing, so popStage may skip it: most queues an all-queue pop visits
// are empty. That holds when the pull offset is the queue's end (the read
// is OFFSET_OVERFLOW_ONE or NO_MESSAGE_IN_QUEUE: nothing found, no offset
// correction, the pull offset written back unchanged), no reset is
// pending, and the commit the stage would make leaves the commit offset
// (and the pending commit) as they are.
func (b *Broker) caughtUp(k qkey, s *slot, q *queue) bool {
	if s.has&(hasPull|hasReset|hasCommit) != hasPull|hasCommit || s.pull != q.maxOffset() {
		return false
	}
	if b.cfg.Bugs.CommitOffsetLag {
		return s.commit == b.lagCommit(k, s.pull)
	}
	// pendingTarget(p) is at most p: a commit offset at the pending commit
	// or past it needs no look at the cache
	return s.has&hasPending != 0 && s.pending == s.pull && (s.commit >= s.pending || s.commit >= b.pendingTarget(k, s.pending))
}

// stageCommit is what a stage does to the commit offset (docs/rocketmq/
// kv-path.md §5.3). Fixed (apache/rocketmq#10949 as PR #10964 proposes):
// the stage's next begin offset becomes the queue's pending commit, which
// commitPending commits once the pop's records are stored; a stage that
// took an admin reset commits nothing more. With Bugs.CommitOffsetLag
// (RocketMQ up to 5.5.0): the offset the stage started from (its next
// begin offset when it found nothing, with Bugs.EmptyStageCommitsNextBegin,
// 5.3.2), replaced by the smallest cached offset while the cache holds the
// queue's records (read before this pop's are cached).
func (b *Broker) stageCommit(ctx *popContext, k qkey, s *slot, consume, nextBegin int64, found, reset bool) {
	if b.cfg.Bugs.CommitOffsetLag {
		v := consume
		if !found && b.cfg.Bugs.EmptyStageCommitsNextBegin {
			v = nextBegin
		}
		s.setCommit(b.lagCommit(k, v))
		return
	}
	if reset {
		s.has &^= hasPending
		return
	}
	s.pending, s.has = nextBegin, s.has|hasPending
	ctx.stages = append(ctx.stages, k)
}

// lagCommit is the upstream (#10949) commit value v of queue k: the
// smallest cached offset instead while the cache holds records of k.
func (b *Broker) lagCommit(k qkey, v int64) int64 {
	if b.cfg.EnablePopBufferMerge {
		if m := b.cache.minOffset(k); m >= 0 {
			return m
		}
	}
	return v
}

// pendingTarget is what queue k's pending commit p may commit now: p,
// capped at the smallest cached offset while the cache holds records of k
// (a restart loses them, so the commit offset must not pass them).
func (b *Broker) pendingTarget(k qkey, p int64) int64 {
	if b.cfg.EnablePopBufferMerge {
		if m := b.cache.minOffset(k); m >= 0 && m < p {
			return m
		}
	}
	return p
}

// commitPending commits queue k's pending commit (fixed behaviour), as far
// as the cache allows and never backwards, and returns k's slot (nil when
// it has none).
func (b *Broker) commitPending(k qkey) *slot {
	s := b.offsets.peek(k)
	if s == nil || s.has&hasPending == 0 {
		return s
	}
	if v := b.pendingTarget(k, s.pending); s.has&hasCommit == 0 || v > s.commit {
		s.setCommit(v)
	}
	return s
}

// addResult is PopConsumerContext.addGetMessageResult plus the handle the
// client builds for each message: it copies the messages into the result
// and records the stage (the offset-info headers are formatted from it on
// demand).
// flag is stageTopic's retry flag (topic.flag, where RetryFlagOf searched
// the name on every stage that found messages).
func (b *Broker) addResult(ctx *popContext, req *PopRequest, k qkey, stageTopic string, flag model.RetryType, start int64, r *getResult) {
	if invariants {
		assertf(flag == model.RetryFlagOf(stageTopic), "pop: stage of %s with retry flag %d", stageTopic, flag)
	}
	ctx.restCount += r.max - r.nextBegin
	res := ctx.res
	vt := ctx.popTime + ctx.invisible
	shown := b.presentedTopic(stageTopic, req.Topic, flag)
	for _, m := range r.msgs {
		lease := b.newLease()
		d := ctx.addRecord() // written in place, as setHandle writes the handle
		d.recKey = recKey{vt: vt, pair: k.pair, qid: k.qid, offset: m.QueueOffset}
		d.lease, d.invisible, d.retry, d.attemptID = lease, ctx.invisible, flag, req.AttemptID
		p := res.addMessage(m, shown)
		p.Lease = lease
		ctx.setHandle(&p.Handle, ctx.popTime, 0, flag, b.cfg.BrokerName, k.qid, start, m.QueueOffset)
		p.Deadline = clock.FromMillis(vt)
	}
	ctx.found += int32(len(r.msgs))
	res.addStage(flag, k.qid, start, len(r.msgs))
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

// getPopOffset is the KV getPopOffset for non-FIFO requests
// (docs/rocketmq/kv-path.md §5.2); reset reports that it took a pending
// admin reset.
func (b *Broker) getPopOffset(ctx *popContext, k qkey, s *slot, q *queue, stageTopic string) (offset int64, reset bool) {
	o := s.queryPullOffset(b.cfg.UseServerSideResetOffset)
	if o < 0 {
		o = b.initOffset(q, stageTopic, ctx.req.InitMode)
		s.setCommit(o)
	}
	if v, ok := s.takeReset(); ok {
		ctx.res.Replaced = b.flushCacheQueue(k, ctx.res.Replaced)
		b.clearBlock(k)
		s = b.offsets.at(k)
		s.setCommit(v)
		return v, true
	}
	return o, false
}
