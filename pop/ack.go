package pop

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// AckRequest is an ack with its receipt handle already decoded: what
// AckMessageRequestHeader carries, minus the text. Topic is the real topic
// (the retry topic for a retry message); NewAckRequest builds it from the
// handle and the topic the client was shown.
type AckRequest struct {
	ClientID      string // the consumer's channel, named in refusals
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64
	Handle        model.ReceiptHandle
}

// NewAckRequest is the ack a client sends for a message it was shown under
// topic, with receipt handle h: the real topic (ReceiptHandle.getRealTopic),
// h's queue id and offset.
func NewAckRequest(group, topic string, h *model.ReceiptHandle) AckRequest {
	var r AckRequest
	r.SetFor(group, topic, h)
	return r
}

// SetFor makes r NewAckRequest(group, topic, h) in place, field by field:
// for a caller that recycles its requests (a literal assigned to *r is
// built in a temporary first, and the 72-byte handle copied twice).
func (r *AckRequest) SetFor(group, topic string, h *model.ReceiptHandle) {
	r.ClientID, r.ConsumerGroup, r.Topic = "", group, h.RealTopic(topic, group)
	r.QueueID, r.Offset, r.Handle = h.QueueID, h.QueueOffset, *h
}

// AckMessageRequestHeader is the ack as it travels (AckMessageRequestHeader):
// the receipt handle as its extraInfo text, for callers that hold wire
// strings. AckHeader decodes it; a malformed extraInfo is SYSTEM_ERROR, as
// upstream, never a panic.
type AckMessageRequestHeader struct {
	ClientID      string // the consumer's channel, named in refusals
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
	// Removed is the lease whose record the ack removed, 0 when it removed
	// none: RocketMQ answers SUCCESS either way, a stale or duplicate
	// handle deletes nothing and is silently accepted. With the cache
	// (enablePopBufferMerge) the delete goes by queue offset alone, so the
	// record removed may be a different lease than the handle was issued
	// with. On the checkpoint path: the lease whose ack the buffer merged
	// into its CK (it ended now).
	Removed model.LeaseID
	// Pending (checkpoint path) is the lease whose ack was written as an
	// ack message: it ends when the revive service pairs the ack with its
	// CK (a ReviveAcked revival). 0 when the ack names no live lease, or
	// the write failed (RocketMQ still answers SUCCESS).
	Pending model.LeaseID
	// Failures lists the store writes the faults failed (FS ack messages).
	Failures []WriteFailure
	// Lapsed are FIFO leases that ended in place during the call: those
	// due by now, and those of the acked message's batch that stop
	// blocking once it is acked. Woken is the request parked on the
	// queue's own key that an orderly ack leaving the queue unblocked
	// woke.
	Lapsed []Lapse
	Woken  []Wakeup
}

// Ack serves a single ack (AckMessageProcessor with the KV appendAckNew).
// The answer is written in place (validateAck, ack): built in each and
// returned by value, the 112-byte result was copied twice more per ack.
func (b *Broker) Ack(now clock.Time, req *AckRequest) (res AckResult) {
	b.touch(now.Millis())
	if b.validateAck(&res, req.ClientID, req.Topic, req.QueueID, req.Offset, true) {
		b.ack(&res, now.Millis(), req)
	}
	return res
}

// AckHeader serves an ack whose receipt handle is text: validated as Ack
// does, then decoded.
func (b *Broker) AckHeader(now clock.Time, hdr *AckMessageRequestHeader) (res AckResult) {
	b.touch(now.Millis())
	if !b.validateAck(&res, hdr.ClientID, hdr.Topic, hdr.QueueID, hdr.Offset, true) {
		return res
	}
	req := AckRequest{ClientID: hdr.ClientID, ConsumerGroup: hdr.ConsumerGroup, Topic: hdr.Topic, QueueID: hdr.QueueID, Offset: hdr.Offset}
	if err := model.ParseReceiptHandleInto(hdr.ExtraInfo, &req.Handle); err != nil {
		return AckResult{Code: model.SystemError, Remark: err.Error()}
	}
	b.ack(&res, now.Millis(), &req)
	return res
}

