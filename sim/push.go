package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/workload"
)

// The POP push consumer after RocketMQ's DefaultMQPushConsumerImpl (pop
// mode) and ConsumeMessagePopConcurrentlyService (docs/rocketmq/clients.md §2–3): one pop
// loop over all queues (QueueID -1) with long polling, consumeMessageBatchMaxSize
// 1, per-message async acks (AckMessage, not BatchAckMessages: upstream's
// processConsumeResult calls ackAsync for each message of the success
// prefix), changeInvisibleTime with the popDelayLevel backoff on failure.

// maxAgeForAck is checkNeedAckOrDelay's limit: twice the last popDelayLevel
// (7200 s), i.e. 4 h.
const maxAgeForAck = 2 * 7200 * 1000

// popDelayLevel is the push consumer's changeInvisibleTime backoff in
// seconds (DefaultMQPushConsumer.popDelayLevel).
var popDelayLevel = [...]int64{10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// popDelaySeconds is popDelayLevel[level], or the last entry when level is
// past the table.
func popDelaySeconds(level int) int64 {
	if level >= len(popDelayLevel) {
		return popDelayLevel[len(popDelayLevel)-1]
	}
	return popDelayLevel[max(level, 0)]
}

// pushConsumer is the POP push consumer's client model.
type pushConsumer struct {
	c   *consumer
	set *PopPushSettings
	// waitAck counts messages received and not yet acked, renewed or
	// given up: flow control's measure.
	waitAck   int
	popOut    *popReq // the outstanding pop
	pollArmed bool    // a tkPoll is scheduled
}

func (p *pushConsumer) start(s *sim) { p.schedulePoll(s, 0) }

func (p *pushConsumer) busy() bool { return p.waitAck > 0 }

func (p *pushConsumer) crashed(*sim) { p.waitAck, p.popOut, p.pollArmed = 0, nil, false }

// schedulePoll arms the next pop after d; with d = 0 it is sent at once.
func (p *pushConsumer) schedulePoll(s *sim, d clock.Duration) {
	if p.pollArmed || !p.c.alive {
		return
	}
	if d == 0 {
		p.pop(s)
		return
	}
	p.pollArmed = true
	s.q.after(d, tkPoll, p.c.idx, p.c.epoch, nil)
}

func (p *pushConsumer) poll(s *sim, _ payload) {
	p.pollArmed = false
	p.pop(s)
}

// pop issues the consumer's pop, unless one is outstanding or flow control
// holds it back.
func (p *pushConsumer) pop(s *sim) {
	if p.popOut != nil {
		return
	}
	if p.waitAck > p.set.PopThresholdForQueue {
		// More than popThresholdForQueue messages wait for an ack: retry in 50 ms.
		s.cov.hit("flow-control")
		p.schedulePoll(s, pullTimeDelayWhenFlowCtl)
		return
	}
	c := p.c
	r := &popReq{req: pop.PopRequest{
		ClientID: c.clientID, ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: -1, MaxMsgNums: c.spec.Batch,
		InvisibleTime: p.set.InvisibleTime, PollTime: p.set.PollTime, BornTime: c.now(s),
		InitMode: pop.InitModeMin, ExpressionType: "TAG", Expression: c.spec.Expression,
	}}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossPop, reply: true}
	p.popOut = r
	s.emit(model.Event{Kind: model.EvReceive, Client: c.idx, Topic: c.g.topic, Queue: -1, Count: c.spec.Batch, Span: p.set.InvisibleTime})
	// RocketMQ adds 10 s to a long-polling request's timeout.
	s.send(r, p.set.PollTime+s.cfg.Network.PollTimeoutSlack)
}

func (p *pushConsumer) reply(s *sim, r Request) {
	switch r := r.(type) {
	case *popReq:
		p.popResponse(s, r)
	case *changeReq:
		adoptRenewal(r)
	}
}

func (p *pushConsumer) timeout(s *sim, r Request) {
	if r, ok := r.(*popReq); ok {
		s.traceLost(r, model.RTimeout)
		if p.popOut == r {
			p.popOut = nil
		}
		p.schedulePoll(s, pullTimeDelayWhenException)
	}
}

