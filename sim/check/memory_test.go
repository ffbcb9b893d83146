package check

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"popsim/model"
)

// A backlog of n messages, all produced first, then consumed and acked.
func backlog(n int) *trace {
	tr := &trace{}
	for i := 0; i < n; i++ {
		tr.produce(0, "m"+strconv.Itoa(i), int32(i%4), int64(i/4))
	}
	for i := 0; i < n; i++ {
		ms := int64(1 + i)
		msg := "m" + strconv.Itoa(i)
		h := tr.deliver(ms, int32(i%8), msg, topic, int32(i%4), int64(i/4), 30000)
		tr.consume(ms, ms, int32(i%8), msg, "success")
		tr.ack(ms, int32(i%8), msg, h, 1)
	}
	return tr
}

// Settled messages are forgotten: memory follows the live messages.
func TestMemoryDropsAfterSettle(t *testing.T) {
	const n = 1000
	r, c := run(t, backlog(n), drained)
	if len(r.Violations) > 0 || r.Acked != n {
		t.Fatalf("acked %d, violations:\n%s", r.Acked, dump(r))
	}
	if r.PeakTracked != n || c.Tracked() != 0 {
		t.Fatalf("peak %d tracked %d, want %d then 0", r.PeakTracked, c.Tracked(), n)
	}
}

// A settled message whose newer record will still revive stays tracked
// until the copy is consumed; then it goes.
func TestMemoryKeepsWhatCanComeBack(t *testing.T) {
	tr := &trace{}
	tr.produce(0, "m1", 0, 0)
	h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
	tr.simple(0, model.EvConsumeStart, 0, "m1", "")
	tr.change(500, 0, "m1", h0, 30000, 1)
	tr.simple(600, model.EvConsumeEnd, 0, "m1", "success")
	tr.ack(700, 0, "m1", h0, 0)
	c := New(Options{})
	for i := range tr.evs {
		c.Observe(&tr.evs[i])
	}
	if c.Tracked() != 1 {
		t.Fatalf("tracked %d after a stale ack, want 1: the renewed record will revive", c.Tracked())
	}
	tail := &trace{evs: nil}
	tail.evs = append(tail.evs, tr.evs...)
	tail.revive(30600, "m1", 0, 1)
	h1 := tail.deliver(30700, 1, "m1", retryTopic, 0, 0, 1000)
	tail.consume(30700, 30800, 1, "m1", "success")
	for i := len(tr.evs); i < len(tail.evs)-1; i++ {
		c.Observe(&tail.evs[i])
	}
	if c.Tracked() != 1 {
		t.Fatalf("tracked %d while client 1 still owes an ack, want 1", c.Tracked())
	}
	c.Observe(&tail.evs[len(tail.evs)-1])
	tail.ack(30800, 1, "m1", h1, 1)
	for i := len(tail.evs) - 2; i < len(tail.evs); i++ {
		c.Observe(&tail.evs[i])
	}
	if r := c.Finish(drained); c.Tracked() != 0 || len(r.Violations) > 0 || r.Duplicates != 1 {
		t.Fatalf("tracked %d, duplicates %d, violations:\n%s", c.Tracked(), r.Duplicates, dump(r))
	}
}

// A forgotten message re-popped after a broker restart is recognised from
// its tombstone; without a restart the same re-pop is unexplained.
func TestTombstoneRepop(t *testing.T) {
	for _, restart := range []bool{true, false} {
		tr := &trace{}
		tr.produce(0, "m1", 0, 0)
		h := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
		tr.consume(0, 10, 0, "m1", "success")
		tr.ack(20, 0, "m1", h, 1)
		if restart {
			tr.simple(30, model.EvBrokerRestart, -1, "", "")
		}
		h = tr.deliver(40, 1, "m1", topic, 0, 0, 60000)
		tr.consume(40, 50, 1, "m1", "success")
		tr.ack(60, 1, "m1", h, 1)
		c := New(Options{})
		for i := range tr.evs[:6] {
			c.Observe(&tr.evs[i])
		}
		if c.Tracked() != 0 {
			t.Fatalf("tracked %d after the ack, want 0", c.Tracked())
		}
		for i := 6; i < len(tr.evs); i++ {
			c.Observe(&tr.evs[i])
		}
		r := c.Finish(drained)
		want := []string{InvUnexplained}
		dup := map[string]int64{CauseUnexplained: 1}
		if restart {
			want, dup = nil, map[string]int64{CauseBrokerRestart: 1}
		}
		if diff := cmp.Diff(want, invariants(r)); diff != "" || r.Acked != 1 || c.Tracked() != 0 {
			t.Errorf("restart=%v: acked %d tracked %d, invariants (-want +got):\n%s", restart, r.Acked, c.Tracked(), diff)
		}
		if diff := cmp.Diff(dup, r.DuplicatesByCause); diff != "" {
			t.Errorf("restart=%v: duplicates (-want +got):\n%s", restart, diff)
		}
	}
}

// One trace, one report.
func TestDeterministic(t *testing.T) {
	tr := backlog(200)
	tr.produce(500, "lost", 0, 99)
	a, _ := run(t, tr, Final{CommitLag: []QueueLag{{Group: group, Topic: topic, Queue: 3, Lag: 2}}})
	b, _ := run(t, tr, Final{CommitLag: []QueueLag{{Group: group, Topic: topic, Queue: 3, Lag: 2}}})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
	if len(a.Violations) != 3 {
		t.Fatalf("want no-drain, commit-offset-lag and lost, got:\n%s", dump(a))
	}
}

func BenchmarkObserve(b *testing.B) {
	tr := backlog(10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := New(Options{})
		for j := range tr.evs {
			c.Observe(&tr.evs[j])
		}
		c.Finish(drained)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tr.evs)), "ns/event")
}
