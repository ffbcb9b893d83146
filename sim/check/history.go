package check

import (
	"math"
	"sort"

	"popsim/model"
)

// history keeps the most recent trace events, so that a violation can
// print its message's story without the checker holding every event of
// every message. It keeps them in their binary form (model's
// AppendBinary), back to back in chunks of bytes, and indexes the last
// size events it was given (starts: a ring of where each one's binary
// form begins; its Seq is read there, the binary form's first field).
// Chunks no kept event lies in
// are reused: no allocation once the ring and the chunks exist, and
// nothing for the garbage collector to scan (the events themselves hold
// strings).
//
// The chunks are filled in one of two ways. By default the history
// copies each event's binary form (or encodes the event) into a chunk of
// its own. A caller that writes every event's binary form into a buffer
// of its own anyway (the simulator's tracer, which hashes them) shares
// that buffer instead (Checker.ShareBuffer): the history copies nothing
// and counts the bytes of every event it is given, its receives
// included, to know where each event lies in the buffer; the caller
// hands the buffer over (Checker.Seal) before it would reuse it.
type history struct {
	size int   // events kept: the last size indexed
	n    int64 // events indexed
	// starts is a ring of the last size events indexed: the offset of
	// each one's binary form in its chunk. It grows as events come (past
	// pos: room). An event's Seq is not kept beside it (8 bytes an
	// event, written for every one and read only for a violation's
	// story): bySeq reads it from the binary form.
	starts []int32
	// unordered is set once an event did not follow the last by Seq (a
	// trace out of order, which the checker reports): bySeq then searches
	// the ring one entry at a time instead of halving it.
	unordered bool
	pos       int           // where the next event goes in the ring (size: at 0, once written)
	own       []byte        // the open chunk, when the history fills its own
	peek      func() []byte // the open chunk, when the caller's is shared (nil: not shared)
	// chunks are the chunks the kept events lie in, oldest first; the
	// last one is open (being filled). Events being given lie in
	// chunks[cur], from offset used: a chunk sealed with events the
	// caller has not given yet (cur is then before the last).
	chunks []histChunk
	cur    int
	used   int
	spare  [][]byte    // chunks no kept event lies in, emptied
	reuse  *ChunkSpare // a finished checker's chunks, taken when spare is empty (nil: none)
	// limit is where chunks[cur] ends when sealed (the largest int while
	// it is open; 0 before the first chunk); dropAt is the count of
	// events indexed at which chunks[0] holds no kept event any more
	// (chunks[1].first + size; the largest int64 while cur is 0).
	limit  int
	dropAt int64
}

// histChunk is a chunk: its bytes once sealed (nil while open) and the
// index of its first event (-1 until events are given in it).
type histChunk struct {
	buf   []byte
	first int64
}

// histChunkBytes is the size at which the history seals a chunk of its
// own: a simulator's event takes 30 to 60 bytes, so that a chunk holds
// about a thousand.
const histChunkBytes = 64 << 10

// newHistory keeps the last size events; chunks are made as events come,
// so that a short run (a property check) does not pay for a long one's.
func newHistory(size int) history {
	return history{size: size}
}

// start opens the first chunk.
func (h *history) start() {
	h.chunks = append(h.chunks, histChunk{first: 0})
	h.limit, h.dropAt = math.MaxInt, math.MaxInt64
	if h.peek == nil {
		h.own = h.fresh(histChunkBytes + 512)
	}
}

// add keeps e, whose binary form is bin (nil: encoded here), copying it
// into the history's own chunk.
func (h *history) add(e *model.Event, bin []byte) {
	if len(h.chunks) == 0 {
		h.start()
	} else if len(h.own) >= histChunkBytes {
		h.seal(h.own)
		h.own = h.fresh(histChunkBytes + 512)
	}
	from := len(h.own)
	if bin != nil {
		h.own = append(h.own, bin...)
	} else {
		h.own = e.AppendBinary(h.own)
	}
	h.used = len(h.own)
	h.index(from)
}

