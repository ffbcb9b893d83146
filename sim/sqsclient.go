package sim

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
	"popsim/workload"
	"popsim/workload/pcg"
)

// The SQS consumer: the receive loop an SQS application runs with an AWS
// SDK.
//
//   - ReceiveMessage of up to MaxNumberOfMessages (the consumer's batch,
//     at most 10) for its free threads only, with WaitTimeSeconds (20 by
//     default: long polling; 0 is short polling, which samples half of
//     the queue's servers at random and may come back empty although
//     messages wait) and the queue's or its own VisibilityTimeout.
//   - success: DeleteMessage; RECONSUME_LATER: ChangeMessageVisibility
//     to RetryVisibilityTimeout (0, the default, makes the message visible
//     at once: a release); an exception: nothing, the message comes back
//     when its visibility timeout ends. Redrive to the dead-letter queue is
//     the queue's RedrivePolicy.
//   - The SDK's standard retry mode (sdkRetry): a DeleteMessage or
//     ChangeMessageVisibility with no answer within the network's
//     RequestTimeout is sent again, up to 3 attempts in all, after a full
//     jitter backoff (the jitter from the consumer's own random stream).
//     SQS's answers with an error code are not transient: not retried.
//   - FIFO: each receive carries a ReceiveRequestAttemptId; a receive the
//     client gave up on (its answer lost) is retried with the same id
//     within its 5 minutes, which returns the same messages and handles.
//   - The fault injector's renewals are ChangeMessageVisibility calls: for
//     the time left (same deadline), arriving at the deadline, or with the
//     delivery's handle after it ran out.

// SQSConsumerSettings are an SQS consumer's own settings, under the
// ReceiveMessage parameter names where SQS has them.
type SQSConsumerSettings struct {
	// WaitTimeSeconds is each receive's wait, 0..20 (default 20: long
	// polling; 0: short polling); -1 leaves it to the queue's
	// ReceiveMessageWaitTimeSeconds.
	WaitTimeSeconds int `yaml:"WaitTimeSeconds"`
	// VisibilityTimeout is each receive's visibility timeout, 0..43200
	// seconds; -1 (the default) is the queue's.
	VisibilityTimeout int `yaml:"VisibilityTimeout"`
	// RetryVisibilityTimeout is the ChangeMessageVisibility a
	// RECONSUME_LATER sends, 0..43200 seconds (0: visible at once).
	RetryVisibilityTimeout int
}

// newSQSConsumerSettings are the kind's settings before a file sets them:
// long polling, the queue's visibility timeout.
func newSQSConsumerSettings() ConsumerSettings { return DefaultSQSConsumerSettings() }

// DefaultSQSConsumerSettings are an SQS consumer's defaults (code that
// builds a Config starts from them: the zero value is a short poll with a
// visibility timeout of 0).
func DefaultSQSConsumerSettings() *SQSConsumerSettings {
	return &SQSConsumerSettings{WaitTimeSeconds: sqs.MaxWaitTimeSeconds, VisibilityTimeout: -1}
}

func (*SQSConsumerSettings) Kind() ConsumerKind     { return SQSConsumer }
func (*SQSConsumerSettings) batch() (def, hi int32) { return sqs.MaxBatchEntries, sqs.MaxBatchEntries }

func (p *SQSConsumerSettings) withDefaults() ConsumerSettings { d := *p; return &d }

func (p *SQSConsumerSettings) check(v *validator, path string) {
	v.intIn(path+".WaitTimeSeconds", int64(p.WaitTimeSeconds), -1, sqs.MaxWaitTimeSeconds)
	v.intIn(path+".VisibilityTimeout", int64(p.VisibilityTimeout), -1, sqs.MaxVisibilitySeconds)
	v.intIn(path+".retryVisibilityTimeout", int64(p.RetryVisibilityTimeout), 0, sqs.MaxVisibilitySeconds)
}

