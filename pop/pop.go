package pop

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// Consume init modes (ConsumeInitMode).
const (
	InitModeMin int32 = 0
	InitModeMax int32 = 1
)

// PopRequest is PopMessageRequestHeader. Times are milliseconds.
type PopRequest struct {
	ClientID       string // the consumer's channel, for Disconnect and traces
	ConsumerGroup  string
	Topic          string
	QueueID        int32 // -1 (any negative) means all queues
	MaxMsgNums     int32 // at most 32
	InvisibleTime  int64
	PollTime       int64 // long-polling time, 0 for none
	BornTime       int64 // 0 means "now" (set on first arrival)
	InitMode       int32
	ExpressionType string // "" or "TAG"
	Expression     string // "*", "tagA || tagB"
	Order          bool   // FIFO pop
	AttemptID      string
}

// PopStatus is the client-visible classification (PopStatus).
type PopStatus uint8

// Pop statuses.
const (
	PopFound PopStatus = iota
	PopNoNewMsg
	PopPollingFull
	PopPollingNotFound
	// PopSuspended means the request is parked for long polling: no response
	// yet; it comes back to the driver as a Wakeup.
	PopSuspended
	PopError
)

func (s PopStatus) String() string {
	return [...]string{"FOUND", "NO_NEW_MSG", "POLLING_FULL", "POLLING_NOT_FOUND", "SUSPENDED", "ERROR"}[s]
}

// PopResult is the pop response.
type PopResult struct {
	Code   model.ResponseCode
	Remark string
	Status PopStatus
	// PollID identifies a suspended request (Status == PopSuspended).
	PollID uint64

	PopTime, InvisibleTime int64
	ReviveQid              int32
	RestNum                int64
	StartOffsetInfo        string
	MsgOffsetInfo          string
	OrderCountInfo         string

	// Messages are presented as the client sees them (a retry message under
	// its original topic); Handles[i] is the receipt handle (POP_CK) the
	// client builds for Messages[i]. Messages are shared with the store:
	// callers must not modify them.
	Messages []*model.Message
	Handles  []model.ReceiptHandle
	// Woken: with messages left over (restNum > 0) a found pop wakes one
	// other request suspended on the same key.
	Woken []Wakeup
}

func errResult(code model.ResponseCode, format string, args ...any) PopResult {
	return PopResult{Code: code, Status: PopError, Remark: fmt.Sprintf(format, args...)}
}

// Pop serves one pop request (PopMessageProcessor.processRequest with the KV
// PopConsumerService.popAsync). With nothing to return and a poll time, the
// request is suspended: the result has Status PopSuspended and the request
// comes back later through Put, Revive or PollTick as a Wakeup.
func (b *Broker) Pop(now clock.Time, req *PopRequest) PopResult {
	nowMs := now.Millis()
	if req.BornTime == 0 {
		req.BornTime = nowMs
	}
	if req.QueueID < 0 {
		req.QueueID = -1
	}
	t, f, res, ok := b.validatePop(nowMs, req)
	if !ok {
		return res
	}
	b.stats.PopRequests++
	ctx := popContext{popTime: nowMs, records: b.scratch.records[:0], startInfo: b.scratch.start[:0], msgInfo: b.scratch.info[:0]}
	b.popKV(nowMs, req, t, f, &ctx)
	out := b.finishPop(nowMs, req, &ctx)
	b.scratch.keep(&ctx)
	return out
}