// popResponse is a pop's answer reaching the consumer.
func (p *pushConsumer) popResponse(s *sim, r *popReq) {
	if p.popOut == r {
		p.popOut = nil
	}
	res := &r.res
	c := p.c
	s.emit(model.Event{Kind: model.EvReceived, Client: c.idx, Code: int32(res.Code), Count: int32(len(res.Messages))})
	for i := range res.Messages {
		h := s.deliverPopped(c, &res.Messages[i])
		if h.msg.ReconsumeTimes > p.set.MaxReconsumeTimes {
			// processPopResult: reconsumeTimes > maxReconsumeTimes is acked
			// and dropped on receipt.
			p.drop(s, h, model.RPushMaxReconsume)
			continue
		}
		p.waitAck++
		c.buf = append(c.buf, h)
		s.injectRenewals(c, h, clock.FromMillis(h.handle.NextVisibleTime()))
	}
	s.startWork(c)
	p.schedulePoll(s, repopDelay(res.Code))
}

// repopDelay is a POP consumer's delay before the next pop, by response
// code: FOUND and POLLING_NOT_FOUND (210, 19) at once, broker flow control
// 20 ms, POLLING_FULL (209) and anything else 3000 ms.
func repopDelay(code model.ResponseCode) clock.Duration {
	switch code {
	case model.Success, model.PollingTimeout, model.PullNotFound:
		return 0
	case model.SystemBusy:
		return pullTimeDelayWhenBusy
	}
	return pullTimeDelayWhenException
}

// drop acks a message and drops it under a named client policy.
func (p *pushConsumer) drop(s *sim, h *popHeld, policy model.Reason) {
	s.cov.hit("drop-" + policy.String())
	s.emit(heldEvent(model.EvDrop, &h.held, policy))
	s.meter.finish(h.msg.ID)
	s.sendAck(h)
}

func (p *pushConsumer) timer(s *sim, x payload) {
	if f, ok := x.(*renewFault); ok {
		s.faultRenew(p.c, f)
	}
}

// beforeConsume is ConsumeRequest.run's check: now - popTime >=
// invisibleTime aborts; nothing is sent and the broker revives the
// message.
func (p *pushConsumer) beforeConsume(s *sim, w work) bool {
	h := w.(*popHeld)
	if h.expired(s) {
		p.waitAck--
		h.finished = true
		s.cov.hit("expired-before-consume")
		s.emit(heldEvent(model.EvExpiredLocal, &h.held, model.RBefore))
		return false
	}
	return true
}

// consumed is processConsumeResult for one message.
func (p *pushConsumer) consumed(s *sim, w work) {
	h := w.(*popHeld)
	p.waitAck--
	if h.expired(s) {
		// The pop timed out during consumption: nothing is sent.
		h.finished = true
		s.cov.hit("expired-after-consume")
		s.emit(heldEvent(model.EvExpiredLocal, &h.held, model.RAfter))
		return
	}
	if h.outcome == workload.Success {
		s.sendAck(h)
		return
	}
	// An exception is RECONSUME_LATER.
	if h.msg.ReconsumeTimes >= p.set.MaxReconsumeTimes {
		p.checkNeedAckOrDelay(s, h)
		return
	}
	// delayLevelWhenNextConsume is 0, which means "use reconsumeTimes".
	p.nack(s, h, clock.Duration(popDelaySeconds(int(h.msg.ReconsumeTimes)))*clock.Second)
}

// checkNeedAckOrDelay is the age rule for messages past maxReconsumeTimes.
func (p *pushConsumer) checkNeedAckOrDelay(s *sim, h *popHeld) {
	age := p.c.now(s).Millis() - h.msg.BornTimestamp
	if age > maxAgeForAck {
		p.drop(s, h, model.RPushAge4h)
		return
	}
	level := -1
	for l := len(popDelayLevel) - 1; l >= 0; l-- {
		if age >= popDelayLevel[l]*1000 {
			level = l + 1
			break
		}
	}
	if level < 0 {
		// Upstream indexes popDelayLevel[-1] here and throws (a latent bug
		// for messages younger than 10 s); popsim guards it with level 0.
		level = 0
	}
	p.nack(s, h, clock.Duration(popDelaySeconds(level))*clock.Second)
}

// nack renews the lease to the backoff; failures are only logged upstream,
// so the answer is not awaited.
func (p *pushConsumer) nack(s *sim, h *popHeld, invisible clock.Duration) {
	s.sendNack(h, pop.NewChangeInvisibleTimeRequest(p.c.g.name, h.msg.Topic, &h.handle, invisible), h.lease)
}
