package check

import (
	"math/rand/v2"
	"slices"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// The history keeps exactly the last size events, whole, across its
// blocks' reuse, for window sizes on and off a block boundary.
func TestHistoryWindow(t *testing.T) {
	for _, size := range []int{1, 5, histBlock, histBlock + 3, 3 * histBlock} {
		h := newHistory(size)
		var added []model.Event
		for i := range 5*histBlock + 17 {
			e := model.Event{Seq: int64(3 * i), At: clock.Epoch + clock.Time(i), Kind: model.EvDeliver, Client: int32(i % 7),
				Msg: model.MsgID(i), Topic: "t", Shown: "%RETRY%g_t", Offset: int64(i)}
			if i%2 == 0 {
				h.add(&e, nil)
			} else {
				h.add(&e, e.AppendBinary(nil))
			}
			added = append(added, e)
			if i%97 != 0 && i < 5*histBlock {
				continue
			}
			for k := max(len(added)-size-3, 0); k < len(added); k += 1 + k%37 {
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
		if len(h.blocks) > (size+histBlock-1)/histBlock+1 {
			t.Fatalf("size %d: %d blocks held", size, len(h.blocks))
		}
	}
}

// A message's remembered events are its first and its last histPerMsg,
// exactly, whatever the distances between them: within 32 bits of the
// first, far beyond (a message that lives for billions of events), or
// going back (a trace out of order, which the checker reports).
func TestSeqRingKeepsFirstAndLast(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for round := 0; round < 500; round++ {
		var ring seqRing
		var all []int64
		seq := r.Int64N(1 << 40)
		for i, n := 0, 1+r.IntN(80); i < n; i++ {
			switch r.IntN(20) {
			case 0:
				seq += 1<<32 + r.Int64N(1<<33)
			case 1:
				seq -= r.Int64N(100)
			default:
				seq += 1 + r.Int64N(1000)
			}
			ring.add(seq)
			all = append(all, seq)
		}
		want := all[max(len(all)-histPerMsg, 0):]
		if len(all) > histPerMsg {
			want = append([]int64{all[0]}, want...)
		}
		if got := ring.seqList(); !slices.Equal(got, want) {
			t.Fatalf("round %d: seqList = %v, want %v", round, got, want)
		}
	}
}

// note keeps an event once however often it names the message in a row,
// and otherwise keeps what add keeps, on both of the ring's forms.
func TestNoteSkipsRepeats(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for round := 0; round < 500; round++ {
		var m msgState
		var all []int64
		seq := r.Int64N(1 << 40)
		for i, n := 0, 1+r.IntN(80); i < n; i++ {
			switch r.IntN(20) {
			case 0:
				seq += 1<<32 + r.Int64N(1<<33)
			case 1:
				seq -= r.Int64N(100)
			case 2, 3, 4:
				// the same event again
			default:
				seq += 1 + r.Int64N(1000)
			}
			m.note(&model.Event{Seq: seq})
			if len(all) == 0 || all[len(all)-1] != seq {
				all = append(all, seq)
			}
		}
		want := all[max(len(all)-histPerMsg, 0):]
		if len(all) > histPerMsg {
			want = append([]int64{all[0]}, want...)
		}
		if got := m.seqs.seqList(); !slices.Equal(got, want) {
			t.Fatalf("round %d: seqList = %v, want %v", round, got, want)
		}
	}
}