// addShared notes that the caller's shared buffer holds the binary form
// of e next, n bytes; the history keeps e unless it is a receive. The
// common case of a kept event (within the open chunk, room in the ring)
// is written out in ObserveShared, index's ring update with it: a call
// to a helper for it (over the inlining budget) cost more than the copy
// saved, and a receive within the open chunk is written out there too;
// the rest is in sharedSlow.
func (h *history) addShared(e *model.Event, n int) {
	to := h.used + n
	if to >= h.limit || n <= 0 || !receiveKind(e.Kind) {
		h.sharedSlow(e, n)
		return
	}
	h.used = to
}

// fastShared reports whether the event whose binary form takes n bytes,
// kept, goes into the shared buffer's open chunk (to is where it ends)
// and the ring's room without index's cases (ObserveShared's written-out
// common case of addShared). The ring's next slot is pos, unless pos is
// at its end (then the ring wraps or grows: index).
func (h *history) fastShared(to, n int) bool {
	return to < h.limit && n > 0 && uint(h.pos) < uint(len(h.starts)) // unsigned: the slot's bound check goes
}

// sharedSlow is addShared for the first event, an event given without
// its binary form, and the last event of a sealed chunk.
func (h *history) sharedSlow(e *model.Event, n int) {
	if n <= 0 {
		panic("check: an event without its binary form, given to a checker that shares its caller's buffer")
	}
	if len(h.chunks) == 0 {
		h.start()
	}
	from := h.used
	h.used += n
	if !receiveKind(e.Kind) {
		h.index(from)
	}
	if h.used >= h.limit {
		h.advance()
	}
}

// index adds the entry of an event in chunks[cur], forgetting the oldest
// beyond size and the chunks only they lay in.
func (h *history) index(from int) {
	if h.pos == h.size {
		h.pos = 0 // the ring wraps when an entry is written past its end
	}
	if h.pos >= len(h.starts) {
		h.grow()
	}
	h.starts[h.pos] = int32(from)
	h.pos++
	h.n++
	if h.n >= h.dropAt {
		h.drop()
	}
}

// grow makes the ring's room eight times larger, up to size entries
// (addShared writes the entries up to its length itself): a run long
// enough to fill the default ring grows it 1 024, 8 192, 65 536, where
// doubling left 252 KB of smaller rings behind, not 36.
func (h *history) grow() {
	starts := make([]int32, min(max(8*len(h.starts), 1024), h.size))
	copy(starts, h.starts)
	h.starts = starts
}

// drop forgets chunks[0] (no kept event lies in it) and those after it
// that have no kept event either, keeping their bytes for reuse.
func (h *history) drop() {
	lo := h.n - int64(h.size)
	k := 0
	for k < h.cur && h.chunks[k+1].first <= lo {
		if b := h.chunks[k].buf; b != nil {
			h.spare = append(h.spare, b[:0])
		}
		k++
	}
	n := copy(h.chunks, h.chunks[k:])
	clear(h.chunks[n:])
	h.chunks, h.cur = h.chunks[:n], h.cur-k
	h.bounds()
}

// bounds sets limit and dropAt from the chunks.
func (h *history) bounds() {
	h.limit, h.dropAt = math.MaxInt, math.MaxInt64
	if b := h.chunks[h.cur].buf; b != nil {
		h.limit = len(b)
	}
	if h.cur > 0 {
		h.dropAt = h.chunks[1].first + int64(h.size)
	}
}

// advance moves the events being given to the chunk after cur.
func (h *history) advance() {
	h.cur++
	h.used = 0
	h.chunks[h.cur].first = h.n
	h.bounds()
}

// seal closes the open chunk, whose bytes are buf, and opens the next.
// The events of buf not given yet stay in it (cur stays on it).
func (h *history) seal(buf []byte) {
	h.chunks[len(h.chunks)-1].buf = buf
	h.chunks = append(h.chunks, histChunk{first: -1})
	if h.cur == len(h.chunks)-2 && h.used >= len(buf) {
		h.advance()
	} else {
		h.bounds()
	}
}

