package sim

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

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

// TestTracerHashesEveryForm: the tracer's hash is XXH3-128 of the
// events' binary forms (AppendBinary's) back to back, whatever their
// sizes: short forms written in place (model.BinaryEncoder.Put), forms
// with names of up to 255 bytes (putLong) at every offset, up to the
// buffer's end, so that some start a new buffer, over many buffers.
func TestTracerHashesEveryForm(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	long := strings.Repeat("n", 255)
	tr := newTracer(nil, false, nil)
	var all []byte
	for i := range 40_000 {
		e := model.Event{Kind: model.EvLease, Client: int32(r.IntN(600)), Msg: model.MsgID(r.IntN(1 << 20)), Lease: model.LeaseID(r.IntN(1 << 30)),
			Topic: "orders", Queue: int32(r.IntN(8)), Offset: r.Int64N(1 << 30), Deadline: clock.Time(r.Int64N(1 << 50))}
		switch r.IntN(8) {
		case 0: // as long as an event's form gets
			e.Group, e.Topic, e.Shown = long, long, long
		case 1:
			e.Topic = long[:r.IntN(len(long))]
		}
		if tr.used >= hashChunk-hashSlack {
			t.Fatalf("event %d: the buffer holds %d bytes, not hashed at %d", i, tr.used, hashChunk-hashSlack)
		}
		tr.cur = e
		tr.emitCur(clock.Time(1_700_000_000_000_000 + int64(i)))
		e.Seq, e.At = int64(i), clock.Time(1_700_000_000_000_000+int64(i))
		all = e.AppendBinary(all)
	}
	got, err := tr.finish()
	if sum := xxh3.Hash128(all).Bytes(); err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("the tracer's hash is %s (%v), the forms' %x", got, err, sum)
	}
}