// sqsConsumer is the SQS consumer's client model.
type sqsConsumer struct {
	c   *consumer
	set *SQSConsumerSettings
	a   *sqsEngine
	q   *sqsQueue

	local    int // messages held (waiting, running)
	out      *sqsReceiveReq
	next     nextPoll // the next receive (a tkPoll armed)
	wantPoll bool
	// FIFO: the attempt id of the receive in flight, and when it was
	// first sent (a retry keeps it within 5 minutes).
	attempt   string
	attemptAt clock.Time
	attempts  int
	jitter    *pcg.Rand // the SDK's retry backoff jitter (its own stream)
}

// sqsHeld is a message an SQS consumer holds: its receipt handle.
type sqsHeld struct {
	held
	handle string
	queue  string
	vt     int // the visibility timeout it was received with
}

func (s *sim) newSQSConsumer(c *consumer, set *SQSConsumerSettings) *sqsConsumer {
	a := s.sqsOf()
	return &sqsConsumer{c: c, set: set, a: a, q: a.queueOf(c.g.topic), jitter: newStream(s.cfg.Seed, streamSDKRetry+uint64(c.idx))}
}

func (p *sqsConsumer) start(s *sim) { p.schedulePoll(s, 0) }

func (p *sqsConsumer) busy() bool { return p.local > 0 }

func (p *sqsConsumer) crashed(*sim) {
	p.local, p.out, p.next.armed, p.wantPoll, p.attempt = 0, nil, false, false, ""
}

func (p *sqsConsumer) schedulePoll(s *sim, d clock.Duration) {
	if p.next.sendNow(s, p.c, d) {
		p.receive(s)
	}
}

func (p *sqsConsumer) poll(s *sim, _ payload) {
	p.next.armed = false
	p.receive(s)
}

// wait is the receive's wait in seconds, as SQS will take it.
func (p *sqsConsumer) wait() int {
	if p.set.WaitTimeSeconds >= 0 {
		return p.set.WaitTimeSeconds
	}
	return p.a.std.ReceiveMessageWaitTimeSeconds
}

// visibility is the receive's visibility timeout in seconds.
func (p *sqsConsumer) visibility() int {
	if p.set.VisibilityTimeout >= 0 {
		return p.set.VisibilityTimeout
	}
	return p.a.std.VisibilityTimeout
}

// receive asks for as many messages as it has free threads.
func (p *sqsConsumer) receive(s *sim) {
	if p.out != nil {
		return
	}
	c := p.c
	n := min(c.spec.Threads-p.local, int(c.spec.Batch))
	if n <= 0 {
		p.wantPoll = true
		return
	}
	req := sqs.ReceiveMessageRequest{Queue: p.q.name, MaxNumberOfMessages: sqs.Some(n)}
	if p.set.WaitTimeSeconds >= 0 {
		req.WaitTimeSeconds = sqs.Some(p.set.WaitTimeSeconds)
	}
	if p.set.VisibilityTimeout >= 0 {
		req.VisibilityTimeout = sqs.Some(p.set.VisibilityTimeout)
	}
	wait := p.wait()
	if wait == 0 {
		// A short poll queries a weighted random subset of the servers.
		req.Sample = c.rng.Uint64()
	}
	if p.a.fifo {
		if p.attempt == "" || s.q.now().Sub(p.attemptAt) >= sqs.AttemptIDSeconds*clock.Second {
			p.attempts++
			p.attempt, p.attemptAt = c.clientID+"-"+strconv.Itoa(p.attempts), s.q.now()
		}
		req.ReceiveRequestAttemptID = p.attempt
	}
	r := &sqsReceiveReq{req: req}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossPop, reply: true}
	p.out = r
	s.emit(model.Event{Kind: model.EvReceive, Client: c.idx, Topic: c.g.topic, Queue: -1, Count: int32(n), Span: clock.Duration(p.visibility()) * clock.Second})
	s.send(r, clock.Duration(wait)*clock.Second+s.cfg.Network.PollTimeoutSlack)
}

