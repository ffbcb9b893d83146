package pop

import (
	"cmp"
	"slices"
)

// timerStore holds the timer's messages by revive queue (queue ids index
// the slice), each in (due, put order). A queue keeps one FIFO slot per
// delivery time, the slots sorted by it: a message joins the end of its
// delivery time's slot, since every message held was put before it. With
// timerPrecisionMs slots the delivery times are few (a CK's and its acks'
// land in the same few slots) and most puts join the last slot or one
// near it. A held message is its typed form, the body the revive topic
// keeps once delivered (reviveBody), which holds its queue, tag, born
// time and put order: no holder of its own, whose read at the delivery
// missed the cache as the body's did. Slots are reused (freeSlots).
type timerStore struct {
	queues    []timerQueue
	seq       uint64
	n         int
	freeSlots []*timerSlot
	spare     *[]*timerSlot // where newSlot goes when freeSlots is empty (nil: none; Broker.UseSpare)
	// first is the next message over all queues when known (firstOK),
	// firstDue its delivery time: min is asked at every engine call, the
	// queues change less often.
	first    *reviveBody
	firstDue int64
	firstOK  bool
	// warmBy is the time warm last read the messages due by, warmed the
	// sum of what it read.
	warmBy, warmed int64
}

// timerQueue is one revive queue's messages: slots[head:] in delivery
// time order, none empty. next is the first of them (nil when none), and
// due and seq are its own, kept here so that min compares the queues
// without reaching into their slots and messages.
type timerQueue struct {
	slots []*timerSlot
	head  int
	next  *reviveBody
	due   int64
	seq   uint64
}

// refresh sets next (and due, seq) from the slots, after a change.
func (tq *timerQueue) refresh() {
	if tq.head == len(tq.slots) {
		tq.next, tq.due, tq.seq = nil, 0, 0
		return
	}
	s := tq.slots[tq.head]
	m := s.msgs[s.head]
	tq.next, tq.due, tq.seq = m, s.due, m.seq
}

// timerSlot is the messages of one delivery time, msgs[head:] in put
// order. A message's delivery time is its slot's: its body does not keep
// it (the ~120 k CK and ack messages a run holds).
type timerSlot struct {
	due  int64
	msgs []*reviveBody
	head int
}

// reserve gives s room for n messages when it has less: a new slot is
// given its queue's last slot's room, which the messages of one delivery
// time fill one by one (late acks join a slot after the next is made),
// and an array grown by append to that length had allocated twice its
// final room on the way (the default run's 1.5 MB).
func (s *timerSlot) reserve(n int) {
	if cap(s.msgs) < n {
		s.msgs = make([]*reviveBody, 0, n)
	}
}

// timerLess reports that a message due at aDue, put seq aSeq, comes
// before one due at bDue, put bSeq.
func timerLess(aDue int64, aSeq uint64, bDue int64, bSeq uint64) bool {
	if aDue != bDue {
		return aDue < bDue
	}
	return aSeq < bSeq
}

// newSlot is an empty slot for delivery time due.
func (t *timerStore) newSlot(due int64) *timerSlot {
	if k := len(t.freeSlots) - 1; k >= 0 {
		s := t.freeSlots[k]
		t.freeSlots = t.freeSlots[:k]
		s.due = due
		return s
	}
	if s, ok := takeLast(t.spare); ok {
		s.due = due
		return s
	}
	return &timerSlot{due: due}
}

// recycle empties the timer, adding each of its slots, held and free,
// to spare: cleared, as a free slot is (its messages' array kept for
// their room).
func (t *timerStore) recycle(spare *[]*timerSlot) {
	for q := range t.queues {
		tq := &t.queues[q]
		for _, s := range tq.slots[tq.head:] {
			clear(s.msgs[:cap(s.msgs)])
			s.msgs, s.head, s.due = s.msgs[:0], 0, 0
			*spare = append(*spare, s)
		}
	}
	for _, s := range t.freeSlots {
		s.due = 0 // the rest is as removeMin left it: empty and cleared
		*spare = append(*spare, s)
	}
	*t = timerStore{}
}

