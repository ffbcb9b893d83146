package pop

import (
	"fmt"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// Consume init modes (ConsumeInitMode).
const (
	InitModeMin int32 = 0
	InitModeMax int32 = 1
)

// PopRequest is PopMessageRequestHeader, with times in clock units:
// InvisibleTime and PollTime are truncated to milliseconds, RocketMQ's
// unit, when the broker uses them. Pop never modifies the request.
type PopRequest struct {
	ClientID       string // the consumer's channel, for Disconnect and traces
	ConsumerGroup  string
	Topic          string
	QueueID        int32 // -1 (any negative) means all queues
	MaxMsgNums     int32 // at most 32
	InvisibleTime  clock.Duration
	PollTime       clock.Duration // long-polling time, 0 for none
	BornTime       clock.Time     // when the client sent it; 0 means "now"
	InitMode       int32
	ExpressionType string // "" or "TAG"
	Expression     string // "*", "tagA || tagB"
	Order          bool   // FIFO pop
	AttemptID      string
}

// PopStatus is the client-visible classification (PopStatus), plus
// popsim's PopSuspended (no response yet) and PopError (an error code).
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

// PoppedMessage is one message of a found pop.
type PoppedMessage struct {
	// Message is a copy of the stored message, presented as the client sees
	// it: a retry message under its original topic. Its Body and Properties
	// are copies too.
	Message model.Message
	// Handle is the receipt handle (POP_CK) the client builds for it.
	Handle model.ReceiptHandle
	// Lease is the lease the pop granted (its in-flight record's); Deadline
	// is when it ends unless renewed: popTime + invisibleTime, the record's
	// visibility timeout.
	Lease    model.LeaseID
	Deadline clock.Time
	// RealTopic is the topic the message lives in, the stored message's
	// (ReceiptHandle.getRealTopic of the topic it is shown under: its retry
	// topic for a retry message, the shown topic itself when the #11195 bug
	// leaks a retry topic's name), so that a caller need not build it.
	RealTopic string
}

// PopResult is the pop response. The caller owns it: Pop overwrites every
// field and reuses the slices' storage (Messages, each message's Body and
// Properties, Stages, OrderCounts, Woken), so a caller that keeps a result
// across calls reaches zero allocations per pop; what it keeps past the
// next Pop into the same result it must copy. Nothing in it refers to the
// broker's memory.
type PopResult struct {
	Code   model.ResponseCode
	Remark string
	Status PopStatus
	// PollID identifies a suspended request (Status == PopSuspended).
	PollID uint64

	// PopTime is the time the broker stamped on the pop (now, truncated to
	// the millisecond: the handles' popTime).
	PopTime       clock.Time
	InvisibleTime clock.Duration
	ReviveQid     int32
	RestNum       int64
	// Stages are the reads that found the messages, in the response's
	// order: each read Stages[i].Count messages, following the previous
	// stages'. They are what the startOffsetInfo and msgOffsetInfo
	// response headers say (an entry each per stage), which the methods
	// of the same names format on demand.
	Stages []PopStage
	// OrderCounts are a FIFO pop's orderCountInfo entries (the
	// OrderCountInfo method formats the header), empty for other pops.
	OrderCounts []model.OrderCount

	// Messages are the popped messages, in the response's order.
	Messages []PoppedMessage
	// Woken: with messages left over (restNum > 0) a found pop wakes one
	// other request suspended on the same key.
	Woken []Wakeup
	// Replaced lists leases whose records this pop's writes overwrote: a new
	// record with the key of an existing one (same visibility timeout,
	// group, topic, queue and offset), or a pending admin reset moving
	// cached records onto stored ones.
	Replaced []model.LeaseID
	// Failures lists the store writes the faults failed during the pop
	// (FS: a CK written at once; the buffer retries it).
	Failures []WriteFailure
	// Lapsed are FIFO leases that ended in place during the call, before
	// any lease it granted: those due by now, and those a re-entrant retry
	// replaced (Reattempt). Cleared are FIFO leases a pending admin reset
	// cleared with their queue's order state (clearBlock).
	Lapsed  []Lapse
	Cleared []model.LeaseID
}

// Reset clears r for a new pop, keeping the slices' storage (Pop does it
// first; a caller that reuses a result may too).
func (r *PopResult) Reset() {
	// Field by field: reslicing a field to itself only stores its length,
	// where a composite literal rewrites every slice header (with write
	// barriers) on each of the two resets a simple consumer's receive makes.
	r.Code, r.Remark, r.Status, r.PollID = 0, "", 0, 0
	r.PopTime, r.InvisibleTime, r.ReviveQid, r.RestNum = 0, 0, 0, 0
	r.Stages, r.OrderCounts = r.Stages[:0], r.OrderCounts[:0]
	// two slices an assignment: resliced to itself in a larger tuple, the
	// last one was reloaded and stored whole, with a write barrier
	r.Messages, r.Woken = r.Messages[:0], r.Woken[:0]
	r.Replaced, r.Failures = r.Replaced[:0], r.Failures[:0]
	r.Lapsed, r.Cleared = r.Lapsed[:0], r.Cleared[:0]
}

// fail sets an error answer.
func (r *PopResult) fail(code model.ResponseCode, format string, args ...any) {
	r.Code, r.Status, r.Remark = code, PopError, fmt.Sprintf(format, args...)
}

// Pop serves one pop request (PopMessageProcessor.processRequest, with the
// KV PopConsumerService.popAsync or the FS branch; Order requests take the
// orderly branches, order_pop.go) and writes the response into res. With
// nothing to return and a poll time, the request is suspended: the result
// has Status PopSuspended and the request comes back later through Put,
// Revive, CleanupCache or PollTick as a Wakeup carrying the broker's own
// copy of it (with the born time it defaulted). req is only read.
func (b *Broker) Pop(now clock.Time, req *PopRequest, res *PopResult) {
	res.Reset()
	// Field by field: a composite literal is built in a temporary and
	// copied into ctx.
	var ctx popContext
	ctx.req, ctx.popTime, ctx.res = b.scratch.normalised(now, req), now.Millis(), res
	r := ctx.req
	nowMs := ctx.popTime
	b.touch(nowMs)
	res.Lapsed = b.settleLapses(nowMs, res.Lapsed)
	t, g, ok := b.validatePop(nowMs, r, res)
	if !ok {
		return
	}
	ctx.group = g
	ff, err := pfilter.All(), error(nil)
	if !subscribesAll(r.ExpressionType, r.Expression) {
		ff, err = parsePop(r.ExpressionType, r.Expression)
	}
	if err != nil {
		res.fail(model.SubscriptionParseFailed, "parse the consumer's subscription failed")
		return
	}
	b.stats.PopRequests++
	ctx.invisible, ctx.records, ctx.stages = r.InvisibleTime.Millis(), b.scratch.records[:0], b.scratch.stages[:0]
	before := b.lease.last
	if b.cfg.UsesKV() {
		b.popKV(nowMs, t, ff, &ctx)
	} else {
		b.popCK(nowMs, t, ff, &ctx)
	}
	b.finishPop(nowMs, &ctx, ff)
	if len(b.order.cleared) > 0 {
		res.Cleared = append(res.Cleared, b.order.cleared...)
		b.order.cleared = b.order.cleared[:0]
	}
	b.scratch.keep(&ctx)
	if invariants {
		b.assertPopResult(res, before, r.ConsumerGroup)
	}
}

// subscribesAll reports that pfilter.ParsePop(typ, exp) is the filter
// matching everything (pfilter.All, no error): an empty expression, or
// "*" of type TAG (or none). Every pop compiles its request's
// subscription, and nearly every one is that; Pop asks this first, inline,
// and calls parsePop (out of line) for the rest (default run: ParsePop had
// cost ~62 instructions a pop).
func subscribesAll(typ, exp string) bool {
	return exp == "" || exp == "*" && (typ == "" || typ == pfilter.TypeTag)
}

// parsePop is pfilter.ParsePop kept out of line, where Pop inlines it.
//
//go:noinline
func parsePop(typ, exp string) (*pfilter.Filter, error) { return pfilter.ParsePop(typ, exp) }

// faqSuggestion is FAQUrl.suggestTodo(FAQUrl.APPLY_TOPIC_URL), which
// RocketMQ appends to the remarks of a missing topic or group.
const faqSuggestion = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// validatePop applies the checks of docs/rocketmq/kv-path.md §3 in RocketMQ's order and
// returns the request's topic when they pass (the subscription, checked
// last, is compiled by the caller for its path), and its group; otherwise
// it writes the answer into res.
func (b *Broker) validatePop(nowMs int64, req *PopRequest, res *PopResult) (*topic, *GroupConfig, bool) {
	t := b.topicNamed(req.Topic)
	g := b.groupNamed(req.ConsumerGroup)
	ip := b.cfg.BrokerIP1
	switch {
	case nowMs-req.BornTime.Millis()-req.PollTime.Millis() > bornTimeTolerance:
		res.Code, res.Status, res.Remark = model.PollingTimeout, PopPollingNotFound, fmt.Sprintf("the broker[%s] pop message is timeout too much", ip)
	case !b.cfg.Readable:
		res.fail(model.NoPermission, "the broker[%s] pop message is forbidden", ip)
	case req.MaxMsgNums > MaxPopBatch:
		res.fail(model.InvalidParameter, "the broker[%s] pop message's num is greater than 32", ip)
	case !b.cfg.TimerWheelEnable:
		res.fail(model.SystemError, "the broker[%s] pop message is forbidden because timerWheelEnable is false", ip)
	case t == nil:
		res.fail(model.TopicNotExist, "topic[%s] not exist, apply first please! %s", req.Topic, faqSuggestion)
	case t.cfg.Perm&PermRead == 0:
		res.fail(model.NoPermission, "the topic[%s] peeking message is forbidden", req.Topic)
	case req.QueueID >= t.cfg.ReadQueueNums:
		res.fail(model.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]", req.QueueID, req.Topic, t.cfg.ReadQueueNums, req.ClientID)
	case g == nil:
		res.fail(model.SubscriptionGroupNotExist, "subscription group [%s] does not exist, %s", req.ConsumerGroup, faqSuggestion)
	case !g.ConsumeEnable:
		res.fail(model.NoPermission, "subscription group no permission, %s", req.ConsumerGroup)
	default:
		return t, g, true
	}
	return nil, nil, false
}

// popContext is PopConsumerContext: one pop's state, building its answer
// in res.
type popContext struct {
	req       *PopRequest  // the request, normalised (popScratch.normalised)
	group     *GroupConfig // the request's group
	pair      uint32       // the request's group@topic
	popTime   int64        // ms
	invisible int64        // ms
	found     int32
	restCount int64
	reviveQid int32 // FS: the request's revive queue (round-robin)
	records   []rec
	stages    []qkey // KV: queues whose stage left a pending commit
	// markStages: KV, popAllQueues left the marks of its stages' queues
	// to popKV (markStage)
	markStages bool
	res        *PopResult
	// filter: FS non-FIFO, the request's subscription, which popCK's
	// stages read here (the stage functions each carried it and the
	// pop's time, popTime, as arguments: spilled and reloaded at every
	// call)
	filter *pfilter.Filter
}

// addRecord appends a zero record to the pop's and returns it, for the
// caller to write in place (see setHandle).
func (c *popContext) addRecord() *rec {
	c.records = append(c.records, rec{})
	return &c.records[len(c.records)-1]
}

// setHandle writes into h the receipt handle of a message the pop read at
// offset of queue qid, in a stage that read from start, with the pop's
// invisible time and the given pop time (the CK's, which the buffer may
// have moved off the pop's). It zeroes h and writes its fields one by one:
// a struct literal assigned to memory is built on the stack and copied in
// 16-byte moves that straddle its narrower field stores, and such a load
// waits for the stores to retire (a failed store forwarding).
func (c *popContext) setHandle(h *model.ReceiptHandle, popTime int64, reviveQid int32, flag model.RetryType, broker string, qid int32, start, offset int64) {
	*h = model.ReceiptHandle{}
	h.CkQueueOffset, h.PopTime, h.InvisibleTime, h.ReviveQueueID = start, popTime, c.invisible, reviveQid
	h.RetryFlag, h.BrokerName, h.QueueID, h.QueueOffset, h.CommitLogOffset = flag, broker, qid, offset, -1
}

// popScratch holds the buffers a pop reuses from the previous one. Nothing
// in them outlives a call, but for revivals, commits and rounds:
// CheckpointTick's result, the caller's until the next tick.
type popScratch struct {
	records  []rec
	stages   []qkey
	msgs     []*model.Message
	offs     []int64
	revivals []Revival
	commits  []OffsetState // CheckpointTick's buffer commits
	rounds   []ReviveRound // CheckpointTick's revive rounds
	relPairs []uint32      // ReleaseConsumed's groups
	relLow   []int64       // ReleaseConsumed's watermarks
	expired  []rec         // Revive's page of expired records
	req      PopRequest    // a pop's request, normalised (normalised)
}

// normalised is req with its defaults applied (no born time: now; any
// negative queue id: -1): req itself when it has none to apply, which is
// every request the simulator sends, else the scratch copy, valid until
// the next pop. A pop only reads its request, so it need not copy one
// that is normalised already.
func (s *popScratch) normalised(now clock.Time, req *PopRequest) *PopRequest {
	if req.BornTime != 0 && req.QueueID >= -1 {
		return req
	}
	s.req = *req
	if s.req.BornTime == 0 {
		s.req.BornTime = now
	}
	if s.req.QueueID < 0 {
		s.req.QueueID = -1
	}
	return &s.req
}

// keep takes the context's buffers back, cleared of references (a
// record's only one is its attempt id).
func (s *popScratch) keep(ctx *popContext) {
	for i := len(ctx.records) - 1; i >= 0; i-- {
		ctx.records[i].attemptID = ""
	}
	s.records, s.stages = ctx.records[:0], ctx.stages[:0]
}

// dropMsgs nils the read's message pointers one by one and hands the
// buffer back to the scratch: a pop reads a message or a few, where
// clear (or the range loop the compiler turns into it) calls
// runtime.memclrHasPointers, a bulk write barrier and a memclr, ~45
// instructions a call.
func (s *popScratch) dropMsgs(msgs []*model.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		msgs[i] = nil
	}
	s.msgs = msgs[:0]
}

