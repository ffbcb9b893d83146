package stats

import "testing"

// The simulator feeds every completion to a Series: Add must stay a few
// nanoseconds and allocation-free in steady state.
func BenchmarkSeriesAdd(b *testing.B) {
	s := NewSeries()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(int64(i), float64(i%1000))
	}
}

func BenchmarkRatioSeriesAdd(b *testing.B) {
	s := NewRatioSeries()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(int64(i), float64(i%3), 100)
	}
}

// QuantileSeries sorts each block: O(log block) per observation.
func BenchmarkQuantileSeriesAddP99(b *testing.B) {
	s, _ := NewQuantileSeries(0.99, 0)
	r := newRand(1)
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = r.ExpFloat64()
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(int64(i), xs[i&(1<<16-1)])
	}
}

// The end-of-run analysis: warm-up and interval over a full store.
func BenchmarkSeriesWarmupAndMeanCI(b *testing.B) {
	s := NewSeries()
	for i, x := range mm1(newRand(1), 1_000_000, 0.8, 1, 0) {
		s.Add(int64(i), x)
	}
	b.ReportAllocs()
	for b.Loop() {
		w := s.Warmup()
		_ = s.MeanCI(w.At, 0.95)
	}
}
