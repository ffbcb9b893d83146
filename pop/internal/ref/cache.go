package ref

import (
	"sort"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

func keyOf(r *model.PopConsumerRecord) qk { return qk{r.GroupID, r.TopicID, r.QueueID} }

// cacheAdd caches a freshly popped record; a record at the same queue and
// offset is replaced and its lease returned. A queue joins cacheOrder when
// it is first filled and leaves it only when it is taken whole
// (flushCached).
func (b *Broker) cacheAdd(r pop.LeasedRecord) model.LeaseID {
	k := keyOf(&r.Record)
	known := false
	for _, o := range b.cacheOrder {
		known = known || o == k
	}
	if !known {
		b.cacheOrder = append(b.cacheOrder, k)
	}
	for i := range b.cache {
		if keyOf(&b.cache[i].Record) == k && b.cache[i].Record.Offset == r.Record.Offset {
			old := b.cache[i].Lease
			b.cache[i] = r
			return old
		}
	}
	b.cache = append(b.cache, r)
	return 0
}

// cacheRemove deletes the cached record of queue k at offset, ignoring its
// popTime, as the KV ack does, and returns its lease (0 when none).
func (b *Broker) cacheRemove(k qk, offset int64) model.LeaseID {
	for i := range b.cache {
		if keyOf(&b.cache[i].Record) == k && b.cache[i].Record.Offset == offset {
			l := b.cache[i].Lease
			b.cache = append(b.cache[:i], b.cache[i+1:]...)
			return l
		}
	}
	return 0
}

// cachedOf returns queue k's cached records by offset.
func (b *Broker) cachedOf(k qk) []pop.LeasedRecord {
	var out []pop.LeasedRecord
	for _, r := range b.cache {
		if keyOf(&r.Record) == k {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Record.Offset < out[j].Record.Offset })
	return out
}

// cacheMin is getMinOffsetInBuffer: the queue's smallest cached offset, -1
// when it has none.
func (b *Broker) cacheMin(k qk) int64 {
	if rs := b.cachedOf(k); len(rs) > 0 {
		return rs[0].Record.Offset
	}
	return -1
}

// flushCached moves a queue's cached records to the store (clearCache). It
// returns how many moved and the leases of stored records they overwrote.
func (b *Broker) flushCached(k qk) (int, []model.LeaseID) {
	rs := b.cachedOf(k)
	var replaced []model.LeaseID
	for _, r := range rs {
		b.cacheRemove(k, r.Record.Offset)
		if l := b.storePut(r); l != 0 {
			replaced = append(replaced, l)
		}
	}
	for i, o := range b.cacheOrder {
		if o == k {
			b.cacheOrder = append(b.cacheOrder[:i], b.cacheOrder[i+1:]...)
			break
		}
	}
	return len(rs), replaced
}

// lockTimedOut is isLockTimeout: no pop has taken the group@topic lock
// within the lock timeout.
func (b *Broker) lockTimedOut(group, topicName string, nowMs int64) bool {
	t, ok := b.locks[pk{group, topicName}]
	return !ok || nowMs-t > b.cfg.PopConsumerLockTimeout
}

// CleanupCache is PopConsumerCache.cleanupRecords (docs/rocketmq/kv-path.md §8).
func (b *Broker) CleanupCache(now clock.Time) pop.CacheResult {
	b.touch(now.Millis())
	var res pop.CacheResult
	b.failed, b.pullWakes = nil, nil
	nowMs := now.Millis()
	for _, k := range append([]qk(nil), b.cacheOrder...) {
		if b.lockTimedOut(k.group, model.ParseNormalTopic(k.topic, k.group), nowMs) {
			n, replaced := b.flushCached(k)
			res.Flushed += n
			res.Replaced = append(res.Replaced, replaced...)
			res.Offline++
			continue
		}
		b.cleanupQueue(now, k, &res)
	}
	b.stats.CacheFlushed += int64(res.Flushed)
	res.Failures, res.PullWoken = b.failed, b.pullWakes
	return res
}

// cleanupQueue stages the records whose deadline passed (revived here) or
// that stayed popCkStayBufferTime (moved to the store).
func (b *Broker) cleanupQueue(now clock.Time, k qk, res *pop.CacheResult) {
	nowMs := now.Millis()
	for _, r := range b.cachedOf(k) {
		vt := r.Record.VisibilityTimeout()
		if vt > nowMs && r.Record.PopTime+b.cfg.PopCkStayBufferTime > nowMs {
			continue
		}
		b.cacheRemove(k, r.Record.Offset)
		if vt > nowMs {
			if l := b.storePut(r); l != 0 {
				res.Replaced = append(res.Replaced, l)
			}
			res.Flushed++
			continue
		}
		rv, woken := b.revive(now, r)
		if rv.Outcome == pop.ReviveRetried && b.cfg.Bugs.CacheCleanupIgnoresReviveFailure {
			rv = b.drop(r.Record, rv)
		} else {
			rv = b.backoff(now, r, rv)
		}
		res.Revives = append(res.Revives, rv)
		res.Woken = append(res.Woken, woken...)
	}
	if b.cfg.Bugs.CommitOffsetLag {
		if m := b.cacheMin(k); m >= 0 {
			b.commit[k] = m
		}
	}
}
