package check

import "popsim/model"

// history keeps the most recent trace events, so that a violation can
// print its message's story without the checker holding every event of
// every message.
type history struct {
	ring []model.Event // grows to size, then wraps
	size int
	n    int64 // events added
}

// newHistory keeps the last size events; the ring grows as events come, so
// that a short run (a property check) does not pay for a long one's.
func newHistory(size int) history {
	return history{ring: make([]model.Event, 0, min(size, 1024)), size: size}
}

func (h *history) add(e *model.Event) {
	if len(h.ring) < h.size {
		h.ring = append(h.ring, *e) // n == len(ring) until it is full
	} else {
		h.ring[h.n%int64(h.size)] = *e
	}
	h.n++
}

// bySeq returns the event with sequence number seq if it is still kept.
// Events arrive with growing Seq, so the ring is searched by position.
func (h *history) bySeq(seq int64) (model.Event, bool) {
	size := int64(len(h.ring))
	lo := max(h.n-size, 0)
	for i := h.n - 1; i >= lo; i-- {
		e := &h.ring[i%size]
		if e.Seq == seq {
			return *e, true
		}
		if e.Seq < seq {
			break
		}
	}
	return model.Event{}, false
}

// seqRing is a message's first event and its most recent ones, by Seq.
type seqRing struct {
	first int64
	last  [histPerMsg]int64
	n     int
}

const histPerMsg = 24

// note records that e concerns the message.
func (m *msgState) note(e *model.Event) {
	r := &m.seqs
	if r.n == 0 {
		r.first = e.Seq
	} else if r.last[(r.n-1)%histPerMsg] == e.Seq {
		return
	}
	r.last[r.n%histPerMsg] = e.Seq
	r.n++
}

// lines returns the message's remembered events as text.
func (c *Checker) historyOf(m *msgState) []string {
	r := &m.seqs
	var seqs []int64
	if r.n > histPerMsg {
		seqs = append(seqs, r.first)
	}
	for i := max(r.n-histPerMsg, 0); i < r.n; i++ {
		seqs = append(seqs, r.last[i%histPerMsg])
	}
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
