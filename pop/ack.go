package pop

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// AckRequest is AckMessageRequestHeader. Topic is the real topic: the retry
// topic for a retry message (ReceiptHandle.RealTopic).
type AckRequest struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64
	ExtraInfo     string
}

// AckResult is the ack response.
type AckResult struct {
	Code   model.ResponseCode
	Remark string
	// Deleted reports whether a record was found and removed. RocketMQ
	// answers SUCCESS either way: a stale or duplicate handle deletes
	// nothing and is silently accepted.
	Deleted bool
}

// Ack serves a single ack (AckMessageProcessor with the KV appendAckNew).
func (b *Broker) Ack(now clock.Time, req *AckRequest) AckResult {
	if res, ok := b.validateAck(req.Topic, req.QueueID, req.Offset, true); !ok {
		return res
	}
	var h model.ReceiptHandle
	if err := model.ParseReceiptHandleInto(req.ExtraInfo, &h); err != nil {
		return AckResult{Code: model.SystemError, Remark: err.Error()}
	}
	if h.IsOrder() {
		return AckResult{Code: model.InvalidParameter, Remark: "orderly (FIFO) ack is not implemented by this popsim engine yet"}
	}
	return AckResult{Code: model.Success, Deleted: b.ackRecord(h.PopTime, h.InvisibleTime, req.ConsumerGroup, req.Topic, req.QueueID, req.Offset)}
}

// validateAck applies the checks of spec 2.5 (inclusive max) or 2.8
// (exclusive max, for changeInvisibleTime).
func (b *Broker) validateAck(topicName string, qid int32, offset int64, inclusiveMax bool) (AckResult, bool) {
	t := b.topicNamed(topicName)
	if t == nil {
		return AckResult{Code: model.TopicNotExist, Remark: fmt.Sprintf("topic[%s] not exist", topicName)}, false
	}
	if qid < 0 || qid >= t.cfg.ReadQueueNums {
		return AckResult{Code: model.MessageIllegal, Remark: fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", qid, topicName, t.cfg.ReadQueueNums)}, false
	}
	q := t.queues[qid]
	hi := q.maxOffset()
	if offset < q.min || offset > hi || (!inclusiveMax && offset == hi) {
		return AckResult{Code: model.NoMessage, Remark: fmt.Sprintf("offset is illegal, key:%s@%d, commit:%d, store:%d~%d", topicName, qid, offset, q.min, hi)}, false
	}
	return AckResult{}, true
}

// BatchAck is one entry of BatchAckMessageRequestBody: the acked offsets of
// one pop batch on one queue. Topic is the normal topic; RetryFlag selects
// the real one.
type BatchAck struct {
	ConsumerGroup string
	Topic         string
	RetryFlag     model.RetryType
	StartOffset   int64
	QueueID       int32
	ReviveQueueID int32
	PopTime       int64
	InvisibleTime int64
	// Bits: bit i set means offset StartOffset+i is acked.
	Bits []uint64
}

// SetBit marks offset StartOffset+i acked.
func (a *BatchAck) SetBit(i int) {
	for len(a.Bits) <= i/64 {
		a.Bits = append(a.Bits, 0)
	}
	a.Bits[i/64] |= 1 << uint(i%64)
}

// BatchAckResult is the batch-ack response.
type BatchAckResult struct {
	Code    model.ResponseCode
	Remark  string
	Deleted int // records found and removed
	Skipped int // offsets outside the queue's range, ignored
}

// BatchAckMessages serves a batch ack (request code 200151, KV path).
func (b *Broker) BatchAckMessages(now clock.Time, acks []BatchAck) BatchAckResult {
	if len(acks) == 0 {
		return BatchAckResult{Code: model.NoMessage, Remark: "body is empty"}
	}
	var res BatchAckResult
	for i := range acks {
		b.batchAckOne(&acks[i], &res)
	}
	res.Code = model.Success
	return res
}

func (b *Broker) batchAckOne(a *BatchAck, res *BatchAckResult) {
	topicName := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
	q := b.queue(topicName, a.QueueID)
	if q == nil {
		return // min or max offset is -1: skipped silently
	}
	for w, word := range a.Bits {
		for bit := 0; word != 0; bit++ {
			if word&1 != 0 {
				b.batchAckOffset(a, q, topicName, a.StartOffset+int64(w*64+bit), res)
			}
			word >>= 1
		}
	}
}

func (b *Broker) batchAckOffset(a *BatchAck, q *queue, topicName string, off int64, res *BatchAckResult) {
	if off < q.min || off > q.maxOffset() || a.ReviveQueueID == model.PopOrderReviveQueue {
		res.Skipped++
		return
	}
	if b.ackRecord(a.PopTime, a.InvisibleTime, a.ConsumerGroup, topicName, a.QueueID, off) {
		res.Deleted++
	}
}

// ChangeInvisibleTimeRequest is ChangeInvisibleTimeRequestHeader. Topic is
// the real topic.
type ChangeInvisibleTimeRequest struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64
	ExtraInfo     string
	InvisibleTime int64
}

