package pop

import (
	"strings"

	"popsim/clock"
	"popsim/model"
)

// Ack, batch ack and changeInvisibleTime on the checkpoint (FS) path
// (AckMessageProcessor.appendAck, ChangeInvisibleTimeProcessor.
// appendCheckPointThenAckOrigin). Validation is the KV path's.

// ackCK is appendAck for one validated ack req: merged into the buffered CK
// when the buffer takes it, else written to the revive topic as an ack
// message delivered at popTime + invisibleTime. RocketMQ answers SUCCESS
// either way, a failed write included. It writes the answer into *res,
// zero (as ack's), where an AckResult returned was built in the callee's
// result slot field by field and copied on in 16-byte moves straddling
// those stores, a failed store forwarding per ack.
func (b *Broker) ackCK(res *AckResult, nowMs int64, req *AckRequest) {
	group, topicName, qid, offset, h := req.ConsumerGroup, req.Topic, req.QueueID, req.Offset, &req.Handle
	b.stats.Acked++
	a := model.AckMsg{AckOffset: offset, StartOffset: h.CkQueueOffset, ConsumerGroup: group, Topic: topicName, QueueID: qid,
		PopTime: h.PopTime, BrokerName: h.BrokerName}
	res.Code = model.Success
	k := qkey{b.names.pair(group, topicName), qid}
	if b.cfg.EnablePopBufferMerge || blankName(h.BrokerName) {
		one := [1]int64{offset}
		var kb [keyBuf]byte
		key := a.AppendMergeKey(kb[:0])
		if m := b.addAk(nowMs, &a, key, one[:]); m.accepted {
			b.inflightSub(k, h.PopTime, 1)
			if len(m.ended) > 0 {
				res.Removed = m.ended[0]
			} else {
				b.stats.AckMisses++
			}
			return
		}
		res.Pending = b.writeAck(nowMs, &a, key, h.ReviveQueueID, h.PopTime+h.InvisibleTime, &res.Failures)
	} else {
		// addAk merges nothing without the buffer, and writeAckKeyed
		// takes the merge key from the memo (ackKeyOf) as a rule
		res.Pending = b.writeAckKeyed(nowMs, &a, h.ReviveQueueID, h.PopTime+h.InvisibleTime, &res.Failures)
	}
	b.inflightSub(k, h.PopTime, 1)
	if res.Pending == 0 {
		b.stats.AckMisses++
	}
}

// writeAck writes an ack message and returns the live lease it will end
// when revive pairs it (findAcked): 0 when it names none, the write
// failed, or it reaches the revive queue before the lease's CK (a CK still
// in the timer when a late ack goes in at once), where the round skips it.
// key is a.MergeKey().
func (b *Broker) writeAck(nowMs int64, a *model.AckMsg, key []byte, rq int32, deliverMs int64, fails *[]WriteFailure) model.LeaseID {
	if b.putAck(nowMs, a, key, rq, deliverMs, fails) != putOK {
		return 0
	}
	return b.pendAck(b.findAcked(key, rq, a.AckOffset, b.arrival))
}

// writeAckKeyed is writeAck for an ack that names a broker (ackKeyOf),
// without its key's bytes.
func (b *Broker) writeAckKeyed(nowMs int64, a *model.AckMsg, rq int32, deliverMs int64, fails *[]WriteFailure) model.LeaseID {
	if b.timerRefuses(nowMs, deliverMs) {
		return 0 // putAck's refusal
	}
	mkey, mh, e, named := b.ackKeyOf(a)
	// putAckKeyed, with the entry and named CK the memo gave
	b.stats.AckPuts++
	if b.putRevive(nowMs, rq, ackKind, deliverMs, b.ackBody(a, mkey, mh, e, named, nil), fails) != putOK {
		return 0
	}
	// the put adds no entry and drops none: e is still mkey's
	return b.pendAck(b.ackedBy(e, rq, a.AckOffset, b.arrival))
}

// pendAck marks lease i of ref pending (setPending at the write's
// arrival) and returns it; 0 when ref is nil.
func (b *Broker) pendAck(ref *ckRef, i int) model.LeaseID {
	if ref == nil {
		return 0
	}
	return b.setPending(ref, i, b.arrival)
}

// blankName reports strings.TrimSpace(s) == "" (a broker name the ack
// does not give), at once for a name that starts with an ASCII letter,
// digit or sign.
func blankName(s string) bool {
	if len(s) > 0 && s[0]-'!' < 0x80-'!' { // ' ' < s[0] < 0x80
		return false
	}
	return strings.TrimSpace(s) == ""
}