func (p *sqsConsumer) reply(s *sim, r Request) {
	switch r := r.(type) {
	case *sqsReceiveReq:
		p.receiveReply(s, r)
	case *sqsChangeReq, *sqsDeleteReq:
		// Answered: nothing to adopt (the handle stays); an error code is
		// SQS's final word, which the SDK does not retry.
	}
}

func (p *sqsConsumer) receiveReply(s *sim, r *sqsReceiveReq) {
	if p.out == r {
		p.out = nil
	}
	p.attempt = "" // answered: the next receive is a new attempt
	c := p.c
	s.emit(model.Event{Kind: model.EvReceived, Client: c.idx, Code: int32(r.code), Count: int32(len(r.msgs))})
	for i := range r.msgs {
		d := &r.msgs[i]
		h := &sqsHeld{held: held{c: c, epoch: c.epoch, msg: &model.Message{ID: d.MsgID, Topic: c.g.topic}, lease: d.Lease, topic: c.g.topic, queue: groupQueue(d.MessageGroupID),
			offset: d.Seq, deliveredAt: s.q.now()}, handle: d.ReceiptHandle, queue: d.Queue, vt: p.visibility()}
		s.deliver(&h.held, int32(d.ReceiveCount), c.g.topic)
		p.local++
		c.buf = append(c.buf, h)
		s.injectRenewals(c, h, d.Deadline)
	}
	s.startWork(c)
	d := clock.Duration(0)
	if r.code != sqs.OK {
		d = pullTimeDelayWhenException // OverLimit and other errors: back off
	}
	p.schedulePoll(s, d)
}

func (p *sqsConsumer) timeout(s *sim, r Request) {
	switch r := r.(type) {
	case *sqsReceiveReq:
		s.traceLost(r, model.RTimeout)
		if p.out == r {
			p.out = nil
		}
		// A FIFO consumer retries with the same ReceiveRequestAttemptId.
		p.schedulePoll(s, 0)
	case *sqsDeleteReq:
		s.traceLost(r, model.RTimeout)
		if r.attempt < sdkMaxAttempts {
			n := &sqsDeleteReq{req: r.req, msg: r.msg, lease: r.lease, at: r.at, attempt: r.attempt + 1}
			n.reqBase = reqBase{c: p.c, epoch: p.c.epoch, loss: lossAck, reply: true}
			s.q.after(sdkBackoff(p.jitter, r.attempt), tkClient, p.c.idx, p.c.epoch, n)
		}
	case *sqsChangeReq:
		s.traceLost(r, model.RTimeout)
		if r.attempt < sdkMaxAttempts {
			n := &sqsChangeReq{req: r.req, msg: r.msg, lease: r.lease, keepDeadline: r.keepDeadline, attempt: r.attempt + 1}
			n.reqBase = reqBase{c: p.c, epoch: p.c.epoch, loss: lossChange, reply: true}
			s.q.after(sdkBackoff(p.jitter, r.attempt), tkClient, p.c.idx, p.c.epoch, n)
		}
	}
}

// The AWS SDKs' standard retry mode, as the Go SDK v2's retryer has it:
// three attempts in all; before retry i (from 1) a full-jitter backoff of
// rand[0,1) × 2^i seconds, at most 20 s.
const (
	sdkMaxAttempts = 3
	sdkMaxBackoff  = 20 * clock.Second
)

// sdkBackoff is the wait before the retry that follows attempt n.
func sdkBackoff(r *pcg.Rand, n int) clock.Duration {
	return min(clock.Duration(r.Float64()*float64(clock.Second<<n)), sdkMaxBackoff)
}

