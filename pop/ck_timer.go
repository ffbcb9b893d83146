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
// near it. Holders are allocated a block at a time (slab) and reused once
// delivered (free, up to timerFreeMax of them); so are slots (freeSlots).
type timerStore struct {
	queues    []timerQueue
	seq       uint64
	n         int
	free      []*timerMsg // delivered holders, at most timerFreeMax
	slab      []timerMsg
	freeSlots []*timerSlot
	// first is the next message over all queues when known (firstOK):
	// min is asked at every engine call, the queues change less often.
	first   *timerMsg
	firstOK bool
}

// timerQueue is one revive queue's messages: slots[head:] in delivery
// time order, none empty. next is the first of them (nil when none), and
// due and seq are its own, kept here so that min compares the queues
// without reaching into their slots and messages.
type timerQueue struct {
	slots []*timerSlot
	head  int
	next  *timerMsg
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
	tq.next, tq.due, tq.seq = m, m.due, m.seq
}

// timerSlot is the messages of one delivery time, msgs[head:] in put
// order.
type timerSlot struct {
	due  int64
	msgs []*timerMsg
	head int
}

// hold returns a holder for a message due at due, reusing a delivered
// one's.
func (t *timerStore) hold(due int64, msg timerBody, rev *reviveBody) *timerMsg {
	var m *timerMsg
	if n := len(t.free); n > 0 {
		m = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if len(t.slab) == 0 {
			t.slab = make([]timerMsg, timerSlab)
		}
		m = &t.slab[0]
		t.slab = t.slab[1:]
	}
	m.due, m.msg, m.rev = due, msg, rev
	return m
}

// A holder is 40 bytes: timerSlab of them fill a 6 KiB size class.
const timerSlab = 153

// timerFreeMax bounds the free holders kept. A run holds nearly every
// CK and ack message in the timer until it is due, so most deliveries
// come in the drain at its end, when nothing is held again: a free list
// of them all (a link in every holder, or a slice as long as the run's
// messages) would cost more than the few it serves. A holder not kept
// goes with its block once the block's others are delivered.
const timerFreeMax = 1024

// release takes back the holder of a delivered message.
func (t *timerStore) release(m *timerMsg) {
	*m = timerMsg{}
	if len(t.free) < timerFreeMax {
		t.free = append(t.free, m)
	}
}

func timerLess(a, b *timerMsg) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.seq < b.seq
}

// newSlot is an empty slot for delivery time due.
func (t *timerStore) newSlot(due int64) *timerSlot {
	if k := len(t.freeSlots) - 1; k >= 0 {
		s := t.freeSlots[k]
		t.freeSlots = t.freeSlots[:k]
		s.due = due
		return s
	}
	return &timerSlot{due: due}
}

func (t *timerStore) add(m *timerMsg) {
	q := int(m.msg.QueueID)
	for len(t.queues) <= q {
		t.queues = append(t.queues, timerQueue{})
	}
	t.seq++
	m.seq = t.seq
	tq := &t.queues[q]
	live := tq.slots[tq.head:]
	var s *timerSlot
	switch i := len(live) - 1; {
	case i < 0 || live[i].due < m.due: // after every held message, as a CK usually is
		s = t.newSlot(m.due)
		tq.slots = append(tq.slots, s)
	case live[i].due == m.due:
		s = live[i]
	default: // before the last slot: an ack's, usually in one of the last few
		j := i
		for ; j > 0 && j > i-4 && live[j-1].due >= m.due; j-- {
		}
		if j > 0 && live[j-1].due >= m.due { // further back: searched
			j, _ = slices.BinarySearchFunc(live[:j], m.due, func(s *timerSlot, due int64) int { return cmp.Compare(s.due, due) })
		}
		// live[j] is the first slot due at or after m
		if live[j].due == m.due {
			s = live[j]
		} else {
			s = t.newSlot(m.due)
			tq.slots = slices.Insert(tq.slots, tq.head+j, s)
		}
	}
	s.msgs = append(s.msgs, m)
	if tq.next == nil || timerLess(m, tq.next) {
		tq.refresh() // m is the queue's next: its slot is the first
	}
	t.n++
	if t.firstOK && (t.first == nil || timerLess(m, t.first)) {
		t.first = m
	}
}

// dueBy reports that a message may be due by nowMs: the first one known
// is, or the first is not known (min finds it). False: advanceTimer has
// nothing to deliver.
func (t *timerStore) dueBy(nowMs int64) bool {
	return !t.firstOK || t.first != nil && t.first.due <= nowMs
}

// min is the next message to deliver over all queues.
func (t *timerStore) min() (*timerMsg, bool) {
	if !t.firstOK {
		t.first, t.firstOK = nil, true
		var due int64
		var seq uint64
		for q := range t.queues {
			tq := &t.queues[q]
			if tq.next != nil && (t.first == nil || tq.due < due || tq.due == due && tq.seq < seq) {
				t.first, due, seq = tq.next, tq.due, tq.seq
			}
		}
		if invariants {
			for q := range t.queues {
				t.queues[q].check(int32(q))
			}
		}
	}
	return t.first, t.first != nil
}

// check asserts that next, due and seq are the queue's first message's.
func (tq *timerQueue) check(q int32) {
	var m *timerMsg
	if tq.head < len(tq.slots) {
		s := tq.slots[tq.head]
		m = s.msgs[s.head]
	}
	assertf(tq.next == m && (m == nil || tq.due == m.due && tq.seq == m.seq), "timer: revive queue %d's next message kept out of date", q)
}

// minFor is the next message for revive queue rq.
func (t *timerStore) minFor(rq int32) (*timerMsg, bool) {
	if rq < 0 || int(rq) >= len(t.queues) {
		return nil, false
	}
	tq := &t.queues[rq]
	if invariants {
		tq.check(rq)
	}
	return tq.next, tq.next != nil
}

// removeMin removes m, the next message of its queue (min, minFor).
func (t *timerStore) removeMin(m *timerMsg) {
	tq := &t.queues[m.msg.QueueID]
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
	t.n--
	if m == t.first {
		t.firstOK = false
	}
}

// each calls f for every held message, by queue then order.
func (t *timerStore) each(f func(m *timerMsg)) {
	for q := range t.queues {
		tq := &t.queues[q]
		for _, s := range tq.slots[tq.head:] {
			for _, m := range s.msgs[s.head:] {
				f(m)
			}
		}
	}
}
