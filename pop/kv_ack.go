package pop

import "popsim/model"

// ackRecord is PopConsumerService.ackAsync: delete from the cache by queue
// offset (ignoring popTime), else the exact store key. It returns the lease
// of the record it removed, 0 when none: with the cache, not necessarily
// the lease the handle was issued with.
func (b *Broker) ackRecord(popTime, invisible int64, group, topicName string, qid int32, offset int64) model.LeaseID {
	b.stats.Acked++
	pair, ok := b.names.lookup(group, topicName)
	if !ok {
		b.stats.AckMisses++
		b.stats.RecordDeletes++ // the store delete finds nothing
		return 0
	}
	k := qkey{pair, qid}
	var l model.LeaseID
	if b.cfg.EnablePopBufferMerge {
		l = b.cache.removeOffset(k, offset)
	}
	if l == 0 {
		l = b.index.delete(recKey{vt: popTime + invisible, pair: pair, qid: qid, offset: offset})
		b.stats.RecordDeletes++
	}
	if l != 0 {
		return l
	}
	b.stats.AckMisses++
	return 0
}

// changed is what a KV renewal did to the records.
type changed struct {
	lease    model.LeaseID // the new record's
	removed  model.LeaseID // the old record's delete removed this one
	replaced model.LeaseID // a record with the new record's key was overwritten
	deleted  bool          // RocketMQ's "the old record was there"
}

// changeKV is the KV changeInvisibilityDuration: a new record (popTime now)
// goes to the store, then the old one is deleted from the cache by offset,
// else from the store by the handle's key.
func (b *Broker) changeKV(nowMs int64, group, topicName string, qid int32, offset int64, h *model.ReceiptHandle, invisibleMs int64) changed {
	pair := b.names.pair(group, topicName)
	k := qkey{pair, qid}
	nk := recKey{vt: nowMs + invisibleMs, pair: pair, qid: qid, offset: offset}
	ok := recKey{vt: h.PopTime + h.InvisibleTime, pair: pair, qid: qid, offset: offset}
	c := changed{lease: b.newLease()}
	// Fixed #10276: a write to the old key replaces it in place, so the old
	// record is taken out first only to learn whether it was there.
	sameKey := nk == ok && !b.cfg.Bugs.SameDeadlineChangeInvisible
	if sameKey {
		c.replaced = b.index.delete(ok)
		c.deleted = c.replaced != 0
	}
	b.stats.RecordPuts++
	if l := b.index.put(rec{recKey: nk, lease: c.lease, invisible: invisibleMs}); l != 0 {
		c.replaced = l // with the #10276 bug: the old record itself
	}
	b.stats.Changed++
	if b.cfg.EnablePopBufferMerge {
		c.removed = b.cache.removeOffset(k, offset)
	}
	if c.removed == 0 && !sameKey {
		c.removed = b.index.delete(ok) // with the #10276 bug: the new record
		b.stats.RecordDeletes++
	}
	c.deleted = c.deleted || c.removed != 0
	return c
}
