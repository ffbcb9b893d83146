package sim

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
	"popsim/workload"
)

// The simple consumer: a gRPC SimpleConsumer behind the proxy (package
// proxy). The application receives up to maxMsgNums messages with an
// invisible duration and long polling, processes them on its threads and
// acks or renews each; with AutoRenew the proxy renews leases of messages
// being processed.
//
// Where the proxy sits: each simple consumer has its own proxy, on the
// client's side of the network but on the broker's clock (the engine's
// time: in local mode the proxy shares the broker's clock), so a client's
// clock skew reaches none of its decisions. Its handle checks (an expired
// handle is rejected before anything is sent) judge expiry by the
// engine's time when the client hands it the ack or renewal; its
// auto-renew timer fires at the engine's time of each due renewal (10 s
// ahead of the lease's end on the broker) and registers a message's
// receipt (RenewMaxTime) at the engine's time; the timer still pauses and
// dies with the client. Its receive runs when the request reaches the
// engine: the pop, stamped with the engine's time as its born time (a
// skew never reaches the broker's "timeout too much" check), then the
// result filter's DLQ send-backs and acks at the engine's time. The
// client's own decisions (its processing, its timeouts) stay on its own
// clock. An auto-renewed consumer's
// InvisibleTime is its proxy's defaultInvisibleTimeMills (the lease an
// auto-renewed receive gets).

// simpleConsumer is the simple consumer's client model. When the client
// neither renews nor re-enters, sending a receive, its answer, an ack and
// arming the proxy's timer read only its line 0 and the receive request
// in lines 2 to 4 (the allocation class, 320 bytes, starts every record
// on a line; TestSimpleConsumerLayout): line 0 holds the outstanding
// receive, the spare, the proxy, the renewed map and the orderly state,
// the count of messages held, the round robin and the settings' two
// switches those paths test; line 1 what renewing and re-entering use.
// In the hot topic (500 consumers, cold between two answers) the round
// robin beside the request's start, and the attempt id and the proxy in
// line 1, took a miss a receive each.
type simpleConsumer struct {
	c      *consumer
	popOut *receiveReq // the outstanding receive
	spare  *receiveReq // the last receive answered, for the next (newReceive)
	px     *proxy.Proxy
	// renewed is the message the proxy auto-renews, by message id, as the
	// proxy keys it: its renewals are this held message's, which follows
	// them (the latest delivery of a message id wins, as in the proxy).
	// It is nil until the client's first auto-renewed delivery, so that
	// done and armTick can tell a client that never renews from the
	// pointer alone.
	renewed map[string]*popHeld
	// ord sequences an orderly group's consumption (nil: concurrently).
	ord *orderly
	// local counts messages held (waiting, running) for capacity.
	local int
	// rr is the receives sent: with several brokers each goes to the next
	// broker of the route in turn (the client's round robin over its
	// route's queues, the proxy's selector popping that broker's queues).
	rr       int32
	next     nextPoll // the next receive (a tkPoll armed)
	wantPoll bool     // a receive waits for local capacity
	// autoRenew and reentrant are set's AutoRenew and Reentrant, here so
	// that the hot paths need not load set.
	autoRenew, reentrant bool

	set *SimpleSettings
	// attempt is the attempt_id the next receive sends (Reentrant): kept
	// after a receive that timed out, a new one after any answer. It stays
	// empty in a client that does not re-enter.
	attempt  string
	tick     proxyTick // the proxy's auto-renew timer
	attempts uint64
	_        [16]byte // rq starts on line 2
	// rq is the client's receive request to its proxy: the fields that
	// are the client's for good (group, topic, filter, times) set once,
	// by receiveRequest; receive sets the rest (the client id, which a
	// restart changes, the batch size and the attempt id). Its 152 bytes
	// take lines 2 to 4, the fewest they can, which a receive and the
	// proxy's reading of it touch.
	rq proxy.ReceiveRequest
	// The record fills the 320-byte class, whose records start on a line.
	_ [simplePad]byte
}

