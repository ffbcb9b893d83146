package sim

import (
	"slices"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestHolMeter follows one orderly queue through a failed message, the
// messages behind it and its settling, and a concurrent topic it must not
// count.
func TestHolMeter(t *testing.T) {
	h := newHolMeter()
	at := func(s int64) clock.Time { return clock.Time(s * int64(clock.Second)) }
	ev := func(s int64, e model.Event) { e.At = at(s); h.observe(&e, e.Msg, nil) }
	ev(0, model.Event{Kind: model.EvSubscribe, Topic: "fifo", Reason: model.ROrderly})
	ev(0, model.Event{Kind: model.EvSubscribe, Topic: "plain"})
	for id := model.MsgID(1); id <= 3; id++ {
		ev(1, model.Event{Kind: model.EvProduce, Msg: id, Topic: "fifo", Queue: 0})
	}
	ev(1, model.Event{Kind: model.EvProduce, Msg: 4, Topic: "fifo", Queue: 1})
	ev(1, model.Event{Kind: model.EvProduce, Msg: 5, Topic: "plain", Queue: 0})
	ev(2, model.Event{Kind: model.EvConsumeEnd, Msg: 5, Reason: model.RException}) // not orderly
	ev(2, model.Event{Kind: model.EvConsumeEnd, Msg: 4, Reason: model.RSuccess})
	h.settled(4)
	ev(2, model.Event{Kind: model.EvConsumeEnd, Msg: 1, Reason: model.RException}) // queue 0 blocks at 2 s
	ev(2, model.Event{Kind: model.EvExpiredLocal, Msg: 2, Reason: model.RSkipped})
	ev(5, model.Event{Kind: model.EvProduce, Msg: 6, Topic: "fifo", Queue: 0}) // backlog 3 behind 1
	ev(12, model.Event{Kind: model.EvLapse, Msg: 1})
	ev(20, model.Event{Kind: model.EvDLQ, Msg: 1})
	h.settled(1) // 2 failed too: still blocked
	ev(21, model.Event{Kind: model.EvConsumeEnd, Msg: 2, Reason: model.RSuccess})
	h.settled(2)                                                                // unblocked at 21 s: one episode of 19 s
	ev(22, model.Event{Kind: model.EvConsumeEnd, Msg: 3, Reason: model.RLater}) // a second, open at the end
	got := h.summary(at(30))
	if got.Queues != 2 || got.Blocked != 1 || got.Episodes.Count != 2 || got.MaxBacklog != 3 {
		t.Errorf("queues %d, blocked %d, episodes %d, max backlog %d; want 2, 1, 2, 3", got.Queues, got.Blocked, got.Episodes.Count, got.MaxBacklog)
	}
	if want := int64(19+8) * int64(clock.Second); got.TotalUs != want {
		t.Errorf("blocked in all %d µs, want %d", got.TotalUs, want)
	}
	if lo, hi := int64(19*clock.Second)*999/1000, int64(19*clock.Second)*1001/1000; got.Episodes.Max < lo || got.Episodes.Max > hi {
		t.Errorf("longest episode %d µs, want 19 s", got.Episodes.Max)
	}
	if again := h.summary(at(30)); *again != *got {
		t.Errorf("a second summary differs: %+v, then %+v", got, again)
	}
	if newHolMeter().summary(at(1)) != nil {
		t.Error("a run without orderly groups has a head-of-line summary")
	}
}

// TestHolMeterPassed: an engine commit passes, in id order, exactly the
// open messages of its own queue consumed successfully below its offset;
// a settled one is not passed again, a client's commit passes nothing.
func TestHolMeterPassed(t *testing.T) {
	h := newHolMeter()
	ev := func(e model.Event) { h.observe(&e, e.Msg, nil) }
	ev(model.Event{Kind: model.EvSubscribe, Topic: "fifo", Reason: model.ROrderly})
	// ids 5..1 at offsets 0..4 of queue 0; id 6 at offset 0 of queue 1
	for off := int64(0); off < 5; off++ {
		ev(model.Event{Kind: model.EvProduce, Msg: model.MsgID(5 - off), Topic: "fifo", Queue: 0, Offset: off})
	}
	ev(model.Event{Kind: model.EvProduce, Msg: 6, Topic: "fifo", Queue: 1, Offset: 0})
	for _, id := range []model.MsgID{5, 4, 2, 6, 4} { // 3 (offset 2) not consumed; 4 twice
		ev(model.Event{Kind: model.EvConsumeEnd, Msg: id, Reason: model.RSuccess})
	}
	commit := func(q int32, off int64, client int32) []model.MsgID {
		return h.passed(&model.Event{Kind: model.EvCommit, Topic: "fifo", Queue: q, Offset: off, Client: client}, nil)
	}
	if got := commit(0, 4, 0); got != nil {
		t.Errorf("a client's commit passed %v", got)
	}
	if got := commit(0, 3, -1); !slices.Equal(got, []model.MsgID{4, 5}) {
		t.Errorf("commit 3 of queue 0 passed %v, want [4 5]", got)
	}
	h.settled(4)
	h.settled(5)
	if got := commit(0, 5, -1); !slices.Equal(got, []model.MsgID{2}) {
		t.Errorf("commit 5 of queue 0 passed %v, want [2]", got)
	}
	if got := commit(1, 1, -1); !slices.Equal(got, []model.MsgID{6}) {
		t.Errorf("commit 1 of queue 1 passed %v, want [6]", got)
	}
	if got := commit(2, 9, -1); got != nil {
		t.Errorf("a commit of a queue never seen passed %v", got)
	}
}
