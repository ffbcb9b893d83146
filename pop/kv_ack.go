package pop

import "popsim/model"

// ackRecord is PopConsumerService.ackAsync: delete from the cache by queue
// offset (ignoring popTime), else the exact store key.
func (b *Broker) ackRecord(popTime, invisible int64, group, topicName string, qid int32, offset int64) bool {
	b.stats.Acked++
	pair, ok := b.names.lookup(group, topicName)
	if !ok {
		b.stats.AckMisses++
		return false
	}
	k := qkey{pair, qid}
	// Only an ack that deleted a record settles the offset: a stale handle
	// (after changeInvisibleTime) leaves the renewed record in flight, and
	// the commit offset must not pass it.
	if (b.cfg.EnablePopBufferMerge && b.cache.removeOffset(k, offset)) ||
		b.index.delete(recKey{vt: popTime + invisible, pair: pair, qid: qid, offset: offset}) {
		b.windowDone(k, offset)
		return true
	}
	b.stats.AckMisses++
	return false
}

// changeKV is the KV changeInvisibilityDuration: a new record (popTime now)
// goes to the store, then the old one is deleted from the cache by offset,
// else from the store by the handle's key. It reports whether an old record
// was removed.
func (b *Broker) changeKV(nowMs int64, group, topicName string, qid int32, offset int64, h *model.ReceiptHandle, invisibleMs int64) bool {
	pair := b.names.pair(group, topicName)
	k := qkey{pair, qid}
	nk := recKey{vt: nowMs + invisibleMs, pair: pair, qid: qid, offset: offset}
	ok := recKey{vt: h.PopTime + h.InvisibleTime, pair: pair, qid: qid, offset: offset}
	// Fixed #10276: a write to the old key replaces it in place, so the old
	// record is taken out first only to learn whether it was there.
	sameKey := nk == ok && !b.cfg.Bugs.SameDeadlineChangeInvisible
	var deleted bool
	if sameKey {
		deleted = b.index.delete(ok)
	}
	b.index.put(rec{recKey: nk, invisible: invisibleMs})
	b.stats.Changed++
	switch {
	case b.cfg.EnablePopBufferMerge && b.cache.removeOffset(k, offset):
		deleted = true
	case !sameKey:
		deleted = b.index.delete(ok)
	}
	return deleted
}
