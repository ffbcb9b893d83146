package sim

import (
	"popsim/model"
	"popsim/pop"
)

// What the two POP clients (the push consumer and the simple consumer)
// share: a message held under a lease and a receipt handle, and the ack
// and renewal requests they send for it.

// popHeld is a message a POP client holds: its lease and receipt handle.
type popHeld struct {
	held
	handle model.ReceiptHandle
	loop   *popLoop // the push consumer's pop loop it came from (broker-assigned queues; assign.go)
	pin    int32    // its handle's pin while its client may renew with it (pins.go)
}

// ownedHeld is a popHeld with its own copy of the message, for a client
// that reuses the result it was popped into (the simple consumer's
// receives, the push consumer's pops).
type ownedHeld struct {
	popHeld
	m model.Message
}

// deliverOwned traces a popped message reaching client c and returns it
// held, for a client that reuses the result m is in: the held message is
// a copy (its Body and Properties shared with m until the client clears
// the result's storage before reusing it). It reuses h when h is not nil:
// an ownedHeld's popHeld the client is done with, whose msg is that
// ownedHeld's own copy (deliverOwned made it so, and nothing moves an
// owned held's msg).
func (s *sim) deliverOwned(c *consumer, m *pop.PoppedMessage, h *popHeld) *popHeld {
	if h == nil {
		o := &ownedHeld{m: m.Message}
		s.deliverAs(&o.popHeld, c, m, &o.m)
		return &o.popHeld
	}
	msg := h.msg
	*msg = m.Message
	s.deliverAs(h, c, m, msg)
	return h
}

// deliverAs fills h for popped message m, held as msg, and traces its
// delivery.
func (s *sim) deliverAs(h *popHeld, c *consumer, m *pop.PoppedMessage, msg *model.Message) {
	if s.pins != nil {
		s.pins.drop(&h.pin) // a recycled holder's, were it still pinned
	}
	// Cleared, then field by field: a composite literal is built aside
	// and copied over.
	*h = popHeld{}
	x := &h.held
	x.c, x.epoch, x.msg, x.lease, x.topic = c, c.epoch, msg, m.Lease, livesIn(m, c.g.name)
	x.queue, x.broker, x.offset, x.deliveredAt = m.Handle.QueueID, s.rt.brokerOf(m.Handle.BrokerName), m.Handle.QueueOffset, s.q.now()
	h.handle = m.Handle
	if s.pins != nil {
		s.pins.add(&h.pin, x.handlePin(pinHeld))
	}
	s.deliver(x, m.Message.ReconsumeTimes, m.Message.Topic)
}

// unshare drops the Body and Properties storage of answer slots ms (a
// reused pop's or receive's), so that the next answer written into them
// does not write into what the held copies of the earlier messages share
// (the broker appends a message's body and properties onto its slot's own,
// pop.copyMessage). Only those two need it: every answer overwrites a
// slot's other fields whole (the message, its handle, lease and deadline),
// so clearing the whole slot would be wasted.
func unshare(ms []pop.PoppedMessage) {
	for i := range ms {
		m := &ms[i].Message
		m.Body, m.Properties = nil, nil
	}
}

// expired is the client's view of its lease: nextVisibleTime <= now by its
// own clock.
func (h *popHeld) expired(s *sim) bool {
	return h.handle.IsExpired(h.c.now(s).Millis())
}

// adopt takes the new handle and lease of a renewal.
func (h *popHeld) adopt(r *pop.ChangeInvisibleTimeResult) {
	h.handle = r.Handle
	if r.Lease != 0 { // an orderly renewal that made no lease leaves the old one named
		h.lease = r.Lease
	}
}

// adoptRenewal: a client's own renewal was answered; the client renews
// from the new handle on, unless it is done with the message.
func adoptRenewal(r *changeReq) {
	if r.why == changeFault && r.res.Code == model.Success && !r.h.finished && r.h.epoch == r.h.c.epoch {
		r.h.adopt(&r.res)
	}
}