// fresh is an empty chunk of at least room bytes: a spare one, else one
// from reuse, else a new one.
func (h *history) fresh(room int) []byte {
	if b := takeRoom(&h.spare, room); b != nil {
		return b
	}
	if h.reuse != nil {
		if b := takeRoom(&h.reuse.bufs, room); b != nil {
			return b
		}
	}
	return make([]byte, 0, room)
}

// takeRoom takes chunks from the end of *bufs until one has room for room
// bytes, and returns it emptied (nil if none had room: those it took are
// dropped).
func takeRoom(bufs *[][]byte, room int) []byte {
	for s := *bufs; len(s) > 0; s = *bufs {
		b := s[len(s)-1]
		s[len(s)-1] = nil
		*bufs = s[:len(s)-1]
		if cap(b) >= room {
			return b[:0]
		}
	}
	return nil
}

// chunkBytes is the bytes of chunks[k]: the open one's are the history's
// own or the caller's.
func (h *history) chunkBytes(k int) []byte {
	switch {
	case h.chunks[k].buf != nil:
		return h.chunks[k].buf
	case h.peek != nil:
		return h.peek()
	}
	return h.own
}

// bySeq returns the event with sequence number seq if it is still kept.
// Events arrive with growing Seq, so the kept events are searched by
// halving; in a trace out of order (unordered), from the newest back
// (scan).
func (h *history) bySeq(seq int64) (model.Event, bool) {
	lo := max(h.n-int64(h.size), 0)
	if h.unordered {
		return h.scan(seq, lo)
	}
	// The first entry whose Seq is not below seq, else n.
	i := lo + int64(sort.Search(int(h.n-lo), func(d int) bool {
		b, _ := h.entry(lo+int64(d), h.cur)
		return seqOf(b) >= seq
	}))
	if i == h.n {
		return model.Event{}, false
	}
	if b, _ := h.entry(i, h.cur); seqOf(b) == seq {
		e, _, err := model.DecodeEvent(b)
		return e, err == nil
	}
	return model.Event{}, false
}

// scan is bySeq for a trace out of order: the kept entries from the
// newest back to lo, up to the first whose Seq is seq (found) or below it.
func (h *history) scan(seq, lo int64) (model.Event, bool) {
	k := h.cur
	for i := h.n - 1; i >= lo; i-- {
		var b []byte
		b, k = h.entry(i, k)
		if s := seqOf(b); s == seq {
			e, _, err := model.DecodeEvent(b)
			return e, err == nil
		} else if s < seq {
			break
		}
	}
	return model.Event{}, false
}

// entry is the bytes from where kept entry i's binary form begins to its
// chunk's end, and that chunk's index, searched from chunk k back (k is
// i's or after it).
func (h *history) entry(i int64, k int) ([]byte, int) {
	j := h.pos - int(h.n-i) // entry i's place in the ring
	if j < 0 {
		j += h.size
	}
	for h.chunks[k].first > i || h.chunks[k].first < 0 {
		k--
	}
	return h.chunkBytes(k)[h.starts[j]:], k
}

// seqOf is the Seq of the event whose binary form b begins with
// (model.EventSeq); one that does not decode reads as the smallest int64,
// which no search matches.
func seqOf(b []byte) int64 {
	if s, ok := model.EventSeq(b); ok {
		return s
	}
	return math.MinInt64
}

