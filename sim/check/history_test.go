package check

import (
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