// ack is a validated ack req (its handle decoded); it writes the answer
// into *res, which must be zero. It and ackCK take the request, not its
// fields: passed on as seven arguments through the two calls, they cost
// ~20 instructions an ack in moves and spills.
func (b *Broker) ack(res *AckResult, nowMs int64, req *AckRequest) {
	lapsed := b.settleLapses(nowMs, nil)
	h := &req.Handle
	switch {
	case h.IsOrder():
		res.Code, res.Lapsed = model.Success, lapsed
		b.orderAck(nowMs, req.ConsumerGroup, req.Topic, req.QueueID, req.Offset, h.PopTime, h.InvisibleTime, res)
		return
	case !b.cfg.UsesKV():
		b.ackCK(res, nowMs, req)
	default:
		res.Code, res.Removed = model.Success, b.ackRecord(h.PopTime, h.InvisibleTime, req.ConsumerGroup, req.Topic, req.QueueID, req.Offset)
	}
	res.Lapsed = lapsed
}

// validateAck applies the checks of docs/rocketmq/kv-path.md §6.1 (ack:
// max offset inclusive) or §7 (changeInvisibleTime: max exclusive, and a
// 208 without a remark), with RocketMQ's remarks: it reports whether they
// pass, else writes the answer's code and remark into *res.
func (b *Broker) validateAck(res *AckResult, clientID, topicName string, qid int32, offset int64, ack bool) bool {
	t := b.topicNamed(topicName)
	if t == nil {
		res.Code, res.Remark = model.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please! %s", topicName, faqSuggestion)
		return false
	}
	if qid < 0 || qid >= t.cfg.ReadQueueNums {
		res.Code, res.Remark = model.MessageIllegal, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]", qid, topicName, t.cfg.ReadQueueNums, clientID)
		return false
	}
	q := t.queues[qid]
	hi := q.maxOffset()
	switch {
	case ack && (offset < q.min || offset > hi):
		res.Code, res.Remark = model.NoMessage, fmt.Sprintf("offset is illegal, key:%s@%d, commit:%d, store:%d~%d", topicName, qid, offset, q.min, hi)
		return false
	case !ack && (offset < q.min || offset >= hi):
		res.Code = model.NoMessage
		return false
	}
	return true
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

// BatchAckResult is the batch-ack response. The caller owns it and may
// lend it to every call: BatchAckMessages overwrites it and reuses Offsets'
// storage.
type BatchAckResult struct {
	Code    model.ResponseCode
	Remark  string
	Deleted int // records found and removed (FS: acks merged into a buffered CK)
	Pending int // FS: acked offsets written as a bAck message, still live
	Skipped int // offsets outside the queue's range, ignored
	// Offsets lists every acked offset in the request's order (entries,
	// then bits), with the lease each removed.
	Offsets []AckedOffset
	// Failures lists the store writes the faults failed (FS bAck messages).
	Failures []WriteFailure
	// Lapsed and Woken are the orderly acks' (AckResult), the lapses due
	// by now first.
	Lapsed []Lapse
	Woken  []Wakeup
}

// AckedOffset is one offset of a batch ack.
type AckedOffset struct {
	Topic   string // the real topic
	QueueID int32
	Offset  int64
	// Removed is the lease whose record the ack removed, 0 when none (as
	// AckResult.Removed); Pending the lease whose ack went into a bAck
	// message (as AckResult.Pending).
	Removed model.LeaseID
	Pending model.LeaseID
	// Skipped: the offset is outside the queue's range and was ignored.
	Skipped bool
}

