package check

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// The history keeps exactly the last size events, whole, across its
// chunks' reuse, for window sizes on and off a chunk boundary, and holds
// no more chunks than its window needs.
func TestHistoryWindow(t *testing.T) {
	for _, size := range []int{1, 5, 1000, 1003, 3000} {
		h := newHistory(size)
		var added []model.Event
		for i := range 5*1024 + 17 {
			e := histTestEvent(i)
			if i%2 == 0 {
				h.add(&e, nil)
			} else {
				h.add(&e, e.AppendBinary(nil))
			}
			added = append(added, e)
			checkKept(t, &h, added, size, i%97 == 0 || i >= 5*1024)
		}
		if held := heldBytes(&h); held > size*100+2*histChunkBytes+1024 {
			t.Fatalf("size %d: %d bytes of chunks held", size, held)
		}
	}
}

// A history that shares its caller's buffer finds the same events as one
// that copies them, whatever the caller's buffers (sealed between events,
// with events it has not given yet, or empty) and however many of the
// events given are receives, which it does not keep; it hands back the
// buffers it no longer needs. The events go through ObserveShared (with
// their length) or ObserveEncoded (with their bytes), which write out
// addShared's common case; they are pulls and receives, which put no
// obligation on the ledger.
func TestHistorySharedBuffer(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, size := range []int{1, 7, 300, 2000} {
		c := New(Options{HistoryEvents: size})
		var buf []byte
		c.ShareBuffer(func() []byte { return buf })
		var kept []model.Event
		arrays := map[*byte]bool{} // the buffers Seal handed out, by their first byte
		peak := 0                  // the most chunks held at once, spare ones included
		seal := func() {
			buf = c.Seal(buf, 4096)
			if cap(buf) > 0 {
				arrays[&buf[:1][0]] = true
			}
		}
		for i := range 20000 {
			e := histTestEvent(i)
			e.Kind = model.EvPull
			receive := r.IntN(3) == 0
			if receive {
				e.Kind = model.EvReceive
			}
			from := len(buf)
			buf = e.AppendBinary(buf)
			bin := buf[from:]
			switch x := r.IntN(200); {
			case x == 0 || len(buf) >= 3000: // sealed before the event is given
				seal()
			case x == 1:
				seal()
				seal() // an empty one
			}
			if r.IntN(2) == 0 { // the tracer's call, or ObserveEncoded's, which makes it
				c.ObserveShared(&e, len(bin))
			} else {
				c.ObserveEncoded(&e, bin)
			}
			if !receive {
				kept = append(kept, e)
			}
			if r.IntN(300) == 0 {
				seal() // sealed after the event
			}
			checkKept(t, &c.hist, kept, size, i%89 == 0 || i >= 19900)
			peak = max(peak, len(c.hist.chunks)+len(c.hist.spare))
		}
		if held := heldBytes(&c.hist); held > size*200+4*4096 {
			t.Fatalf("size %d: %d bytes of chunks held", size, held)
		}
		if n := len(arrays); n > peak+2 {
			t.Fatalf("size %d: Seal handed out %d buffers: the spare ones were not handed back", size, n)
		}
	}
}

func histTestEvent(i int) model.Event {
	return model.Event{Seq: int64(3 * i), At: clock.Epoch + clock.Time(i), Kind: model.EvDeliver, Client: int32(i % 7),
		Msg: model.MsgID(i), Topic: "t", Shown: "%RETRY%g_t", Offset: int64(i), Group: strings.Repeat("g", i%13)}
}

