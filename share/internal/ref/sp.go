package ref

import (
	"slices"
	"sort"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
)

type rec struct {
	state    share.RecordState
	count    int32
	member   string
	deadline clock.Time
	lease    model.LeaseID
}

// span is one in-flight batch of the cached state: a range and whether it
// is tracked per offset.
type span struct {
	first, last int64
	split       bool
}

type sp struct {
	b          *Broker
	key        key
	log        *plog
	maxDel     int32
	maxLocks   int64
	throttle   int32
	lockDur    clock.Duration
	recs       map[int64]*rec
	spans      []*span
	start, end int64
	findNext   bool
	orphans    map[string]bool
}

func (s *sp) sortSpans() {
	sort.Slice(s.spans, func(i, j int) bool { return s.spans[i].first < s.spans[j].first })
}

// floor is the last span starting at or below off, or nil.
func (s *sp) floor(off int64) *span {
	var best *span
	for _, x := range s.spans {
		if x.first <= off {
			best = x
		}
	}
	return best
}

// within returns the spans whose first offset lies in [lo, hi].
func (s *sp) within(lo, hi int64) []*span {
	var out []*span
	for _, x := range s.spans {
		if x.first >= lo && x.first <= hi {
			out = append(out, x)
		}
	}
	return out
}

func (s *sp) lastCached() int64 { return s.spans[len(s.spans)-1].last }

func (s *sp) inflight() int64 {
	if len(s.spans) == 0 {
		return 0
	}
	return s.end - s.start + 1
}

func (s *sp) next() int64 {
	stale := len(s.spans) == 0 || s.start > s.lastCached()
	if !s.findNext {
		if stale {
			return s.end
		}
		return s.end + 1
	}
	if stale {
		s.findNext = false
		return s.end
	}
	for _, x := range s.spans {
		for off := x.first; off <= x.last; off++ {
			if s.recs[off].state == share.Available {
				return off
			}
		}
	}
	s.findNext = false
	return s.end + 1
}

func (s *sp) canAcquire() bool {
	if s.next() != s.end+1 {
		return true
	}
	return s.inflight() < s.maxLocks
}

// ---- acquisition ----

type out struct {
	now        clock.Time
	member     string
	ranges     []share.AcquiredRecords
	deliveries []share.Delivery
}

func (s *sp) take(o *out, off int64) {
	r := s.recs[off]
	r.state, r.count, r.member = share.Acquired, r.count+1, o.member
	r.deadline = o.now.Add(s.lockDur)
	r.lease = s.b.nextLease
	s.b.nextLease++
	s.b.stats.Acquired++
	o.deliveries = append(o.deliveries, share.Delivery{Lease: r.lease, Group: s.key.group, TopicPartition: s.key.TopicPartition,
		Offset: off, Msg: s.log.recs[off], DeliveryCount: r.count, Member: o.member, Deadline: r.deadline})
}

// takeRange acquires first..last as one acquired range.
func (s *sp) takeRange(o *out, first, last int64) {
	for off := first; off <= last; off++ {
		s.take(o, off)
	}
	o.ranges = append(o.ranges, share.AcquiredRecords{FirstOffset: first, LastOffset: last, DeliveryCount: s.recs[first].count})
}

func (s *sp) acquire(o *out, mode share.AcquireMode, batchSize, maxFetch, fetchOffset int64) int64 {
	if maxFetch <= 0 {
		return 0
	}
	fb, ok := s.log.batchOf(fetchOffset)
	if !ok {
		return 0
	}
	firstBase, lastBatchLast := fb[0], s.log.end()-1
	recordLimit := mode == share.RecordLimit
	maxAcq := min(maxFetch, s.maxLocks-s.inflight())
	lastAcq := lastBatchLast
	if maxAcq <= 0 && fetchOffset <= s.end {
		maxAcq = min(maxFetch, s.end-fetchOffset+1)
		lastAcq = min(lastBatchLast, s.end)
	}
	if maxAcq <= 0 {
		return 0
	}
	base := firstBase
	if fl := s.floor(base); fl == nil {
		base = max(base, s.start)
		if fs := s.floor(base); fs != nil && fs.last >= base {
			base = fs.first
		}
	} else if fl.last >= base {
		base = fl.first
	}
	sub := s.within(base, lastAcq)
	if len(sub) == 0 {
		return s.acquireNew(o, recordLimit, firstBase, lastAcq, batchSize, maxAcq)
	}
	var got int64
	for _, x := range sub {
		if got >= maxAcq {
			break
		}
		full := x.first >= firstBase && x.last <= lastAcq
		remaining := maxAcq - got
		rlSubset := recordLimit && x.last-x.first+1 > remaining
		throttle := s.throttled(x, firstBase, lastAcq)
		if throttle && got > 0 {
			maxAcq = 0
			break
		}
		if !full || x.split || rlSubset || throttle {
			if !x.split {
				if s.recs[x.first].state != share.Available {
					continue
				}
				x.split = true
			}
			n := s.acquireOffsets(o, x, recordLimit, remaining, firstBase, lastAcq)
			got += n
			if throttle && n > 0 {
				maxAcq = 0
				break
			}
			continue
		}
		if s.recs[x.first].state != share.Available {
			continue
		}
		s.takeRange(o, x.first, x.last)
		got += x.last - x.first + 1
	}
	if last := sub[len(sub)-1].last; got < maxAcq && last < lastAcq {
		got += s.acquireNew(o, recordLimit, last+1, lastAcq, batchSize, maxAcq-got)
	}
	return got
}