// BatchAckMessages serves a batch ack (request code 200151, KV path) into
// res.
// Entries with reviveQueueId 999 are acked one offset at a time as
// orderly acks; an illegal one makes the answer MESSAGE_ILLEGAL.
func (b *Broker) BatchAckMessages(now clock.Time, acks []BatchAck, res *BatchAckResult) {
	*res = BatchAckResult{Offsets: res.Offsets[:0], Failures: res.Failures[:0], Lapsed: res.Lapsed[:0], Woken: res.Woken[:0]}
	nowMs := now.Millis()
	b.touch(nowMs)
	res.Lapsed = b.settleLapses(nowMs, res.Lapsed)
	if len(acks) == 0 {
		res.Code = model.NoMessage
		return
	}
	code, remark := model.Success, ""
	for i := range acks {
		a := &acks[i]
		if a.ReviveQueueID == model.PopOrderReviveQueue {
			topicName := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
			if q := b.queue(topicName, a.QueueID); q != nil {
				if c, r := b.batchAckOrder(nowMs, a, q, topicName, res); c != model.Success {
					code, remark = c, r
				}
			}
			continue
		}
		if b.cfg.UsesKV() {
			b.batchAckOne(a, res)
		} else {
			b.batchAckCK(nowMs, a, res)
		}
	}
	res.Code, res.Remark = code, remark
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
	e := AckedOffset{Topic: topicName, QueueID: a.QueueID, Offset: off}
	if off < q.min || off > q.maxOffset() {
		res.Skipped++
		e.Skipped = true
	} else if e.Removed = b.ackRecord(a.PopTime, a.InvisibleTime, a.ConsumerGroup, topicName, a.QueueID, off); e.Removed != 0 {
		res.Deleted++
	}
	res.Offsets = append(res.Offsets, e)
}

// ChangeInvisibleTimeRequest is a renewal with its receipt handle already
// decoded (ChangeInvisibleTimeRequestHeader minus the text). Topic is the
// real topic; InvisibleTime is truncated to milliseconds.
type ChangeInvisibleTimeRequest struct {
	ClientID      string // the consumer's channel, named in refusals
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64
	Handle        model.ReceiptHandle
	InvisibleTime clock.Duration
}

// NewChangeInvisibleTimeRequest is the renewal a client sends for a message
// it was shown under topic, with receipt handle h, asking for invisible
// more time from now.
func NewChangeInvisibleTimeRequest(group, topic string, h *model.ReceiptHandle, invisible clock.Duration) ChangeInvisibleTimeRequest {
	return ChangeInvisibleTimeRequest{ConsumerGroup: group, Topic: h.RealTopic(topic, group), QueueID: h.QueueID, Offset: h.QueueOffset,
		Handle: *h, InvisibleTime: invisible}
}

// ChangeInvisibleTimeRequestHeader is the renewal as it travels: the
// receipt handle as extraInfo text and the invisible time in milliseconds.
type ChangeInvisibleTimeRequestHeader struct {
	ClientID      string // the consumer's channel, named in refusals
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64
	ExtraInfo     string
	InvisibleTime int64 // ms
}

// ChangeInvisibleTimeResult is the response plus the new receipt handle the
// client builds from it.
type ChangeInvisibleTimeResult struct {
	Code          model.ResponseCode
	Remark        string
	PopTime       clock.Time     // now, truncated to the millisecond: the new handle's popTime
	InvisibleTime clock.Duration // as the broker used it (milliseconds)
	// Lease is the new record's lease; Deadline is when it ends: PopTime +
	// InvisibleTime.
	Lease     model.LeaseID
	Deadline  clock.Time
	ReviveQid int32
	Handle    model.ReceiptHandle
	// OldDeleted is RocketMQ's view: the old record was there and is gone
	// (removed, or replaced in place by a same-deadline renewal).
	OldDeleted bool
	// Removed is the lease the old record's delete removed, 0 when none:
	// from the cache by queue offset alone (so possibly not the lease the
	// handle names), else from the store by the handle's key (with the
	// #10276 bug on a same-deadline renewal, the new record itself: Lease).
	Removed model.LeaseID
	// Replaced is the lease of a record with the new record's key (same
	// visibility timeout, group, topic, queue and offset) that existed
	// before the call and is gone: overwritten by the write, or, on a fixed
	// same-deadline renewal, taken out just before it.
	Replaced model.LeaseID
	// Pending (FS) is the old lease when the ack of the old CK went into an
	// ack message (it ends when revive pairs it); Removed is then 0.
	Pending model.LeaseID
	// Failures lists the store writes the faults failed (FS: the new CK,
	// which makes the answer SYSTEM_ERROR, or the old CK's ack message).
	Failures []WriteFailure
	// Lapsed are FIFO leases that ended in place during the call: those
	// due by now come before the answer; a FIFO renewal to now lapses its
	// own new lease (Lease) at once, after the answer.
	Lapsed []Lapse
}

