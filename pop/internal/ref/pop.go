package ref

import (
	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// Pop serves a pop request (docs/rocketmq/kv-path.md §3 validation, 2.3 KV pop, 2.13 polling)
// into res. Like pop.Broker.Pop it works on its own copy of the request,
// whose born time defaults to now and whose negative queue id is -1.
func (b *Broker) Pop(now clock.Time, in *pop.PopRequest, res *pop.PopResult) {
	*res = b.pop(now, *in)
}

func (b *Broker) pop(now clock.Time, r pop.PopRequest) pop.PopResult {
	req := &r
	nowMs := now.Millis()
	if req.BornTime == 0 {
		req.BornTime = now
	}
	if req.QueueID < 0 {
		req.QueueID = -1
	}
	b.touch(nowMs)
	lapsed := b.settleOrder(nowMs, nil)
	res := b.popChecked(nowMs, req)
	res.Lapsed = append(lapsed, res.Lapsed...)
	res.Cleared, b.ord.cleared = b.ord.cleared, nil
	return res
}

// popChecked validates and serves a pop on the configured path.
func (b *Broker) popChecked(nowMs int64, req *pop.PopRequest) pop.PopResult {
	if !b.cfg.UsesKV() {
		return b.popFSChecked(nowMs, req)
	}
	f, code, status, ok := b.checkPop(nowMs, req)
	if !ok {
		return pop.PopResult{Code: code, Status: status}
	}
	b.stats.PopRequests++
	p := &popping{popTime: nowMs, invisible: req.InvisibleTime.Millis(), ff: f}
	if b.busy() && !(req.Order && !b.cfg.Bugs.FifoRetryLockBusy && b.attemptMatched(req.ConsumerGroup, req.Topic, req.QueueID, req.AttemptID)) {
		b.stats.LockBusy++
		res := b.respond(nowMs, req, p)
		if req.Order {
			res.ReviveQid = model.PopOrderReviveQueue
		}
		return res
	}
	if req.Order {
		return b.orderPopKV(nowMs, req, f)
	}
	for _, s := range b.stages(nowMs, req) {
		b.stage(req, p, s.topic, s.qid, f) // retry topics too, through the request's filter
	}
	if len(p.recs) > 0 {
		b.keep(p)
	}
	for _, k := range p.stages {
		b.commitPending(k)
	}
	return b.respond(nowMs, req, p)
}

// checkPop applies the checks of docs/rocketmq/kv-path.md §3 in order.
func (b *Broker) checkPop(nowMs int64, req *pop.PopRequest) (*filter.Filter, model.ResponseCode, pop.PopStatus, bool) {
	t := b.topics[req.Topic]
	g, hasGroup := b.groups[req.ConsumerGroup]
	bad := func(c model.ResponseCode) (*filter.Filter, model.ResponseCode, pop.PopStatus, bool) {
		return nil, c, pop.PopError, false
	}
	switch {
	case nowMs-req.BornTime.Millis()-req.PollTime.Millis() > 500:
		return nil, model.PollingTimeout, pop.PopPollingNotFound, false
	case !b.cfg.Readable:
		return bad(model.NoPermission)
	case req.MaxMsgNums > pop.MaxPopBatch:
		return bad(model.InvalidParameter)
	case !b.cfg.TimerWheelEnable:
		return bad(model.SystemError)
	case t == nil:
		return bad(model.TopicNotExist)
	case t.cfg.Perm&pop.PermRead == 0:
		return bad(model.NoPermission)
	case req.QueueID >= t.cfg.ReadQueueNums:
		return bad(model.InvalidParameter)
	case !hasGroup:
		return bad(model.SubscriptionGroupNotExist)
	case !g.ConsumeEnable:
		return bad(model.NoPermission)
	case !b.cfg.UsesKV():
		return nil, 0, 0, true // the FS path compiles its own subscription
	}
	f, err := filter.ParsePop(req.ExpressionType, req.Expression)
	if err != nil {
		return bad(model.SubscriptionParseFailed)
	}
	return f, 0, 0, true
}

type stage struct {
	topic string
	qid   int32
}

// stages lists what a request reads, in order (docs/rocketmq/kv-path.md §4
// step 4): a request that prefers retry (kvChoice) reads the retry topics
// first; an all-queue request reads every queue in scan order, then the
// retry topics unless it read them first; a specific-queue request reads
// the retry topics only on its preferred turns.
func (b *Broker) stages(nowMs int64, req *pop.PopRequest) []stage {
	p := pk{req.ConsumerGroup, req.Topic}
	b.locks[p] = nowMs
	n := b.requests[p]
	b.requests[p] = n + 1
	var retry []stage
	if b.cfg.RetrieveMessageFromPopRetryTopicV1 {
		retry = append(retry, stage{model.BuildPopRetryTopicV1(req.Topic, req.ConsumerGroup), 0})
	}
	if b.cfg.EnableRetryTopicV2 {
		retry = append(retry, stage{model.BuildPopRetryTopicV2(req.Topic, req.ConsumerGroup), 0})
	}
	preferRetry, rot := b.kvChoice(req, n)
	var out []stage
	if preferRetry {
		out = append(out, retry...)
	}
	if req.QueueID != -1 {
		return append(out, stage{req.Topic, req.QueueID})
	}
	for _, q := range b.scanOrder(b.topics[req.Topic].cfg.ReadQueueNums, rot) {
		out = append(out, stage{req.Topic, q})
	}
	if !preferRetry {
		out = append(out, retry...)
	}
	return out
}

// popFSChecked validates an FS pop (the shared checks, then the
// subscription with package filter) and serves it.
func (b *Broker) popFSChecked(nowMs int64, req *pop.PopRequest) pop.PopResult {
	if _, code, status, ok := b.checkPop(nowMs, req); !ok {
		return pop.PopResult{Code: code, Status: status}
	}
	f, err := filter.ParsePop(req.ExpressionType, req.Expression)
	if err != nil {
		return pop.PopResult{Code: model.SubscriptionParseFailed, Status: pop.PopError}
	}
	b.stats.PopRequests++
	return b.fsPop(nowMs, req, f)
}

// popping is PopConsumerContext.
type popping struct {
	popTime         int64
	invisible       int64
	found           int32
	rest            int64
	start, msgInfos []model.OffsetInfo
	recs            []pop.LeasedRecord
	replaced        []model.LeaseID
	msgs            []pop.PoppedMessage
	ff              *filter.Filter // the subscription, for parking
	stages          []qk           // queues whose stage left a pending commit
}

// stage reads one queue for the request (docs/rocketmq/kv-path.md §4 step 5).
func (b *Broker) stage(req *pop.PopRequest, p *popping, stageTopic string, qid int32, f *filter.Filter) {
	q := b.queue(stageTopic, qid)
	if q == nil {
		return // a retry topic nobody has written yet
	}
	k := qk{req.ConsumerGroup, stageTopic, qid}
	if b.cfg.EnablePopMessageThreshold && b.cfg.EnablePopBufferMerge && int64(len(b.cachedOf(k))) >= b.cfg.PopInflightMessageThreshold {
		return
	}
	remain := int(req.MaxMsgNums - p.found)
	if remain <= 0 {
		p.rest += q.max() - max(b.queryOffset(k), 0)
		return
	}
	start, reset := b.popOffset(k, q, req.InitMode, p)
	r := b.read(q, start, remain, int64(remain), f)
	if r.status == stOffsetTooSmall || r.status == stOffsetOverflowBadly || r.status == stOffsetFoundNull {
		b.commit[k] = r.next
		r = b.read(q, r.next, remain, int64(remain), f)
	}
	if r.status == stFound {
		b.collect(req, p, k, start, q, r) // the offset the stage started from, not the corrected one
	}
	b.pull[k] = r.next
	b.stageCommit(p, k, start, r.next, r.status == stFound, reset)
}

// getStatus is the store's GetMessageStatus, the values the reference uses.
type getStatus uint8

const (
	stFound getStatus = iota
	stNoMatchedMessage
	stOffsetFoundNull
	stOffsetOverflowBadly
	stOffsetOverflowOne
	stOffsetTooSmall
	stNoMessageInQueue
)

// readResult is one store read (DefaultMessageStore.getMessage).
type readResult struct {
	status getStatus
	msgs   []*model.Message
	next   int64
}

// read is a counted store read (broker work): the read below.
func (b *Broker) read(q *queue, offset int64, n int, asked int64, f *filter.Filter) readResult {
	r := read(q, offset, n, asked, f)
	b.stats.ReadCalls++
	b.stats.ReadMessages += int64(len(r.msgs))
	return r
}

// read returns up to n messages matching f from offset, inspecting at most
// max(800, asked) entries (asked: the request's maxMsgNums), with the
// store's offset-correction statuses.
func read(q *queue, offset int64, n int, asked int64, f *filter.Filter) readResult {
	lo, hi := q.min, q.max()
	switch {
	case hi == 0:
		return readResult{status: stNoMessageInQueue, next: 0}
	case offset < lo:
		return readResult{status: stOffsetTooSmall, next: lo}
	case offset == hi:
		return readResult{status: stOffsetOverflowOne, next: offset}
	case offset > hi && lo == 0:
		return readResult{status: stOffsetOverflowBadly, next: 0}
	case offset > hi:
		return readResult{status: stOffsetOverflowBadly, next: hi}
	}
	r := readResult{status: stNoMatchedMessage}
	o := offset
	for ; o < hi && o-offset < max(800, asked) && len(r.msgs) < n; o++ {
		if m := q.at(o); matches(f, m) {
			r.msgs = append(r.msgs, m)
		}
	}
	r.next = o
	if len(r.msgs) > 0 {
		r.status = stFound
	}
	return r
}

// collect adds a found read to the context (addGetMessageResult) and
// returns the popped offsets.
func (b *Broker) collect(req *pop.PopRequest, p *popping, k qk, start int64, q *queue, r readResult) []int64 {
	flag := model.RetryFlagOf(k.topic)
	p.rest += q.max() - r.next
	var offs []int64
	for _, m := range r.msgs {
		offs = append(offs, m.QueueOffset)
		r := b.grant(model.PopConsumerRecord{PopTime: p.popTime, GroupID: k.group, TopicID: k.topic, QueueID: k.qid,
			RetryFlag: flag, InvisibleTime: p.invisible, Offset: m.QueueOffset, AttemptID: req.AttemptID})
		p.recs = append(p.recs, r)
		shown := *m.Clone()
		shown.Body = append([]byte(nil), m.Body...)
		if len(m.Body) == 0 {
			shown.Body = m.Body
		}
		if flag.IsRetry() && !b.cfg.Bugs.RetryTopicReencoding {
			shown.Topic = req.Topic
		}
		p.msgs = append(p.msgs, pop.PoppedMessage{Message: shown, RealTopic: m.Topic, Lease: r.Lease, Deadline: clock.FromMillis(p.popTime + p.invisible),
			Handle: model.ReceiptHandle{CkQueueOffset: start, PopTime: p.popTime, InvisibleTime: p.invisible,
				RetryFlag: flag, BrokerName: b.cfg.BrokerName, QueueID: k.qid, QueueOffset: m.QueueOffset, CommitLogOffset: -1}})
	}
	p.found += int32(len(r.msgs))
	p.start = append(p.start, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: []int64{start}})
	p.msgInfos = append(p.msgInfos, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: offs})
	return offs
}

