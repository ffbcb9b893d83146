// Package stats is popsim's output analysis: how sure is a simulated
// number? It turns per-seed values and one run's stream of observations
// into confidence intervals, finds the warm-up to cut, and decides whether
// a capacity target is met. docs/statistics.md explains each method, its
// assumptions and its sources, and how to read an interval.
//
// It owns the statistics only. It imports nothing but the standard
// library, draws no random numbers (the tests bring their own seeded PCG
// sources), keeps no global state and does no I/O: the simulator and the
// commands feed it values and print what it returns. Every result is a
// value with a deterministic String.
//
// # Which function for which data
//
// Independent values, one per seed (the first choice for every metric,
// and the only sound one for p99 and beyond):
//
//	iv := stats.MeanCI(perSeedP99, 0.95)           // t interval over seeds
//	iv = stats.RatioCI(perSeedDups, perSeedProduced, 0.95) // Σdups/Σproduced, delta method
//	iv = stats.QuantileCI(perSeedP99, 0.5, 0.95)   // distribution-free, i.i.d. values only
//
// One long run, observations in completion order (autocorrelated, so
// batch means; memory stays bounded however many values go in):
//
//	s := stats.NewSeries()        // e.g. end-to-end latency
//	s.Add(int64(now), latencyUs)  // per completion, keys non-decreasing
//	w := s.Warmup()               // MSER-5; w.Failed: the run is too short
//	iv := s.MeanCI(w.At, 0.95)    // batch means after the cut
//
//	r := stats.NewRatioSeries()   // per-interval counts: duplicates / produced, acks / seconds
//	r.Add(int64(now), float64(dups), float64(produced))
//	iv = r.CI(w.At, 0.95)
//
//	q, err := stats.NewQuantileSeries(0.9, 0)  // batch quantiles: noisier, long runs only
//
// Decisions at one parameter value, and the answer of a search:
//
//	target := stats.Target{Goal: stats.AtMost, Threshold: 2e6} // p99 <= 2 s, in µs
//	d := stats.Decide(perSeedP99, target, stats.PerLookLevel(0.95, maxLooks))
//	// d.Verdict: Met, NotMet or Undecided; d.More: seeds likely to settle it
//	a := stats.Boundary(points, stats.Increasing) // "457, but 458 is not excluded at 95%"
//
// An Interval is "no interval" unless OK: too little data, or batches that
// stay correlated, give OK false and a Note saying why, never a made-up
// width. Intervals carry their method and the number of independent units
// (seeds, batches, observations) behind them.
//
// # Batch means in one paragraph
//
// A Series averages batches of 5 observations and keeps them in at most
// 1024 groups, merging neighbours pairwise when full. At the end, starting
// from one group per batch, it doubles the batch size while the lag-1
// correlation of the batch values is significant (Young's C statistic,
// one-sided, beta 0.10; Fishman's batch-doubling rule) and at least 20
// batches remain, then builds the t interval from about 30 batches of at
// least the accepted size. If the batches cannot grow further and are
// still correlated at 0.01, there is no interval ("run longer"); between
// 0.10 and 0.01 the interval carries a "borderline" note.
package stats