// add holds m, due at due, in its revive queue (m.rq). It reports whether
// m is the queue's next message (minFor).
func (t *timerStore) add(m *reviveBody, due int64) bool {
	q := int(m.rq)
	for len(t.queues) <= q {
		t.queues = append(t.queues, timerQueue{})
	}
	t.seq++
	m.seq = t.seq
	tq := &t.queues[q]
	live := tq.slots[tq.head:]
	var s *timerSlot
	switch i := len(live) - 1; {
	case i < 0 || live[i].due < due: // after every held message, as a CK usually is
		s = t.newSlot(due)
		if i >= 0 {
			s.reserve(cap(live[i].msgs))
		}
		tq.slots = append(tq.slots, s)
	case live[i].due == due:
		s = live[i]
	default: // before the last slot: an ack's, usually in one of the last few
		j := i
		for ; j > 0 && j > i-4 && live[j-1].due >= due; j-- {
		}
		if j > 0 && live[j-1].due >= due { // further back: searched
			j, _ = slices.BinarySearchFunc(live[:j], due, func(s *timerSlot, due int64) int { return cmp.Compare(s.due, due) })
		}
		// live[j] is the first slot due at or after m
		if live[j].due == due {
			s = live[j]
		} else {
			s = t.newSlot(due)
			tq.slots = slices.Insert(tq.slots, tq.head+j, s)
		}
	}
	s.msgs = append(s.msgs, m)
	next := tq.next == nil || timerLess(due, m.seq, tq.due, tq.seq)
	if next {
		tq.refresh() // m is the queue's next: its slot is the first
	}
	t.n++
	if t.firstOK && (t.first == nil || timerLess(due, m.seq, t.firstDue, t.first.seq)) {
		t.first, t.firstDue = m, due
	}
	return next
}

// dueBy reports that a message may be due by nowMs: the first one known
// is, or the first is not known (min finds it). False: advanceTimer has
// nothing to deliver.
func (t *timerStore) dueBy(nowMs int64) bool {
	return !t.firstOK || t.first != nil && t.firstDue <= nowMs
}

// warm reads the headers of the first messages of every queue due by
// nowMs, before advanceTimer delivers them (touch), and has removeMin
// read those of the messages after them as the deliveries go on (warmBy).
// Every body was written a revive window (~60 s) before and is a cache
// miss at its delivery, which reads its header: the deliveries read them
// one after the other, each behind the last one's work, where the reads
// of a short loop are independent of each other and all in flight at
// once. The timer delivers in bursts (a slot's messages fall due
// at once), which are read a chunk ahead: the head slot's messages from
// its head to the end of the chunk after the head's (warmChunk) have
// been read.
func (t *timerStore) warm(nowMs int64) {
	t.warmBy = nowMs
	for q := range t.queues {
		if tq := &t.queues[q]; tq.next != nil && tq.due <= nowMs {
			s := tq.slots[tq.head]
			t.warmSlot(s, s.head, s.head&^(warmChunk-1)+2*warmChunk)
		}
	}
}

// warmAfter keeps the head slot s of a queue read a chunk ahead (warm)
// once a delivery has moved its head: into a new chunk (from h+warmChunk,
// the chunk after the new one, which warm or the last warmAfter read), or
// to a new slot (from 0). It inlines: most deliveries stay in a chunk.
func (t *timerStore) warmAfter(s *timerSlot) {
	if h := s.head; h%warmChunk == 0 && s.due <= t.warmBy {
		i := h + warmChunk
		if h == 0 {
			i = 0
		}
		t.warmSlot(s, i, h+2*warmChunk)
	}
}

