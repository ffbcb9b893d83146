package scenarios

import (
	"flag"
	"fmt"
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/sim"
)

// -validation.full runs TestValidation at full size: two to four million
// completions per case over two seeds, 10 % warm-up, and TestCoverage
// with 400 seeds per scenario (make validate).
var (
	validationFull  = flag.Bool("validation.full", false, "run TestValidation and TestCoverage at full size (2M-4M completions per case, 400 seeds per coverage scenario; minutes)")
	validationSeeds = flag.String("validation.seeds", "1..2", "the seeds TestValidation runs each case with (completions are split among them)")
	validationN     = flag.Float64("validation.completions", 0, "completions per case over all seeds (default 200000; with -validation.full 2M, 4M for split M/M/1 with c >= 8)")
)

// Tolerances on the relative error of the mean and p99 response time. At
// full size the brief's 3 % applies. The CI size has 200 000 completions
// per case (seconds of wall time), whose mean and p99 still have sampling
// errors of a few percent at 75–94 % utilisation (waiting times are
// strongly autocorrelated, and the split M/M/1 cases give each queue only
// 1/c of the completions; measured up to 2.4 % on the mean and 4.7 % on
// the p99), hence the looser bounds.
//
// The CI size leaves out M/M/1 with c = 32: at ρ = 0.94 each queue relaxes
// over about 10 s of virtual time, so a fair sample needs the full size.
const (
	fullTolerance = 0.03
	ciCompletions = 200_000.0
	ciMeanTol     = 0.08
	ciP99Tol      = 0.10
	ciMaxMM1      = 8
)

// validationCase is one of the guide's worked examples (μ = 100/s).
type validationCase struct {
	c      int
	lambda float64
}

var validationCases = []validationCase{{1, 80}, {2, 150}, {8, 700}, {32, 3000}}

const mu = 100.0

// mmcScenario: c POP consumers with one thread share one queue; each takes
// one message at a time (exp(10ms) service), no faults, no network delay,
// a lease far longer than any response time.
func mmcScenario(c int, lambda float64, ms int) string {
	return fmt.Sprintf(`name: mmc-%d
seeds: %s
duration: %dms
warmup: %dms
drain: 10m
topics: [{name: mmc, queues: 1}]
groups: [{name: servers}]
producers: [{topic: mmc, arrivals: "poisson(%g/s)"}]
consumers:
  - {kind: simple, group: servers, topic: mmc, count: %d, threads: 1, batch: 1, invisibleTime: 1h, processing: exp(10ms)}
network: {requestLatency: const(0s), responseLatency: const(0s)}
`, c, *validationSeeds, ms, ms/10, lambda, c)
}

// mm1Scenario: c Pull consumers of one group share a c-queue topic, so
// rebalancing gives each one queue; the producer picks a queue at random
// per message, so each queue sees Poisson(λ/c): c independent M/M/1.
func mm1Scenario(c int, lambda float64, ms int) string {
	return fmt.Sprintf(`name: mm1-%d
seeds: %s
duration: %dms
warmup: %dms
drain: 10m
topics: [{name: mm1, queues: %d}]
groups: [{name: owners}]
producers: [{topic: mm1, arrivals: "poisson(%g/s)", queueSelect: random}]
consumers:
  - {kind: pull, group: owners, topic: mm1, count: %d, threads: 1, batch: 1, processing: exp(10ms)}
network: {requestLatency: const(0s), responseLatency: const(0s)}
`, c, *validationSeeds, ms, ms/10, c, lambda, c)
}

// validationMillis is the virtual safety phase giving about n completions
// after a 10 % warm-up.
func validationMillis(lambda float64, n float64) int {
	return int(math.Ceil(n / 0.9 / lambda * 1000))
}

