package share

import (
	"fmt"
	"sort"

	"popsim/clock"
	"popsim/model"
)

// recState is Kafka's InFlightState for one record or one whole batch.
// deadline and lease are set exactly while the state is ACQUIRED; for a
// whole batch, lease is the first record's lease and record i has lease+i.
type recState struct {
	state    RecordState
	count    int32
	member   string
	deadline clock.Time
	lease    model.LeaseID
}

// inflight is Kafka's InFlightBatch: a range of the cached state tracked
// as one (offsets == nil) or per offset once split
// (maybeInitializeOffsetStateUpdate). Splits are never undone.
type inflight struct {
	first, last int64
	st          recState
	offsets     []recState
}

func (f *inflight) split() bool { return f.offsets != nil }

// sharePartition is Kafka's SharePartition: the cached state of one
// (group, topic-partition) on its leader.
type sharePartition struct {
	b   *Broker
	id  uint32
	key spKey
	log *partitionLog

	maxDelivery, maxInFlight, throttleLimit int32
	lockDur                                 clock.Duration
	lockMs                                  int32

	// cache is the cached state: batches sorted by first offset, never
	// overlapping.
	cache      []*inflight
	start, end int64 // SPSO, and Kafka's endOffset (see nextFetchOffset)
	findNext   bool
	// orphans are members whose share session closed while a release of
	// their records failed to persist and was rolled back: their records
	// stay ACQUIRED until the locks expire.
	orphans map[string]bool
}

func newSharePartition(b *Broker, id uint32, k spKey, l *partitionLog, gc GroupConfig) *sharePartition {
	sp := &sharePartition{b: b, id: id, key: k, log: l,
		maxDelivery: gc.DeliveryCountLimit, maxInFlight: gc.PartitionMaxRecordLocks,
		lockMs: gc.RecordLockDurationMs, lockDur: clock.MillisDuration(int64(gc.RecordLockDurationMs))}
	// SharePartition: half the delivery limit rounded up, at least 2.
	sp.throttleLimit = max(2, (gc.DeliveryCountLimit+1)/2)
	return sp
}

// floor returns the index of the last batch whose first offset is <= off,
// or -1.
func (sp *sharePartition) floor(off int64) int {
	return sort.Search(len(sp.cache), func(i int) bool { return sp.cache[i].first > off }) - 1
}

// ceil returns the index of the first batch whose first offset is >= off.
func (sp *sharePartition) ceil(off int64) int {
	return sort.Search(len(sp.cache), func(i int) bool { return sp.cache[i].first >= off })
}

func (sp *sharePartition) insert(f *inflight) {
	i := sp.ceil(f.first)
	if i > 0 && sp.cache[i-1].last >= f.first || i < len(sp.cache) && sp.cache[i].first <= f.last {
		panic(fmt.Sprintf("share: internal: batch %d..%d overlaps the cached state of %v", f.first, f.last, sp.key))
	}
	sp.cache = append(sp.cache, nil)
	copy(sp.cache[i+1:], sp.cache[i:])
	sp.cache[i] = f
}

// numInFlight is numInFlightRecords: the offset window SPEO-SPSO+1, terminal
// records included.
func (sp *sharePartition) numInFlight() int64 {
	if len(sp.cache) == 0 {
		return 0
	}
	return sp.end - sp.start + 1
}

// nextFetchOffset follows SharePartition.nextFetchOffset: the lowest
// AVAILABLE offset when a release, timeout or session close may have made
// one, else endOffset+1 (or endOffset when the cache is empty or entirely
// below the start offset, where endOffset is the next offset to fetch).
func (sp *sharePartition) nextFetchOffset() int64 {
	stale := len(sp.cache) == 0 || sp.start > sp.cache[len(sp.cache)-1].last
	if !sp.findNext {
		if stale {
			return sp.end
		}
		return sp.end + 1
	}
	if stale {
		sp.findNext = false
		return sp.end
	}
	for _, f := range sp.cache {
		if !f.split() {
			if f.st.state == Available {
				return f.first
			}
			continue
		}
		for i := range f.offsets {
			if f.offsets[i].state == Available {
				return f.first + int64(i)
			}
		}
	}
	sp.findNext = false
	return sp.end + 1
}

// canAcquire is canAcquireRecords: a fetch may acquire when there are
// records to redeliver, or when the window is below the lock limit.
func (sp *sharePartition) canAcquire() bool {
	if sp.nextFetchOffset() != sp.end+1 {
		return true
	}
	return sp.numInFlight() < int64(sp.maxInFlight)
}

// countOp is DeliveryCountOps.
type countOp uint8

const (
	countKeep countOp = iota
	countInc
	countDec
)