// ChangeInvisibleTime renews a lease (KV changeInvisibilityDuration): it
// writes a new record (popTime = now) to the store and deletes the old one
// from the cache by offset, else from the store by key. There is no
// existence check, as upstream: renewing an acked or revived message makes a
// record that will revive again.
func (b *Broker) ChangeInvisibleTime(now clock.Time, req *ChangeInvisibleTimeRequest) ChangeInvisibleTimeResult {
	b.touch(now.Millis())
	var v AckResult
	if !b.validateAck(&v, req.ClientID, req.Topic, req.QueueID, req.Offset, false) {
		return ChangeInvisibleTimeResult{Code: v.Code, Remark: v.Remark}
	}
	return b.change(now, req.ConsumerGroup, req.Topic, req.QueueID, req.Offset, &req.Handle, req.InvisibleTime.Millis())
}

// ChangeInvisibleTimeHeader serves a renewal whose receipt handle is text:
// validated as ChangeInvisibleTime does, then decoded (SYSTEM_ERROR when
// malformed).
func (b *Broker) ChangeInvisibleTimeHeader(now clock.Time, hdr *ChangeInvisibleTimeRequestHeader) ChangeInvisibleTimeResult {
	b.touch(now.Millis())
	var v AckResult
	if !b.validateAck(&v, hdr.ClientID, hdr.Topic, hdr.QueueID, hdr.Offset, false) {
		return ChangeInvisibleTimeResult{Code: v.Code, Remark: v.Remark}
	}
	var h model.ReceiptHandle
	if err := model.ParseReceiptHandleInto(hdr.ExtraInfo, &h); err != nil {
		return ChangeInvisibleTimeResult{Code: model.SystemError, Remark: err.Error()}
	}
	return b.change(now, hdr.ConsumerGroup, hdr.Topic, hdr.QueueID, hdr.Offset, &h, hdr.InvisibleTime)
}

// change is a validated renewal with a decoded handle; invisibleMs in ms.
func (b *Broker) change(now clock.Time, group, topicName string, qid int32, offset int64, h *model.ReceiptHandle, invisibleMs int64) ChangeInvisibleTimeResult {
	nowMs := now.Millis()
	lapsed := b.settleLapses(nowMs, nil)
	if h.IsOrder() {
		r := b.orderChange(nowMs, group, topicName, qid, offset, h, invisibleMs)
		r.Lapsed = append(lapsed, r.Lapsed...)
		return r
	}
	if !b.cfg.UsesKV() {
		r := b.changeCK(nowMs, group, topicName, qid, offset, h, invisibleMs)
		r.Lapsed = lapsed
		return r
	}
	c := b.changeKV(nowMs, group, topicName, qid, offset, h, invisibleMs)
	nh := model.ReceiptHandle{CkQueueOffset: offset, PopTime: nowMs, InvisibleTime: invisibleMs, ReviveQueueID: h.ReviveQueueID,
		RetryFlag: model.RetryFlagOf(topicName), BrokerName: h.BrokerName, QueueID: qid, QueueOffset: offset, CommitLogOffset: -1}
	return ChangeInvisibleTimeResult{Code: model.Success, PopTime: clock.FromMillis(nowMs), InvisibleTime: clock.MillisDuration(invisibleMs),
		Lease: c.lease, Deadline: clock.FromMillis(nowMs + invisibleMs), ReviveQid: h.ReviveQueueID, Handle: nh,
		OldDeleted: c.deleted, Removed: c.removed, Replaced: c.replaced, Lapsed: lapsed}
}
