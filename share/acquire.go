package share

import (
	"popsim/clock"
	"popsim/model"
)

// fetchOut collects what one fetch acquired in one share-partition.
type fetchOut struct {
	now        clock.Time
	member     string
	ranges     []AcquiredRecords
	deliveries []Delivery
}

// grant records records first..last as acquired by out.member with the
// given lease base (lease+i for offset first+i).
func (sp *sharePartition) grant(out *fetchOut, first, last int64, count int32, lease model.LeaseID, deadline clock.Time) {
	out.ranges = append(out.ranges, AcquiredRecords{FirstOffset: first, LastOffset: last, DeliveryCount: count})
	for off := first; off <= last; off++ {
		out.deliveries = append(out.deliveries, Delivery{
			Lease: lease + model.LeaseID(off-first), Group: sp.key.group, TopicPartition: sp.key.TopicPartition,
			Offset: off, Msg: sp.log.at(off), DeliveryCount: count, Member: out.member, Deadline: deadline,
		})
	}
	sp.b.stats.Acquired += last - first + 1
}

// acquireRecord moves one AVAILABLE record (or whole batch state) to
// ACQUIRED by out.member: count+1, new leases, a lock timer keyed at first.
func (sp *sharePartition) acquireRecord(out *fetchOut, r *recState, first, last int64) {
	if !transit(r, Acquired, countInc, sp.maxDelivery, out.member) {
		panic("share: internal: acquiring a record that is not AVAILABLE")
	}
	r.deadline = out.now.Add(sp.lockDur)
	r.lease = sp.b.grantLeases(last - first + 1)
	sp.b.timers.add(timerKey{r.deadline, sp.id, first})
	sp.grant(out, first, last, r.count, r.lease, r.deadline)
}

// acquire is SharePartition.acquire for a log read from fetchOffset to the
// log end (the read starts with the log batch holding fetchOffset; byte
// limits are not modelled). It returns how many records it acquired, which
// may exceed maxFetch in batch_optimized mode (whole batches).
func (sp *sharePartition) acquire(out *fetchOut, mode AcquireMode, batchSize, maxFetch, fetchOffset int64) int64 {
	if maxFetch <= 0 {
		return 0
	}
	l := sp.log
	fb := l.batchAt(fetchOffset)
	if fb < 0 {
		return 0
	}
	firstBase := l.batches[fb].base
	lastBatchLast := l.end() - 1
	recordLimit := mode == RecordLimit

	// lastOffsetAndMaxRecordsToAcquire: cap by the window's free capacity;
	// at the limit, only re-acquisitions inside the window are possible.
	maxAcq := min(maxFetch, int64(sp.maxInFlight)-sp.numInFlight())
	lastAcq := lastBatchLast
	if maxAcq <= 0 && fetchOffset <= sp.end {
		maxAcq = min(maxFetch, sp.end-fetchOffset+1)
		lastAcq = min(lastBatchLast, sp.end)
	}
	if maxAcq <= 0 {
		return 0
	}

	base := firstBase
	if fi := sp.floor(base); fi < 0 {
		if base < sp.start {
			base = sp.start
			// A cached batch may straddle the start offset (it began below
			// it, e.g. reloaded from a persisted range, before the log start
			// moved): take it in rather than acquire over it. Kafka would
			// cache an overlapping batch here (docs/share.md).
			if fj := sp.floor(base); fj >= 0 && sp.cache[fj].last >= base {
				base = sp.cache[fj].first
			}
		}
	} else if sp.cache[fi].last >= base {
		base = sp.cache[fi].first
	}
	lo, hi := sp.ceil(base), sp.floor(lastAcq)
	if lo > hi {
		return sp.acquireNew(out, recordLimit, fb, firstBase, lastAcq, batchSize, maxAcq)
	}

	var acquired int64
	for i := lo; i <= hi; i++ {
		if acquired >= maxAcq {
			break
		}
		f := sp.cache[i]
		full := f.first >= firstBase && f.last <= lastAcq
		remaining := maxAcq - acquired
		rlSubset := recordLimit && f.last-f.first+1 > remaining
		throttle := sp.shouldThrottle(f, firstBase, lastAcq)
		if throttle && acquired > 0 {
			// Isolate throttled records: deliver them in a later fetch.
			maxAcq = 0
			break
		}
		if !full || f.split() || rlSubset || throttle {
			if !f.split() {
				if f.st.state != Available {
					continue
				}
				sp.splitBatch(f)
			}
			n := sp.acquireSubset(out, f, recordLimit, remaining, firstBase, lastAcq)
			acquired += n
			if throttle && n > 0 {
				maxAcq = 0
				break
			}
			continue
		}
		if f.st.state != Available {
			continue
		}
		sp.acquireRecord(out, &f.st, f.first, f.last)
		acquired += f.last - f.first + 1
	}
	if acquired < maxAcq && sp.cache[hi].last < lastAcq {
		acquired += sp.acquireNew(out, recordLimit, fb, sp.cache[hi].last+1, lastAcq, batchSize, maxAcq-acquired)
	}
	return acquired
}