// sendAck acks a held message with its own handle: the request
// pop.NewAckRequest makes, written field by field into the recycled ack
// (whose request fillAck leaves to its caller), its topic the group's
// kept name for a retry message (group.realTopic) instead of a new
// string every ack. It takes and fills the ack itself (both inline),
// where a call of newAck did: a call fewer an ack (BenchmarkRunDefault:
// 1 398.6 -> 1 397.7 M instructions outside the runtime, callgrind).
func (s *sim) sendAck(h *popHeld) {
	r := s.takeAck()
	s.fillAck(r, h, &h.handle, h.lease)
	h.ackRequest(&r.req)
	s.sendAckOf(h, r)
}

// ackRequest writes over q, field by field, h's ack with its own
// handle: pop.NewAckRequest(group, shown topic, handle).
func (h *popHeld) ackRequest(q *pop.AckRequest) {
	g := h.c.g
	q.ClientID, q.ConsumerGroup, q.Topic = "", g.name, g.realTopic(h.msg.Topic, h.handle.RetryFlag)
	q.QueueID, q.Offset, q.Handle = h.handle.QueueID, h.handle.QueueOffset, h.handle
}

// sendAckOf traces the ack r of held message h and sends it.
func (s *sim) sendAckOf(h *popHeld, r *ackReq) {
	h.finished = true
	e := s.event(model.EvAck)
	e.Client, e.Msg, e.Lease = h.c.idx, h.msg.ID, r.lease
	s.emitSlot()
	s.send(r, 0)
}

// realTopic is model.RealTopic(topic, g.name, flag): the topic a message
// shown under topic lives in, by its handle's retry flag. A retry
// message shown under the group's own topic (every one but a leaked
// retry name's, #11195) lives in one of the group's two retry topics,
// whose names the group builds once and keeps.
//
// It inlines: a message read from its normal topic (flag NormalTopic, most
// acks') is answered without a call, as RealTopic answers it.
func (g *group) realTopic(topic string, flag model.RetryType) string {
	if flag == model.NormalTopic {
		return topic
	}
	return g.retryTopic(topic, flag)
}

// retryTopic is realTopic of a message read from a retry topic.
func (g *group) retryTopic(topic string, flag model.RetryType) string {
	i := int(flag) - 1
	if i < 0 || i >= len(g.retry) || topic != g.topic {
		return model.RealTopic(topic, g.name, flag)
	}
	if g.retry[i] == "" {
		g.retry[i] = model.RealTopic(topic, g.name, flag)
	}
	return g.retry[i]
}

// changePurpose says why a renewal (changeInvisibleTime) was sent, which
// decides what its answer is for.
type changePurpose uint8

const (
	changeNack       changePurpose = iota // RECONSUME_LATER backoff: fire and forget
	changeRenew                           // the proxy's auto-renew: the proxy takes the new handle
	changeFault                           // injected edge renewal: the client adopts the new handle
	changeFaultStale                      // injected late renewal with an old handle: fire and forget
)

// newChange builds a renewal of lease (of message msg, held as h when the
// client holds it) and traces it; the caller sends it.
func (s *sim) newChange(c *consumer, h *popHeld, msg model.MsgID, req pop.ChangeInvisibleTimeRequest, lease model.LeaseID, why changePurpose, reason model.Reason) *changeReq {
	r := &changeReq{req: req, h: h, msg: msg, lease: lease, why: why}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossChange, reply: why == changeRenew || why == changeFault, broker: s.rt.brokerOf(req.Handle.BrokerName)}
	s.pins.add(&r.pin, pin{topic: req.Topic, broker: r.broker, queue: req.QueueID, offset: req.Offset, what: pinRequest})
	s.emit(model.Event{Kind: model.EvRenew, Client: c.idx, Msg: msg, Lease: lease, Span: req.InvisibleTime, Reason: reason})
	return r
}

// sendNack renews h's lease for the retry backoff (RECONSUME_LATER): fire
// and forget, as upstream only logs its failure.
func (s *sim) sendNack(h *popHeld, req pop.ChangeInvisibleTimeRequest, lease model.LeaseID) {
	h.finished = true
	s.send(s.newChange(h.c, h, h.msg.ID, req, lease, changeNack, model.RNack), 0)
}

// changeReason is the trace's reason for an injected renewal at edge.
func changeReason(why changePurpose, edge int) model.Reason {
	if why == changeFault || why == changeFaultStale {
		return [...]model.Reason{renewSameDeadline: model.RSameDeadline, renewAtExpiry: model.RAtExpiry, renewAfterRevive: model.RAfterRevive}[edge]
	}
	return model.RNack
}