// ChangeInvisibleTimeResult is the response plus the new receipt handle the
// client builds from it.
type ChangeInvisibleTimeResult struct {
	Code          model.ResponseCode
	Remark        string
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
	Handle        model.ReceiptHandle
	// OldDeleted reports whether the old record was found and removed.
	OldDeleted bool
}

// ChangeInvisibleTime renews a lease (KV changeInvisibilityDuration): it
// writes a new record (popTime = now) to the store and deletes the old one
// from the cache by offset, else from the store by key. There is no
// existence check, as upstream: renewing an acked or revived message makes a
// record that will revive again.
func (b *Broker) ChangeInvisibleTime(now clock.Time, req *ChangeInvisibleTimeRequest) ChangeInvisibleTimeResult {
	if v, ok := b.validateAck(req.Topic, req.QueueID, req.Offset, false); !ok {
		return ChangeInvisibleTimeResult{Code: v.Code, Remark: v.Remark}
	}
	var h model.ReceiptHandle
	if err := model.ParseReceiptHandleInto(req.ExtraInfo, &h); err != nil {
		return ChangeInvisibleTimeResult{Code: model.SystemError, Remark: err.Error()}
	}
	if h.IsOrder() {
		return ChangeInvisibleTimeResult{Code: model.InvalidParameter, Remark: "orderly (FIFO) changeInvisibleTime is not implemented by this popsim engine yet"}
	}
	if req.InvisibleTime < 0 {
		return ChangeInvisibleTimeResult{Code: model.InvalidParameter, Remark: fmt.Sprintf("invisibleTime %d: want >= 0", req.InvisibleTime)}
	}
	nowMs := now.Millis()
	pair := b.names.pair(req.ConsumerGroup, req.Topic)
	k := qkey{pair, req.QueueID}
	nk := recKey{vt: nowMs + req.InvisibleTime, pair: pair, qid: req.QueueID, offset: req.Offset}
	ok := recKey{vt: h.PopTime + h.InvisibleTime, pair: pair, qid: req.QueueID, offset: req.Offset}
	// Fixed #10276: a write to the old key replaces it in place, so the old
	// record is taken out first only to learn whether it was there.
	sameKey := nk == ok && !b.cfg.Bugs.SameDeadlineChangeInvisible
	var deleted bool
	if sameKey {
		deleted = b.index.delete(ok)
	}
	b.index.put(rec{recKey: nk, invisible: req.InvisibleTime})
	b.stats.Changed++
	switch {
	case b.cfg.EnablePopBufferMerge && b.cache.removeOffset(k, req.Offset):
		deleted = true
	case !sameKey:
		deleted = b.index.delete(ok)
	}
	nh := model.ReceiptHandle{CkQueueOffset: req.Offset, PopTime: nowMs, InvisibleTime: req.InvisibleTime, ReviveQueueID: h.ReviveQueueID,
		RetryFlag: model.RetryFlagOf(req.Topic), BrokerName: h.BrokerName, QueueID: req.QueueID, QueueOffset: req.Offset, CommitLogOffset: -1}
	return ChangeInvisibleTimeResult{Code: model.Success, PopTime: nowMs, InvisibleTime: req.InvisibleTime, ReviveQid: h.ReviveQueueID, Handle: nh, OldDeleted: deleted}
}
