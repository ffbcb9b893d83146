package check

import (
	"testing"
	"unsafe"

	"popsim/clock"
	"popsim/model"
)

// A long run of settled messages keeps only what is in flight: the
// checker's tracked messages and its slices stay bounded, and it makes no
// more message records than it holds at once (forgotten ones are reused).
func TestMemoryFollowsInFlight(t *testing.T) {
	c := New(Options{Seed: 1})
	seq := int64(0)
	emit := func(at clock.Time, e model.Event) {
		e.Seq, e.At = seq, clock.Epoch+at
		seq++
		c.Observe(&e)
	}
	emit(0, model.Event{Kind: model.EvSubscribe, Client: 0, Group: "g", Topic: "t"})
	const n = 200000
	for i := 1; i <= n; i++ {
		at := clock.Time(i) * clock.Time(clock.Millisecond)
		m, l := model.MsgID(i), model.LeaseID(i)
		emit(at, model.Event{Kind: model.EvProduce, Client: 0, Msg: m, Topic: "t", Queue: 0, Offset: int64(i)})
		emit(at, model.Event{Kind: model.EvLease, Client: 0, Msg: m, Lease: l, Topic: "t", Queue: 0, Offset: int64(i), Deadline: clock.Epoch + at + clock.Time(clock.Minute)})
		emit(at, model.Event{Kind: model.EvDeliver, Client: 0, Msg: m, Lease: l, Topic: "t", Queue: 0, Offset: int64(i), Shown: "t"})
		emit(at, model.Event{Kind: model.EvConsumeEnd, Client: 0, Msg: m, Lease: l, Reason: model.RSuccess})
		emit(at, model.Event{Kind: model.EvAck, Client: 0, Msg: m, Lease: l})
		emit(at, model.Event{Kind: model.EvAcked, Client: 0, Msg: m, Lease: l, Ended: l})
		if i%1000 == 0 {
			emit(at, model.Event{Kind: model.EvCommit, Client: -1, Group: "g", Topic: "t", Queue: 0, Offset: int64(i + 1)})
		}
	}
	r := c.Finish(Final{Drained: true})
	if len(r.Violations) != 0 || r.Acked != n {
		t.Fatalf("acked %d of %d, violations %v", r.Acked, n, r.Violations)
	}
	g := c.groups[0]
	if n := cap(c.clients[0].pending.get()); n > 128 {
		t.Fatalf("the client's pending list keeps the leases it was delivered: room for %d", n)
	}
	if c.Tracked() != 0 || r.PeakTracked > 2 || g.msgs.span() > 2048 || c.leases.w.span() > 2048 || g.tombs.len() > 1000 || c.made > r.PeakTracked {
		t.Fatalf("memory grows with what was produced: tracked %d peak %d, message records made %d, message slots %d, lease slots %d, tombstones %d",
			c.Tracked(), r.PeakTracked, c.made, g.msgs.span(), c.leases.w.span(), g.tombs.len())
	}
}

// A violation prints the message's recent events.
func TestViolationHistory(t *testing.T) {
	out, err := runScript("case x\n0 subscribe c=0 g=g t=t\n0 produce c=0 m=1 t=t q=0 o=0\n0.5 lease c=0 m=1 l=1 t=t q=0 o=0 dl=1\nfinish\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Seed: 7, Replay: "popsim run -seed 7"})
	for _, l := range []string{"0 0.000000 subscribe c=0 g=g t=t", "1 0.000000 produce c=0 m=1 t=t q=0 o=0", "2 0.500000 lease c=0 m=1 l=1 t=t q=0 o=0 dl=1.000000"} {
		e, err := model.ParseEvent(l)
		if err != nil {
			t.Fatal(err)
		}
		c.Observe(&e)
	}
	r := c.Finish(Final{Drained: true})
	if len(r.Violations) != 1 {
		t.Fatalf("want one lost violation, got %v\n%s", r.Violations, out)
	}
	v := r.Violations[0]
	want := []string{"1 0.000000 produce c=0 m=1 t=t q=0 o=0", "2 0.500000 lease c=0 m=1 l=1 t=t q=0 o=0 dl=1.000000"}
	if v.Invariant != InvLost || v.Seed != 7 || v.Replay != "popsim run -seed 7" || v.Msg != "group g message 1" || len(v.History) != 2 || v.History[0] != want[0] || v.History[1] != want[1] {
		t.Fatalf("violation %+v", v)
	}
}

// A message's record fits the 576-byte allocation class: every produced
// message costs one, and the bytes drive the garbage collector's cycles.
// An object over 512 bytes with pointers carries an 8-byte header, so the
// record may take 568 bytes. (The next class up is 640 bytes.)
func TestMsgStateSize(t *testing.T) {
	if n := unsafe.Sizeof(msgState{}); n > 576-8 {
		t.Fatalf("msgState is %d bytes, want at most 568", n)
	}
}
