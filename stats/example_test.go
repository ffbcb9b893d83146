package stats_test

import (
	"fmt"
	"math/rand/v2"

	"popsim/stats"
)

// Across seeds: one value per seed, a t interval over them.
func ExampleMeanCI() {
	p99ms := []float64{41.2, 39.8, 44.1, 40.6, 42.3, 38.9, 43.0, 41.7, 40.2, 42.8} // each seed's p99
	iv := stats.MeanCI(p99ms, 0.95)
	fmt.Println(iv)
	fmt.Println(iv.Format(func(x float64) string { return stats.FormatNumber(x) + " ms" }))
	// Output:
	// 41.46 [40.30, 42.62] 95% t over replications n=10
	// 41.46 ms [40.30 ms, 42.62 ms] 95% t over replications n=10
}

// One long run: feed every completion to a Series as it happens, then cut
// the warm-up and take the batch-means interval. Here an M/M/1 queue
// (rho = 0.8, mean sojourn 5 s in steady state) starts with a backlog.
func ExampleSeries() {
	r := rand.New(rand.NewPCG(1, 2))
	s := stats.NewSeries()
	var arrival, wait float64 = 0, 100 // seconds; 100 s of work queued at the start
	for range 200000 {
		service := r.ExpFloat64()
		sojourn := wait + service
		done := int64((arrival + sojourn) * 1e6) // completion time in µs: the key
		s.Add(done, sojourn)
		gap := r.ExpFloat64() / 0.8
		arrival += gap
		wait = max(0, sojourn-gap)
	}
	w := s.Warmup()
	fmt.Println(w)
	fmt.Println(s.MeanCI(w.At, 0.95))
	// Output:
	// MSER-5 truncated 640 of 200000 observations (0.3%)
	// 5.110 [4.888, 5.333] 95% batch means n=31
}

// A ratio within one run: per-interval counts of duplicates and produced
// messages.
func ExampleRatioSeries() {
	r := rand.New(rand.NewPCG(3, 4))
	rs := stats.NewRatioSeries()
	for sec := range int64(600) {
		produced := 1000 + r.IntN(100)
		dups := 0
		for range produced {
			if r.Float64() < 0.0015 {
				dups++
			}
		}
		rs.Add(sec*1e6, float64(dups), float64(produced))
	}
	iv := rs.CI(0, 0.95)
	fmt.Printf("duplicates %.3f%% [%.3f%%, %.3f%%] (%s)\n", 100*iv.Est, 100*iv.Lo, 100*iv.Hi, iv.Note)
	// Output:
	// duplicates 0.149% [0.140%, 0.157%] (30 batches of 20 units, lag-1 r = -0.04)
}

// popsim plan's loop at one parameter value: add seeds until the decision
// is clear or the budget is spent, deciding each look at the Bonferroni
// level for the most looks the budget allows.
func ExampleDecide() {
	r := rand.New(rand.NewPCG(5, 6))
	seed := func() float64 { return 180 + 25*r.NormFloat64() } // one seed's p99 in ms
	target := stats.Target{Goal: stats.AtMost, Threshold: 200}
	const budget, looks = 60, 8
	level := stats.PerLookLevel(0.95, looks)
	vals := []float64{seed(), seed(), seed(), seed(), seed()}
	for {
		d := stats.Decide(vals, target, level)
		fmt.Println(d)
		if d.Verdict != stats.Undecided || len(vals) >= budget {
			break
		}
		for range min(max(d.More, len(vals)/2), budget-len(vals)) {
			vals = append(vals, seed())
		}
	}
	// Output:
	// undecided: 173.9 [133.5, 214.3] 99.375% t over replications n=5 (target <= 200), 3 more replications likely settle it
	// met: 165.1 [137.2, 193.0] 99.375% t over replications n=8 (target <= 200)
}

// The answer of a capacity search with its uncertainty.
func ExampleBoundary() {
	target := stats.Target{Goal: stats.AtMost, Threshold: 100} // p99 <= 100 ms
	point := func(consumers float64, p99s ...float64) stats.Point {
		return stats.Point{X: consumers, Decisions: []stats.Decision{stats.Decide(p99s, target, 0.95)}}
	}
	a := stats.Boundary([]stats.Point{
		point(456, 131, 129, 130, 128, 132),
		point(457, 97, 104, 93, 101, 95),
		point(458, 81, 79, 80, 82, 78),
	}, stats.Increasing)
	fmt.Println(a)
	fmt.Println("provision", a.Safe)
	// Output:
	// 457, but 458 is not excluded at 95%
	// provision 458
}

// Order statistics bound a quantile of independent values, whatever
// their distribution: here the median of 20 per-seed p99s.
func ExampleQuantileCI() {
	p99 := []float64{212, 198, 205, 230, 201, 199, 640, 207, 203, 210, 196, 204, 208, 202, 215, 200, 206, 209, 197, 211}
	fmt.Println(stats.QuantileCI(p99, 0.5, 0.95))
	// Output:
	// 205.0 [201.0, 210.0] 95% order statistics n=20
}