// transit is InFlightState.tryUpdateState: a move to AVAILABLE becomes
// ARCHIVED at the delivery limit (unless the count is decreased), the count
// changes unless the record is archived, and the owner is replaced. It
// returns false for an illegal transition (same state, from a terminal
// state, or from AVAILABLE to anything but ACQUIRED).
func transit(r *recState, to RecordState, op countOp, maxDelivery int32, member string) bool {
	if to == Available && op != countDec && r.count >= maxDelivery {
		to = Archived
	}
	if r.state == to || r.state.Terminal() || r.state == Available && to != Acquired {
		return false
	}
	r.state = to
	if to != Archived {
		switch op {
		case countInc:
			r.count++
		case countDec:
			r.count--
		}
	}
	r.member = member
	if to != Acquired {
		r.deadline, r.lease = 0, 0
	}
	return true
}

// splitBatch is maybeInitializeOffsetStateUpdate: per-offset state from
// the batch state; an acquired batch's lock timer becomes one timer per
// offset with the same deadline.
func (sp *sharePartition) splitBatch(f *inflight) {
	if f.split() {
		return
	}
	n := f.last - f.first + 1
	f.offsets = make([]recState, n)
	for i := range f.offsets {
		o := f.st
		if o.state == Acquired {
			o.lease = f.st.lease + model.LeaseID(i)
		}
		f.offsets[i] = o
	}
	if f.st.state == Acquired {
		sp.b.timers.del(timerKey{f.st.deadline, sp.id, f.first})
		for i := int64(0); i < n; i++ {
			sp.b.timers.add(timerKey{f.st.deadline, sp.id, f.first + i})
		}
	}
	f.st = recState{}
}

// stateAt returns the record state of a cached offset, nil if not cached.
func (sp *sharePartition) stateAt(off int64) *recState {
	i := sp.floor(off)
	if i < 0 || sp.cache[i].last < off {
		return nil
	}
	f := sp.cache[i]
	if !f.split() {
		return &f.st
	}
	return &f.offsets[off-f.first]
}

// canMoveStart is canMoveStartOffset: the record at the start offset is
// terminal.
func (sp *sharePartition) canMoveStart() bool {
	if len(sp.cache) == 0 {
		return false
	}
	i := sp.floor(sp.start)
	if i < 0 || sp.cache[i].last < sp.start {
		// A gap at the start offset (or the start offset past the cache):
		// nothing to move over.
		return false
	}
	return sp.stateAt(sp.start).state.Terminal()
}

// lastTerminalPrefix is findLastOffsetAcknowledged: the last offset of the
// cache's contiguous terminal prefix, or -1. It scans from the first cached
// batch, so an ACQUIRED record left below the start offset blocks it.
func (sp *sharePartition) lastTerminalPrefix() int64 {
	last := int64(-1)
	for _, f := range sp.cache {
		if !f.split() {
			if !f.st.state.Terminal() {
				return last
			}
			last = f.last
			continue
		}
		for i := range f.offsets {
			if !f.offsets[i].state.Terminal() {
				return last
			}
			last = f.first + int64(i)
		}
	}
	return last
}

// advance is maybeUpdateCachedStateAndOffsets: move the start offset over
// the terminal prefix and drop whole batches that are entirely terminal.
func (sp *sharePartition) advance() {
	if !sp.canMoveStart() {
		return
	}
	lastAck := sp.lastTerminalPrefix()
	if lastAck == -1 {
		return
	}
	lastCached := sp.cache[len(sp.cache)-1].last
	if lastAck == lastCached {
		sp.start, sp.end = lastCached+1, lastCached+1
		sp.cache = sp.cache[:0]
		return
	}
	i := sp.floor(lastAck)
	drop := 0
	if lastAck == sp.cache[i].last {
		if next := sp.cache[i+1].first; next > sp.start {
			sp.start = next
		}
		drop = i + 1
	} else {
		if lastAck+1 > sp.start {
			sp.start = lastAck + 1
		}
		drop = i
	}
	if drop > 0 {
		n := copy(sp.cache, sp.cache[drop:])
		clear(sp.cache[n:])
		sp.cache = sp.cache[:n]
	}
}

// moveToLogStart is updateCacheAndOffsets: the log start offset passed the
// start offset, so the AVAILABLE records below it are archived (in memory
// only, never persisted) and the start offset jumps to it. ACQUIRED records
// below it stay acquired until acknowledged or timed out.
func (sp *sharePartition) moveToLogStart(lso int64) {
	if lso <= sp.start {
		return
	}
	if len(sp.cache) == 0 {
		sp.start, sp.end = lso, lso
		return
	}
	archived := false
	for _, f := range sp.cache {
		if f.first >= lso {
			break
		}
		full := f.first >= sp.start && f.last <= lso-1
		if !full || f.split() {
			if !f.split() {
				if f.st.state != Available {
					continue
				}
				sp.splitBatch(f)
			}
			for i := range f.offsets {
				off := f.first + int64(i)
				if off < sp.start || off > lso-1 || f.offsets[i].state != Available {
					continue
				}
				f.offsets[i] = recState{state: Archived, count: f.offsets[i].count}
				archived = true
			}
			continue
		}
		if f.st.state == Available {
			f.st = recState{state: Archived, count: f.st.count}
			archived = true
		}
	}
	if archived {
		sp.findNext = true
	}
	sp.start = lso
	if sp.end < sp.start {
		sp.end = sp.start
	}
}
