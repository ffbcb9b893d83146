package sim

import "testing"

// BenchmarkRunDefault runs DefaultConfig once per iteration and reports
// simulated (dispatched) events and trace events per second of wall time.
func BenchmarkRunDefault(b *testing.B) {
	cfg := DefaultConfig()
	var dispatched, traced int64
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		dispatched += r.Summary.SimEvents
		traced += r.traceEvents
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(dispatched)/sec, "events/s")
	b.ReportMetric(float64(traced)/sec, "trace-events/s")
	b.ReportMetric(float64(dispatched)/float64(b.N), "events/op")
}
