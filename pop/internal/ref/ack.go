package ref

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// checkOffset is the ack (inclusive max, docs/rocketmq/kv-path.md §6.2) and changeInvisibleTime
// (exclusive max, docs/rocketmq/kv-path.md §7) validation; 0 means it passed.
func (b *Broker) checkOffset(name string, qid int32, offset int64, inclusiveMax bool) model.ResponseCode {
	t := b.topics[name]
	if t == nil {
		return model.TopicNotExist
	}
	if qid < 0 || qid >= t.cfg.ReadQueueNums {
		return model.MessageIllegal
	}
	q := t.queues[qid]
	if offset < q.min || offset > q.max() || !inclusiveMax && offset == q.max() {
		return model.NoMessage
	}
	return model.Success
}

// Ack serves a single ack with a decoded handle (docs/rocketmq/kv-path.md §6.2, KV appendAckNew).
func (b *Broker) Ack(now clock.Time, req *pop.AckRequest) pop.AckResult {
	b.touch(now.Millis())
	if c := b.checkOffset(req.Topic, req.QueueID, req.Offset, true); c != model.Success {
		return pop.AckResult{Code: c}
	}
	return b.ack(now.Millis(), req, req.Handle)
}

// AckHeader serves an ack whose handle is text: checked, then decoded.
func (b *Broker) AckHeader(now clock.Time, hdr *pop.AckMessageRequestHeader) pop.AckResult {
	b.touch(now.Millis())
	if c := b.checkOffset(hdr.Topic, hdr.QueueID, hdr.Offset, true); c != model.Success {
		return pop.AckResult{Code: c}
	}
	h, err := model.ParseReceiptHandle(hdr.ExtraInfo)
	if err != nil {
		return pop.AckResult{Code: model.SystemError}
	}
	return b.ack(now.Millis(), &pop.AckRequest{ConsumerGroup: hdr.ConsumerGroup, Topic: hdr.Topic, QueueID: hdr.QueueID, Offset: hdr.Offset}, h)
}

func (b *Broker) ack(nowMs int64, req *pop.AckRequest, h model.ReceiptHandle) pop.AckResult {
	if h.IsOrder() {
		return pop.AckResult{Code: model.InvalidParameter} // FIFO is not built
	}
	if !b.cfg.UsesKV() {
		return b.fsAck(nowMs, req, h)
	}
	return pop.AckResult{Code: model.Success, Removed: b.ackOne(h.PopTime, h.InvisibleTime, req.ConsumerGroup, req.Topic, req.QueueID, req.Offset)}
}

// ackOne is PopConsumerService.ackAsync: the record goes from the cache by
// offset alone, else from the store by its exact key. Only an ack that
// deleted a record settles the offset for the commit offset: a stale handle
// leaves the renewed record owed.
func (b *Broker) ackOne(popTime, invisible int64, group, name string, qid int32, offset int64) model.LeaseID {
	b.stats.Acked++
	k := qk{group, name, qid}
	key := model.PopConsumerRecord{PopTime: popTime, InvisibleTime: invisible, GroupID: group, TopicID: name, QueueID: qid, Offset: offset}
	var l model.LeaseID
	if b.cfg.EnablePopBufferMerge {
		l = b.cacheRemove(k, offset)
	}
	if l == 0 {
		l = b.storeDelete(key)
		b.stats.RecordDeletes++
	}
	if l != 0 {
		b.settled(k, offset)
		return l
	}
	b.stats.AckMisses++
	return 0
}

// BatchAckMessages serves a batch ack (docs/rocketmq/kv-path.md §6.3, KV).
func (b *Broker) BatchAckMessages(now clock.Time, acks []pop.BatchAck, out *pop.BatchAckResult) {
	b.touch(now.Millis())
	*out = b.batchAck(now.Millis(), acks)
}

func (b *Broker) batchAck(nowMs int64, acks []pop.BatchAck) pop.BatchAckResult {
	if len(acks) == 0 {
		return pop.BatchAckResult{Code: model.NoMessage}
	}
	res := pop.BatchAckResult{Code: model.Success}
	for _, a := range acks {
		if !b.cfg.UsesKV() {
			b.fsBatchAck(nowMs, a, &res)
			continue
		}
		name := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
		q := b.queue(name, a.QueueID)
		if q == nil {
			continue
		}
		for i := 0; i < 64*len(a.Bits); i++ {
			if a.Bits[i/64]&(1<<uint(i%64)) == 0 {
				continue
			}
			o := a.StartOffset + int64(i)
			e := pop.AckedOffset{Topic: name, QueueID: a.QueueID, Offset: o}
			if o < q.min || o > q.max() || a.ReviveQueueID == model.PopOrderReviveQueue {
				res.Skipped++
				e.Skipped = true
			} else if e.Removed = b.ackOne(a.PopTime, a.InvisibleTime, a.ConsumerGroup, name, a.QueueID, o); e.Removed != 0 {
				res.Deleted++
			}
			res.Offsets = append(res.Offsets, e)
		}
	}
	return res
}

