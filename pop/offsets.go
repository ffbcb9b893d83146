package pop

// qkey names one queue of one (group, topic) pair.
type qkey struct {
	pair uint32
	qid  int32
}

// Presence bits of a slot's offsets.
const (
	hasCommit uint8 = 1 << iota
	hasPull
	hasReset
	hasPending
	hasFlushed
)

// slot is the state of one queue of one (group, topic) pair: its three
// offsets and its pending commit. A pop over all queues reads one slot per
// queue, so they sit in dense rows indexed by pair id and queue id rather
// than in maps keyed by qkey.
type slot struct {
	commit, pull, reset int64
	// pending is the commit the last stage left to make (fixed #10949
	// behaviour only: its next begin offset, committed once the cache no
	// longer holds records below it). Volatile, like the pull offset.
	pending int64
	// flushed is the commit offset as last persisted (hasFlushed): what a
	// crash leaves.
	flushed int64
	has     uint8 // hasCommit | hasPull | hasReset | hasPending | hasFlushed
}

// offsets is ConsumerOffsetManager: the durable commit offset (offsetTable),
// the volatile KV pull offset (pullOffsetTable) and pending admin resets
// (resetOffsetTable), plus the volatile pending commits. rows[pair][qid] is
// a queue's slot; rows grow on demand, so a *slot stays valid only until
// the next slot of the same pair is created: hold one only within a call
// that touches that queue alone. Walks go in (pair, qid) order.
type offsets struct {
	rows [][]slot
	// idle[pair] marks the pair's queues an all-queue pop may skip
	// (idle.go): bit qid set means queue qid is idle. Every write access
	// to a slot (at, row) clears its mark.
	idle [][]uint64
	// quiet[pair] marks the pair's quiet queues (idle.go), every idle one
	// among them; same lengths as idle, cleared with it.
	quiet [][]uint64
}

func newOffsets() offsets { return offsets{} }

// peek returns k's slot, or nil when it was never created.
func (o *offsets) peek(k qkey) *slot {
	if int(k.pair) < len(o.rows) {
		if r := o.rows[k.pair]; uint32(k.qid) < uint32(len(r)) {
			return &r[k.qid]
		}
	}
	return nil
}

// at returns k's slot for writing, creating it (empty) if needed: the
// queue stops being marked idle (idle.go).
func (o *offsets) at(k qkey) *slot {
	o.touch(k)
	if s := o.peek(k); s != nil { // inlined: slotFor does not
		return s
	}
	return o.slotFor(k)
}

// slotFor returns k's slot, creating it (empty) if needed, and leaves
// the idle marks alone: for reads.
func (o *offsets) slotFor(k qkey) *slot {
	if s := o.peek(k); s != nil {
		return s
	}
	return rowCell(&o.rows, k.pair, int(k.qid))
}

// row returns pair's slots, at least n of them, for writing: none of the
// pair's queues is marked idle any more.
func (o *offsets) row(pair uint32, n int32) []slot {
	if int(pair) < len(o.idle) {
		clear(o.idle[pair])
		clear(o.quiet[pair])
	}
	return o.slots(pair, n)
}

// slots returns pair's slots, at least n of them, for reading.
func (o *offsets) slots(pair uint32, n int32) []slot {
	if int(pair) < len(o.rows) && int(n) <= len(o.rows[pair]) {
		return o.rows[pair] // every pop after the pair's first
	}
	if n > 0 {
		o.slotFor(qkey{pair, n - 1})
	}
	for int(pair) >= len(o.rows) {
		o.rows = append(o.rows, nil)
	}
	return o.rows[pair]
}

// each calls f for every slot in (pair, qid) order.
func (o *offsets) each(f func(k qkey, s *slot)) {
	for p, r := range o.rows {
		for q := range r {
			f(qkey{uint32(p), int32(q)}, &r[q])
		}
	}
}

// dropVolatile forgets every pull offset and pending commit (a restart).
func (o *offsets) dropVolatile() {
	o.clearIdle()
	o.each(func(_ qkey, s *slot) {
		s.has &^= hasPull | hasPending
		s.pull, s.pending = 0, 0
	})
}

// flush persists every commit offset (ConsumerOffsetManager.persist).
func (o *offsets) flush() {
	o.each(func(_ qkey, s *slot) {
		s.flushed, s.has = s.commit, s.has&^hasFlushed
		if s.has&hasCommit != 0 {
			s.has |= hasFlushed
		}
	})
}

// crash puts every commit offset back to its last persisted value.
func (o *offsets) crash() {
	o.clearIdle()
	o.each(func(_ qkey, s *slot) {
		s.commit, s.has = s.flushed, s.has&^hasCommit
		if s.has&hasFlushed != 0 {
			s.has |= hasCommit
		}
	})
}

func (s *slot) setCommit(v int64) { s.commit, s.has = v, s.has|hasCommit }

// queryOffset is the commit offset, or the pending reset when server-side
// reset is on; -1 when unknown.
func (s *slot) queryOffset(serverSideReset bool) int64 {
	if serverSideReset && s.has&hasReset != 0 {
		return s.reset
	}
	if s.has&hasCommit != 0 {
		return s.commit
	}
	return -1
}

// queryPullOffset falls back to queryOffset.
func (s *slot) queryPullOffset(serverSideReset bool) int64 {
	if s.has&hasPull != 0 {
		return s.pull
	}
	return s.queryOffset(serverSideReset)
}

// takeReset is queryThenEraseResetOffset.
func (s *slot) takeReset() (int64, bool) {
	if s.has&hasReset == 0 {
		return 0, false
	}
	s.has &^= hasReset
	return s.reset, true
}
