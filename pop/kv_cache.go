package pop

import (
	"popsim/clock"
	"popsim/model"
)

// cache is PopConsumerCache (KV path, enablePopBufferMerge): freshly popped
// records stay in memory, by queue and offset, until they are acked, age
// out, or their consumer goes offline. Queues are kept in creation order so
// cleanup walks them deterministically.
type cache struct {
	queues []*cacheQueue
	// rows[pair][qid] is the queue's cacheQueue, nil when the cache holds
	// none: a dense index like the offsets' slot rows, because every stage
	// of an all-queue pop asks for its queue's smallest cached offset
	// (caughtUp), where a map lookup per visited queue cost more than the
	// rest of the check. Rows grow on demand and are never shrunk.
	rows [][]*cacheQueue
	size int64
	// marks are the offsets whose idle and quiet marks (idle.go) a change
	// of a queue's cached records clears: the smallest cached offset is
	// part of caughtUp, and an idle queue has no cached record.
	marks *offsets
}

type cacheQueue struct {
	key  qkey
	recs offsetRecs
}

// offsetRecs holds one queue's cached records in offset order: a slice
// whose live part starts at head, deleted records left in place as
// tombstones (lease 0: every live record has a lease) and squeezed out
// when they outnumber the live ones or the slice would have to grow. Pops
// append at the end and acks mostly delete near the front, so in steady
// state it neither allocates nor moves records, where a B-tree emptied and
// refilled every batch allocated its nodes again each time.
type offsetRecs struct {
	recs []rec
	head int
	live int
}

