package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/workload"
)

// The simple consumer: a gRPC SimpleConsumer behind the proxy. The
// application receives up to maxMsgNums messages with an invisible
// duration and long polling, processes them on its threads and acks or
// renews each. The proxy rejects expired handles before the broker
// (nextVisibleTime <= now, judged here by the client's clock), sends
// messages with reconsumeTimes >= maxAttempts to %DLQ%group and acks them,
// and optionally auto-renews leases of messages being processed.

// Proxy auto-renew (RenewStrategyPolicy and ProxyConfig defaults).
var renewSchedule = [...]clock.Duration{clock.Minute, 3 * clock.Minute, 5 * clock.Minute, 10 * clock.Minute, 30 * clock.Minute, 60 * clock.Minute}

const (
	renewAhead    = 10 * clock.Second // renewAheadTimeMillis
	renewMaxTime  = 3 * clock.Hour    // renewMaxTimeMillis
	renewMaxRetry = 3                 // maxRenewRetryTimes
)

// retryDelay is the group's CustomizedRetryPolicy: "1s 5s 10s 30s 1m 2m 3m
// 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h" at index min(reconsumeTimes+2, 17).
var retryLevels = [...]int64{1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

func retryDelayMs(reconsumeTimes int32) int64 {
	return retryLevels[min(int(reconsumeTimes)+2, len(retryLevels)-1)] * 1000
}

// simpleCapacity is how many more messages the application takes: it
// receives only for free threads (no prefetch), so with batch 1 a group of
// c single-threaded consumers serves one shared backlog like M/M/c.
func simpleCapacity(c *consumer) int {
	return c.spec.Threads - c.local
}

func (s *sim) receive(c *consumer) {
	if c.popOut != nil {
		return
	}
	n := min(simpleCapacity(c), int(c.spec.Batch))
	if n <= 0 {
		c.wantPoll = true
		return
	}
	s.sendPop(c, int32(n))
}

// proxyFilter runs at the proxy on the broker's pop result: messages with
// reconsumeTimes >= maxAttempts (retryMaxTimes + 1) go to the DLQ and are
// acked; the rest stay in res, for the client.
func (s *sim) proxyFilter(c *consumer, res *pop.PopResult) {
	maxAttempts := c.g.cfg.RetryMaxTimes + 1
	kept := res.Messages[:0]
	for i := range res.Messages {
		p := &res.Messages[i]
		if p.Message.ReconsumeTimes >= maxAttempts {
			s.proxyDLQ(c, &p.Message, p.Handle)
			continue
		}
		kept = append(kept, *p)
	}
	res.Messages = kept
}

// proxyDLQ is the proxy's CONSUMER_SEND_MSG_BACK with maxReconsumeTimes 0:
// the message goes to %DLQ%group (one queue, reconsumeTimes + 1,
// ORIGIN_MESSAGE_ID set), then the original is acked. A failed write
// leaves the message to revive.
func (s *sim) proxyDLQ(c *consumer, m *model.Message, h model.ReceiptHandle) {
	topic := h.RealTopic(m.Topic, c.g.name)
	hstr := h.String()
	// The proxy got the message from the broker (a lease), not the client.
	s.emit(model.Event{Kind: model.EvDeliver, Client: c.idx, Msg: m.UniqKey, Topic: topic, Queue: h.QueueID, Offset: h.QueueOffset,
		Attempt: m.ReconsumeTimes, Handle: hstr, Deadline: h.NextVisibleTime(), Detail: c.g.presented(m.Topic) + " to=proxy"})
	s.led.delivered(m.UniqKey)
	dlq := model.DLQTopic(c.g.name)
	if s.b.MaxOffset(dlq, 0) < 0 {
		s.createDLQ(dlq)
	}
	cp := m.Clone()
	cp.Topic, cp.QueueID, cp.ReconsumeTimes = dlq, 0, m.ReconsumeTimes+1
	_ = cp.SetProperty(model.PropertyOriginMessageID, m.UniqKey)
	_ = cp.SetProperty(model.PropertyRetryTopic, m.Topic)
	r := s.b.Put(s.q.now(), cp)
	if r.Code != model.Success {
		return // the lease runs out and the message comes back
	}
	s.wake(r.Woken)
	s.wakePulls(r.PullWoken)
	s.cov.hit("dlq")
	s.emit(model.Event{Kind: model.EvDLQ, Client: c.idx, Msg: m.UniqKey, Topic: dlq, Queue: 0, Offset: r.Offset, Attempt: m.ReconsumeTimes})
	s.led.finish(m.UniqKey)
	s.emit(model.Event{Kind: model.EvAckSent, Client: c.idx, Msg: m.UniqKey, Topic: topic, Queue: h.QueueID, Offset: h.QueueOffset, Handle: hstr, Detail: "proxy"})
	a := s.b.Ack(s.q.now(), &pop.AckRequest{ConsumerGroup: c.g.name, Topic: topic, QueueID: h.QueueID, Offset: h.QueueOffset, Handle: h})
	n := int64(0)
	if a.Removed != 0 {
		n = 1
	}
	s.emit(model.Event{Kind: model.EvAckAccepted, Client: c.idx, Msg: m.UniqKey, Topic: topic, Queue: h.QueueID, Offset: h.QueueOffset, Handle: hstr, Code: a.Code, N: n, Detail: "proxy"})
}

// createDLQ creates %DLQ%group with one queue, as the broker does on the
// first send-back.
func (s *sim) createDLQ(name string) {
	if err := s.b.CreateTopic(pop.TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		panic("sim: cannot create the DLQ topic: " + err.Error())
	}
}

func (s *sim) receiveResponse(c *consumer, res *pop.PopResult) {
	for i := range res.Messages {
		h := s.deliver(c, &res.Messages[i].Message, res.Messages[i].Handle)
		h.firstRecv = c.now(s)
		c.local++
		c.buf = append(c.buf, h)
		if c.simple.AutoRenew {
			s.armRenew(c, h)
		}
		s.injectRenewals(c, h)
	}
	s.startWork(c)
	s.schedulePoll(c, repopDelay(res.Code))
}

func (s *sim) simpleDone(c *consumer, h *held) {
	c.local--
	switch h.outcome {
	case workload.Success:
		s.simpleAck(c, h)
	case workload.ReconsumeLater:
		if !s.proxyRejects(c, h, "change") {
			s.sendChange(c, h, h.hstr, retryDelayMs(h.msg.ReconsumeTimes), changeNack, 0)
		}
	default:
		// An exception: the application neither acks nor renews; the lease
		// runs out and the message comes back.
	}
	h.finished = true // whatever the outcome, the client is done with h
	if c.wantPoll {
		c.wantPoll = false
		s.schedulePoll(c, 0)
	}
}

func (s *sim) simpleAck(c *consumer, h *held) {
	if !s.proxyRejects(c, h, "ack") {
		s.sendAck(c, h)
	}
}

// proxyRejects is validateReceiptHandle: an expired handle never reaches
// the broker.
func (s *sim) proxyRejects(c *consumer, h *held, what string) bool {
	if !s.leaseExpired(c, h) {
		return false
	}
	s.cov.hit("expired-handle-rejected")
	s.emit(s.heldEvent(model.EvExpiredLocal, c, h, what))
	return true
}

// armRenew schedules the next auto-renew renewAhead before the lease ends
// (by the client's clock).
func (s *sim) armRenew(c *consumer, h *held) {
	at := c.virtual(clock.FromMillis(h.handle.NextVisibleTime()).Add(-renewAhead))
	s.q.at(max(at, s.q.now()), evRenew, c.idx, c.epoch, h)
}

// renew is one auto-renew of a message still being processed.
func (s *sim) renew(c *consumer, h *held) {
	if h.finished || h.renewOut || h.renewStop {
		return
	}
	if s.proxyRejects(c, h, "renew") {
		h.renewStop = true
		return
	}
	inv := renewSchedule[min(h.renews, len(renewSchedule)-1)].Millis()
	if c.now(s).Sub(h.firstRecv) >= renewMaxTime {
		// Past renewMaxTime: one last renew with the retry policy, then stop.
		inv, h.renewStop = retryDelayMs(h.msg.ReconsumeTimes), true
	}
	h.renewOut = true
	s.sendChange(c, h, h.hstr, inv, changeRenew, s.cfg.Network.RequestTimeout)
}

// changeResponse is a renewal's response at the client.
func (s *sim) changeResponse(c *consumer, cl *call) {
	h := cl.h
	if cl.chCode != model.Success {
		if cl.why == changeRenew {
			h.renewOut = false
		}
		return
	}
	switch cl.why {
	case changeRenew:
		h.renewOut, h.renewFails = false, 0
		h.renews++
		if !h.finished {
			h.adopt(cl.newHandle)
			s.cov.hit("auto-renew")
			if !h.renewStop {
				s.armRenew(c, h)
			}
		}
	case changeFault:
		if !h.finished && h.epoch == c.epoch {
			h.adopt(cl.newHandle)
		}
	}
}

// renewTimeout: no answer to a renewal. Auto-renew retries with the handle
// it has (stale if the broker did renew) up to maxRenewRetryTimes.
func (s *sim) renewTimeout(c *consumer, cl *call) {
	if cl.why != changeRenew {
		return
	}
	h := cl.h
	h.renewOut = false
	h.renewFails++
	if h.renewFails < renewMaxRetry && !h.finished {
		s.cov.hit("renew-retry")
		s.q.after(0, evRenew, c.idx, c.epoch, h)
	}
}
