package check

import (
	"math"

	"popsim/model"
)

// tombstones holds, per queue, what remains of the forgotten messages that
// were lent there, by offset.
//
// A queue's messages are forgotten roughly in offset order and its commits
// drop them in offset order, so each queue keeps its tombstones in a
// window of slots indexed by offset (tombQueue): no hashing, no map growth,
// and no pointers for the garbage collector to follow (a tombstone names
// its topic by an index into the group's few topics). An offset far from
// the window goes to the queue's map instead (far), so that a stray offset
// never makes the window large. Queues are found without hashing: by
// topic in a short list, then by queue number.
type tombstones struct {
	byTopic []tombTopic
	names   []string // the produced topics the tombstones name, by index
}

// tombTopic is one topic's queues: queues[q] for 0 <= q < tombQueues,
// far for the others (a malformed trace). The queues are held by value:
// a hot topic's hundreds of queues are reached without a pointer each
// (a forgotten message's queue is mostly not the last one's, so each
// step to it is a cache miss natively).
type tombTopic struct {
	topic  string
	queues []tombQueue
	far    map[int32]*tombQueue
}

const tombQueues = 1 << 14

// tomb is what remains of a forgotten message at one of its places.
type tomb struct {
	msg       model.MsgID
	topic     string // the produced topic
	lastLease int64  // the trace position (Seq+1) of its last lease there
	pulled    bool   // that last lease was a pull delivery
}

// tombQueue is one queue's tombstones: offset lo+i is in slots[head+i]
// when that slot is used, else in far, else absent. An offset is never in
// both (put looks in far first). The slots outside the window (below
// head, and past its length) may hold anything: a put that brings one
// into the window writes or clears it.
type tombQueue struct {
	lo    int64
	slots []tombSlot
	head  int
	far   *farTombs // nil while empty: a queue is 48 bytes, a hot topic has hundreds
}

// farTombs is a queue's far map, and hi, at least every offset in it (an
// offset above it is not in the map: putSlow may store it as putNear
// would).
type farTombs struct {
	m  map[int64]farTomb
	hi int64
}

// tombSlot is a tomb without pointers, in 16 bytes (a window holds
// thousands of them while a queue's commits lag); used marks a slot that
// holds one. A tomb whose topic's index does not fit in topic goes to its
// queue's far map instead (farTomb).
type tombSlot struct {
	lastLease int64
	msg       model.MsgID
	topic     uint16 // index into tombstones.names
	pulled    bool
	used      bool
}

// farTomb is a tomb in a queue's far map: its topic index is not bounded
// by a slot's 16 bits.
type farTomb struct {
	msg       model.MsgID
	lastLease int64
	topic     int32 // index into tombstones.names
	pulled    bool
}

// far is the slot's tomb in the far map's form.
func (s tombSlot) far() farTomb {
	return farTomb{msg: s.msg, lastLease: s.lastLease, topic: int32(s.topic), pulled: s.pulled}
}

// tombRoom is the storage a queue's window starts with. Grown from one
// slot by doubling, a hot topic's hundreds of queues took six
// allocations each for their first tens of tombstones (1.1 M
// instructions of the 500-queue hot topic's checker, callgrind).
const tombRoom = 64

// tombGap is how far past its end (or before its start) the window grows
// to take an offset; farther ones go to far.
const tombGap = 4096

// tombBehind is how far before its start the window moves up in its
// slice (or grows) to take an offset when it has not that much room in
// front; farther ones go to far, until the queue's commit drops them. In
// the default run they are a retried message's first place, forgotten
// thousands of offsets behind its queue's window, and each moved the
// window up (memmove) and cleared as much in front, then the next one, a
// few hundred further behind, moved the whole again: 190 k of the run's
// 2.70 M LL write misses (callgrind).
const tombBehind = 256