// TestValidation: with faults off, POP consumers reproduce M/M/c (Erlang
// C) and queue-owning Pull consumers reproduce independent M/M/1 queues,
// in mean and p99 of the end-to-end latency.
func TestValidation(t *testing.T) {
	seeds, err := ParseSeeds(*validationSeeds)
	if err != nil {
		t.Fatal(err)
	}
	meanTol, p99Tol := ciMeanTol, ciP99Tol
	if *validationFull {
		meanTol, p99Tol = fullTolerance, fullTolerance
	}
	for _, vc := range validationCases {
		q := MMc{Lambda: vc.lambda, Mu: mu, C: vc.c}
		mmc := mmcScenario(vc.c, vc.lambda, validationMillis(vc.lambda, completions(vc, false)/float64(len(seeds))))
		t.Run(fmt.Sprintf("mmc/c=%d", vc.c), func(t *testing.T) {
			t.Parallel()
			validate(t, mmc, q.W(), q.ResponseQuantile(0.99), meanTol, p99Tol)
		})
		if vc.c > ciMaxMM1 && !*validationFull {
			continue
		}
		m := Split(vc.lambda, mu, vc.c)
		mm1 := mm1Scenario(vc.c, vc.lambda, validationMillis(vc.lambda, completions(vc, true)/float64(len(seeds))))
		t.Run(fmt.Sprintf("mm1/c=%d", vc.c), func(t *testing.T) {
			t.Parallel()
			validate(t, mm1, m.W(), m.ResponseQuantile(0.99), meanTol, p99Tol)
		})
	}
}

// completions is a case's sample size over all seeds. The guide asks for
// about a million; at full size popsim uses two million, and four million
// for the split M/M/1 cases with c >= 8, because at ρ = 0.75..0.94 a
// million still leaves the p99 about ±3..5 % from theory from one set of
// seeds to the next (measured: M/M/2 p99 +3.1 % with seeds 1..2 and one
// million, −0.9 % with seeds 3..6 and four million; split M/M/1 c = 8
// p99 +4.5 % with seeds 1..2, −7.0 % with seeds 3..6, +0.6 % with seeds
// 1..8 and four million). Each of the split cases' c queues sees only 1/c
// of the completions.
func completions(vc validationCase, split bool) float64 {
	switch {
	case *validationN > 0:
		return *validationN
	case !*validationFull:
		return ciCompletions
	case split && vc.c >= 8:
		return 4_000_000
	}
	return 2_000_000
}

// validate runs the scenario for each of its seeds, merges the end-to-end
// histograms and compares mean and p99 (seconds) with theory.
func validate(t *testing.T, text string, wantMean, wantP99, meanTol, p99Tol float64) {
	s, err := Load("validation.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var all *hdrhistogram.Histogram
	for _, seed := range s.Seeds.List() {
		res, err := sim.Run(s.Config(seed), sim.RunOptions{Scenario: s.Name})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Summary.Violations); n > 0 {
			t.Fatalf("seed %d: %d violations, first: %s: %s", seed, n, res.Summary.Violations[0].Invariant, res.Summary.Violations[0].Detail)
		}
		if all == nil {
			all = hdrhistogram.Import(res.EndToEnd.Export())
		} else {
			all.Merge(res.EndToEnd)
		}
	}
	gotMean := all.Mean() / 1e6
	gotP99 := float64(all.ValueAtQuantile(99)) / 1e6
	em, ep := (gotMean-wantMean)/wantMean, (gotP99-wantP99)/wantP99
	t.Logf("%-8s %8d completions: mean %8.3f ms (theory %8.3f, error %+6.2f%%)  p99 %8.3f ms (theory %8.3f, error %+6.2f%%)",
		s.Name, all.TotalCount(), gotMean*1000, wantMean*1000, em*100, gotP99*1000, wantP99*1000, ep*100)
	if math.Abs(em) > meanTol || math.Abs(ep) > p99Tol {
		t.Errorf("%s: mean error %+.2f%% (tolerance %.0f%%), p99 error %+.2f%% (tolerance %.0f%%)", s.Name, em*100, meanTol*100, ep*100, p99Tol*100)
	}
}
