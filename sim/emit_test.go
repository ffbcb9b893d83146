package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
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

// TestTraceLostIsLost: the loss traceLost and lateAnswer write in the
// tracer's slot is the event each request's lost fills from an empty one
// (its client set), whatever the slot held before; a request whose loss
// is not traced traces nothing.
func TestTraceLostIsLost(t *testing.T) {
	s := &sim{q: newScheduler(clock.Time(5000), newStream(1, 1), 100, clock.Time(1<<40)), tr: newTracer(nil, true, nil), cov: newCoverage()}
	c := &consumer{idx: 3}
	stale := model.Event{Kind: model.EvPull, Client: 9, Group: "g", Msg: 1, Lease: 2, Ended: 3, Next: 4, Topic: "t", Queue: 5, Offset: 6,
		Attempt: 7, Deadline: 8, Span: 9, Code: 10, Count: 11, Reason: model.RLate, Shown: "x"}
	reqs := func() []Request {
		pr := &popReq{}
		pr.res.Messages = make([]pop.PoppedMessage, 2)
		return []Request{pr, &ackReq{msg: 42, lease: 7}, &changeReq{msg: 43, lease: 8}, &batchAckReq{}}
	}
	for _, why := range []model.Reason{model.RRequest, model.RResponse, model.RClientGone, model.RTimeout, model.RLate} {
		for _, r := range reqs() {
			r.base().c = c
			want := model.Event{Client: 3}
			traced := r.lost(&want, why)
			s.tr.events = s.tr.events[:0]
			s.tr.cur = stale
			if why == model.RLate {
				s.lateAnswer(r)
			} else {
				s.traceLost(r, why)
			}
			if !traced {
				if len(s.tr.events) != 0 {
					t.Fatalf("%T, %v: traced %+v, want nothing", r, why, s.tr.events)
				}
				continue
			}
			if len(s.tr.events) != 1 {
				t.Fatalf("%T, %v: traced %d events, want 1", r, why, len(s.tr.events))
			}
			got := s.tr.events[0]
			want.Seq, want.At = got.Seq, got.At
			if got != want {
				t.Fatalf("%T, %v: traced %+v, want %+v", r, why, got, want)
			}
		}
	}
}