// batchAckCK is appendAck for one BatchAck entry: the set bits within the
// queue's bounds become one BatchAckMsg (with the request body's broker
// name, which popsim takes to be this broker's), merged into the buffered
// CK or written as a bAck message.
func (b *Broker) batchAckCK(nowMs int64, a *BatchAck, res *BatchAckResult) {
	topicName := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
	q := b.queue(topicName, a.QueueID)
	if q == nil {
		return // min or max offset is -1: skipped silently
	}
	first := len(res.Offsets)
	var offs []int64
	for w, word := range a.Bits {
		for bit := 0; word != 0; bit++ {
			if word&1 != 0 {
				off := a.StartOffset + int64(w*64+bit)
				e := AckedOffset{Topic: topicName, QueueID: a.QueueID, Offset: off}
				if off < q.min || off > q.maxOffset() {
					res.Skipped++
					e.Skipped = true
				} else {
					offs = append(offs, off)
				}
				res.Offsets = append(res.Offsets, e)
			}
			word >>= 1
		}
	}
	if len(offs) == 0 {
		return
	}
	b.stats.Acked += int64(len(offs))
	m := model.BatchAckMsg{AckMsg: model.AckMsg{AckOffset: -1, StartOffset: a.StartOffset, ConsumerGroup: a.ConsumerGroup, Topic: topicName,
		QueueID: a.QueueID, PopTime: a.PopTime, BrokerName: b.cfg.BrokerName}, AckOffsetList: offs}
	k := qkey{b.names.pair(a.ConsumerGroup, topicName), a.QueueID}
	defer b.inflightSub(k, a.PopTime, int64(len(offs)))
	var kb [keyBuf]byte
	key := m.AppendMergeKey(kb[:0])
	if mg := b.addAk(nowMs, &m.AckMsg, key, offs); mg.accepted {
		b.markBatch(res, first, mg.ended, func(e *AckedOffset, l model.LeaseID) { e.Removed = l; res.Deleted++ })
		return
	}
	if b.putBatchAck(nowMs, &m, key, a.ReviveQueueID, a.PopTime+a.InvisibleTime, &res.Failures) != putOK {
		b.stats.AckMisses += int64(len(offs))
		return
	}
	type hit struct {
		ref *ckRef
		i   int
	}
	hits := make([]hit, len(offs))
	for j, o := range offs { // all found before any is marked pending
		hits[j].ref, hits[j].i = b.findAcked(key, a.ReviveQueueID, o, b.arrival)
	}
	j := 0
	for x := first; x < len(res.Offsets); x++ {
		e := &res.Offsets[x]
		if e.Skipped {
			continue
		}
		if h := hits[j]; h.ref != nil {
			e.Pending = b.setPending(h.ref, h.i, b.arrival)
			res.Pending++
		} else {
			b.stats.AckMisses++
		}
		j++
	}
}

// markBatch sets, on the non-skipped entries from first on, the leases a
// merge ended: each ended lease belongs to the entry of its offset.
func (b *Broker) markBatch(res *BatchAckResult, first int, ended []model.LeaseID, set func(*AckedOffset, model.LeaseID)) {
	for _, l := range ended {
		r, i := b.refOf(l)
		off := r.ck().AckOffsetByIndex(i)
		for x := first; x < len(res.Offsets); x++ {
			if e := &res.Offsets[x]; !e.Skipped && e.Offset == off && e.Removed == 0 {
				set(e, l)
				break
			}
		}
	}
	for x := first; x < len(res.Offsets); x++ {
		if e := &res.Offsets[x]; !e.Skipped && e.Removed == 0 {
			b.stats.AckMisses++
		}
	}
}

// refOf finds the ckRef holding lease l and its index.
func (b *Broker) refOf(l model.LeaseID) (*ckRef, int) {
	if r := b.ckl.byFirst.holding(l); r != nil {
		return r, int(l - r.first)
	}
	panic("pop: internal: lease without its checkpoint")
}