// queue is the tombQueue of topic and queue, made if asked, else nil
// when there is none (an empty one may be returned for a queue never
// used below the topic's highest).
func (t *tombstones) queue(topic string, queue int32, add bool) *tombQueue {
	tt := t.topic(topic)
	if tt == nil {
		if !add {
			return nil
		}
		t.byTopic = append(t.byTopic, tombTopic{topic: topic})
		tt = &t.byTopic[len(t.byTopic)-1]
	}
	if queue < 0 || queue >= tombQueues {
		q := tt.far[queue]
		if q == nil && add {
			if tt.far == nil {
				tt.far = map[int32]*tombQueue{}
			}
			q = &tombQueue{}
			tt.far[queue] = q
		}
		return q
	}
	if int(queue) >= len(tt.queues) {
		if !add {
			return nil
		}
		tt.queues = append(tt.queues, make([]tombQueue, int(queue)+1-len(tt.queues))...)
	}
	return &tt.queues[queue] // good until the next queue added
}

// topic is topic's queues, nil if it has none yet.
func (t *tombstones) topic(topic string) *tombTopic {
	for i := range t.byTopic {
		if sameName(t.byTopic[i].topic, topic) {
			return &t.byTopic[i]
		}
	}
	return nil
}

func (t *tombstones) get(p place) (tomb, bool) {
	q := t.queue(p.topic, p.queue, false)
	if q == nil {
		return tomb{}, false
	}
	s, ok := q.get(p.offset)
	if !ok {
		return tomb{}, false
	}
	return tomb{msg: s.msg, topic: t.names[s.topic], lastLease: s.lastLease, pulled: s.pulled}, true
}

func (t *tombstones) put(p place, x tomb) {
	var q *tombQueue
	if tt := t.topic(p.topic); tt != nil && p.queue >= 0 && int(p.queue) < len(tt.queues) {
		q = &tt.queues[p.queue] // mostly: queue's common case, without its call
	} else {
		q = t.queue(p.topic, p.queue, true)
	}
	if k := t.nameIndex(x.topic); k <= math.MaxUint16 {
		q.put(p.offset, tombSlot{msg: x.msg, lastLease: x.lastLease, topic: uint16(k), pulled: x.pulled, used: true})
	} else {
		q.putFar(p.offset, farTomb{msg: x.msg, lastLease: x.lastLease, topic: k, pulled: x.pulled})
	}
}

// forgot is put for forgetSettled: message m's tomb at its place p (p.leased
// != 0), built from the record without making the tomb and the place as
// values (nine words, passed on the stack), and stored without a call in the
// common case (a queue known, the topic's name at a small index, an offset
// in the queue's window or just past its end with room, above every offset
// in the far map): putNear's parts inline.
func (t *tombstones) forgot(p *placeRec, m *msgState) {
	tt := t.topic(p.topic)
	k := t.nameIndex(m.topic)
	if tt == nil || uint32(p.queue) >= uint32(len(tt.queues)) || k > math.MaxUint16 {
		t.put(p.place, tomb{msg: m.id, topic: m.topic, lastLease: p.leased, pulled: m.pulledAt == p.leased})
		return
	}
	q := &tt.queues[p.queue]
	s := tombSlot{msg: m.id, lastLease: p.leased, topic: uint16(k), pulled: m.pulledAt == p.leased, used: true}
	if !(q.farBelow(p.offset) && q.putWindow(p.offset, s)) { // putNear, written out
		q.putSlow(p.offset, s)
	}
}

// dropBelow forgets the queue's tombstones below offset.
func (t *tombstones) dropBelow(k queueKey, offset int64) {
	if q := t.queue(k.topic, k.queue, false); q != nil {
		q.dropBelow(offset)
	}
}

// len counts the tombstones (for tests: nothing keeps the count as they
// come and go, which spared a commit's drop a count of the slots it
// clears).
func (t *tombstones) len() int {
	n := 0
	for i := range t.byTopic {
		tt := &t.byTopic[i]
		for j := range tt.queues {
			n += tt.queues[j].len()
		}
		for _, q := range tt.far { // counting only: order does not matter
			n += q.len()
		}
	}
	return n
}