// simplePad pads a simpleConsumer to 320 bytes (TestSimpleConsumerLayout).
const simplePad = 40

// proxyTick is the payload of the proxy's timer task: armed for at (the
// engine's time).
type proxyTick struct {
	armed bool
	at    clock.Time
}

func (s *sim) newSimpleConsumer(c *consumer, set *SimpleSettings) *simpleConsumer {
	cfg := proxy.DefaultConfig()
	cfg.DefaultInvisibleTime = set.InvisibleTime
	p := &simpleConsumer{c: c, set: set, px: proxy.New(s.rocketMQ(0).b, cfg), autoRenew: set.AutoRenew, reentrant: set.Reentrant}
	for b := int32(1); b < s.rt.n; b++ {
		if err := p.px.AddBroker(s.rocketMQ(b).b); err != nil {
			panic("sim: " + err.Error())
		}
	}
	if c.g.cfg.ConsumeMessageOrderly {
		p.ord = newOrderly()
	}
	p.rq = p.receiveRequest(s)
	return p
}

// receiveRequest is the part of the client's receive requests that never
// changes: its group, topic and filter, its invisible and long-polling
// times, the RPC's deadline (the poll time and the slack) and the request
// timeout.
func (p *simpleConsumer) receiveRequest(s *sim) proxy.ReceiveRequest {
	c := p.c
	return proxy.ReceiveRequest{
		Group: c.g.name, Topic: c.g.topic, ExpressionType: c.spec.ExpressionType, Expression: c.spec.Expression,
		InvisibleTime: p.set.InvisibleTime, AutoRenew: p.set.AutoRenew,
		LongPollingTimeout: p.set.PollTime, Timeout: p.set.PollTime + s.cfg.Network.PollTimeoutSlack, RequestTimeout: s.cfg.Network.RequestTimeout,
	}
}

func (p *simpleConsumer) start(s *sim) { p.schedulePoll(s, 0) }

func (p *simpleConsumer) busy() bool { return p.local > 0 }

func (p *simpleConsumer) crashed(*sim) {
	p.local, p.popOut, p.next.armed, p.wantPoll = 0, nil, false, false
	p.px.Forget(p.c.clientID)
	clear(p.renewed)
	p.tick.armed = false
	p.attempt = ""
	if p.ord != nil {
		p.ord.clear()
	}
}

func (p *simpleConsumer) schedulePoll(s *sim, d clock.Duration) {
	if p.next.sendNow(s, p.c, d) {
		p.receive(s)
	}
}

func (p *simpleConsumer) poll(s *sim, _ payload) {
	p.next.armed = false
	p.receive(s)
}

// receive asks for messages for the free threads only (no prefetch), so
// with batch 1 a group of c single-threaded consumers serves one shared
// backlog like M/M/c.
func (p *simpleConsumer) receive(s *sim) {
	if p.popOut != nil {
		return
	}
	c := p.c
	n := min(c.spec.Threads-p.local, int(c.spec.Batch))
	if n <= 0 {
		p.wantPoll = true
		return
	}
	why := model.RNone
	q := &p.rq // the fixed part set once (receiveRequest), not a new request's 14 fields
	if p.reentrant {
		if p.attempt == "" {
			p.attempts++
			p.attempt = c.clientID + "-a" + strconv.FormatUint(p.attempts, 10)
		} else {
			why = model.RReattempt // the last receive timed out: DEADLINE_EXCEEDED keeps the attempt
			s.cov.hit("reentrant-retry")
		}
		q.AttemptID = p.attempt // else empty for good
	}
	r := p.newReceive(c.g.cfg.RetryMaxTimes+1, p.rr%s.rt.n)
	// No born time yet: the proxy stamps its own clock when the receive
	// reaches it (rocketMQ.Serve), never the client's.
	q.ClientID, q.BatchSize = c.clientID, int32(n)
	st := p.px.PopRequestInto(0, q, &r.pop)
	if !st.IsOK() {
		panic("sim: the proxy refused a validated receive: " + st.String())
	}
	p.rr++
	p.popOut = r
	e := s.event(model.EvReceive)
	e.Client, e.Topic, e.Queue, e.Count, e.Span, e.Reason = c.idx, c.g.topic, -1, int32(n), r.pop.InvisibleTime, why
	s.emitSlot()
	s.send(r, q.Timeout)
}

