package pop

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// Ack and changeInvisibleTime of orderly (FIFO) handles, reviveQid 999:
// AckMessageProcessor.ackOrderly (FS) / ackOrderlyNew (KV) and
// ChangeInvisibleTimeProcessor.processChangeInvisibleTimeForOrder(New).
// Both paths run the same steps here; they differ upstream only in the
// lock they spin on (the queue's, or group@topic's), which a
// single-threaded broker always gets, and in the FS in-flight counter.

// commitAndNext is ConsumerOrderInfoManager.commitAndNext: ackOffset+1
// without an OrderInfo; -1 (illegal) for an empty list or an offset not in
// it; -2 (nothing to do) for another pop's popTime; else the ack's bit is
// set, the timer re-armed and the next offset to commit returned. It also
// returns the lease the ack ended (0: none live).
func (b *Broker) commitAndNext(nowMs int64, k qkey, ackOffset, popTime int64) (int64, model.LeaseID) {
	q := b.order.get(k)
	switch {
	case q == nil:
		return ackOffset + 1, 0
	case len(q.info.OffsetList) == 0:
		return -1, 0
	case popTime != q.info.PopTime:
		return -2, 0
	}
	i := q.info.Index(ackOffset)
	if i < 0 {
		return -1, 0
	}
	q.info.CommitOffsetBit |= 1 << uint(i)
	ended := b.endOrderLease(q, i)
	next := q.info.NextOffset()
	b.armLockFree(nowMs, q)
	return next, ended
}

// orderAck is one orderly ack (ackOrderly / ackOrderlyNew) of a validated
// request: an offset below the commit offset is already acked; otherwise
// commitAndNext decides, a next offset is committed (unless a reset is
// pending) and, when the queue no longer blocks, one request parked on the
// queue's own key is woken. Lapses it causes and the wakeup go into the
// result.
func (b *Broker) orderAck(nowMs int64, group, topicName string, qid int32, ackOffset, popTime, invisibleMs int64, res *AckResult) {
	b.stats.Acked++
	k := qkey{b.names.pair(group, topicName), qid}
	if ackOffset < b.queryOffset(k) {
		b.stats.AckMisses++
		return // already past: SUCCESS, nothing happens
	}
	next, ended := b.commitAndNext(nowMs, k, ackOffset, popTime)
	res.Removed = ended
	if ended == 0 {
		b.stats.AckMisses++
	}
	if q := b.order.get(k); q != nil {
		res.Lapsed = b.reschedule(nowMs, q, res.Lapsed)
	}
	switch {
	case next >= 0:
		s := b.offsets.at(k)
		if s.has&hasReset == 0 {
			b.storeCommit(s, next)
		}
		if !b.checkBlock(nowMs, k, "", invisibleMs) {
			if w, ok := b.polls.notifyKey(k, nil, true); ok {
				res.Woken = append(res.Woken, w)
			}
		}
	case next == -1:
		res.Code = model.MessageIllegal
		res.Remark = fmt.Sprintf("offset is illegal, key:%s %s %d, old:%d, commit:%d, next:%d", group, topicName, qid, b.queryOffset(k), ackOffset, next)
		return // FS: the in-flight counter is not decremented
	}
	if !b.cfg.UsesKV() {
		b.inflightSub(k, popTime, 1)
	}
}

