package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// The POP push consumer after RocketMQ's DefaultMQPushConsumerImpl (pop
// mode) and ConsumeMessagePopConcurrentlyService (docs/rocketmq/clients.md §2–3): one pop
// loop over all queues (QueueID -1) with long polling, listener batches of
// consumeMessageBatchMaxSize (default 1), the success prefix acked with
// one async ack per message (Java's ackAsync) or, with BatchAck, one
// BATCH_ACK_MESSAGE per listener batch (rocketmq-rust's ack_batch_async;
// batchack.go), changeInvisibleTime with the popDelayLevel backoff on
// failure.

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
	// ord sequences an orderly group's consumption (nil: concurrently).
	ord *orderly
	// waitAck counts messages received and not yet acked, renewed or
	// given up (busy); each loop counts its own for flow control.
	waitAck int
	// loops are its pop loops when the broker's default assignment
	// applies (clientRebalance true): one MessageQueue(topic, broker, -1)
	// per broker of the route, each an all-queue pop loop with its own
	// PopProcessQueue.
	loops []*popLoop
	// asg: the queues the broker assigns (clientRebalance false), each
	// with its own pop loop (assign.go); nil: the loops above.
	asg *assigned
	// pull is the Pull side of a broker-assigned consumer: the queues an
	// assignment in PULL mode gives it, pulled as the Pull baseline pulls
	// (switch.go); nil until it is assigned one.
	pull *pullConsumer
	// freePops are answered pops nothing refers to any more (recyclePop),
	// for the next pops to reuse (the held messages it is done with go
	// to the simulator's freeHeld: recycleHeld).
	freePops      []*popReq
	freeBatchAcks []*batchAckReq // served batch acks (batchAckReq.recycle)
	// recycledPops and recycledHeld count what was recycled (tests).
	recycledPops, recycledHeld int
}

// reuseRequests: clients reuse their answered requests and the messages
// they are done with (the push consumer's pops, batch acks and held
// messages). Tests turn it off to show that reuse changes no trace.
var reuseRequests = true

func (p *pushConsumer) start(s *sim) {
	if p.startAssigned(s) {
		return
	}
	for _, l := range p.loops {
		l.schedule(s, 0)
	}
}

func (p *pushConsumer) busy() bool { return p.waitAck > 0 || p.pull != nil && p.pull.busy() }

func (p *pushConsumer) crashed(s *sim) {
	if p.pull != nil {
		p.pull.crashed(s)
		p.pull = nil
	}
	p.waitAck, p.asg = 0, nil
	for _, l := range p.loops {
		l.out, l.next.armed, l.waitAck = nil, false, 0
	}
	if p.ord != nil {
		p.ord.clear()
	}
}

// defaultLoops are the all-queue loops of the route's brokers.
func (p *pushConsumer) defaultLoops(s *sim) {
	for b := range s.rt.n {
		p.loops = append(p.loops, &popLoop{p: p, mq: pop.MessageQueue{Topic: p.c.g.topic, BrokerName: s.rt.names[b], QueueID: -1}, broker: b})
	}
}

func (p *pushConsumer) poll(s *sim, x payload) {
	if pq, ok := x.(*pullQueue); ok {
		pq.p.poll(s, pq)
		return
	}
	x.(*popLoop).poll(s)
}

// loopOf is the loop whose pop r is, its outstanding pop cleared.
func (p *pushConsumer) loopOf(r *popReq) *popLoop {
	if p.asg != nil {
		return p.asg.answered(r)
	}
	l := p.loops[r.broker]
	if l.out == r {
		l.out = nil
	}
	return l
}