func (s *sp) throttled(x *span, lo, hi int64) bool {
	if !x.split {
		return s.recs[x.first].count >= s.throttle
	}
	var most int32
	for off := max(x.first, lo); off <= min(x.last, hi); off++ {
		if r := s.recs[off]; r.state == share.Available {
			most = max(most, r.count)
		}
	}
	return most >= s.throttle
}

func (s *sp) acquireOffsets(o *out, x *span, recordLimit bool, maxFetch, lo, hi int64) int64 {
	var got int64
	limit := int64(-1)
	for off := max(x.first, lo); off <= min(x.last, hi); off++ {
		r := s.recs[off]
		if r.state != share.Available {
			continue
		}
		if s.maxDel > 2 && r.count == s.maxDel-1 && got > 0 {
			break
		}
		if r.count >= s.throttle && limit < 0 {
			limit = max(1, (x.last-x.first+1)>>(r.count-s.throttle+1))
		}
		s.takeRange(o, off, off)
		got++
		if r.count == s.maxDel && s.maxDel > 2 || recordLimit && got == maxFetch || limit > 0 && got == limit {
			break
		}
	}
	return got
}

func (s *sp) acquireNew(o *out, recordLimit bool, first, last, batchSize, maxFetch int64) int64 {
	if len(s.spans) == 0 && s.end > first {
		first = s.end
	}
	first = max(first, s.start, s.log.start)
	if first > last {
		return 0
	}
	if maxFetch < last-first+1 {
		if bb, ok := s.log.batchOf(first + maxFetch - 1); ok {
			last = bb[1]
		}
	}
	gotLast := last
	newSpan := func(a, z int64, split bool) {
		s.spans = append(s.spans, &span{first: a, last: z, split: split})
		s.sortSpans()
		for off := a; off <= z; off++ {
			s.recs[off] = &rec{state: share.Available}
		}
	}
	switch {
	case recordLimit && last-first+1 > maxFetch:
		gotLast = first + maxFetch - 1
		newSpan(first, last, true)
		s.takeRange(o, first, gotLast)
		s.findNext = true
	case recordLimit || last-first+1 <= batchSize:
		newSpan(first, last, false)
		s.takeRange(o, first, last)
	default:
		cur := first
		for _, lb := range s.log.batches {
			if lb[0] < first && lb[1] < first {
				continue
			}
			if lb[0] > last {
				break
			}
			if lb[0]-cur >= batchSize {
				newSpan(cur, lb[0]-1, false)
				s.takeRange(o, cur, lb[0]-1)
				cur = lb[0]
			}
		}
		newSpan(cur, last, false)
		s.takeRange(o, cur, last)
	}
	if s.spans[0].first == first {
		s.start = first
	}
	s.end = max(s.end, last)
	return gotLast - first + 1
}

// ---- transitions ----

type chg struct {
	off        int64
	old        rec
	end        share.LeaseEnd
	belowStart bool
}

// move makes an ACQUIRED record leave ACQUIRED (Kafka's tryUpdateState).
func (s *sp) move(tx *[]chg, off int64, to share.RecordState, dec bool, end func(share.RecordState) share.LeaseEnd, belowStart bool) {
	r := s.recs[off]
	c := chg{off: off, old: *r, belowStart: belowStart}
	if belowStart {
		to = share.Archived
	}
	if to == share.Available && !dec && r.count >= s.maxDel {
		to = share.Archived
	}
	if to != share.Archived && dec {
		r.count--
	}
	r.state, r.member, r.deadline, r.lease = to, "", 0, 0
	c.end = end(to)
	*tx = append(*tx, c)
}

func (s *sp) rollback(tx []chg) {
	for i := len(tx) - 1; i >= 0; i-- {
		*s.recs[tx[i].off] = tx[i].old
	}
}