// validatePop applies the checks of spec 2.1 in RocketMQ's order and
// returns the request's topic and filter when they pass.
func (b *Broker) validatePop(nowMs int64, req *PopRequest) (*topic, filter, PopResult, bool) {
	t := b.topicNamed(req.Topic)
	g := b.groups[req.ConsumerGroup]
	var f filter
	var err error
	switch {
	case nowMs-req.BornTime-req.PollTime > bornTimeTolerance:
		return nil, nil, PopResult{Code: model.PollingTimeout, Status: PopPollingNotFound, Remark: "the broker received the request after its poll time"}, false
	case !b.cfg.Readable:
		return nil, nil, errResult(model.NoPermission, "the broker[%s] pop message is forbidden", b.cfg.BrokerName), false
	case req.MaxMsgNums > MaxPopBatch:
		return nil, nil, errResult(model.InvalidParameter, "the broker msg num is limited to %d, request %d", MaxPopBatch, req.MaxMsgNums), false
	case !b.cfg.TimerWheelEnable:
		return nil, nil, errResult(model.SystemError, "the broker's timer wheel is disabled: POP needs timerWheelEnable=true"), false
	case t == nil:
		return nil, nil, errResult(model.TopicNotExist, "topic[%s] not exist", req.Topic), false
	case t.cfg.Perm&PermRead == 0:
		return nil, nil, errResult(model.NoPermission, "the topic[%s] peeking message is forbidden", req.Topic), false
	case req.QueueID >= t.cfg.ReadQueueNums:
		return nil, nil, errResult(model.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", req.QueueID, req.Topic, t.cfg.ReadQueueNums), false
	case g == nil:
		return nil, nil, errResult(model.SubscriptionGroupNotExist, "subscription group [%s] does not exist", req.ConsumerGroup), false
	case !g.ConsumeEnable:
		return nil, nil, errResult(model.NoPermission, "subscription group no permission, %s", req.ConsumerGroup), false
	case req.Order:
		return nil, nil, errResult(model.InvalidParameter, "orderly (FIFO) pop is not implemented by this popsim engine yet"), false
	}
	if f, err = buildFilter(req.ExpressionType, req.Expression); err != nil {
		return nil, nil, errResult(model.SubscriptionParseFailed, "parse the consumer's subscription failed: %v", err), false
	}
	return t, f, PopResult{}, true
}

// popContext is PopConsumerContext.
type popContext struct {
	pair      uint32 // the request's group@topic
	popTime   int64
	found     int32
	restCount int64
	startInfo []byte
	msgInfo   []byte
	records   []rec
	msgs      []*model.Message
	handles   []model.ReceiptHandle
}

// popScratch holds the buffers a pop reuses from the previous one, so a pop
// allocates only what its result keeps. Nothing in them outlives a call.
type popScratch struct {
	records     []rec
	msgs        []*model.Message
	offs        []int64
	start, info []byte
}

// keep takes the context's buffers back, cleared of references.
func (s *popScratch) keep(ctx *popContext) {
	clear(ctx.records)
	s.records, s.start, s.info = ctx.records[:0], ctx.startInfo[:0], ctx.msgInfo[:0]
}

// initOffset is getInitOffset.
func (b *Broker) initOffset(q *queue, stageTopic string, initMode int32) int64 {
	if initMode == InitModeMin || model.IsRetryTopic(stageTopic) {
		return q.min
	}
	if b.cfg.InitPopOffsetByCheckMsgInMem && q.min <= 0 && q.at(0) != nil {
		return 0
	}
	return max(q.maxOffset()-1, 0)
}

// finishPop builds the response: SUCCESS with messages, or long polling.
func (b *Broker) finishPop(nowMs int64, req *PopRequest, ctx *popContext) PopResult {
	res := PopResult{PopTime: ctx.popTime, InvisibleTime: req.InvisibleTime, RestNum: ctx.restCount}
	if ctx.found > 0 {
		b.stats.Popped += int64(ctx.found)
		res.Code, res.Status = model.Success, PopFound
		res.StartOffsetInfo, res.MsgOffsetInfo = string(ctx.startInfo), string(ctx.msgInfo)
		res.Messages, res.Handles = ctx.msgs, ctx.handles
		if res.RestNum > 0 {
			if w, ok := b.polls.notifyKey(qkey{ctx.pair, req.QueueID}, "", true); ok {
				res.Woken = []Wakeup{w}
			}
		}
		return res
	}
	pr, id := b.polls.suspend(b, req, ctx.pair, nowMs)
	switch pr {
	case pollingSuc:
		res.Status, res.PollID = PopSuspended, id
	case pollingFull:
		res.Code, res.Status, res.Remark = model.PollingFull, PopPollingFull, "the pop polling queue is full"
	default:
		res.Code, res.Status, res.Remark = model.PollingTimeout, PopPollingNotFound, "NO_MESSAGE_IN_QUEUE"
	}
	return res
}