// sendPop sends the loop's pop of its queue (-1: every queue of its
// broker) and returns it.
func (p *pushConsumer) sendPop(s *sim, l *popLoop) *popReq {
	c := p.c
	queue := l.mq.QueueID
	r := p.newPop()
	// The request, born now: a recycled pop's, which this incarnation built
	// and the engine only read (its ClientID names the incarnation),
	// differs from it in its queue and birth only; any other is built whole.
	// Here, not in a function of its own, of which sendPop was the only
	// caller (BenchmarkRunDefault: 1 393.6 -> 1 392.6 M instructions
	// outside the runtime, callgrind).
	if r.req.ClientID == c.clientID {
		r.req.QueueID, r.req.BornTime = queue, c.now(s)
	} else {
		r.req = p.popRequest(s, queue)
	}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossPop, reply: true, broker: l.broker}
	e := s.event(model.EvReceive)
	e.Client, e.Topic, e.Queue, e.Count, e.Span = c.idx, c.g.topic, s.rt.global(l.broker, c.g.topic, queue), c.spec.Batch, p.set.InvisibleTime
	s.emitSlot()
	// RocketMQ adds 10 s to a long-polling request's timeout.
	s.send(r, p.set.PollTime+s.cfg.Network.PollTimeoutSlack)
	return r
}

// popRequest is the consumer's pop of queue, born now.
func (p *pushConsumer) popRequest(s *sim, queue int32) pop.PopRequest {
	c := p.c
	return pop.PopRequest{
		ClientID: c.clientID, ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: queue, MaxMsgNums: c.spec.Batch,
		InvisibleTime: p.set.InvisibleTime, PollTime: p.set.PollTime, BornTime: c.now(s),
		InitMode: pop.InitModeMin, ExpressionType: c.spec.ExpressionType, Expression: c.spec.Expression, Order: p.ord != nil,
	}
}

// newPop is a pop request with an empty answer: one recyclePop kept, or
// a new one whose answer starts on its own room. It inlines (cost 60):
// takeFree written out, whose generic call put it at 84
// (BenchmarkRunDefault: 1 395.8 -> 1 394.7 M instructions outside the
// runtime, callgrind).
func (p *pushConsumer) newPop() *popReq {
	if n := len(p.freePops) - 1; n >= 0 { // takeFree
		r := p.freePops[n]
		p.freePops[n], p.freePops = nil, p.freePops[:n]
		return r
	}
	r := new(popReq)
	r.res.Messages = r.msgRoom[:0]
	r.res.Stages = r.stageRoom[:0]
	return r
}

// recyclePop keeps r, whose answer the client has just taken, for a later
// pop. Nothing can refer to it any more: its answer arrived (the engine
// answers a pop once, after taking it out of its parked pops), its timeout
// task was cancelled (atClient clears timer; a task a pause moved could
// not be, and still refers to r: such a pop is left to the collector),
// and the messages it brought are held as copies (deliverOwned). A pop
// that timed out, was lost or whose client crashed is never recycled: the
// network or the engine may still hold it. Its answer's storage is kept,
// emptied: the message slots its answers wrote give up their Body and
// Properties (unshare), so that the next pop does not write into the
// ones the held copies share. Its common part is left as it is: sendPop
// writes it whole.
func (p *pushConsumer) recyclePop(r *popReq) {
	if !reuseRequests || r.timer != nil {
		return
	}
	res := &r.res
	unshare(res.Messages[:r.used])
	res.Reset()
	r.parked, r.used, r.freed = false, 0, true
	p.recycledPops++
	if invariantsOn {
		return // quarantined: any later use panics (livePop)
	}
	r.freed = false
	p.freePops = append(p.freePops, r)
}

// recycleHeld keeps h, which the client is done with (acked, dropped or
// expired, and out of its consume threads' hands), for a later delivery
// (any client's: the simulator's freeHeld) when nothing else can refer
// to it; its ack copied what it needed. An
// injected renewal's task refers to it (pinned), and so do an orderly
// group's lists and a renewal in flight (a nack): those are never
// recycled. With the invariants build tag h is poisoned instead (no
// client, no message) and never reused, so a later use fails.
func (p *pushConsumer) recycleHeld(s *sim, h *popHeld) {
	if !reuseRequests || h.pinned || p.ord != nil {
		return
	}
	p.recycledHeld++
	if invariantsOn {
		h.c, h.msg, h.loop = nil, nil, nil
		return
	}
	s.freeHeld = append(s.freeHeld, h)
}

// reply takes the answers but pops', which atClient hands to popResponse
// itself.
func (p *pushConsumer) reply(s *sim, r Request) {
	switch r := r.(type) {
	case *changeReq:
		adoptRenewal(r)
	case *pullReq:
		r.pq.p.reply(s, r)
	}
}