// orderChange is the orderly changeInvisibleTime of a validated request:
// an offset below the commit offset answers SUCCESS and changes nothing,
// echoing the handle's popTime, invisibleTime and reviveQid so that the
// handle stays orderly (with FifoChangeBelowCommitEmptyHandle, as
// upstream, the answer has no header fields: the handle the client builds
// from them has popTime and invisibleTime 0 and reviveQid 0, and its
// renewal takes the unordered path); otherwise the offset's next-visible
// time becomes now + the requested time (a no-op without an OrderInfo or
// with another pop's popTime) and the answer keeps the original popTime,
// with invisibleTime nextVisible - popTime, so that a later ack still
// matches the OrderInfo.
//
// Leases: a renewal of an index not acked whose lease is live replaces
// it; one whose lease lapsed blocks the queue again, and the renewer holds
// it under a new lease; either way the new lease lasts until the new
// next-visible time (when that is now, it lapses at once, after the
// answer). Anything else makes no lease (Lease 0).
func (b *Broker) orderChange(nowMs int64, group, topicName string, qid int32, offset int64, h *model.ReceiptHandle, invisibleMs int64) ChangeInvisibleTimeResult {
	k := qkey{b.names.pair(group, topicName), qid}
	res := ChangeInvisibleTimeResult{Code: model.Success}
	if offset < b.queryOffset(k) {
		res.Handle = model.ReceiptHandle{CkQueueOffset: offset, RetryFlag: model.RetryFlagOf(topicName), BrokerName: h.BrokerName,
			QueueID: qid, QueueOffset: offset, CommitLogOffset: -1}
		if !b.cfg.Bugs.FifoChangeBelowCommitEmptyHandle {
			res.PopTime, res.InvisibleTime, res.ReviveQid = clock.FromMillis(h.PopTime), clock.MillisDuration(h.InvisibleTime), h.ReviveQueueID
			res.Handle.PopTime, res.Handle.InvisibleTime, res.Handle.ReviveQueueID = h.PopTime, h.InvisibleTime, h.ReviveQueueID
		}
		return res
	}
	nv := nowMs + invisibleMs
	if q := b.order.get(k); q != nil && q.info.PopTime == h.PopTime {
		q.info.SetNextVisible(offset, nv)
		if i := q.info.Index(offset); i >= 0 && q.info.IsNotAck(i) && (q.leases[i] != 0 || nv > nowMs) {
			res.Removed = b.endOrderLease(q, i)
			res.OldDeleted = res.Removed != 0
			q.leases[i], q.deadlines[i] = b.newLease(), nv
			b.order.liveCount++
			res.Lease, res.Deadline = q.leases[i], clock.FromMillis(nv)
			b.stats.Changed++
		}
		b.armLockFree(nowMs, q)
		res.Lapsed = b.reschedule(nowMs, q, res.Lapsed)
	}
	res.PopTime, res.InvisibleTime, res.ReviveQid = clock.FromMillis(h.PopTime), clock.MillisDuration(nv-h.PopTime), h.ReviveQueueID
	res.Handle = model.ReceiptHandle{CkQueueOffset: offset, PopTime: h.PopTime, InvisibleTime: nv - h.PopTime, ReviveQueueID: h.ReviveQueueID,
		RetryFlag: model.RetryFlagOf(topicName), BrokerName: h.BrokerName, QueueID: qid, QueueOffset: offset, CommitLogOffset: -1}
	return res
}

// batchAckOrder acks, one offset at a time, the set bits of an orderly
// BatchAck entry (reviveQueueId 999) within the queue's bounds; an illegal
// offset makes the whole answer MESSAGE_ILLEGAL, as upstream's shared
// response.
func (b *Broker) batchAckOrder(nowMs int64, a *BatchAck, q *queue, topicName string, res *BatchAckResult) (code model.ResponseCode, remark string) {
	code = model.Success
	for w, word := range a.Bits {
		for bit := 0; word != 0; bit++ {
			if word&1 != 0 {
				off := a.StartOffset + int64(w*64+bit)
				e := AckedOffset{Topic: topicName, QueueID: a.QueueID, Offset: off}
				if off < q.min || off > q.maxOffset() {
					res.Skipped++
					e.Skipped = true
				} else {
					r := AckResult{Code: model.Success}
					b.orderAck(nowMs, a.ConsumerGroup, topicName, a.QueueID, off, a.PopTime, a.InvisibleTime, &r)
					if e.Removed = r.Removed; r.Removed != 0 {
						res.Deleted++
					}
					res.Lapsed, res.Woken = append(res.Lapsed, r.Lapsed...), append(res.Woken, r.Woken...)
					if r.Code != model.Success {
						code, remark = r.Code, r.Remark
					}
				}
				res.Offsets = append(res.Offsets, e)
			}
			word >>= 1
		}
	}
	return code, remark
}
