package check

import (
	"math"

	"popsim/model"
)

// history keeps the most recent trace events, so that a violation can
// print its message's story without the checker holding every event of
// every message. It keeps them in their binary form (model's
// AppendBinary), in blocks of histBlock events that it reuses once they
// fall out of the window: no allocation once the blocks exist, and
// nothing for the garbage collector to scan (the events themselves hold
// strings).
type history struct {
	blocks []*eventBlock // a ring: event i is in blocks[i/histBlock%len]
	size   int           // events kept: the last size added
	n      int64         // events added
	cur    *eventBlock   // the block event n goes to (set when n%histBlock == 0)
}

// eventBlock holds histBlock consecutive events: event j's sequence
// number is seqs[j] and its encoding buf[ends[j-1]:ends[j]].
type eventBlock struct {
	seqs [histBlock]int64
	ends [histBlock]int32
	buf  []byte
}

const histBlock = 1024

// histBlockBytes is a block's first room for its events' binary forms:
// a simulator's event takes 30 to 60 bytes, so that the block seldom
// grows (copying what it holds) as it fills.
const histBlockBytes = 64 * histBlock

// newHistory keeps the last size events; blocks are made as events come,
// so that a short run (a property check) does not pay for a long one's.
func newHistory(size int) history {
	return history{size: size}
}

// add keeps e, whose binary form is bin (nil: encoded here). The common
// case (bin given, room in the current block) is done here; the rest in
// addSlow, kept out of line so that this stays short.
func (h *history) add(e *model.Event, bin []byte) {
	j := uint64(h.n) % histBlock
	b := h.cur
	if j == 0 || bin == nil || len(bin) > cap(b.buf)-len(b.buf) {
		h.addSlow(e, bin)
		return
	}
	n := len(b.buf)
	b.buf = b.buf[:n+len(bin)]
	copy(b.buf[n:], bin)
	b.seqs[j] = e.Seq
	b.ends[j] = int32(len(b.buf))
	h.n++
}

// addSlow is add starting a block, encoding e, or growing the block.
//
//go:noinline
func (h *history) addSlow(e *model.Event, bin []byte) {
	j := uint64(h.n) % histBlock
	if j == 0 {
		h.next()
	}
	b := h.cur
	if bin != nil {
		b.buf = append(b.buf, bin...)
	} else {
		b.buf = e.AppendBinary(b.buf)
	}
	b.seqs[j] = e.Seq
	b.ends[j] = int32(len(b.buf))
	h.n++
}

// next starts the block of event n (a multiple of histBlock), emptying
// the one it reuses.
func (h *history) next() {
	k := int(h.n / histBlock)
	if nb := (h.size+histBlock-1)/histBlock + 1; k >= nb {
		k %= nb
	} else if k == len(h.blocks) {
		h.blocks = append(h.blocks, &eventBlock{buf: make([]byte, 0, histBlockBytes)})
	}
	b := h.blocks[k]
	b.buf = b.buf[:0]
	h.cur = b
}

// bySeq returns the event with sequence number seq if it is still kept.
// Events arrive with growing Seq, so the kept events are searched from the
// newest back.
func (h *history) bySeq(seq int64) (model.Event, bool) {
	lo := max(h.n-int64(h.size), 0)
	for i := h.n - 1; i >= lo; i-- {
		b := h.blocks[int(i/histBlock)%len(h.blocks)]
		j := int(i % histBlock)
		if s := b.seqs[j]; s == seq {
			from := int32(0)
			if j > 0 {
				from = b.ends[j-1]
			}
			e, _, err := model.DecodeEvent(b.buf[from:b.ends[j]])
			return e, err == nil
		} else if s < seq {
			break
		}
	}
	return model.Event{}, false
}

// seqRing is a message's first event and its most recent ones, by Seq.
// The recent ones are kept as their distance from the first in 32 bits
// (every message has one: 96 bytes instead of 192), until one is not
// within 2^32 events after the first; then all of them move to wide.
type seqRing struct {
	first int64
	last  [histPerMsg]uint32 // Seq - first, by slot, while wide is nil
	// n counts the events noted, up to histPerMsg+1 (then the first has
	// left the ring); pos is the slot of the next one.
	n, pos int32
	wide   *[histPerMsg]int64 // Seq by slot, once a distance did not fit
}

const histPerMsg = 24

// at is the Seq in slot k.
func (r *seqRing) at(k int32) int64 {
	if r.wide != nil {
		return r.wide[k]
	}
	return r.first + int64(r.last[k])
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
			r.last[k] = uint32(d)
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
func (r *seqRing) prev() int32 {
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
	r := &m.seqs
	d := e.Seq - r.first
	if r.n == 0 || r.wide != nil || uint64(d) > math.MaxUint32 {
		if r.n == 0 || r.at(r.prev()) != e.Seq {
			r.add(e.Seq)
		}
		return
	}
	if r.last[r.prev()] == uint32(d) {
		return
	}
	r.last[r.pos] = uint32(d)
	r.step()
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
