package bench

import (
	"flag"
	"testing"
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
	setBenchtime(t, "3x")
	for _, c := range Cases([]int{1000}) {
		t.Run(c.Name(), func(t *testing.T) {
			lat := NewLatency(1)
			r := testing.Benchmark(func(b *testing.B) { c.Run(b, lat) })
			if r.N == 0 {
				t.Fatalf("benchmark failed or skipped: %+v", r)
			}
			for _, unit := range []string{"ns/msg", "allocs/msg", "B/msg"} {
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