// seqRing is a message's first event and its most recent ones, by Seq.
// The recent ones are kept as their distance from the first in 32 bits
// (every message has one: 96 bytes instead of 192), until one is not
// within 2^32 events after the first; then all of them move to wide.
//
// The fields every note reads (first, wide, latest, n, pos) come before
// the slots, side by side: in a msgState they share a cache line with
// the first delivery and the first two slots, and the next line holds
// the next sixteen slots (msgState says why; TestMsgStateLayout).
type seqRing struct {
	first int64
	wide  *[histPerMsg]int64 // Seq by slot, once a distance did not fit
	// latest is the latest event's distance (last's latest slot), kept so that
	// note tests a repeat without finding the slot (while wide is nil and
	// n > 0).
	latest uint32
	// n counts the events noted, up to histPerMsg+1 (then the first has
	// left the ring); pos is the slot of the next one.
	n, pos int16
	last   [histPerMsg]uint32 // Seq - first, by slot, while wide is nil
}

const histPerMsg = 24

// at is the Seq in slot k.
func (r *seqRing) at(k int16) int64 {
	if r.wide != nil {
		return r.wide[k]
	}
	return r.first + int64(r.last[k])
}

// start notes seq as the first event of an empty ring (add's case of
// n == 0, short enough to be inlined).
func (r *seqRing) start(seq int64) {
	r.first, r.last[0], r.latest, r.pos, r.n = seq, 0, 0, 1, 1
}

// add notes seq as the next event.
func (r *seqRing) add(seq int64) {
	if r.n == 0 {
		r.first = seq
	}
	k := r.pos
	r.step()
	if r.wide == nil {
		if d := seq - r.first; uint64(d) <= math.MaxUint32 {
			r.last[k], r.latest = uint32(d), uint32(d)
			return
		}
		w := new([histPerMsg]int64)
		for j, d := range r.last {
			w[j] = r.first + int64(d)
		}
		r.wide = w
	}
	r.wide[k] = seq
}

// step moves to the next slot and counts the event there.
func (r *seqRing) step() {
	if r.pos++; r.pos == histPerMsg {
		r.pos = 0
	}
	if r.n <= histPerMsg {
		r.n++
	}
}

// prev is the slot of the latest event (the ring holds one).
func (r *seqRing) prev() int16 {
	if r.pos == 0 {
		return histPerMsg - 1
	}
	return r.pos - 1
}

// seqList is the first event's Seq when it left the ring, then the
// ring's, oldest first.
func (r *seqRing) seqList() []int64 {
	var seqs []int64
	if r.n > histPerMsg {
		seqs = append(seqs, r.first)
	}
	kept := min(r.n, histPerMsg)
	k := (r.pos - kept + histPerMsg) % histPerMsg
	for range kept {
		seqs = append(seqs, r.at(k))
		if k++; k == histPerMsg {
			k = 0
		}
	}
	return seqs
}

// note records that e concerns the message, once: an event that names it
// twice is noted at its first mention. The common case (a distance from
// the first that fits in 32 bits) is done here without a call.
func (m *msgState) note(e *model.Event) {
	if r := &m.seqs; !r.noteNear(e.Seq) && (r.n == 0 || r.at(r.prev()) != e.Seq) {
		r.add(e.Seq)
	}
}

// noteNear is note's common case, short enough to be inlined where note
// is called most (a client's event on its lease, a lease, a produce): seq
// is noted (or was the latest already) when its distance from the first
// fits in 32 bits; false leaves it to note.
func (r *seqRing) noteNear(seq int64) bool {
	d := uint64(seq - r.first)
	if r.n == 0 || r.wide != nil || d > math.MaxUint32 {
		return false
	}
	if r.latest != uint32(d) {
		r.last[r.pos], r.latest = uint32(d), uint32(d)
		r.step()
	}
	return true
}

// lines returns the message's remembered events as text.
func (c *Checker) historyOf(m *msgState) []string {
	r := &m.seqs
	seqs := r.seqList()
	var out []string
	for i, s := range seqs {
		if i == 1 && r.n > histPerMsg {
			out = append(out, "...")
		}
		if e, ok := c.hist.bySeq(s); ok {
			out = append(out, e.String())
		} else {
			out = append(out, "(event #"+itoa(s)+" is older than the checker's history)")
		}
	}
	return out
}
