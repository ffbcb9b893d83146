package scenarios

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"popsim/model"
	"popsim/sim"
)

// TestWithinRunCoverage measures how often the interval one run reports
// for its own mean end-to-end latency (batch means over its measured
// messages after the MSER-5 warm-up cut, summary.json's
// intervals.end_to_end.mean_us) contains the queueing-theory mean, over
// independent seeds of the M/M/c and M/M/1 validation scenarios with
// their default warmup: auto. It counts the runs whose interval covers,
// the runs that gave no interval ("batches still correlated: run
// longer"), and, for the record, the same for the p50, p90 and p99
// intervals (the batch proportion method, stats.QuantileByProportion).
//
// Only the mean is held to a bound: at least minCover of all runs
// (refusals count as misses, so a method that refuses too often fails
// too), and it must not cover every run with intervals far wider than
// the spread of the runs' means (maxHalf, relative to theory).
//
// The full size (-validation.full, make validate; about 8 minutes of CPU)
// runs 100 seeds of the built-ins as they are (200 s, λ = 700/s). The CI
// size (about 3 s of CPU) runs 24 seeds of 20 s per scenario, the split
// M/M/1 queues at λ = 400/s (ρ = 0.5): at ρ = 0.875 each M/M/1 queue's
// latencies stay correlated over hundreds of its messages, so 20 s runs
// of the built-in are too short for their own interval (in 24 seeds, 11
// got none and 4 of the other 13 covered: a calm short run sees little
// spread and reports a narrow interval, batch means' known weakness), and
// 200 s runs cost too much CPU for CI. docs/statistics.md records what
// each size measured.
// -runcoverage.seeds and -runcoverage.duration change the runs.
func TestWithinRunCoverage(t *testing.T) {
	cases := runCoverageCases()
	results := make([]runCoverage, len(cases))
	t.Run("runs", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.scenario, func(t *testing.T) {
				t.Parallel()
				results[i] = measureRunCoverage(t, c)
				t.Log(results[i])
			})
		}
	})
	if t.Failed() {
		return
	}
	for _, r := range results {
		c := r.c
		if min := int(math.Ceil(c.minCover * float64(c.seeds))); r.mean.in < min {
			t.Errorf("%s: the runs' 95%% intervals of the mean covered theory in %d of %d runs (%d gave none), want at least %d",
				c.scenario, r.mean.in, c.seeds, r.mean.none, min)
		}
		if half := r.mean.halfMean(); half > c.maxHalf {
			t.Errorf("%s: the runs' 95%% intervals of the mean are %.1f%% wide on average (half-width), want at most %.1f%%: wide enough to cover anything",
				c.scenario, 100*half, 100*c.maxHalf)
		}
	}
}

var (
	runCoverageSeeds    = flag.Int("runcoverage.seeds", 0, "seeds per scenario for TestWithinRunCoverage (default 24; 100 with -validation.full)")
	runCoverageDuration = flag.String("runcoverage.duration", "", "each TestWithinRunCoverage seed's duration (default 20s; 200s with -validation.full)")
)

// runCoverageCase is one scenario's within-run coverage measurement.
type runCoverageCase struct {
	scenario string
	duration string
	lambda   float64    // arrivals per second
	seeds    int        // from 2000
	theory   [4]float64 // mean, p50, p90, p99 in µs
	minCover float64    // least share of runs whose mean interval covers theory
	maxHalf  float64    // most average half-width of the mean interval, relative to theory
}

func runCoverageCases() []runCoverageCase {
	cases := []runCoverageCase{{scenario: "mmc-validation", lambda: 700}, {scenario: "mm1-validation", lambda: 400}}
	for i := range cases {
		c := &cases[i]
		// The CI size has 24 runs (one is 4 %; measured 19 and 21
		// covering), so the bound is loose; at full size 200 s runs at
		// ρ = 0.875 are still short for batch means (measured 83-87 % in
		// 30 seeds), and the bound says so.
		c.duration, c.seeds, c.minCover, c.maxHalf = "20s", 24, 0.65, 0.25
		if *validationFull {
			c.duration, c.lambda, c.seeds, c.minCover, c.maxHalf = "200s", 700, 100, 0.75, 0.10
		}
		if *runCoverageSeeds > 0 {
			c.seeds = *runCoverageSeeds
		}
		if *runCoverageDuration != "" {
			c.duration = *runCoverageDuration
		}
		var w float64
		var quantile func(float64) float64
		if c.scenario == "mmc-validation" {
			q := MMc{Lambda: c.lambda, Mu: mu, C: 8}
			w, quantile = q.W(), q.ResponseQuantile
		} else {
			q := Split(c.lambda, mu, 8)
			w, quantile = q.W(), q.ResponseQuantile
		}
		c.theory = [4]float64{w * 1e6, quantile(0.5) * 1e6, quantile(0.9) * 1e6, quantile(0.99) * 1e6}
	}
	return cases
}