// changeCK is appendCheckPointThenAckOrigin: a new one-message CK (popTime
// now, or the first later millisecond its merge key is free: freeMergeKey;
// the old revive queue) written at once, bypassing the buffer; then
// the old CK's ack (ackOrigin), merged or written. A failed CK write
// answers SYSTEM_ERROR and keeps the old lease; a failed ack write is
// only logged upstream.
func (b *Broker) changeCK(nowMs int64, group, topicName string, qid int32, offset int64, h *model.ReceiptHandle, invisibleMs int64) ChangeInvisibleTimeResult {
	rq := h.ReviveQueueID
	ck := model.PopCheckPoint{Num: 1, PopTime: nowMs, InvisibleTime: invisibleMs, StartOffset: offset, CID: group, Topic: topicName,
		QueueID: qid, QueueOffsetDiff: b.arena.int32s(1), BrokerName: h.BrokerName}
	mkey, mh, _ := b.freeMergeKey(&ck)
	pt := ck.PopTime
	d := b.newCkBody(&ck)
	var res ChangeInvisibleTimeResult
	if st := b.putCk(nowMs, d, mkey, mh, nil, rq, b.lease.last+1, &res.Failures); st != putOK {
		res.Code, res.Remark = model.SystemError, "append checkpoint failed: the store refused the CK message"
		if st == putFailed {
			res.Remark = "append checkpoint failed: the CK message was not written"
		}
		return res
	}
	ref := b.newRefKeyed(d, rq, mkey)
	ref.stored, ref.at = true, b.arrival
	b.stats.Changed++
	a := model.AckMsg{AckOffset: offset, StartOffset: h.CkQueueOffset, ConsumerGroup: group, Topic: topicName, QueueID: qid,
		PopTime: h.PopTime, BrokerName: h.BrokerName}
	one := [1]int64{offset}
	var kb [keyBuf]byte
	key := a.AppendMergeKey(kb[:0])
	if m := b.addAk(nowMs, &a, key, one[:]); m.accepted {
		if len(m.ended) > 0 {
			res.Removed = m.ended[0]
		}
	} else {
		res.Pending = b.writeAck(nowMs, &a, key, rq, h.PopTime+h.InvisibleTime, &res.Failures)
	}
	res.Code, res.PopTime, res.InvisibleTime = model.Success, clock.FromMillis(pt), clock.MillisDuration(invisibleMs)
	res.Lease, res.Deadline, res.ReviveQid = ref.first, clock.FromMillis(ck.ReviveTime()), rq
	res.OldDeleted = res.Removed != 0 || res.Pending != 0
	res.Handle = model.ReceiptHandle{CkQueueOffset: offset, PopTime: pt, InvisibleTime: invisibleMs, ReviveQueueID: rq,
		RetryFlag: model.RetryFlagOf(topicName), BrokerName: h.BrokerName, QueueID: qid, QueueOffset: offset, CommitLogOffset: -1}
	return res
}

// freeMergeKey moves a new CK (a renewal's, or a pop's) to the first
// millisecond from its popTime at which no live CK (buffered, in the timer
// or in a revive queue, not yet processed by revive) has its merge key, so
// that no ack meant for one CK can pair with the other. Upstream keeps
// popTime = now (SameMillisChangeInvisible): a renewal in the renewed CK's
// millisecond makes a CK with its key, and so does a pop, after a restart,
// of an offset that a stale handle's renewal wrote a CK for in that
// millisecond.
// It returns the merge key it settled on, for the caller's wrapper, its
// hash, and its entry in the merge-key table (nil when none), which
// holds no live CK but with SameMillisChangeInvisible. The key is built
// on the stack and looked up from there; only the one settled on is made
// a string (internKey), and the table remembers the lookup for the
// caller's next, by that string.
func (b *Broker) freeMergeKey(ck *model.PopCheckPoint) (string, uint64, *mkEntry) {
	var kb [keyBuf]byte
	kbs := ck.AppendMergeKey(kb[:0])
	if b.cfg.Bugs.SameMillisChangeInvisible {
		h := mkHash(kbs)
		return b.arena.strs.str(kbs), h, b.ckl.keys.probeBytes(kbs, h)
	}
	// The table is probed without its remembered lookup: that is of the
	// previous operation's key, nearly never a new CK's (a compare of the
	// bytes wasted per CK).
	t := &b.ckl.keys
	h := mkHash(kbs)
	e := t.probeBytes(kbs, h)
	for e != nil && e.refs.len() > 0 {
		ck.PopTime++
		kbs = ck.AppendMergeKey(kb[:0])
		h = mkHash(kbs)
		e = t.probeBytes(kbs, h)
	}
	key := b.arena.strs.str(kbs)
	if e != nil {
		key = e.key // a buffered CK's key (the buggy engine's conflict): the same string
	}
	t.remember(key, h, e)
	return key, h, e
}
