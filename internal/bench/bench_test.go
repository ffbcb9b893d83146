package bench

import (
	"flag"
	"testing"

	"popsim/model"
	"popsim/scenarios"
)

// setBenchtime sets -test.benchtime for testing.Benchmark and restores it.
func setBenchtime(t *testing.T, v string) {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.benchtime", old) })
}

// TestBodiesRun runs every body a few iterations at 1k in flight: the
// bodies check their own steady state (every ack deletes, in-flight count
// unchanged) and fail the benchmark otherwise.
func TestBodiesRun(t *testing.T) {
	for _, c := range Cases([]int{1000}) {
		t.Run(c.Name(), func(t *testing.T) {
			setBenchtime(t, "3x")
			if c.Op == "SimRun" {
				setBenchtime(t, "1x") // one whole simulation
			}
			lat := NewLatency(1)
			run := c.Run
			if c.Op == "SimRun" && c.Sub == "hot-topic-500x500" {
				var short []scenarios.Override
				for _, kv := range []string{"duration=1s", "warmup=100ms"} {
					o, err := scenarios.ParseOverride(kv)
					if err != nil {
						t.Fatal(err)
					}
					short = append(short, o)
				}
				run = func(b *testing.B, l *Latency) { SimRunBuiltin(b, l, c.Sub, short...) }
			}
			r := testing.Benchmark(func(b *testing.B) { run(b, lat) })
			if r.N == 0 {
				t.Fatalf("benchmark failed or skipped: %+v", r)
			}
			for _, unit := range []string{"ns/" + c.Unit, "allocs/" + c.Unit, "B/" + c.Unit} {
				if _, ok := r.Extra[unit]; !ok {
					t.Errorf("no %s metric: %v", unit, r.Extra)
				}
			}
			if lat.Hist.TotalCount() == 0 {
				t.Errorf("no latency sample")
			}
		})
	}
}

// handleText must render exactly what model.ReceiptHandle.String does.
func TestHandleTextMatchesModel(t *testing.T) {
	f, err := newFixture(false)
	if err != nil {
		t.Fatal(err)
	}
	hs := []model.ReceiptHandle{
		{CkQueueOffset: 10, PopTime: 1704067200000, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 10, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200000, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 11, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200000, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 1234567, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200001, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 12, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200001, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 13, CommitLogOffset: 99},
		{CkQueueOffset: 10, PopTime: 1704067200001, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 3, QueueOffset: 14, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200001, InvisibleTime: 60000, RetryFlag: 1, BrokerName: "broker-a", QueueID: 0, QueueOffset: 0, CommitLogOffset: -1},
		{CkQueueOffset: 10, PopTime: 1704067200001, InvisibleTime: 60000, RetryFlag: 1, BrokerName: "broker-b", QueueID: 0, QueueOffset: 5, CommitLogOffset: -1},
	}
	for _, h := range hs {
		if got, want := f.handleText(&h), h.String(); got != want {
			t.Errorf("handleText = %q, want %q", got, want)
		}
	}
}

// The ack path allocates nothing in steady state; a pop allocates only
// what its result keeps (messages, handles, the two offset-info strings),
// plus the amortized growth of the commit window, which the held records
// keep open.
func TestPhaseAllocs(t *testing.T) {
	popA, ackA, err := PhaseAllocs(1000, false, 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	if ackA != 0 {
		t.Errorf("ack allocates %.3f times per message, want 0", ackA)
	}
	if popA > 4.5/Batch {
		t.Errorf("pop allocates %.3f times per message, want at most 4.5 per batch of %d", popA, Batch)
	}
}