func (p *pushConsumer) timeout(s *sim, r Request) {
	if x, ok := r.(*pullReq); ok {
		x.pq.p.timeout(s, x)
		return
	}
	if r, ok := r.(*popReq); ok {
		s.traceLost(r, model.RTimeout)
		p.loopOf(r).schedule(s, pullTimeDelayWhenException)
	}
}

// popResponse is a pop's answer reaching the consumer. The messages are
// held as copies (deliverOwned), so r is recycled once they are.
func (p *pushConsumer) popResponse(s *sim, r *popReq) {
	l := p.loopOf(r)
	res := &r.res
	c := p.c
	e := s.event(model.EvReceived)
	e.Client, e.Code, e.Count = c.idx, int32(res.Code), int32(len(res.Messages))
	s.emitSlot()
	var chunk []*popHeld // the listener batch being filled (consumeMessageBatchMaxSize > 1)
	for i := range res.Messages {
		h := s.deliverOwned(c, &res.Messages[i], takeFree(&s.freeHeld))
		if !c.g.sub.MatchTags(h.msg.Tags) {
			// processPopResult: a tag the subscription does not name
			// exactly (the broker compares hash codes) is acked.
			p.drop(s, h, model.RNoMatch)
			p.recycleHeld(s, h)
			continue
		}
		if h.msg.ReconsumeTimes > p.set.MaxReconsumeTimes {
			// processPopResult: reconsumeTimes > maxReconsumeTimes is acked
			// and dropped on receipt.
			p.drop(s, h, model.RPushMaxReconsume)
			p.recycleHeld(s, h)
			continue
		}
		p.waitAck++
		h.loop = l
		l.waitAck++
		switch {
		case p.ord != nil:
			p.ord.take(c, h)
		case p.set.ConsumeMessageBatchMaxSize > 1:
			if chunk = append(chunk, h); len(chunk) == int(p.set.ConsumeMessageBatchMaxSize) {
				p.queueBatch(s, chunk)
				chunk = nil
			}
		default:
			c.buf = append(c.buf, h)
		}
		s.injectRenewals(c, h, clock.FromMillis(h.handle.NextVisibleTime()))
	}
	if len(chunk) > 0 {
		p.queueBatch(s, chunk)
	}
	s.startWork(c)
	d := repopDelay(res.Code)
	p.recyclePop(r)
	l.schedule(s, d)
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
	s.emitHeld(model.EvDrop, &h.held, policy)
	s.meter.finish(p.c.g, h.msg.ID)
	s.sendAck(h)
}

func (p *pushConsumer) timer(s *sim, x payload) {
	switch x := x.(type) {
	case *renewFault:
		s.faultRenew(p.c, x)
	case *assigned:
		x.tick(s)
	case *pullHeld:
		x.pq.p.timer(s, x)
	case *pullCommit:
		if p.pull != nil && x == &p.pull.commit {
			p.pull.timer(s, x)
		}
	}
}

// pushBatch is a listener batch of more than one message
// (consumeMessageBatchMaxSize > 1): one listener call on one thread.
type pushBatch struct {
	hs []*popHeld
	ms []*held // hs' held parts, for the core
}

func (b *pushBatch) base() *held      { return b.ms[0] }
func (b *pushBatch) members() []*held { return b.ms }

// queueBatch hands a listener batch (one pop's messages, in order) to the
// consume threads: one message as itself, more as a pushBatch.
func (p *pushConsumer) queueBatch(s *sim, hs []*popHeld) {
	if len(hs) == 1 {
		p.c.buf = append(p.c.buf, hs[0])
		return
	}
	s.cov.hit("listener-batch")
	b := &pushBatch{hs: hs, ms: make([]*held, len(hs))}
	for i, h := range hs {
		b.ms[i] = &h.held
	}
	p.c.buf = append(p.c.buf, b)
}

