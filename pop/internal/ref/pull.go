package ref

import (
	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// statusNames are the store statuses by RocketMQ name (a pull's remark).
var statusNames = map[getStatus]string{
	stFound: "FOUND", stNoMatchedMessage: "NO_MATCHED_MESSAGE", stOffsetFoundNull: "OFFSET_FOUND_NULL",
	stOffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY", stOffsetOverflowOne: "OFFSET_OVERFLOW_ONE",
	stOffsetTooSmall: "OFFSET_TOO_SMALL", stNoMessageInQueue: "NO_MESSAGE_IN_QUEUE",
}

// holdKey is topic@queueId.
type holdKey struct {
	topic string
	qid   int32
}

// heldPull is one pull held by the hold service.
type heldPull struct {
	id             uint64
	key            holdKey
	req            pop.PullRequest
	filter         *filter.Filter
	from           int64
	expire, dueRef int64 // ms: when its time is up; when the next check answers it
}

// Pull serves a pull as it arrives (brokerAllowSuspend).
func (b *Broker) Pull(now clock.Time, req *pop.PullRequest, res *pop.PullResult) {
	b.touch(now.Millis())
	*res = b.pullRequest(now, *req, true)
}

// RerunPull re-runs a held pull: no hold, no commit offset stored.
func (b *Broker) RerunPull(now clock.Time, req *pop.PullRequest, res *pop.PullResult) {
	b.touch(now.Millis())
	*res = b.pullRequest(now, *req, false)
}

// pullRequest is PullMessageProcessor.processRequest (checks in its order) and the
// result handler.
func (b *Broker) pullRequest(now clock.Time, req pop.PullRequest, allowSuspend bool) pop.PullResult {
	g, hasGroup := b.groups[req.ConsumerGroup]
	t := b.topics[req.Topic]
	bad := func(c model.ResponseCode) pop.PullResult { return pop.PullResult{Code: c, Status: pop.PullError} }
	switch {
	case !b.cfg.Readable:
		return bad(model.NoPermission)
	case !hasGroup:
		return bad(model.SubscriptionGroupNotExist)
	case !g.ConsumeEnable:
		return bad(model.NoPermission)
	case t == nil:
		return bad(model.TopicNotExist)
	case t.cfg.Perm&pop.PermRead == 0:
		return bad(model.NoPermission)
	case req.QueueID < 0 || req.QueueID >= t.cfg.ReadQueueNums:
		return bad(model.InvalidParameter)
	}
	f, err := filter.Parse(req.ExpressionType, req.Subscription)
	if err != nil {
		return bad(model.SubscriptionParseFailed)
	}
	if f.Kind() == filter.SQL92 && !b.cfg.EnablePropertyFilter {
		return bad(model.SystemError)
	}
	b.stats.PullRequests++
	k := qk{req.ConsumerGroup, req.Topic, req.QueueID}
	q := t.queues[req.QueueID]
	reset, hasReset := b.reset[k]
	delete(b.reset, k) // queryThenEraseResetOffset, whatever the setting
	var res pop.PullResult
	if hasReset && b.cfg.UseServerSideResetOffset {
		res = pop.PullResult{Code: model.PullOffsetMoved, Remark: "OFFSET_RESET", NextBeginOffset: reset, MinOffset: q.min, MaxOffset: q.max()}
	} else {
		res = b.pullRead(q, f, &req)
	}
	b.pull[k] = res.NextBeginOffset
	if allowSuspend && req.HasCommitOffset && req.CommitOffset >= 0 {
		b.commit[k] = req.CommitOffset
	}
	switch res.Code {
	case model.Success:
		res.Status = pop.PullFound
	case model.PullNotFound:
		res.Status = pop.PullNoNewMsg
		if allowSuspend && req.Suspend {
			res.Status, res.HoldID = pop.PullSuspended, b.holdPull(now, req, f)
		}
	case model.PullRetryImmediately:
		res.Status = pop.PullNoMatchedMsg
	case model.PullOffsetMoved:
		res.Status = pop.PullOffsetIllegal
	}
	return res
}

// pullRead reads the store and maps the status to a response code.
func (b *Broker) pullRead(q *queue, f *filter.Filter, req *pop.PullRequest) pop.PullResult {
	n := int(req.MaxMsgNums)
	if n < 1 {
		n = 1
	}
	if n > 32 {
		n = 32
	}
	r := b.read(q, req.QueueOffset, n, int64(req.MaxMsgNums), f)
	res := pop.PullResult{Remark: statusNames[r.status], NextBeginOffset: r.next, MinOffset: q.min, MaxOffset: q.max()}
	switch r.status {
	case stFound:
		res.Code = model.Success
		for _, m := range r.msgs {
			res.Messages = append(res.Messages, deepCopy(m))
		}
		b.stats.Pulled += int64(len(r.msgs))
	case stNoMatchedMessage:
		res.Code = model.PullRetryImmediately
	case stNoMessageInQueue:
		res.Code = model.PullNotFound
		if req.QueueOffset != 0 {
			res.Code = model.PullOffsetMoved
		}
	case stOffsetOverflowOne, stOffsetFoundNull:
		res.Code = model.PullNotFound
	default:
		res.Code = model.PullOffsetMoved
	}
	return res
}

// holdPull suspends a pull that found nothing.
func (b *Broker) holdPull(now clock.Time, req pop.PullRequest, f *filter.Filter) uint64 {
	b.nextHoldID++
	k := holdKey{req.Topic, req.QueueID}
	known := false
	for _, x := range b.holdKeys {
		known = known || x == k
	}
	if !known {
		b.holdKeys = append(b.holdKeys, k)
	}
	exp := now.Millis() + req.SuspendTimeout.Millis()
	b.holds = append(b.holds, heldPull{id: b.nextHoldID, key: k, req: req, filter: f, from: req.QueueOffset, expire: exp, dueRef: exp})
	return b.nextHoldID
}

// notifyHolds is notifyMessageArriving for key k: newest is the queue's end
// as the notification sees it; msg is the arriving message (nil for the
// periodic check, which matches any message).
func (b *Broker) notifyHolds(nowMs int64, k holdKey, newest int64, msg *model.Message) []pop.PullWakeup {
	var out []pop.PullWakeup
	kept := b.holds[:0]
	for _, h := range b.holds {
		if h.key != k {
			kept = append(kept, h)
			continue
		}
		arrived := newest > h.from
		if arrived && (msg == nil || matches(h.filter, msg)) {
			out = append(out, pop.PullWakeup{ID: h.id, Request: h.req})
			continue
		}
		if nowMs >= h.expire {
			out = append(out, pop.PullWakeup{ID: h.id, Request: h.req, Expired: true})
			continue
		}
		if arrived && nowMs < h.dueRef {
			h.dueRef = nowMs
		}
		kept = append(kept, h)
	}
	b.holds = kept
	return out
}

// pullArrived wakes the pulls held on msg's queue.
func (b *Broker) pullArrived(now clock.Time, msg *model.Message) []pop.PullWakeup {
	return b.notifyHolds(now.Millis(), holdKey{msg.Topic, msg.QueueID}, msg.QueueOffset+1, msg)
}

// CheckHoldRequest is the hold service's periodic check, key by key in the
// order keys were first used.
func (b *Broker) CheckHoldRequest(now clock.Time) []pop.PullWakeup {
	b.touch(now.Millis())
	var out []pop.PullWakeup
	for _, k := range b.holdKeys {
		if q := b.queue(k.topic, k.qid); q != nil {
			out = append(out, b.notifyHolds(now.Millis(), k, q.max(), nil)...)
		}
	}
	return out
}

// NextHoldCheck is the first 5 s check at or after the earliest due hold.
func (b *Broker) NextHoldCheck() (clock.Time, bool) {
	if len(b.holds) == 0 {
		return 0, false
	}
	due := b.holds[0].dueRef
	for _, h := range b.holds {
		due = min(due, h.dueRef)
	}
	const p = pop.PullHoldCheckInterval
	return clock.FromMillis((due + p - 1) / p * p), true
}

// dropAllHolds empties the hold service (a restart), by key then arrival.
func (b *Broker) dropAllHolds() []pop.PullWakeup {
	var out []pop.PullWakeup
	for _, k := range b.holdKeys {
		for _, h := range b.holds {
			if h.key == k {
				out = append(out, pop.PullWakeup{ID: h.id, Request: h.req, Expired: true})
			}
		}
	}
	return out
}

// UpdateConsumerOffset is UPDATE_CONSUMER_OFFSET.
func (b *Broker) UpdateConsumerOffset(req *pop.UpdateConsumerOffsetRequest) pop.UpdateConsumerOffsetResult {
	if _, ok := b.groups[req.ConsumerGroup]; !ok {
		return pop.UpdateConsumerOffsetResult{Code: model.SubscriptionGroupNotExist}
	}
	if b.topics[req.Topic] == nil {
		return pop.UpdateConsumerOffsetResult{Code: model.TopicNotExist}
	}
	if b.queue(req.Topic, req.QueueID) == nil || req.CommitOffset < 0 {
		return pop.UpdateConsumerOffsetResult{Code: model.InvalidParameter}
	}
	k := qk{req.ConsumerGroup, req.Topic, req.QueueID}
	if _, pending := b.reset[k]; pending && b.cfg.UseServerSideResetOffset {
		return pop.UpdateConsumerOffsetResult{Code: model.Success}
	}
	b.commit[k] = req.CommitOffset
	return pop.UpdateConsumerOffsetResult{Code: model.Success}
}

// QueryConsumerOffset is QUERY_CONSUMER_OFFSET.
func (b *Broker) QueryConsumerOffset(req *pop.QueryConsumerOffsetRequest) pop.QueryConsumerOffsetResult {
	if o := b.queryOffset(qk{req.ConsumerGroup, req.Topic, req.QueueID}); o >= 0 {
		return pop.QueryConsumerOffsetResult{Code: model.Success, Offset: o}
	}
	q := b.queue(req.Topic, req.QueueID)
	if !req.NoZeroIfNotFound && q != nil && q.min <= 0 && q.at(0) != nil {
		return pop.QueryConsumerOffsetResult{Code: model.Success, Offset: 0}
	}
	return pop.QueryConsumerOffsetResult{Code: model.QueryNotFound, Offset: -1}
}
