package scenarios

import (
	"testing"

	"popsim/sim"
)

// BenchmarkRunHotTopic runs hot-topic-500x500 for 3 virtual seconds at
// 10 000 msg/s (Poisson), seed 1: the per-event cost of the hot-topic hour
// (popbench soak, make bench-hour) without its 7 minutes, small enough to
// count instructions under callgrind (README: Benchmarks).
func BenchmarkRunHotTopic(b *testing.B) {
	s, err := Builtin("hot-topic-500x500",
		Override{Path: "duration", Value: "3s"},
		Override{Path: "producers[0].arrivals", Value: "poisson(10000/s)"})
	if err != nil {
		b.Fatal(err)
	}
	cfg := s.Config(1)
	var events int64
	b.ReportAllocs()
	for b.Loop() {
		r, err := sim.Run(cfg, sim.RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(r.Summary.Violations); n != 0 {
			b.Fatalf("%d violations", n)
		}
		events += r.Summary.SimEvents
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}