func (s *sp) persist(tx []chg) share.ErrorCode {
	if len(tx) == 0 {
		return share.None
	}
	s.b.stats.PersistWrites++
	if code := s.b.fault(s.key); code != share.None {
		s.b.stats.PersistFailures++
		return code
	}
	ps := s.b.persisted[s.key]
	for _, c := range tx {
		r := s.recs[c.off]
		ps.states[c.off] = prec{r.state, r.count}
	}
	ps.start = s.start
	for off := range ps.states {
		if off < s.start {
			delete(ps.states, off)
		}
	}
	return share.None
}

func (s *sp) commit(now clock.Time, tx []chg, failed bool) []share.LeaseEvent {
	var evs []share.LeaseEvent
	for _, c := range tx {
		r := s.recs[c.off]
		e := share.LeaseEvent{Lease: c.old.lease, Group: s.key.group, TopicPartition: s.key.TopicPartition, Offset: c.off,
			Msg: s.log.msg(c.off), Member: c.old.member, DeliveryCount: r.count, End: c.end, State: r.state, At: now, PersistFailed: failed}
		switch e.End {
		case share.EndAccepted:
			s.b.stats.Accepted++
		case share.EndReleased:
			s.b.stats.Released++
		case share.EndRejected:
			s.b.stats.Rejected++
		case share.EndLockTimeout:
			s.b.stats.LockTimeouts++
		case share.EndSessionClosed:
			s.b.stats.SessionReleases++
		default:
			s.b.stats.Archived++
		}
		switch e.End {
		case share.EndRejected, share.EndReleasedAtLimit, share.EndLockTimeoutAtLimit, share.EndSessionClosedAtLimit:
			e.DLQ = s.b.deadLetter(now, s.key, c.off, r.count, e.End)
		}
		if r.state == share.Available {
			s.findNext = true
		}
		evs = append(evs, e)
	}
	return evs
}

func endAck(t share.AckType) func(share.RecordState) share.LeaseEnd {
	return func(to share.RecordState) share.LeaseEnd {
		switch t {
		case share.AckAccept:
			return share.EndAccepted
		case share.AckRelease:
			if to == share.Available {
				return share.EndReleased
			}
			return share.EndReleasedAtLimit
		case share.AckReject:
			return share.EndRejected
		}
		return share.EndGap
	}
}

func endOther(avail, limit, below share.LeaseEnd, belowStart bool) func(share.RecordState) share.LeaseEnd {
	return func(to share.RecordState) share.LeaseEnd {
		switch {
		case to == share.Available:
			return avail
		case belowStart:
			return below
		}
		return limit
	}
}

func ackState(t share.AckType) share.RecordState {
	switch t {
	case share.AckAccept:
		return share.Acknowledged
	case share.AckRelease:
		return share.Available
	}
	return share.Archived
}

// ---- SPSO ----

func (s *sp) advance() {
	if len(s.spans) == 0 {
		return
	}
	if fl := s.floor(s.start); fl == nil || fl.last < s.start || !s.recs[s.start].state.Terminal() {
		return
	}
	lastAck := int64(-1)
outer:
	for _, x := range s.spans {
		for off := x.first; off <= x.last; off++ {
			if !s.recs[off].state.Terminal() {
				break outer
			}
			lastAck = off
		}
	}
	if lastAck == -1 {
		return
	}
	if lastAck == s.lastCached() {
		s.start, s.end = lastAck+1, lastAck+1
		s.drop(len(s.spans))
		return
	}
	for i, x := range s.spans {
		if x.first <= lastAck && lastAck <= x.last {
			if lastAck == x.last {
				s.start = max(s.start, s.spans[i+1].first)
				s.drop(i + 1)
			} else {
				s.start = max(s.start, lastAck+1)
				s.drop(i)
			}
			return
		}
	}
}

// drop removes the first n spans and their records.
func (s *sp) drop(n int) {
	for _, x := range s.spans[:n] {
		for off := x.first; off <= x.last; off++ {
			delete(s.recs, off)
		}
	}
	s.spans = slices.Clone(s.spans[n:])
}

func (s *sp) toLogStart(lso int64) {
	if lso <= s.start {
		return
	}
	if len(s.spans) == 0 {
		s.start, s.end = lso, lso
		return
	}
	archived := false
	for _, x := range s.spans {
		if x.first >= lso {
			break
		}
		full := x.first >= s.start && x.last <= lso-1
		if !full && !x.split {
			if s.recs[x.first].state != share.Available {
				continue
			}
			x.split = true
		}
		for off := max(x.first, s.start); off <= min(x.last, lso-1); off++ {
			if r := s.recs[off]; r.state == share.Available {
				r.state = share.Archived
				archived = true
			}
		}
	}
	if archived {
		s.findNext = true
	}
	s.start = lso
	s.end = max(s.end, s.start)
}