// warmSlot reads the headers of s's messages from i to j (as far as it
// holds), keeping their sum (warmed) so that the reads are made.
func (t *timerStore) warmSlot(s *timerSlot, i, j int) {
	j = min(j, len(s.msgs))
	if i >= j {
		return
	}
	sum := t.warmed
	for _, m := range s.msgs[i:j] {
		sum += m.born + int64(m.rq)
	}
	t.warmed = sum
}

// warmChunk is the chunk in which a queue's deliveries, and a revive
// merge (warmMerge), read ahead: one to two chunks past the message or
// CK they are at.
const warmChunk = 16

// known is min's answer while it is remembered: the delivery time and
// whether there is a message, with remembered false when min has to look.
// It inlines, for NextCheckpointTick, which asks after every request.
func (t *timerStore) known() (due int64, has, remembered bool) {
	return t.firstDue, t.first != nil, t.firstOK
}

// min is the next message to deliver over all queues, and its delivery
// time.
func (t *timerStore) min() (*reviveBody, int64, bool) {
	if !t.firstOK {
		t.first, t.firstDue, t.firstOK = nil, 0, true
		var seq uint64
		for q := range t.queues {
			tq := &t.queues[q]
			if tq.next != nil && (t.first == nil || tq.due < t.firstDue || tq.due == t.firstDue && tq.seq < seq) {
				t.first, t.firstDue, seq = tq.next, tq.due, tq.seq
			}
		}
		if invariants {
			for q := range t.queues {
				t.queues[q].check(int32(q))
			}
		}
	}
	return t.first, t.firstDue, t.first != nil
}

// check asserts that next, due and seq are the queue's first message's.
func (tq *timerQueue) check(q int32) {
	var m *reviveBody
	if tq.head < len(tq.slots) {
		s := tq.slots[tq.head]
		m = s.msgs[s.head]
	}
	assertf(tq.next == m && (m == nil || tq.due == tq.slots[tq.head].due && tq.seq == m.seq), "timer: revive queue %d's next message kept out of date", q)
}

// minFor is the next message for revive queue rq, and its delivery time.
func (t *timerStore) minFor(rq int32) (*reviveBody, int64, bool) {
	if rq < 0 || int(rq) >= len(t.queues) {
		return nil, 0, false
	}
	tq := &t.queues[rq]
	if invariants {
		tq.check(rq)
	}
	return tq.next, tq.due, tq.next != nil
}

// removeMin removes m, the next message of its queue (min, minFor).
func (t *timerStore) removeMin(m *reviveBody) {
	tq := &t.queues[m.rq]
	s := tq.slots[tq.head]
	if invariants {
		assertf(s.msgs[s.head] == m, "timer: removeMin of a message that is not its queue's next")
	}
	s.msgs[s.head] = nil
	s.head++
	if s.head == len(s.msgs) { // the slot is done: reused
		clear(s.msgs)
		s.msgs, s.head = s.msgs[:0], 0
		t.freeSlots = append(t.freeSlots, s)
		tq.slots[tq.head] = nil
		tq.head++
		if tq.head == len(tq.slots) {
			tq.slots, tq.head = tq.slots[:0], 0
		} else if tq.head >= 32 && 2*tq.head >= len(tq.slots) { // move the live slots to the front
			n := copy(tq.slots, tq.slots[tq.head:])
			clear(tq.slots[n:])
			tq.slots, tq.head = tq.slots[:n], 0
		}
	}
	tq.refresh()
	if tq.next != nil {
		t.warmAfter(tq.slots[tq.head])
	}
	t.n--
	if m == t.first {
		t.firstOK = false
	}
}

// each calls f for every held message and its delivery time, by queue
// then order.
func (t *timerStore) each(f func(m *reviveBody, due int64)) {
	for q := range t.queues {
		tq := &t.queues[q]
		for _, s := range tq.slots[tq.head:] {
			for _, m := range s.msgs[s.head:] {
				f(m, s.due)
			}
		}
	}
}