// newReceive returns the client's receive to broker, reusing the spare
// (the last receive answered) with its result's storage: a fresh request
// but for the capacity of the result's slices, and its pop, which the
// caller writes (the proxy's answer goes there at once, not through
// copies).
func (p *simpleConsumer) newReceive(maxAttempts, broker int32) *receiveReq {
	c := p.c
	base := reqBase{c: c, epoch: c.epoch, loss: lossPop, reply: true, broker: broker}
	r := p.spare
	if r == nil {
		return &receiveReq{reqBase: base, px: p.px, maxAttempts: maxAttempts}
	}
	p.spare = nil
	// Field by field: one copy of each part instead of building the whole
	// request and copying it.
	r.reqBase, r.px, r.maxAttempts, r.parked = base, p.px, maxAttempts, false
	res := &r.res.Pop
	// Nothing may alias the held copies of the messages (deliverOwned):
	// the next pop must not write into their Body and Properties.
	unshare(res.Messages[:cap(res.Messages)])
	clear(r.res.Forwarded[:cap(r.res.Forwarded)])
	res.Reset()
	r.res.Forwarded, r.res.Status = r.res.Forwarded[:0], proxy.Status{}
	return r
}

func (p *simpleConsumer) reply(s *sim, r Request) {
	switch r := r.(type) {
	case *receiveReq:
		p.receiveResponse(s, r)
	case *changeReq:
		p.changeResponse(s, r)
	}
}

func (p *simpleConsumer) receiveResponse(s *sim, r *receiveReq) {
	if p.popOut == r {
		p.popOut = nil
	}
	if p.reentrant {
		p.attempt = "" // an answer, empty or not: the next receive is a new attempt
	}
	c := p.c
	res := &r.res.Pop
	e := s.event(model.EvReceived)
	e.Client, e.Code, e.Count = c.idx, int32(res.Code), int32(len(res.Messages))
	s.emitSlot()
	for i := range res.Messages {
		m := &res.Messages[i]
		h := s.deliverOwned(c, m, takeFree(&s.freeHeld))
		p.local++
		if p.ord != nil {
			p.ord.take(c, h)
		} else {
			c.buf = append(c.buf, h)
		}
		if p.autoRenew {
			p.px.Manage(s.q.now(), c.clientID, c.g.name, m)
			if p.renewed == nil {
				p.renewed = map[string]*popHeld{}
			}
			p.renewed[m.Message.UniqKey] = h
		}
		s.injectRenewals(c, h, clock.FromMillis(h.handle.NextVisibleTime()))
	}
	s.startWork(c)
	p.armTick(s)
	d := repopDelay(res.Code)
	// r is answered and its timeout cancelled: nothing refers to it any
	// more (its held messages are copies), so the next receive reuses it.
	p.spare = r
	p.schedulePoll(s, d)
}

func (p *simpleConsumer) timeout(s *sim, r Request) {
	switch r := r.(type) {
	case *receiveReq:
		s.traceLost(r, model.RTimeout)
		if p.popOut == r {
			p.popOut = nil
		}
		p.schedulePoll(s, pullTimeDelayWhenException)
	case *changeReq:
		if r.why == changeRenew && p.px.RenewFailed(r.renewal) {
			s.cov.hit("renew-retry")
		}
		p.armTick(s)
	}
}

func (p *simpleConsumer) beforeConsume(*sim, work) bool { return true }