// addMessage appends a copy of m, presented under topic shown, to the
// result, reusing the storage of the result's earlier messages.
func (r *PopResult) addMessage(m *model.Message, shown string) *PoppedMessage {
	n := len(r.Messages)
	if n < cap(r.Messages) {
		r.Messages = r.Messages[:n+1]
	} else {
		r.Messages = append(r.Messages, PoppedMessage{})
	}
	p := &r.Messages[n]
	copyMessage(&p.Message, m)
	p.Message.Topic, p.RealTopic = shown, m.Topic
	return p
}

// notifyOwnKey wakes one request parked on the request's own polling key
// (restNum > 0: "all-queue pops cannot notify specific-queue pops and the
// reverse").
func (b *Broker) notifyOwnKey(ctx *popContext) {
	ctx.res.Woken = b.polls.appendWoken(ctx.res.Woken, qkey{ctx.pair, ctx.req.QueueID}, nil, true)
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

// finishPop completes the response: SUCCESS with messages, or long polling.
// ff is the request's subscription, which a parked request is woken by.
func (b *Broker) finishPop(nowMs int64, ctx *popContext, ff *pfilter.Filter) {
	res, req := ctx.res, ctx.req
	res.PopTime, res.InvisibleTime, res.RestNum = clock.FromMillis(ctx.popTime), clock.MillisDuration(ctx.invisible), ctx.restCount
	res.ReviveQid = ctx.reviveQid
	if ctx.found > 0 {
		b.stats.Popped += int64(ctx.found)
		res.Code, res.Status, res.Remark = model.Success, PopFound, "FOUND"
		if res.RestNum > 0 {
			b.notifyOwnKey(ctx)
		}
		return
	}
	pr, id := b.polls.suspend(b, req, ctx.pair, nowMs, ff)
	switch pr {
	case pollingSuc:
		res.Status, res.PollID = PopSuspended, id
		if !b.cfg.UsesKV() && res.RestNum > 0 {
			// FS notifies after parking too; it may wake this very request
			b.notifyOwnKey(ctx)
		}
	case pollingFull:
		res.Code, res.Status, res.Remark = model.PollingFull, PopPollingFull, "NO_MESSAGE_IN_QUEUE"
	default:
		res.Code, res.Status, res.Remark = model.PollingTimeout, PopPollingNotFound, "NO_MESSAGE_IN_QUEUE"
	}
}
