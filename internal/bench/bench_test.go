package bench

import (
	"flag"
	"testing"

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
			units := []string{"ns/" + c.Unit, "allocs/" + c.Unit, "B/" + c.Unit}
			if _, ok := processCPU(); ok && c.Op == "SimRun" {
				units = append(units, "proc-cpu-events/s")
			}
			for _, unit := range units {
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

// The ack path allocates nothing in steady state, and neither does a pop
// into a lent result buffer: the bound leaves room only for the amortized
// growth of the index's and the commit window's storage.
func TestPhaseAllocs(t *testing.T) {
	popA, ackA, err := PhaseAllocs(1000, false, 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	if ackA != 0 {
		t.Errorf("ack allocates %.3f times per message, want 0", ackA)
	}
	if popA > 0.5/Batch {
		t.Errorf("pop allocates %.3f times per message, want at most 0.5 per batch of %d", popA, Batch)
	}
}
