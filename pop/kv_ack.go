package pop

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