// ChangeInvisibleTime renews a lease (docs/rocketmq/kv-path.md §7, KV changeInvisibilityDuration):
// a new record (popTime now, retryFlag 0) goes to the store, then the old one
// is deleted from the cache by offset, else from the store by key. A new key
// equal to the old one is the same record: the write replaces it (OldDeleted
// tells whether it was there), unless the #10276 bug deletes the write.
func (b *Broker) ChangeInvisibleTime(now clock.Time, req *pop.ChangeInvisibleTimeRequest) pop.ChangeInvisibleTimeResult {
	b.touch(now.Millis())
	if c := b.checkOffset(req.Topic, req.QueueID, req.Offset, false); c != model.Success {
		return pop.ChangeInvisibleTimeResult{Code: c}
	}
	return b.change(now, req, req.Handle, req.InvisibleTime.Millis())
}

// ChangeInvisibleTimeHeader serves a renewal whose handle is text.
func (b *Broker) ChangeInvisibleTimeHeader(now clock.Time, hdr *pop.ChangeInvisibleTimeRequestHeader) pop.ChangeInvisibleTimeResult {
	b.touch(now.Millis())
	if c := b.checkOffset(hdr.Topic, hdr.QueueID, hdr.Offset, false); c != model.Success {
		return pop.ChangeInvisibleTimeResult{Code: c}
	}
	h, err := model.ParseReceiptHandle(hdr.ExtraInfo)
	if err != nil {
		return pop.ChangeInvisibleTimeResult{Code: model.SystemError}
	}
	req := &pop.ChangeInvisibleTimeRequest{ConsumerGroup: hdr.ConsumerGroup, Topic: hdr.Topic, QueueID: hdr.QueueID, Offset: hdr.Offset}
	return b.change(now, req, h, hdr.InvisibleTime)
}

func (b *Broker) change(now clock.Time, req *pop.ChangeInvisibleTimeRequest, h model.ReceiptHandle, invisible int64) pop.ChangeInvisibleTimeResult {
	if h.IsOrder() || invisible < 0 {
		return pop.ChangeInvisibleTimeResult{Code: model.InvalidParameter}
	}
	nowMs := now.Millis()
	if !b.cfg.UsesKV() {
		return b.fsChange(nowMs, req, h, invisible)
	}
	k := qk{req.ConsumerGroup, req.Topic, req.QueueID}
	nu := model.PopConsumerRecord{PopTime: nowMs, InvisibleTime: invisible, GroupID: k.group, TopicID: k.topic, QueueID: k.qid, Offset: req.Offset}
	old := model.PopConsumerRecord{PopTime: h.PopTime, InvisibleTime: h.InvisibleTime, GroupID: k.group, TopicID: k.topic, QueueID: k.qid, Offset: req.Offset}
	same := sameKey(&nu, &old) && !b.cfg.Bugs.SameDeadlineChangeInvisible
	var replaced, removed model.LeaseID
	if same {
		replaced = b.storeDelete(old) // the write below replaces it in place
	}
	n := b.grant(nu)
	if l := b.storePut(n); l != 0 {
		replaced = l // with the #10276 bug: the old record
	}
	b.stats.Changed++
	if b.cfg.EnablePopBufferMerge {
		removed = b.cacheRemove(k, req.Offset)
	}
	if removed == 0 && !same {
		removed = b.storeDelete(old) // with the #10276 bug: the new record
		b.stats.RecordDeletes++
	}
	deleted := same && replaced != 0 || removed != 0
	return pop.ChangeInvisibleTimeResult{Code: model.Success, PopTime: clock.FromMillis(nowMs), InvisibleTime: clock.MillisDuration(invisible),
		Lease: n.Lease, Deadline: clock.FromMillis(nowMs + invisible), ReviveQid: h.ReviveQueueID,
		OldDeleted: deleted, Removed: removed, Replaced: replaced,
		Handle: model.ReceiptHandle{CkQueueOffset: req.Offset, PopTime: nowMs, InvisibleTime: invisible, ReviveQueueID: h.ReviveQueueID,
			RetryFlag: model.RetryFlagOf(req.Topic), BrokerName: h.BrokerName, QueueID: req.QueueID, QueueOffset: req.Offset, CommitLogOffset: -1}}
}
