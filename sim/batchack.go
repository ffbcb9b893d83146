package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// The push consumer's batch ack (PopPushSettings.BatchAck): the success
// prefix of a listener batch acked with one BATCH_ACK_MESSAGE (200151),
// as rocketmq-rust's ack_batch_async sends it. The request carries one
// entry per pop batch and queue (the handles' ckQueueOffset, popTime,
// invisibleTime, reviveQueueId and retry flag), a bit per acked offset
// counted from the entry's start offset. The trace is the same as for
// single acks: an ack event per message on the client, an acked event
// per message at the engine naming the lease the message's offset ended.

// batchAckReq is a batch ack, fire and forget; its push consumer reuses
// it once the engine served it (recycle), with its slices' storage.
type batchAckReq struct {
	reqBase
	acks  []pop.BatchAck
	items []batchAckItem
	keys  []batchAckKey // acks' keys, while the request is built
	res   pop.BatchAckResult
	// freed: recycled. With the invariants build tag a recycled batch ack
	// is never reused and any later use of it panics (liveReq).
	freed bool
}

// batchAckItem is one message of a batch ack.
type batchAckItem struct {
	msg         model.MsgID
	lease       model.LeaseID
	deliveredAt clock.Time
	topic       string // the real topic (a retry topic for a retry message)
	queue       int32
	offset      int64
}

// batchAckKey is what a message's entry shares: its handle's fields
// other than its own offset.
type batchAckKey struct {
	topic         string
	retry         model.RetryType
	queue         int32
	start         int64
	popTime       int64
	invisibleTime int64
	reviveQueue   int32
}

// sendBatchAck acks hs (one listener batch's success prefix, all of c's)
// in one batch ack request.
func (s *sim) sendBatchAck(c *consumer, hs []*popHeld) {
	p := c.cl.(*pushConsumer)
	r := p.newBatchAck()
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossAck, broker: hs[0].broker} // one pop's messages: one broker
	keys := r.keys
	for _, h := range hs {
		h.finished = true
		s.emit(model.Event{Kind: model.EvAck, Client: c.idx, Msg: h.msg.ID, Lease: h.lease})
		hd := &h.handle
		k := batchAckKey{topic: h.msg.Topic, retry: hd.RetryFlag, queue: hd.QueueID, start: hd.CkQueueOffset,
			popTime: hd.PopTime, invisibleTime: hd.InvisibleTime, reviveQueue: hd.ReviveQueueID}
		i := 0
		for i < len(keys) && keys[i] != k {
			i++
		}
		if i == len(keys) {
			keys = append(keys, k)
			r.addAck(pop.BatchAck{ConsumerGroup: c.g.name, Topic: k.topic, RetryFlag: k.retry, StartOffset: k.start,
				QueueID: k.queue, ReviveQueueID: k.reviveQueue, PopTime: k.popTime, InvisibleTime: k.invisibleTime})
		}
		r.acks[i].SetBit(int(hd.QueueOffset - hd.CkQueueOffset))
		r.items = append(r.items, batchAckItem{msg: h.msg.ID, lease: h.lease, deliveredAt: h.deliveredAt,
			topic: hd.RealTopic(h.msg.Topic, c.g.name), queue: hd.QueueID, offset: hd.QueueOffset})
	}
	r.keys = keys
	s.cov.hit("batch-ack")
	s.send(r, 0)
}

// addAck appends entry a, its bits cleared, on the storage of an earlier
// entry's bits when a reused request has one there.
func (r *batchAckReq) addAck(a pop.BatchAck) {
	n := len(r.acks)
	if n == cap(r.acks) {
		r.acks = append(r.acks, a)
		return
	}
	r.acks = r.acks[:n+1]
	a.Bits = r.acks[n].Bits[:0]
	r.acks[n] = a
}

// newBatchAck is an empty batch ack request: one the engine served
// (recycle), or a new one.
func (p *pushConsumer) newBatchAck() *batchAckReq {
	if r := takeFree(&p.freeBatchAcks); r != nil {
		return r
	}
	return new(batchAckReq)
}

// recycle keeps a served batch ack for its consumer's next one: nothing
// refers to it once served (no answer goes back, no timer; its answer's
// loss was traced before, lostMore), as an ack's. Its slices keep their
// storage, emptied (the broker keeps none of it).
func (r *batchAckReq) recycle(*sim) {
	if !reuseRequests {
		return
	}
	p := r.c.cl.(*pushConsumer)
	r.reqBase, r.freed = reqBase{}, true
	r.acks, r.items, r.keys = r.acks[:0], r.items[:0], r.keys[:0]
	if invariantsOn {
		return // quarantined: any later use panics (liveReq)
	}
	r.freed = false
	p.freeBatchAcks = append(p.freeBatchAcks, r)
}

// lost: a batch ack's loss is traced per message (lostMore).
func (*batchAckReq) lost(*model.Event, model.Reason) bool { return false }

// lostMore traces the loss of the request or its answer for each message,
// as a single ack's.
func (r *batchAckReq) lostMore(s *sim, why model.Reason) {
	liveReq(r, "a loss")
	for _, it := range r.items {
		e := model.Event{Kind: model.EvAckLost, Client: r.c.idx, Msg: it.msg, Lease: it.lease, Reason: why}
		if why == model.RResponse {
			e.Kind, e.Reason = model.EvAckResponseLost, model.RNone
		}
		s.emit(e)
	}
}

// batchAck serves a batch ack: each message's acked event names what its
// offset ended.
func (a *rocketMQ) batchAck(now clock.Time, r *batchAckReq, out *Outcome) {
	liveReq(r, "the engine")
	a.batchAckRequests++
	a.b.BatchAckMessages(now, r.acks, &r.res)
	res := &r.res
	a.traceLapses(now, res.Lapsed, 0)
	for _, it := range r.items {
		ended := model.LeaseID(0)
		for i := range res.Offsets {
			o := &res.Offsets[i]
			if o.Offset == it.offset && o.QueueID == it.queue && o.Topic == it.topic {
				ended = o.Removed
				if ended == 0 {
					ended = o.Pending
				}
				break
			}
		}
		a.emit(now, model.Event{Kind: model.EvAcked, Client: r.c.idx, Msg: it.msg, Lease: it.lease, Ended: ended, Code: int32(res.Code)})
		if _, self := a.selfEnded[it.lease]; self && res.Code == model.Success {
			delete(a.selfEnded, it.lease)
			ended = it.lease
		}
		if ended != 0 {
			a.s.meter.acked(r.c.g, it.msg, it.deliveredAt, now)
		}
	}
	a.wake(now, res.Woken, out)
	out.answered(r)
}
