package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/workload"
)

// The POP push consumer after RocketMQ's DefaultMQPushConsumerImpl (pop
// mode) and ConsumeMessagePopConcurrentlyService (spec section 5): one pop
// loop over all queues (QueueID -1) with long polling, consumeMessageBatchMaxSize
// 1, per-message async acks (AckMessage, not BatchAckMessages: upstream's
// processConsumeResult calls ackAsync for each message of the success
// prefix), changeInvisibleTime with the popDelayLevel backoff on failure.

// maxAgeForAck is checkNeedAckOrDelay's limit: twice the last popDelayLevel
// (7200 s), i.e. 4 h.
const maxAgeForAck = 2 * 7200 * 1000

// pushPop issues the consumer's pop, unless one is outstanding or flow
// control holds it back.
func (s *sim) pushPop(c *consumer) {
	if c.popOut != nil {
		return
	}
	if c.waitAck > c.popPush.PopThresholdForQueue {
		// More than popThresholdForQueue messages wait for an ack: retry in 50 ms.
		s.cov.hit("flow-control")
		s.schedulePoll(c, pullTimeDelayWhenFlowCtl)
		return
	}
	s.sendPop(c, c.spec.Batch)
}

// sendPop sends a pop (or the simple consumer's receive) of up to n
// messages, with long polling.
func (s *sim) sendPop(c *consumer, n int32) {
	inv, poll := c.popTimes()
	cl := s.newCall(callPop, c)
	cl.pop.req = pop.PopRequest{
		ClientID: c.clientID, ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: -1, MaxMsgNums: n,
		InvisibleTime: inv, PollTime: poll, BornTime: c.now(s),
		InitMode: pop.InitModeMin, ExpressionType: "TAG", Expression: c.spec.Expression,
	}
	c.popOut = cl
	s.emit(model.Event{Kind: model.EvPopRequest, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, N: int64(n), Deadline: cl.pop.req.InvisibleTime.Millis()})
	// RocketMQ adds 10 s to a long-polling request's timeout.
	s.send(cl, poll+s.cfg.Network.PollTimeoutSlack)
}

// popResponse is a pop or receive response reaching its client.
func (s *sim) popResponse(c *consumer, cl *call) {
	if c.popOut == cl {
		c.popOut = nil
	}
	res := &cl.pop.res
	s.emit(model.Event{Kind: model.EvPopResponse, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, Code: res.Code, N: int64(len(res.Messages)), Detail: res.Status.String()})
	if c.kind == Simple {
		s.receiveResponse(c, res)
		return
	}
	for i := range res.Messages {
		m := &res.Messages[i].Message
		h := s.deliver(c, m, res.Messages[i].Handle)
		if m.ReconsumeTimes > c.popPush.MaxReconsumeTimes {
			// processPopResult: reconsumeTimes > maxReconsumeTimes is acked
			// and dropped on receipt.
			s.drop(c, h, "push-max-reconsume")
			continue
		}
		c.waitAck++
		c.buf = append(c.buf, h)
		s.injectRenewals(c, h)
	}
	s.startWork(c)
	s.schedulePoll(c, repopDelay(res.Code))
}

// repopDelay is the push consumer's delay before the next pop, by response
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
func (s *sim) drop(c *consumer, h *held, policy string) {
	s.cov.hit("drop-" + policy)
	s.emit(model.Event{Kind: model.EvDrop, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Attempt: h.msg.ReconsumeTimes, Detail: policy})
	s.led.finish(h.key)
	s.sendAck(c, h)
}

// pushDone is processConsumeResult for one message.
func (s *sim) pushDone(c *consumer, h *held) {
	c.waitAck--
	if s.leaseExpired(c, h) {
		// The pop timed out during consumption: nothing is sent.
		h.finished = true
		s.cov.hit("expired-after-consume")
		s.emit(s.heldEvent(model.EvExpiredLocal, c, h, "after"))
		return
	}
	if h.outcome == workload.Success {
		s.sendAck(c, h)
		return
	}
	// An exception is RECONSUME_LATER.
	if h.msg.ReconsumeTimes >= c.popPush.MaxReconsumeTimes {
		s.checkNeedAckOrDelay(c, h)
		return
	}
	// delayLevelWhenNextConsume is 0, which means "use reconsumeTimes".
	s.nack(c, h, popDelaySeconds(int(h.msg.ReconsumeTimes))*1000)
}

// checkNeedAckOrDelay is the age rule for messages past maxReconsumeTimes.
func (s *sim) checkNeedAckOrDelay(c *consumer, h *held) {
	age := c.nowMs(s) - h.msg.BornTimestamp
	if age > maxAgeForAck {
		s.drop(c, h, "push-age-4h")
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
	s.nack(c, h, popDelaySeconds(level)*1000)
}

// nack renews the lease to the backoff; failures are only logged upstream,
// so the response is not awaited.
func (s *sim) nack(c *consumer, h *held, invisibleMs int64) {
	h.finished = true
	s.sendChange(c, h, h.hstr, invisibleMs, changeNack, 0)
}