// beforeConsume is ConsumeRequest.run's check: now - popTime >=
// invisibleTime aborts; nothing is sent and the broker revives the
// message. A listener batch is checked by its first message's handle
// (the messages of one pop share popTime and invisibleTime) and skipped
// whole.
func (p *pushConsumer) beforeConsume(s *sim, w work) bool {
	switch w := w.(type) {
	case *popHeld: // the usual work: tested first
		if p.asg != nil && p.droppedWork(s, w) {
			return false
		}
		if w.expired(s) {
			p.expireBefore(s, w)
			p.recycleHeld(s, w)
			return false
		}
		return true
	case *pushBatch:
		if p.asg != nil && p.droppedWork(s, w) {
			return false
		}
		if !w.hs[0].expired(s) {
			return true
		}
		for _, h := range w.hs {
			p.expireBefore(s, h)
		}
		p.recycleBatch(s, w.hs)
		return false
	case *pullHeld:
		return w.pq.p.beforeConsume(s, w)
	}
	panic("sim: a push consumer's work of an unknown kind")
}

// expireBefore gives up h before its consumption: its lease ran out.
func (p *pushConsumer) expireBefore(s *sim, h *popHeld) {
	p.unwait(h)
	h.finished = true
	s.cov.hit("expired-before-consume")
	s.emitHeld(model.EvExpiredLocal, &h.held, model.RBefore)
	p.endQueue(s, h)
}

// expireAfter: the pop timed out during h's consumption; nothing is sent.
func (p *pushConsumer) expireAfter(s *sim, h *popHeld) {
	h.finished = true
	s.cov.hit("expired-after-consume")
	s.emitHeld(model.EvExpiredLocal, &h.held, model.RAfter)
	p.endQueue(s, h)
}

// endQueue: orderly, h's queue stops here (h failed or expired): the
// messages waiting behind it are given up.
func (p *pushConsumer) endQueue(s *sim, h *popHeld) {
	if p.ord == nil {
		return
	}
	for _, x := range p.ord.rest(h) {
		p.unwait(x)
		s.skip(x)
	}
}

// nextInQueue: orderly, h's queue goes on with its next waiting message.
// It inlines: only an orderly consumer pays a call (nextOrdered).
func (p *pushConsumer) nextInQueue(s *sim, h *popHeld) {
	if p.ord != nil {
		p.nextOrdered(s, h)
	}
}

// nextOrdered is nextInQueue for an orderly consumer.
func (p *pushConsumer) nextOrdered(s *sim, h *popHeld) {
	if p.ord.next(p.c, h) {
		s.startWork(p.c)
	}
}

// consumed is processConsumeResult for one message. A success is acked
// here, not in an ack of its own, of which consumed was the only caller
// (BenchmarkRunDefault: 1 394.1 -> 1 393.6 M instructions outside the
// runtime, callgrind).
func (p *pushConsumer) consumed(s *sim, w work) {
	h, ok := w.(*popHeld) // the usual work: tested first
	if !ok {
		p.consumedOther(s, w)
		return
	}
	if p.asg != nil && p.droppedWork(s, h) {
		return
	}
	p.unwait(h)
	if h.expired(s) {
		p.expireAfter(s, h)
		p.recycleHeld(s, h)
		return
	}
	if h.outcome.Succeeded() { // acked: its own ACK_MESSAGE, or a batch ack of one (BatchAck)
		if p.set.BatchAck {
			s.sendBatchAck(p.c, []*popHeld{h})
		} else {
			s.sendAck(h)
		}
		p.nextInQueue(s, h)
		p.recycleHeld(s, h)
		return
	}
	if p.ord != nil {
		p.orderlyFailed(s, h)
		return
	}
	p.retry(s, h)
}

// consumedOther is consumed for work other than one POP message: a
// listener batch, or a pulled message of the Pull side.
func (p *pushConsumer) consumedOther(s *sim, w work) {
	if h, ok := w.(*pullHeld); ok {
		h.pq.p.consumed(s, h)
		return
	}
	if p.asg != nil && p.droppedWork(s, w) {
		return
	}
	p.consumedBatch(s, w.(*pushBatch))
}