// keep writes a pop's records to the cache when buffer merge is on and the
// cache is not full (size > popCkMaxBufferSize), else to the store.
// Overwritten records' leases go to p.replaced.
func (b *Broker) keep(p *popping) {
	toCache := b.cfg.EnablePopBufferMerge && int64(len(b.cache)) <= b.cfg.PopCkMaxBufferSize
	for _, r := range p.recs {
		var l model.LeaseID
		if toCache {
			l = b.cacheAdd(r)
		} else {
			l = b.storePut(r)
		}
		if l != 0 {
			p.replaced = append(p.replaced, l)
		}
	}
}

// respond builds the response: found messages, or long polling.
func (b *Broker) respond(nowMs int64, req *pop.PopRequest, p *popping) pop.PopResult {
	res := pop.PopResult{PopTime: clock.FromMillis(p.popTime), InvisibleTime: clock.MillisDuration(p.invisible), RestNum: p.rest, Replaced: p.replaced}
	if p.found == 0 {
		res.Status, res.Code, res.PollID = b.park(req, nowMs, p.ff)
		return res
	}
	b.stats.Popped += int64(p.found)
	res.Code, res.Status = model.Success, pop.PopFound
	res.Stages = stagesOf(p.start, p.msgInfos)
	res.Messages = p.msgs
	if res.RestNum > 0 {
		if w, ok := b.wakeOne(pollKey{req.Topic, req.ConsumerGroup, req.QueueID}, nil, true); ok {
			res.Woken = []pop.Wakeup{w}
		}
	}
	return res
}

// stagesOf is the response's stages: an entry of startOffsetInfo and one
// of msgOffsetInfo each.
func stagesOf(start, msgInfos []model.OffsetInfo) []pop.PopStage {
	var out []pop.PopStage
	for i, e := range start {
		out = append(out, pop.PopStage{RetryFlag: e.RetryFlag, QueueID: e.QueueID, StartOffset: e.Offsets[0], Count: int32(len(msgInfos[i].Offsets))})
	}
	return out
}