// find returns where offset is, or would be, and whether an entry (live or
// a tombstone) holds it. The entries' offsets increase by at least one
// each, so offset is at most its distance from head's offset past head:
// entries mostly hold consecutive offsets (a pop caches a run of a queue;
// acks leave tombstones in place), where that is its place, and an ack,
// mostly near the front, searches a few entries. The end, where a pop
// appends, is checked first; the search runs between both bounds.
func (q *offsetRecs) find(offset int64) (int, bool) {
	lo, hi := q.head, len(q.recs)
	if lo == hi || q.recs[hi-1].offset < offset {
		return hi, false
	}
	d := offset - q.recs[lo].offset
	if d <= 0 {
		return lo, d == 0
	}
	if d < int64(hi-lo) {
		if q.recs[lo+int(d)].offset == offset {
			return lo + int(d), true
		}
		hi = lo + int(d)
	}
	// It is also at least its distance from the last entry's offset before
	// the last entry, and that entry's offset is at most offset: where the
	// gaps lie before offset (records a cleanup moved to the store, a
	// squeeze), it is offset's place.
	last := len(q.recs) - 1
	if b := last - int(q.recs[last].offset-offset); b > lo {
		if q.recs[b].offset == offset {
			return b, true
		}
		lo = b + 1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q.recs[m].offset < offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(q.recs) && q.recs[lo].offset == offset
}

// Set stores a copy of *r at its offset; it returns the lease of the live
// record it replaced, and whether it replaced one. The record goes by
// pointer and only the lease comes back: a rec is 72 bytes, which went by
// value in, and out again, on every cached record.
func (q *offsetRecs) Set(r *rec) (model.LeaseID, bool) {
	i, found := q.find(r.offset)
	switch {
	case found && q.recs[i].lease != 0:
		prev := q.recs[i].lease
		q.recs[i] = *r
		return prev, true
	case found:
		q.recs[i] = *r
	case i == len(q.recs):
		if len(q.recs) == cap(q.recs) && q.head > 0 {
			q.squeeze()
		}
		q.recs = append(q.recs, *r)
	default:
		q.recs = append(q.recs, rec{})
		copy(q.recs[i+1:], q.recs[i:])
		q.recs[i] = *r
	}
	q.live++
	return 0, false
}

// Delete removes the live record at offset and returns its lease, 0 when
// there is none (every live record has a lease). A tombstone keeps its
// offset and drops its lease and its attempt id (its only reference);
// the rest of it is never read, so it is left: no record is copied out
// or over, where the caller wants only the lease.
func (q *offsetRecs) Delete(offset int64) model.LeaseID {
	i, found := q.find(offset)
	if !found || q.recs[i].lease == 0 {
		return 0
	}
	r := &q.recs[i]
	l := r.lease
	r.lease, r.attemptID = 0, ""
	q.live--
	for q.head < len(q.recs) && q.recs[q.head].lease == 0 {
		q.head++
	}
	if q.live == 0 {
		q.recs, q.head = q.recs[:0], 0
	} else if dead := len(q.recs) - q.head - q.live; dead > q.live && dead >= 64 {
		q.squeeze()
	}
	return l
}

// squeeze moves the live records to the front of the slice.
func (q *offsetRecs) squeeze() {
	j := 0
	for _, r := range q.recs[q.head:] {
		if r.lease != 0 {
			q.recs[j] = r
			j++
		}
	}
	clear(q.recs[j:])
	q.recs, q.head = q.recs[:j], 0
}

// Len is the number of live records.
func (q *offsetRecs) Len() int { return q.live }

// Min is the smallest live offset.
func (q *offsetRecs) Min() (int64, bool) {
	if q.live == 0 {
		return 0, false
	}
	return q.recs[q.head].offset, true
}

// Scan calls iter with every live record in offset order while it returns
// true.
func (q *offsetRecs) Scan(iter func(offset int64, r rec) bool) {
	for _, r := range q.recs[q.head:] {
		if r.lease != 0 && !iter(r.offset, r) {
			return
		}
	}
}

// Values returns the live records in offset order.
func (q *offsetRecs) Values() []rec {
	out := make([]rec, 0, q.live)
	q.Scan(func(_ int64, r rec) bool {
		out = append(out, r)
		return true
	})
	return out
}

func newCache(marks *offsets) *cache { return &cache{marks: marks} }

// get returns k's cached queue, nil when the cache holds none.
func (c *cache) get(k qkey) *cacheQueue {
	if int(k.pair) < len(c.rows) {
		if r := c.rows[k.pair]; k.qid >= 0 && int(k.qid) < len(r) {
			return r[k.qid]
		}
	}
	return nil
}

// add caches a copy of *r; a record at the same queue and offset is
// replaced, and add returns its lease (0 when none).
func (c *cache) add(r *rec) model.LeaseID {
	k := qkey{r.pair, r.qid}
	cq := c.get(k)
	if cq == nil {
		cq = &cacheQueue{key: k}
		c.put(k, cq)
		c.queues = append(c.queues, cq)
	}
	prev, replaced := cq.recs.Set(r)
	c.marks.touch(k)
	if !replaced {
		c.size++
		return 0
	}
	return prev
}

// removeOffset deletes by queue offset only, ignoring popTime, as upstream,
// and returns the lease of the record it removed (0 when none): not
// necessarily the one the caller's handle names.
func (c *cache) removeOffset(k qkey, offset int64) model.LeaseID {
	cq := c.get(k)
	if cq == nil {
		return 0
	}
	low, _ := cq.recs.Min()
	if l := cq.recs.Delete(offset); l != 0 {
		if offset == low {
			// the smallest cached offset moved (or no record is left):
			// a record above it changes no mark (idle.go)
			c.marks.touch(k)
		}
		c.size--
		if invariants {
			c.assertSize()
		}
		return l
	}
	return 0
}

func (c *cache) count(k qkey) int {
	if cq := c.get(k); cq != nil {
		return cq.recs.Len()
	}
	return 0
}

// minOffset is getMinOffsetInBuffer, -1 when the queue has no records.
func (c *cache) minOffset(k qkey) int64 {
	if cq := c.get(k); cq != nil {
		if o, ok := cq.recs.Min(); ok {
			return o
		}
	}
	return -1
}

// take removes a queue entirely and returns its records in offset order.
func (c *cache) take(k qkey) []rec {
	cq := c.get(k)
	if cq == nil {
		return nil
	}
	out := cq.recs.Values()
	c.marks.touch(k)
	c.size -= int64(len(out))
	if invariants {
		c.assertSize()
	}
	c.rows[k.pair][k.qid] = nil
	for i, q := range c.queues {
		if q == cq {
			c.queues = append(c.queues[:i], c.queues[i+1:]...)
			break
		}
	}
	return out
}

// put files cq as k's cached queue, growing the rows as needed.
func (c *cache) put(k qkey, cq *cacheQueue) { *rowCell(&c.rows, k.pair, int(k.qid)) = cq }

func (c *cache) full(limit int64) bool { return c.size > limit }

// flushCacheQueue writes a queue's cached records to the store (clearCache)
// and appends to replaced the leases of stored records they overwrote.
func (b *Broker) flushCacheQueue(k qkey, replaced []model.LeaseID) []model.LeaseID {
	for _, r := range b.cache.take(k) {
		b.stats.RecordPuts++
		if l := b.index.put(r); l != 0 {
			replaced = append(replaced, l)
		}
	}
	return replaced
}

// CacheResult reports one cleanupRecords pass.
type CacheResult struct {
	Flushed int       // records moved to the store
	Offline int       // queues flushed whole because their consumer went offline
	Revives []Revival // records revived straight from the cache
	Woken   []Wakeup  // pollers woken by retry messages
	// PullWoken are held pulls on retry topics the retry messages woke.
	PullWoken []PullWakeup
	// Replaced lists the leases of stored records that flushed records
	// overwrote (same key).
	Replaced []model.LeaseID
	// Failures lists the retry-copy writes the faults failed, in order.
	Failures []WriteFailure
}

// CleanupCache is PopConsumerCache.cleanupRecords, run every
// CacheCleanupInterval by the driver. For each cached queue: if its
// consumer's group@topic lock has timed out, everything goes to the store;
// otherwise records whose visibility timeout passed are revived and records
// older than popCkStayBufferTime move to the store.
func (b *Broker) CleanupCache(now clock.Time) CacheResult {
	b.touch(now.Millis())
	var res CacheResult
	nowMs := now.Millis()
	for _, cq := range append([]*cacheQueue(nil), b.cache.queues...) {
		p := b.names.pairs[cq.key.pair]
		if b.lockTimedOut(p.group, model.ParseNormalTopic(p.topic, p.group), nowMs) {
			res.Flushed += cq.recs.Len()
			res.Offline++
			res.Replaced = b.flushCacheQueue(cq.key, res.Replaced)
			if !b.cfg.Bugs.CommitOffsetLag {
				b.commitPending(cq.key) // the records are persisted: none is left to wait for
			}
			continue
		}
		b.cleanupQueue(now, cq, &res)
	}
	b.stats.CacheFlushed += int64(res.Flushed)
	return res
}

func (b *Broker) cleanupQueue(now clock.Time, cq *cacheQueue, res *CacheResult) {
	nowMs := now.Millis()
	var staged []rec
	cq.recs.Scan(func(_ int64, r rec) bool {
		if r.vt <= nowMs || r.popTime()+b.cfg.PopCkStayBufferTime <= nowMs {
			staged = append(staged, r)
		}
		return true
	})
	for _, r := range staged {
		cq.recs.Delete(r.offset)
		b.cache.size--
		if r.vt > nowMs {
			b.stats.RecordPuts++
			if l := b.index.put(r); l != 0 {
				res.Replaced = append(res.Replaced, l)
			}
			res.Flushed++
			continue
		}
		rv := b.reviveRecord(now, r)
		if rv.Outcome == ReviveRetried && b.cfg.Bugs.CacheCleanupIgnoresReviveFailure {
			rv = b.dropFailed(r, rv)
		} else {
			rv = b.settleFailure(now, r, rv)
		}
		res.Revives = append(res.Revives, rv)
		res.Woken = append(res.Woken, rv.woken...)
		res.PullWoken = append(res.PullWoken, rv.pullWoken...)
		if rv.failure.failed() {
			res.Failures = append(res.Failures, rv.failure)
		}
	}
	if len(staged) > 0 {
		b.offsets.touch(cq.key) // its cached records changed (idle.go)
	}
	b.cleanupCommit(cq.key)
}

// cleanupCommit is the commit of a cleanup pass for queue k: with
// Bugs.CommitOffsetLag (upstream) the smallest cached offset while the
// cache holds the queue's records; fixed, the queue's pending commit, as
// far as the records still cached allow (all of it once none is left).
func (b *Broker) cleanupCommit(k qkey) {
	if !b.cfg.Bugs.CommitOffsetLag {
		b.commitPending(k)
	} else if m := b.cache.minOffset(k); m >= 0 {
		b.commitOffset(k, m)
	}
}

// dropFailed turns a failed cache revive into a silent loss (#10667).
func (b *Broker) dropFailed(r rec, rv Revival) Revival {
	rv.Outcome = ReviveDropped
	b.stats.MayBeLost++
	return rv
}
