package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestEmitHeld: an event about a held message written in the tracer's
// slot (emitHeld, through heldSlot and event) holds its kind, client,
// message, lease and reason and nothing of what the slot held before
// (event clears it), as the same event emitted whole.
func TestEmitHeld(t *testing.T) {
	s := &sim{q: newScheduler(clock.Time(5000), newStream(1, 1), 100, clock.Time(1<<40)), tr: newTracer(nil, true, nil)}
	c := &consumer{idx: 3}
	h := &held{c: c, msg: &model.Message{ID: 42}, lease: 7}
	stale := model.Event{Kind: model.EvPull, Client: 9, Group: "g", Msg: 1, Lease: 2, Ended: 3, Next: 4, Topic: "t", Queue: 5, Offset: 6,
		Attempt: 7, Deadline: 8, Span: 9, Code: 10, Count: 11, Reason: model.RLate, Shown: "x"}
	for _, k := range []model.EventKind{model.EvConsumeStart, model.EvConsumeEnd, model.EvDrop, model.EvExpiredLocal} {
		s.tr.events = s.tr.events[:0]
		s.tr.cur = stale
		s.emitHeld(k, h, model.RAfter)
		s.tr.cur = stale
		s.emit(model.Event{Kind: k, Client: 3, Msg: 42, Lease: 7, Reason: model.RAfter})
		got, want := s.tr.events[0], s.tr.events[1]
		got.Seq = want.Seq
		if got != want {
			t.Fatalf("emitHeld(%v) traced %+v, want %+v", k, got, want)
		}
	}
}