// checkKept checks, when asked (check), that h finds the last size events
// of added and none before.
func checkKept(t *testing.T, h *history, added []model.Event, size int, check bool) {
	t.Helper()
	if !check {
		return
	}
	edge := len(added) - size // the oldest kept: every event around it is checked
	for k := max(edge-3, 0); k < len(added); k += 1 + k%37*b2i(k > edge+3) {
		want := added[k]
		got, ok := h.bySeq(want.Seq)
		kept := k >= len(added)-size
		if ok != kept || ok && got != want {
			t.Fatalf("size %d after %d events: event #%d found %v (%+v), want kept %v (%+v)", size, len(added), want.Seq, ok, got, kept, want)
		}
		if _, ok := h.bySeq(want.Seq + 1); ok {
			t.Fatalf("size %d: found event #%d, which was never added", size, want.Seq+1)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// heldBytes is the room of the chunks h holds.
func heldBytes(h *history) int {
	n := cap(h.own)
	for _, c := range h.chunks {
		n += cap(c.buf)
	}
	return n
}

// A message's remembered events are its first and its last histPerMsg,
// exactly, whatever the distances between them: within 32 bits of the
// first, far beyond (a message that lives for billions of events), or
// going back (a trace out of order, which the checker reports).
func TestSeqRingKeepsFirstAndLast(t *testing.T) {
	ringRounds(t, 31, false, func(seqs []int64) []int64 {
		var ring seqRing
		for _, seq := range seqs {
			ring.add(seq)
		}
		return ring.seqList()
	})
}

// note keeps an event once however often it names the message in a row,
// and otherwise keeps what add keeps, on both of the ring's forms.
func TestNoteSkipsRepeats(t *testing.T) {
	ringRounds(t, 33, true, func(seqs []int64) []int64 {
		var m msgState
		for _, seq := range seqs {
			m.note(&model.Event{Seq: seq})
		}
		return m.seqs.seqList()
	})
}

// start is note's first event of a message (onProduce's new message):
// the ring then keeps what note alone would have, on a reused record's
// ring too (its slots still hold the last message's distances).
func TestStartIsFirstNote(t *testing.T) {
	ringRounds(t, 35, true, func(seqs []int64) []int64 {
		var m msgState
		for k := range m.seqs.last {
			m.seqs.last[k] = uint32(1000 + k)
		}
		m.seqs.start(seqs[0])
		for _, seq := range seqs[1:] {
			m.note(&model.Event{Seq: seq})
		}
		return m.seqs.seqList()
	})
}

// ringRounds runs 500 rounds of up to 80 sequence numbers (nextSeq, with
// repeats in a row when asked, from a PCG seeded seed, seed+1) through
// keep, and checks that what keep returns is the first and last
// histPerMsg of them; with repeats, a repeat in a row counted once (note's
// rule; add keeps every one, and nextSeq can repeat a number by chance).
func ringRounds(t *testing.T, seed uint64, repeats bool, keep func(seqs []int64) []int64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for round := 0; round < 500; round++ {
		var seqs, all []int64
		seq := r.Int64N(1 << 40)
		for i, n := 0, 1+r.IntN(80); i < n; i++ {
			seq = nextSeq(r, seq, repeats)
			seqs = append(seqs, seq)
			if !repeats || len(all) == 0 || all[len(all)-1] != seq {
				all = append(all, seq)
			}
		}
		sameFirstAndLast(t, round, keep(seqs), all)
	}
}

// nextSeq is a random next sequence number after seq: mostly a step
// forward, sometimes past 32 bits away or back (a trace out of order),
// and with repeats, sometimes seq again.
func nextSeq(r *rand.Rand, seq int64, repeats bool) int64 {
	switch k := r.IntN(20); {
	case k == 0:
		return seq + 1<<32 + r.Int64N(1<<33)
	case k == 1:
		return seq - r.Int64N(100)
	case repeats && k <= 4:
		return seq
	}
	return seq + 1 + r.Int64N(1000)
}

// sameFirstAndLast fails unless got is all's first and its last
// histPerMsg, as a message's ring keeps them.
func sameFirstAndLast(t *testing.T, round int, got, all []int64) {
	t.Helper()
	want := all[max(len(all)-histPerMsg, 0):]
	if len(all) > histPerMsg {
		want = append([]int64{all[0]}, want...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("round %d: seqList = %v, want %v", round, got, want)
	}
}

// In a trace out of order the history finds what a search from the
// newest kept event back finds: the first event with the Seq asked for,
// unless one with a lower Seq comes first (the search the history made
// over a ring of Seqs before it read them from the binary forms).
func TestHistoryUnorderedScan(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 37))
	for _, size := range []int{1, 7, 1000, 3000} {
		h := newHistory(size)
		h.unordered = true
		var added []model.Event
		seq := int64(100)
		for i := range 6000 {
			e := histTestEvent(i)
			seq += int64(r.IntN(7)) - 2 // steps back and repeats
			e.Seq = seq
			h.add(&e, e.AppendBinary(nil))
			added = append(added, e)
			if i%97 != 0 && i < 5990 {
				continue
			}
			for range 50 {
				want := seq - int64(r.IntN(60))
				got, ok := h.bySeq(want)
				ref, rok := scanRef(added, size, want)
				if ok != rok || got != ref {
					t.Fatalf("size %d after %d events: #%d found %v (%+v), want %v (%+v)", size, len(added), want, ok, got, rok, ref)
				}
			}
		}
	}
}

// scanRef is the event of Seq seq among the last size of added, searched
// from the newest back up to the first lower Seq.
func scanRef(added []model.Event, size int, seq int64) (model.Event, bool) {
	for i := len(added) - 1; i >= max(len(added)-size, 0); i-- {
		if s := added[i].Seq; s == seq {
			return added[i], true
		} else if s < seq {
			break
		}
	}
	return model.Event{}, false
}

// The checker tells its history that the trace went out of order when an
// event's Seq does not follow the last one's, and not when only its time
// goes back.
func TestCheckerMarksHistoryUnordered(t *testing.T) {
	c := New(Options{})
	ev := func(seq int64, at clock.Time) {
		e := model.Event{Seq: seq, At: clock.Epoch + at, Kind: model.EvPull}
		c.Observe(&e)
	}
	ev(1, 10)
	ev(2, 5)
	if c.hist.unordered {
		t.Fatal("unordered after a time that went back")
	}
	ev(2, 20)
	if !c.hist.unordered {
		t.Fatal("ordered after a repeated Seq")
	}
}

// ObserveShared takes the length of an event's binary form only from a
// checker that shares its caller's buffer, and a length of 0 from none:
// either would put the history's index out of step with the buffer.
func TestObserveSharedMisuse(t *testing.T) {
	e := histTestEvent(1)
	for _, share := range []bool{false, true} {
		c := New(Options{})
		n := 9
		if share {
			c.ShareBuffer(func() []byte { return nil })
			n = 0
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("sharing %v: ObserveShared(e, %d) did not panic", share, n)
				}
			}()
			c.ObserveShared(&e, n)
		}()
	}
}