// consumedBatch is processConsumeResult for a listener batch. The
// listener processes its messages in order and reports the success
// prefix: it returns CONSUME_SUCCESS with ackIndex at the last message
// before the first failure (a failure at the first message is
// RECONSUME_LATER, ackIndex -1). The prefix is acked; every later
// message, consumed or not, is retried as a failed one. A batch whose
// first message's lease ran out sends nothing.
func (p *pushConsumer) consumedBatch(s *sim, b *pushBatch) {
	for _, h := range b.hs {
		p.unwait(h)
	}
	if b.hs[0].expired(s) {
		for _, h := range b.hs {
			p.expireAfter(s, h)
		}
		p.recycleBatch(s, b.hs)
		return
	}
	k := 0
	for k < len(b.hs) && b.hs[k].outcome.Succeeded() {
		k++
	}
	if p.set.BatchAck && k > 0 {
		s.sendBatchAck(p.c, b.hs[:k])
	} else {
		for _, h := range b.hs[:k] {
			s.sendAck(h)
		}
	}
	for _, h := range b.hs[k:] {
		p.retry(s, h)
	}
	p.recycleBatch(s, b.hs[:k])
}

// recycleBatch recycles a listener batch's messages that were acked or
// expired: the batch, its only other holder, is done with too. A
// retried one stays out (its nack refers to it).
func (p *pushConsumer) recycleBatch(s *sim, hs []*popHeld) {
	for _, h := range hs {
		p.recycleHeld(s, h)
	}
}

// retry is a concurrent group's answer to a failed message
// (RECONSUME_LATER; an exception is the same): the popDelayLevel backoff,
// or past maxReconsumeTimes the age rule.
func (p *pushConsumer) retry(s *sim, h *popHeld) {
	if h.msg.ReconsumeTimes >= p.set.MaxReconsumeTimes {
		p.checkNeedAckOrDelay(s, h)
		return
	}
	// delayLevelWhenNextConsume is 0, which means "use reconsumeTimes".
	p.nack(s, h, clock.Duration(popDelaySeconds(int(h.msg.ReconsumeTimes)))*clock.Second)
}

// orderlyFailed is the orderly consume service's answer to a failure
// (ConsumeMessagePopOrderlyService, as rocketmq-rust has it; Java's is a
// stub): at maxReconsumeTimes the client sends the message to the DLQ
// (sendMessageBack with MAX_RECONSUME_TIMES, which the broker writes to
// %DLQ%group) and acks it, and the queue goes on; below it,
// SUSPEND_CURRENT_QUEUE_A_MOMENT: the message and the rest of its queue's
// batch are renewed for suspendCurrentQueueTimeMillis, after which the
// broker hands them out again in order.
func (p *pushConsumer) orderlyFailed(s *sim, h *popHeld) {
	if h.msg.ReconsumeTimes >= p.set.MaxReconsumeTimes {
		p.sendToDLQ(s, h)
		s.sendAck(h)
		p.nextInQueue(s, h)
		return
	}
	s.cov.hit("order-suspend")
	p.nack(s, h, p.set.SuspendCurrentQueueTime)
	for _, x := range p.ord.rest(h) {
		p.unwait(x)
		p.nack(s, x, p.set.SuspendCurrentQueueTime)
	}
}

// sendToDLQ writes h's message to %DLQ%group (reconsumeTimes + 1) as the
// broker does for a send-back at its maximum.
func (p *pushConsumer) sendToDLQ(s *sim, h *popHeld) {
	c := p.c
	cp := h.msg.Clone()
	cp.Topic, cp.QueueID, cp.ReconsumeTimes = model.DLQTopic(c.g.name), 0, h.msg.ReconsumeTimes+1
	_ = cp.SetProperty(model.PropertyOriginMessageID, h.msg.UniqKey)
	r := sendBack{group: c.g.name, msg: cp}
	r.broker = h.broker // the broker the message came from
	s.serveNow(&r)
	s.cov.hit("dlq")
	s.emit(model.Event{Kind: model.EvDLQ, Client: c.idx, Msg: h.msg.ID, Lease: h.lease, Topic: cp.Topic, Queue: s.rt.global(h.broker, cp.Topic, 0), Offset: r.res.Offset, Attempt: h.msg.ReconsumeTimes})
	s.meter.finish(p.c.g, h.msg.ID)
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