// done: the client holds h no more; its proxy stops renewing it. A client
// with nothing renewed (no AutoRenew: the hot topic's) has nothing to
// stop: it skips the proxy's scan of its managed handles and the look-up
// in renewed (hot-topic-500x500: 60 instructions a message). A client
// that never renewed has no renewed map (nor managed handles: the proxy
// manages only what deliver registers with it, beside renewed), which
// done tells without loading the map's header or the proxy, two cache
// misses a message in the hot topic's hour (1 % of its time).
func (p *simpleConsumer) done(h *popHeld) {
	if p.renewed == nil || len(p.renewed) == 0 && p.px.Managed() == 0 {
		return
	}
	c := p.c
	p.px.Release(c.clientID, c.g.name, h.msg.UniqKey)
	if p.renewed[h.msg.UniqKey] == h {
		delete(p.renewed, h.msg.UniqKey)
	}
}

// consumed: success acks through the proxy, RECONSUME_LATER renews for the
// group's retry delay, an exception leaves the lease to run out.
func (p *simpleConsumer) consumed(s *sim, w work) {
	h := w.(*popHeld)
	c := p.c
	p.local--
	switch h.outcome {
	case workload.Success, workload.AckedNotDone:
		p.ack(s, h)
	case workload.ReconsumeLater:
		if req, t, ok := p.change(s, h, h.handle, h.lease, proxy.RetryDelay(h.msg.ReconsumeTimes)); ok {
			s.sendNack(h, req, t.Lease)
		}
	}
	h.finished = true // whatever the outcome, the client is done with h
	s.pins.drop(&h.pin)
	p.done(h)
	if p.ord != nil {
		if h.outcome.Succeeded() {
			if p.ord.next(c, h) {
				s.startWork(c)
			}
		} else {
			// Orderly: the queue's batch ends here; the rest is let go and
			// comes back, in order, once the queue unblocks.
			for _, x := range p.ord.rest(h) {
				p.local--
				s.skip(x)
				p.done(x)
			}
		}
	}
	p.recycle(s, h)
	if p.wantPoll {
		p.wantPoll = false
		p.schedulePoll(s, 0)
	}
}

// recycle keeps h, which the client is done with, for a later delivery
// (any client's: the simulator's freeHeld) when nothing can refer to it
// any more: its ack (or the proxy's
// rejection) copied what it needed, an exception left the lease to run
// out, and no renewal of it is in flight or due. A renewal
// (RECONSUME_LATER's, the proxy's auto-renew, an injected one: pinned) or
// an orderly group's lists keep h referenced, so those are left to the
// collector.
func (p *simpleConsumer) recycle(s *sim, h *popHeld) {
	if !reuseRequests || h.pinned || p.ord != nil || p.autoRenew || h.outcome == workload.ReconsumeLater {
		return
	}
	s.freeHeld = append(s.freeHeld, h)
}

// ack acks h through the proxy, which takes its managed handle and
// rejects an expired one. The trace names the lease the handle it used
// is for: the client's own, or the one the proxy manages for the message
// (normally the same lease, as the client follows its proxy's renewals).
func (p *simpleConsumer) ack(s *sim, h *popHeld) {
	c := p.c
	r := s.takeAck() // the proxy writes its request in place
	t, st := p.px.AckInto(s.q.now(), &proxy.AckRequest{ClientID: c.clientID, Group: c.g.name, Topic: h.msg.Topic,
		MessageID: h.msg.UniqKey, Handle: h.handle, Lease: h.lease}, &r.req)
	if !st.IsOK() {
		r.recycle(s)
		p.rejected(s, h, t.Lease, model.RAtAck)
		return
	}
	s.fillAck(r, h, &r.req.Handle, t.Lease)
	s.sendAckOf(h, r)
}