// runTally counts one metric's within-run intervals.
type runTally struct {
	in, none, runs int
	half           float64 // sum of relative half-widths of the intervals given
}

func (ta *runTally) add(iv model.Interval, theory float64) {
	ta.runs++
	if !iv.OK {
		ta.none++
		return
	}
	ta.half += (iv.Hi - iv.Lo) / 2 / theory
	if iv.Lo <= theory && theory <= iv.Hi {
		ta.in++
	}
}

func (ta runTally) halfMean() float64 {
	if n := ta.runs - ta.none; n > 0 {
		return ta.half / float64(n)
	}
	return 0
}

func (ta runTally) String() string {
	return fmt.Sprintf("%d of %d (%.0f%%; %d gave none; half-width %.1f%%)",
		ta.in, ta.runs, 100*float64(ta.in)/float64(max(ta.runs, 1)), ta.none, 100*ta.halfMean())
}

// runCoverage is one scenario's measurement.
type runCoverage struct {
	c                  runCoverageCase
	mean, p50, p90     runTally
	p99                runTally
	cut, cutFailed     int     // runs MSER-5 cut something from, runs it failed on
	cutShare           float64 // average share of measured messages cut
	meanBias, meanSD   float64 // the runs' means relative to theory
	completionsPerSeed float64
}

func (r runCoverage) String() string {
	c := r.c
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %g/s: %d seeds of %s (warmup: auto, %.0f messages measured each); theory mean %.3f ms\n"+
		"  per run: mean %+.2f%% from theory (sd %.1f%%); MSER-5 cut something in %d runs (%.2f%% of the messages on average), failed in %d\n"+
		"  95%% within-run intervals cover theory: mean %v; p50 %v; p90 %v; p99 %v",
		c.scenario, c.lambda, c.seeds, c.duration, r.completionsPerSeed, c.theory[0]/1000,
		100*r.meanBias, 100*r.meanSD, r.cut, 100*r.cutShare, r.cutFailed, r.mean, r.p50, r.p90, r.p99)
	return b.String()
}

// measureRunCoverage runs the case's seeds and counts covering intervals.
func measureRunCoverage(t *testing.T, c runCoverageCase) runCoverage {
	s, err := Builtin(c.scenario, Override{Path: "duration", Value: c.duration}, Override{Path: "warmup", Value: "auto"},
		Override{Path: "producers[0].arrivals", Value: fmt.Sprintf("poisson(%g/s)", c.lambda)})
	if err != nil {
		t.Fatal(err)
	}
	r := runCoverage{c: c}
	var means []float64
	for seed := uint64(2000); seed < 2000+uint64(c.seeds); seed++ {
		res, err := sim.Run(s.Config(seed), sim.RunOptions{Scenario: s.Name})
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		if n := len(sum.Violations); n > 0 {
			t.Fatalf("seed %d: %d violations, first: %s", seed, n, sum.Violations[0].Detail)
		}
		iv := sum.Intervals.EndToEnd
		r.mean.add(iv.Mean, c.theory[0])
		r.p50.add(iv.P50, c.theory[1])
		r.p90.add(iv.P90, c.theory[2])
		r.p99.add(iv.P99, c.theory[3])
		w := sum.Warmup
		if w.Messages > 0 {
			r.cut++
		}
		if w.Failed {
			r.cutFailed++
		}
		if w.Of > 0 {
			r.cutShare += float64(w.Messages) / float64(w.Of) / float64(c.seeds)
		}
		means = append(means, float64(sum.EndToEnd.Mean))
		r.completionsPerSeed += float64(sum.EndToEnd.Count) / float64(c.seeds)
	}
	m, sd := meanSD(means)
	r.meanBias, r.meanSD = m/c.theory[0]-1, sd/c.theory[0]
	return r
}