// shouldThrottle is shouldThrottleRecordsDelivery (KAFKA-17541): a whole
// batch whose count reached the throttle limit (whatever its state), or a
// split batch with an AVAILABLE record in range at or above it.
func (sp *sharePartition) shouldThrottle(f *inflight, reqFirst, reqLast int64) bool {
	if !f.split() {
		return f.st.count >= sp.throttleLimit
	}
	var most int32
	for i := range f.offsets {
		off := f.first + int64(i)
		if off < reqFirst || off > reqLast || f.offsets[i].state != Available {
			continue
		}
		most = max(most, f.offsets[i].count)
	}
	return most >= sp.throttleLimit
}

// acquireSubset is acquireSubsetBatchRecords: acquire the AVAILABLE offsets
// of a split batch within the request, one range per offset. A record on
// its last allowed attempt is delivered alone; records at or above the
// throttle limit come in shrinking groups (half the batch per extra
// attempt). Only record_limit mode stops at maxFetch.
func (sp *sharePartition) acquireSubset(out *fetchOut, f *inflight, recordLimit bool, maxFetch, reqFirst, reqLast int64) int64 {
	var acquired int64
	maxThrottled := int64(-1)
	for i := range f.offsets {
		off := f.first + int64(i)
		if off < reqFirst {
			continue
		}
		if off > reqLast {
			break
		}
		o := &f.offsets[i]
		if o.state != Available {
			continue
		}
		dc := o.count
		if sp.maxDelivery > 2 && dc == sp.maxDelivery-1 && acquired > 0 {
			break
		}
		if dc >= sp.throttleLimit && maxThrottled < 0 {
			maxThrottled = max(1, int64(len(f.offsets))>>(dc-sp.throttleLimit+1))
		}
		sp.acquireRecord(out, o, off, off)
		acquired++
		if o.count == sp.maxDelivery && sp.maxDelivery > 2 {
			break
		}
		if recordLimit && acquired == maxFetch {
			break
		}
		if maxThrottled > 0 && acquired == maxThrottled {
			break
		}
	}
	return acquired
}

// acquireNew is acquireNewBatchRecords: acquire records not yet cached,
// first..last, up to maxFetch rounded up to the end of the log batch that
// holds the last one.
func (sp *sharePartition) acquireNew(out *fetchOut, recordLimit bool, fb int, first, last, batchSize, maxFetch int64) int64 {
	firstAcq := first
	if len(sp.cache) == 0 && sp.end > firstAcq {
		firstAcq = sp.end
	}
	// Never below the start offset or the log start (see docs/share.md).
	firstAcq = max(firstAcq, sp.start, sp.log.start)
	if firstAcq > last {
		return 0
	}
	lastAcq := last
	if maxFetch < lastAcq-firstAcq+1 {
		if bi := sp.log.batchAt(firstAcq + maxFetch - 1); bi >= 0 {
			lastAcq = sp.log.batches[bi].last
		}
	}
	got := sp.createBatches(out, recordLimit, fb, firstAcq, lastAcq, batchSize, maxFetch)
	if sp.cache[0].first == firstAcq {
		sp.start = firstAcq
	}
	if lastAcq > sp.end {
		sp.end = lastAcq
	}
	if recordLimit {
		lastAcq = got
	}
	return lastAcq - firstAcq + 1
}

// createBatches splits firstAcq..lastAcq into cached batches of at least
// batchSize records on log batch boundaries (batch_optimized), or one batch
// of which only maxFetch records are acquired (record_limit). It returns
// the last offset acquired.
func (sp *sharePartition) createBatches(out *fetchOut, recordLimit bool, fb int, firstAcq, lastAcq, batchSize, maxFetch int64) int64 {
	if recordLimit {
		if lastAcq-firstAcq+1 > maxFetch {
			target := firstAcq + maxFetch - 1
			f := &inflight{first: firstAcq, last: lastAcq, offsets: make([]recState, lastAcq-firstAcq+1)}
			deadline := out.now.Add(sp.lockDur)
			lease := sp.b.grantLeases(maxFetch)
			for i := range f.offsets {
				off := firstAcq + int64(i)
				if off <= target {
					f.offsets[i] = recState{state: Acquired, count: 1, member: out.member, deadline: deadline, lease: lease + model.LeaseID(i)}
					sp.b.timers.add(timerKey{deadline, sp.id, off})
				} else {
					f.offsets[i] = recState{state: Available}
				}
			}
			sp.findNext = true
			sp.insert(f)
			sp.grant(out, firstAcq, target, 1, lease, deadline)
			return target
		}
		sp.addBatch(out, firstAcq, lastAcq)
		return lastAcq
	}
	cur := firstAcq
	if lastAcq-firstAcq+1 > batchSize {
		for _, lb := range sp.log.batches[fb:] {
			if lb.base > lastAcq {
				break
			}
			if lb.base-cur >= batchSize {
				sp.addBatch(out, cur, lb.base-1)
				cur = lb.base
			}
		}
	}
	sp.addBatch(out, cur, lastAcq)
	return lastAcq
}

// addBatch caches a newly acquired batch (delivery count 1).
func (sp *sharePartition) addBatch(out *fetchOut, first, last int64) {
	f := &inflight{first: first, last: last, st: recState{state: Available}}
	sp.insert(f)
	sp.acquireRecord(out, &f.st, first, last)
}