// change checks a renewal of h (with handle and its lease) at the proxy:
// the request to send and the proxy's target (the lease its handle is for
// and the managed registration it came from), or false when the proxy
// rejected it (traced).
func (p *simpleConsumer) change(s *sim, h *popHeld, handle model.ReceiptHandle, lease model.LeaseID, invisible clock.Duration) (pop.ChangeInvisibleTimeRequest, proxy.Target, bool) {
	c := p.c
	req, t, st := p.px.Change(s.q.now(), &proxy.ChangeRequest{ClientID: c.clientID, Group: c.g.name, Topic: h.msg.Topic,
		MessageID: h.msg.UniqKey, Handle: handle, Lease: lease, InvisibleTime: invisible})
	if !st.IsOK() {
		p.rejected(s, h, t.Lease, model.RAtRenew)
		return req, t, false
	}
	return req, t, true
}

// rejected traces the proxy rejecting an expired handle.
func (p *simpleConsumer) rejected(s *sim, h *popHeld, lease model.LeaseID, why model.Reason) {
	s.cov.hit("expired-handle-rejected")
	e := s.heldSlot(model.EvExpiredLocal, &h.held, why)
	e.Lease = lease
	s.emitSlot()
}

// changeResponse is a renewal's answer: the proxy's auto-renew takes the
// new handle; a client's own (injected) renewal is adopted by the client
// and by the proxy.
func (p *simpleConsumer) changeResponse(s *sim, r *changeReq) {
	c := p.c
	switch r.why {
	case changeRenew:
		if p.px.Renewed(r.renewal, &r.res) && r.res.Code == model.Success {
			s.cov.hit("auto-renew")
			if h := r.h; h != nil && !h.finished && h.epoch == c.epoch && h.lease == r.lease {
				h.adopt(&r.res) // the client's handle follows its proxy's renewals
			}
		}
		p.armTick(s)
	case changeFault:
		if r.res.Code == model.Success && !r.h.finished && r.h.epoch == c.epoch {
			p.px.Changed(c.clientID, c.g.name, r.h.msg.UniqKey, r.renewal, &r.res)
		}
		adoptRenewal(r)
	}
}

// armTick schedules the proxy's timer at its next due time (by the
// proxy's clock, the engine's), unless an earlier firing is armed.
func (p *simpleConsumer) armTick(s *sim) {
	if p.renewed == nil {
		return // nothing was ever managed (done): the proxy has nothing due
	}
	due, ok := p.px.NextDue()
	if !ok || !p.c.alive {
		return
	}
	at := max(due, s.q.now())
	if p.tick.armed && p.tick.at <= at {
		return
	}
	p.tick.armed, p.tick.at = true, at
	s.q.at(at, tkClient, p.c.idx, p.c.epoch, &p.tick)
}

func (p *simpleConsumer) timer(s *sim, x payload) {
	switch x := x.(type) {
	case *renewFault:
		s.faultRenew(p.c, x)
	case *proxyTick:
		if !x.armed || s.q.now() < x.at {
			return // superseded by an earlier firing
		}
		x.armed = false
		p.renew(s)
	}
}

// renew sends the proxy's due renewals.
func (p *simpleConsumer) renew(s *sim) {
	c := p.c
	s.renewals = p.px.Tick(s.q.now(), s.renewals[:0])
	for i := range s.renewals {
		rn := &s.renewals[i]
		if rn.Expired {
			s.cov.hit("expired-handle-rejected")
			s.emit(model.Event{Kind: model.EvExpiredLocal, Client: c.idx, Msg: rn.Msg, Lease: rn.Lease, Reason: model.RAtRenew})
			continue
		}
		why := model.RAutoRenew
		if rn.Last {
			why = model.RRenewDeadline
		}
		r := s.newChange(c, p.renewed[rn.MessageID], rn.Msg, rn.Request, rn.Lease, changeRenew, why)
		r.renewal = rn.ID
		s.send(r, s.cfg.Network.RequestTimeout)
	}
	clear(s.renewals)
	p.armTick(s)
}
