package proxy

import (
	"fmt"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// Proxy is one rocketmq-proxy in front of one broker, or of every broker
// of a cluster (AddBroker). Not safe for
// concurrent use.
type Proxy struct {
	cfg Config
	b   *pop.Broker
	// more are the cluster's other brokers (AddBroker): acks, renewals and
	// the DLQ forward go to the broker a receipt handle names.
	more []*pop.Broker
	// managed are the handles being auto-renewed, in registration order.
	managed []managed
	nextID  uint64
	// subs is each group's subscription as its latest receive built it
	// (FilterAPI.build: a TAG expression's tags; nil for SQL92 and for
	// everything), for the result filter's tag check. Lookup only.
	subs map[string]*filter.Filter
	// last is the latest receive's subscription: its group, expression and
	// what subscription built from it, which subs holds for the group. A
	// client sends the same settings every time, so the common receive
	// neither rebuilds nor re-stores it.
	last lastSub
}

// lastSub is the latest receive's subscription (Proxy.last).
type lastSub struct {
	group, exprType, expr string
	sub                   *filter.Filter
	built                 bool
}

// New returns a proxy in front of b. The configuration must be valid
// (Config.Validate); New panics otherwise, as the caller built it.
func New(b *pop.Broker, cfg Config) *Proxy {
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	return &Proxy{cfg: cfg, b: b, subs: map[string]*filter.Filter{}}
}

// Config returns the configuration.
func (p *Proxy) Config() Config { return p.cfg }

// AddBroker puts another broker of the cluster behind the proxy, as the
// proxy routes to every broker of a topic's route. Its BrokerName must be
// new.
func (p *Proxy) AddBroker(b *pop.Broker) error {
	name := b.Config().BrokerName
	if p.brokerNamed(name) != nil {
		return fmt.Errorf("proxy: a broker named %q is already behind the proxy", name)
	}
	p.more = append(p.more, b)
	return nil
}

// brokerNamed is the broker called name (nil: none behind the proxy).
func (p *Proxy) brokerNamed(name string) *pop.Broker {
	if p.b.Config().BrokerName == name {
		return p.b
	}
	for _, b := range p.more {
		if b.Config().BrokerName == name {
			return b
		}
	}
	return nil
}

// at is the broker a receipt handle names; the first broker when no
// broker behind the proxy has that name (the broker answers the handle).
func (p *Proxy) at(h *model.ReceiptHandle) *pop.Broker {
	if b := p.brokerNamed(h.BrokerName); b != nil {
		return b
	}
	return p.b
}

// ReceiveRequest is a ReceiveMessageRequest with the client's settings the
// proxy reads for it.
type ReceiveRequest struct {
	ClientID string
	Group    string
	Topic    string
	// ExpressionType and Expression are the subscription (the client's
	// settings.subscription.subscriptions entry): TAG ("" means TAG) with
	// "", "*" or "a || b", or SQL92 with a condition over properties.
	ExpressionType string
	Expression     string
	BatchSize      int32
	// InvisibleTime is the requested invisible duration; an auto-renewed
	// receive gets DefaultInvisibleTime instead.
	InvisibleTime clock.Duration
	AutoRenew     bool
	// LongPollingTimeout is the request's long_polling_timeout (0: absent,
	// then the deadline decides); Timeout is the RPC's remaining deadline;
	// RequestTimeout is the client's settings.request_timeout (3 s for the
	// Java client).
	LongPollingTimeout clock.Duration
	Timeout            clock.Duration
	RequestTimeout     clock.Duration
	// MaxAttempts is settings.backoff_policy.max_attempts: the group's
	// retryMaxTimes + 1.
	MaxAttempts int32
	// AttemptID is the request's attempt_id ("" when absent, as the
	// SimpleConsumer sends it): passed to the broker unchanged, where an
	// orderly retry with the attemptId of its batch in flight re-enters it.
	AttemptID string
}

// PopRequest checks a receive (ReceiveMessageActivity, ConsumerProcessor)
// and returns the pop the proxy sends the broker: its subscription built
// (FilterAPI.build: ILLEGAL_FILTER_EXPRESSION when it does not; a SQL92
// condition is left to the broker to compile), all queues, init mode
// MAX, born now (local mode), orderly when the group consumes orderly
// (its consumeMessageOrderly, which the client settings carry as
// subscription.fifo), with the request's attemptId. A status that is not
// OK is the answer.
func (p *Proxy) PopRequest(now clock.Time, req *ReceiveRequest) (pop.PopRequest, Status) {
	var r pop.PopRequest
	st := p.PopRequestInto(now, req, &r)
	return r, st
}

// PopRequestInto is PopRequest writing the pop request into dst, which it
// leaves as it was when the status is not OK: for a caller that keeps the
// request (a simulated client's recycled receive), where PopRequest's
// result is copied on its way there.
func (p *Proxy) PopRequestInto(now clock.Time, req *ReceiveRequest, dst *pop.PopRequest) Status {
	poll, st := p.pollingTime(req)
	if !st.IsOK() {
		return st
	}
	inv, st := p.invisibleTime(req)
	if !st.IsOK() {
		return st
	}
	l := &p.last
	if !l.built || req.ExpressionType != l.exprType || req.Expression != l.expr {
		sub, st := subscription(req)
		if !st.IsOK() {
			return st
		}
		l.exprType, l.expr, l.sub, l.built = req.ExpressionType, req.Expression, sub, false
	}
	if !l.built || req.Group != l.group {
		// a built filter is read only: groups may share it
		p.subs[req.Group] = l.sub
		l.group, l.built = req.Group, true
	}
	g, _ := p.b.Group(req.Group)
	// Every field, one by one: a literal assigned to *dst is built on the
	// stack from a zero template and then copied over (TestIntoForms checks that none is left out).
	dst.ClientID, dst.ConsumerGroup, dst.Topic, dst.QueueID = req.ClientID, req.Group, req.Topic, -1
	dst.MaxMsgNums, dst.InvisibleTime, dst.PollTime, dst.BornTime = min(req.BatchSize, MaxBatch), inv, poll, now
	dst.InitMode, dst.ExpressionType, dst.Expression = pop.InitModeMax, expressionType(req.ExpressionType), req.Expression
	dst.Order, dst.AttemptID = g.ConsumeMessageOrderly, req.AttemptID
	return statusOK
}

// subscription is FilterAPI.build on the receive's filter expression: a
// TAG expression's tags (nil for everything), nil for SQL92 (the result
// filter checks tags only, and the broker compiles the condition), or
// ILLEGAL_FILTER_EXPRESSION with FilterAPI's message.
func subscription(req *ReceiveRequest) (*filter.Filter, Status) {
	switch t := expressionType(req.ExpressionType); {
	case t == filter.TypeSQL92 && req.Expression == "":
		return nil, Status{Code: IllegalFilterExpression, Message: "Expression can't be null! " + t}
	case t == filter.TypeSQL92:
		return nil, statusOK
	default:
		f, err := filter.Parse(t, req.Expression)
		if err != nil && t == filter.TypeTag {
			return nil, Status{Code: IllegalFilterExpression, Message: "subString split error"}
		}
		if err != nil {
			return nil, Status{Code: IllegalFilterExpression, Message: err.Error()}
		}
		if f.MatchesAll() {
			return nil, statusOK
		}
		return f, statusOK
	}
}

// expressionType is the subscription's type as the proxy sends it: TAG
// when the client names none (FilterType TAG is the default).
func expressionType(t string) string {
	if t == "" {
		return filter.TypeTag
	}
	return t
}

// pollingTime is the long-polling time: the request's, or the deadline's
// remainder less half the client's request timeout, clamped to the
// configured bounds and to the deadline.
func (p *Proxy) pollingTime(req *ReceiveRequest) (clock.Duration, Status) {
	poll := req.LongPollingTimeout
	if poll <= 0 {
		poll = req.Timeout - req.RequestTimeout/2
	}
	poll = min(max(poll, p.cfg.MinLongPollingTimeout), p.cfg.MaxLongPollingTimeout)
	if req.Timeout > 0 && poll > req.Timeout {
		if req.Timeout < p.cfg.MinLongPollingTimeout {
			return 0, Status{Code: IllegalPollingTime, Message: "The deadline time remaining is not enough for polling, please check network condition"}
		}
		poll = req.Timeout
	}
	return poll, statusOK
}

// invisibleTime is the receive's invisible time (rule 4 of
// ReceiveMessageActivity).
func (p *Proxy) invisibleTime(req *ReceiveRequest) (clock.Duration, Status) {
	if req.AutoRenew && p.cfg.EnableProxyAutoRenew {
		return p.cfg.DefaultInvisibleTime, statusOK
	}
	inv := req.InvisibleTime
	if inv < p.cfg.MinInvisibleTimeForRecv {
		return 0, Status{Code: IllegalInvisibleTime, Message: fmt.Sprintf("the invisibleTime is too small. min is %d", p.cfg.MinInvisibleTimeForRecv.Millis())}
	}
	if p.cfg.MaxInvisibleTime > 0 && inv > p.cfg.MaxInvisibleTime {
		return 0, Status{Code: IllegalInvisibleTime, Message: fmt.Sprintf("the invisibleTime is too large. max is %d", p.cfg.MaxInvisibleTime.Millis())}
	}
	return inv, statusOK
}

// ReceiveResult is the answer to a receive. The caller owns it and may
// reuse it: Pop overwrites it and reuses its storage.
type ReceiveResult struct {
	// Pop is the broker's answer, its Messages filtered down to those the
	// client gets (Status PopSuspended: parked; the driver runs Pop again
	// with the pop.Wakeup's request when the broker hands it back).
	Pop pop.PopResult
	// Forwarded are the messages the filter took from the answer, in the
	// pop's order: sent to %DLQ%group and acked, or only acked (NO_MATCH).
	Forwarded []Forwarded
	// Status is the gRPC status the client gets (meaningless while parked).
	Status Status
}

// Forwarded is one message the result filter took from the answer: sent
// to the dead-letter queue (TO_DLQ, forwardMessageToDeadLetterQueue) or,
// with NoMatch, only acked (NO_MATCH: its tag is not one the group
// subscribes to; the broker's tag filter compares hash codes and let it
// through). The lease the pop made, where the original lives, the DLQ
// write (none for NO_MATCH) and the ack of the original.
type Forwarded struct {
	NoMatch        bool
	Msg            model.MsgID
	UniqKey        string
	Lease          model.LeaseID
	Deadline       clock.Time
	Topic          string // the original's real topic (a retry topic for a retry message)
	QueueID        int32
	Offset         int64
	ReconsumeTimes int32
	// Put is the write to %DLQ%group (topic DLQTopic, queue 0): on failure
	// the original is not acked and its lease runs out.
	DLQTopic string
	Put      pop.PutResult
	// Ack is the ack of the original after a successful write.
	Ack pop.AckResult
}

// Pop sends the pop to the broker and filters its answer
// (PopMessageResultFilterImpl): a message whose tag the group's TAG
// subscription does not name exactly (FilterUtils.isTagMatched) is acked
// (NO_MATCH); messages with reconsumeTimes >= maxAttempts go to the DLQ
// and are acked; the rest stay in res.Pop. req
// is the pop PopRequest built, or a parked pop's request as the broker
// handed it back. An orderly message's reconsumeTimes is the count the
// broker's orderCountInfo gave it (the engine applies it to the message,
// as the proxy does), so FIFO messages reach the DLQ the same way.
func (p *Proxy) Pop(now clock.Time, req *pop.PopRequest, maxAttempts int32, res *ReceiveResult) {
	p.b.Pop(now, req, &res.Pop)
	p.Filter(now, req.ConsumerGroup, maxAttempts, res)
}

// Filter is the result filter alone, on a pop answer already in res.Pop
// (for a driver that runs the pop itself).
func (p *Proxy) Filter(now clock.Time, group string, maxAttempts int32, res *ReceiveResult) {
	clear(res.Forwarded)
	res.Forwarded = res.Forwarded[:0]
	r := &res.Pop
	if r.Status == pop.PopFound {
		n := 0 // r.Messages[:n] are kept
		sub := p.last.sub
		if !p.last.built || group != p.last.group {
			sub = p.subs[group]
		}
		for i := range r.Messages {
			m := &r.Messages[i]
			if !sub.MatchTags(m.Message.Tags) {
				res.Forwarded = append(res.Forwarded, p.noMatch(now, group, m))
				continue
			}
			if m.Message.ReconsumeTimes >= maxAttempts {
				res.Forwarded = append(res.Forwarded, p.forward(now, group, m))
				continue
			}
			if n != i { // a message kept in place is not copied onto itself
				r.Messages[n] = *m
			}
			n++
		}
		r.Messages = r.Messages[:n]
	}
	res.Status = popStatus(r)
}

// popStatus maps the broker's answer to the receive's status (local mode).
func popStatus(r *pop.PopResult) Status {
	switch r.Status {
	case pop.PopFound:
		if len(r.Messages) == 0 {
			return Status{Code: MessageNotFound, Message: "no match message"}
		}
		return statusOK
	case pop.PopPollingFull:
		return Status{Code: TooManyRequests, Message: "polling full"}
	case pop.PopNoNewMsg, pop.PopPollingNotFound, pop.PopSuspended:
		return Status{Code: MessageNotFound, Message: "no new message"}
	}
	return Status{Code: InternalServerError, Message: r.Remark}
}

// forward writes m to %DLQ%group (CONSUMER_SEND_MSG_BACK with delay level
// -1 and maxReconsumeTimes 0: reconsumeTimes + 1, ORIGIN_MESSAGE_ID and
// RETRY_TOPIC set, the topic created with one queue on first use), then
// acks the original with its handle.
func (p *Proxy) forward(now clock.Time, group string, m *pop.PoppedMessage) Forwarded {
	topic := m.Handle.RealTopic(m.Message.Topic, group)
	f := Forwarded{Msg: m.Message.ID, UniqKey: m.Message.UniqKey, Lease: m.Lease, Deadline: m.Deadline,
		Topic: topic, QueueID: m.Handle.QueueID, Offset: m.Handle.QueueOffset, ReconsumeTimes: m.Message.ReconsumeTimes,
		DLQTopic: model.DLQTopic(group)}
	b := p.at(&m.Handle)
	if b.MaxOffset(f.DLQTopic, 0) < 0 {
		if err := b.CreateTopic(pop.TopicConfig{Name: f.DLQTopic, ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
			panic("proxy: creating the DLQ topic: " + err.Error())
		}
	}
	cp := m.Message.Clone()
	cp.Topic, cp.QueueID, cp.ReconsumeTimes = f.DLQTopic, 0, m.Message.ReconsumeTimes+1
	_ = cp.SetProperty(model.PropertyOriginMessageID, m.Message.UniqKey)
	_ = cp.SetProperty(model.PropertyRetryTopic, m.Message.Topic)
	f.Put = b.Put(now, cp)
	if f.Put.Code != model.Success {
		return f
	}
	f.Ack = b.Ack(now, &pop.AckRequest{ConsumerGroup: group, Topic: topic, QueueID: f.QueueID, Offset: f.Offset, Handle: m.Handle})
	return f
}

// noMatch acks m, which the group does not subscribe to, with its handle
// (the result filter's NO_MATCH).
func (p *Proxy) noMatch(now clock.Time, group string, m *pop.PoppedMessage) Forwarded {
	topic := m.Handle.RealTopic(m.Message.Topic, group)
	f := Forwarded{NoMatch: true, Msg: m.Message.ID, UniqKey: m.Message.UniqKey, Lease: m.Lease, Deadline: m.Deadline,
		Topic: topic, QueueID: m.Handle.QueueID, Offset: m.Handle.QueueOffset, ReconsumeTimes: m.Message.ReconsumeTimes}
	f.Ack = p.b.Ack(now, &pop.AckRequest{ConsumerGroup: group, Topic: topic, QueueID: f.QueueID, Offset: f.Offset, Handle: m.Handle})
	return f
}

// MessageID is the message id a gRPC client sees: UNIQ_KEY.
func MessageID(m *model.Message) string { return m.UniqKey }

// DeliveryAttempt is the delivery attempt a gRPC client sees:
// reconsumeTimes + 1.
func DeliveryAttempt(m *model.Message) int32 { return m.ReconsumeTimes + 1 }