// resend puts a retry on the wire again, traced as its first attempt was.
func (p *sqsConsumer) resend(s *sim, r Request) {
	c := p.c
	switch r := r.(type) {
	case *sqsDeleteReq:
		s.emit(model.Event{Kind: model.EvAck, Client: c.idx, Msg: r.msg, Lease: r.lease})
	case *sqsChangeReq:
		if r.req.VisibilityTimeout == 0 && r.keepDeadline == 0 {
			s.emit(model.Event{Kind: model.EvRelease, Client: c.idx, Msg: r.msg, Lease: r.lease})
		} else {
			s.emit(model.Event{Kind: model.EvRenew, Client: c.idx, Msg: r.msg, Lease: r.lease, Span: clock.Duration(r.req.VisibilityTimeout) * clock.Second, Reason: r.reason})
		}
	}
	s.send(r, s.cfg.Network.RequestTimeout)
}

func (p *sqsConsumer) beforeConsume(*sim, work) bool { return true }

// consumed: success deletes, RECONSUME_LATER changes the visibility, an
// exception leaves the message to its visibility timeout.
func (p *sqsConsumer) consumed(s *sim, w work) {
	h := w.(*sqsHeld)
	c := p.c
	p.local--
	h.finished = true
	switch h.outcome {
	case workload.Success, workload.AckedNotDone:
		r := &sqsDeleteReq{req: sqs.DeleteMessageRequest{Queue: h.queue, ReceiptHandle: h.handle}, msg: h.msg.ID, lease: h.lease, at: h.deliveredAt, attempt: 1}
		r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossAck, reply: true}
		s.emit(model.Event{Kind: model.EvAck, Client: c.idx, Msg: h.msg.ID, Lease: h.lease})
		s.send(r, s.cfg.Network.RequestTimeout)
	case workload.ReconsumeLater:
		r := p.change(h, h.lease, p.set.RetryVisibilityTimeout)
		if p.set.RetryVisibilityTimeout == 0 {
			s.emit(model.Event{Kind: model.EvRelease, Client: c.idx, Msg: h.msg.ID, Lease: h.lease})
		} else {
			r.reason = model.RNack
			s.emit(model.Event{Kind: model.EvRenew, Client: c.idx, Msg: h.msg.ID, Lease: h.lease, Span: clock.Duration(p.set.RetryVisibilityTimeout) * clock.Second, Reason: model.RNack})
		}
		s.send(r, s.cfg.Network.RequestTimeout)
	}
	if p.wantPoll {
		p.wantPoll = false
		p.schedulePoll(s, 0)
	}
}

// change builds a ChangeMessageVisibility of h's message with the handle
// of lease, its first attempt.
func (p *sqsConsumer) change(h *sqsHeld, lease model.LeaseID, seconds int) *sqsChangeReq {
	r := &sqsChangeReq{req: sqs.ChangeMessageVisibilityRequest{Queue: h.queue, ReceiptHandle: h.handle, VisibilityTimeout: seconds}, msg: h.msg.ID, lease: lease, attempt: 1}
	r.reqBase = reqBase{c: p.c, epoch: p.c.epoch, loss: lossChange, reply: true}
	return r
}

func (p *sqsConsumer) timer(s *sim, x payload) {
	switch r := x.(type) {
	case *sqsDeleteReq, *sqsChangeReq:
		p.resend(s, r.(Request))
		return
	}
	f, ok := x.(*renewFault)
	if !ok {
		return
	}
	h := f.w.(*sqsHeld)
	if f.edge != renewAfterRevive && h.finished {
		return
	}
	s.cov.hit(s.faults.renew[f.edge].name)
	r := p.change(h, f.lease, h.vt)
	r.reason = renewReason(f.edge)
	if f.edge == renewSameDeadline {
		r.keepDeadline = f.dl
	}
	s.emit(model.Event{Kind: model.EvRenew, Client: p.c.idx, Msg: h.msg.ID, Lease: f.lease, Span: clock.Duration(h.vt) * clock.Second, Reason: renewReason(f.edge)})
	if f.edge == renewAtExpiry {
		s.sendAt(r, f.dl, s.cfg.Network.RequestTimeout)
		return
	}
	s.send(r, s.cfg.Network.RequestTimeout)
}