// len counts the queue's tombstones.
func (q *tombQueue) len() int {
	n := 0
	if q.far != nil {
		n = len(q.far.m)
	}
	for _, s := range q.slots[q.head:] {
		if s.used {
			n++
		}
	}
	return n
}

// nameIndex is topic's index in t.names, added if new. A group's
// tombstones name one topic or very few: a linear search is enough.
func (t *tombstones) nameIndex(topic string) int32 {
	for i, s := range t.names {
		if sameName(s, topic) {
			return int32(i)
		}
	}
	t.names = append(t.names, topic)
	return int32(len(t.names) - 1)
}

func (q *tombQueue) get(o int64) (farTomb, bool) {
	if q.far != nil {
		if s, ok := q.far.m[o]; ok {
			return s, true
		}
	}
	if s := q.slot(o); s != nil && s.used {
		return s.far(), true
	}
	return farTomb{}, false
}

// slot is the window's slot of offset o, nil when o is outside the window.
func (q *tombQueue) slot(o int64) *tombSlot {
	d, ok := above(o, q.lo)
	if !ok || d >= uint64(len(q.slots)-q.head) {
		return nil
	}
	return &q.slots[q.head+int(d)]
}

// putFar stores w at offset o in the far map: a tomb whose topic index
// does not fit in a slot (a trace with more than 65536 topics).
func (q *tombQueue) putFar(o int64, w farTomb) {
	if s := q.slot(o); s != nil {
		*s = tombSlot{} // an offset is never in both
	}
	q.setFar(o, w)
}

// setFar stores w at offset o in the far map, which o is not in.
func (q *tombQueue) setFar(o int64, w farTomb) {
	if q.far == nil {
		q.far = &farTombs{m: map[int64]farTomb{}, hi: o}
	}
	q.far.m[o] = w
	q.far.hi = max(q.far.hi, o)
}

// above is how far o is above lo, and whether o >= lo. It is computed in
// uint64, so that offsets of a malformed trace far apart (MinInt64 and
// MaxInt64) do not overflow into a small distance.
func above(o, lo int64) (uint64, bool) { return uint64(o) - uint64(lo), o >= lo }

// put stores s at offset o. Mostly o is
// in the window or just past its end, with room in the slice: written
// here, the rest is putSlow's.
func (q *tombQueue) put(o int64, s tombSlot) {
	if !q.putNear(o, s) {
		q.putSlow(o, s)
	}
}

// putNear is put's common case: it stores s at offset o, and reports
// true, when o is in the window or just past its end with room in the
// slice, and above every offset in the far map.
func (q *tombQueue) putNear(o int64, s tombSlot) bool {
	return q.farBelow(o) && q.putWindow(o, s)
}

// farBelow reports whether every offset in the far map is below o.
func (q *tombQueue) farBelow(o int64) bool { return q.far == nil || o > q.far.hi }

// putWindow is putNear without its test of the far map, for an o not in
// it: inlined where putNear, over the inliner's budget, is written out.
func (q *tombQueue) putWindow(o int64, s tombSlot) bool {
	if d, n := uint64(o)-uint64(q.lo), len(q.slots)-q.head; o >= q.lo && n > 0 {
		switch {
		case d < uint64(n):
			q.slots[q.head+int(d)] = s
			return true
		case d == uint64(n) && len(q.slots) < cap(q.slots):
			q.slots = append(q.slots, s)
			return true
		}
	}
	return false
}

// putSlow is put's general case.
func (q *tombQueue) putSlow(o int64, s tombSlot) {
	if q.far != nil && o <= q.far.hi {
		if _, ok := q.far.m[o]; ok {
			q.far.m[o] = s.far()
			return
		}
	}
	n := len(q.slots) - q.head
	d, after := above(o, q.lo)
	b, _ := above(q.lo, o)
	switch {
	case n == 0:
		if cap(q.slots) == 0 {
			q.slots = make([]tombSlot, 0, tombRoom)
		}
		// Room in front, within the slice it has, for stragglers (a
		// straggler's put clears what it reuses of it).
		h := min(cap(q.slots)/4, 256)
		q.slots, q.head, q.lo = append(q.slots[:h], s), h, o
		return
	case after && d < uint64(n):
		q.slots[q.head+int(d)] = s
		return
	case after && d-uint64(n) < tombGap:
		need := len(q.slots) + int(d) - n + 1
		if need <= cap(q.slots) && d-uint64(n) <= 8 {
			// A short gap in the room the slice has (a message forgotten
			// before the few below it, as the default's are a third of
			// the time): cleared here, without the runtime's call.
			q.slots = q.slots[:need]
			for i := len(q.slots) - 1 - int(d-uint64(n)); i < need-1; i++ {
				q.slots[i] = tombSlot{}
			}
			q.slots[need-1] = s
			return
		}
		if need > cap(q.slots) && 2*q.head >= len(q.slots) {
			q.compact()
		}
		// The gap and s in one step (the runtime clears the gap).
		q.slots = append(q.slots, make([]tombSlot, int(d)-n+1)...)
		q.slots[len(q.slots)-1] = s
		return
	case !after && b < tombGap && (b <= uint64(q.head) || b < tombBehind):
		d := int(b)
		if d <= q.head {
			q.head -= d
			clear(q.slots[q.head+1 : q.head+d]) // dropBelow leaves the slots it passed as they were
		} else {
			// Room in front too: stragglers behind the window come one
			// at a time.
			front := max(d, n, 32)
			if front+n <= cap(q.slots) { // move it up in the slice it has
				up := q.slots[:front+n]
				copy(up[front:], q.slots[q.head:q.head+n])
				// Only the gap between s and the old window is cleared:
				// below s is room that the next straggler's put clears
				// as it reuses it. (Clearing all of the room in front,
				// as large as the window, was 116 k of the default
				// run's 2.70 M LL write misses, callgrind.)
				clear(up[front-d+1 : front])
				q.slots, q.head = up, front-d
			} else {
				grown := make([]tombSlot, front+n, front+2*n)
				copy(grown[front:], q.slots[q.head:])
				q.slots, q.head = grown, front-d
			}
		}
		q.slots[q.head] = s
		q.lo = o
		return
	}
	q.setFar(o, s.far())
}

// dropBelow forgets the tombstones below offset. The slots it passes
// keep what they held: a straggler's put, which reuses them as room in
// front (also after compact), clears them, where clearing them here
// wrote every dropped line again, long after it left the cache (default
// scenario: 146 k of the run's 2.85 M LL write misses, callgrind).
func (q *tombQueue) dropBelow(offset int64) {
	if q.far != nil {
		for o := range q.far.m { // deletion only: order does not matter
			if o < offset {
				delete(q.far.m, o)
			}
		}
		if len(q.far.m) == 0 {
			q.far = nil // putNear's fast path again
		}
	}
	if d, ok := above(offset, q.lo); ok && d > 0 {
		k := int(min(d, uint64(len(q.slots)-q.head)))
		q.head += k
		q.lo += int64(k)
	}
	if q.head == len(q.slots) {
		q.slots, q.head = q.slots[:0], 0
	}
}

// compact moves the window down to the start of its slice, leaving a
// little room in front for stragglers, when it is to grow at its end and
// the dropped slots in front are at least half the slice. (Compacting at
// every drop instead took away the room in front that a straggler's
// growth had just made, and the next straggler grew the window again.)
func (q *tombQueue) compact() {
	keep := min(q.head, 64) // room in front: a straggler's put clears what it reuses of it
	n := copy(q.slots[keep:], q.slots[q.head:])
	clear(q.slots[keep+n:])
	q.slots, q.head = q.slots[:keep+n], keep
}
