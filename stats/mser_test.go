package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// An obvious transient: 50 observations at 100, then noise around 0. The
// first 10 batch averages are 100, so MSER-5 cuts exactly 50.
func TestMSER5StepTransient(t *testing.T) {
	xs := normals(newRand(5), 1000, 0, 1)
	for i := range 50 {
		xs[i] = 100
	}
	w := MSER5(xs)
	if w.Truncate != 50 || w.At != 50 || w.Failed || w.Step != 5 || w.N != 1000 {
		t.Fatalf("step: %+v", w)
	}
	if got, want := w.String(), "MSER-5 truncated 50 of 1000 observations (5.0%)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestMSER5ConstantAndShort(t *testing.T) {
	if w := MSER5(make([]float64, 500)); w.Truncate != 0 || w.Failed {
		t.Errorf("constant series: %+v", w)
	}
	w := MSER5(make([]float64, 99))
	if !w.Failed || w.Note != "not enough data for a warm-up rule: 19 batch averages, need 20" {
		t.Errorf("99 observations: %+v", w)
	}
}

// A series that keeps drifting has its MSER minimum near the end: the rule
// fails and says the run is too short.
func TestMSER5FailsOnDrift(t *testing.T) {
	xs := normals(newRand(6), 2000, 0, 1)
	for i := range xs {
		xs[i] += 10 * math.Exp(-float64(i)/1500)
	}
	w := MSER5(xs)
	if !w.Failed || !strings.Contains(w.Note, "past its middle: the run is too short") || w.Truncate > 1000 {
		t.Errorf("drift: %+v", w)
	}
	if !strings.Contains(w.String(), "; warning: the MSER statistic is smallest at") {
		t.Errorf("String() = %q", w.String())
	}
}

// M/M/1 at rho = 0.8 (mean sojourn 5) started with 200 customers queued:
// the first ~1000 customers wait far longer (the backlog drains at
// mu - lambda = 0.2 per unit time). MSER-5 must cut that transient, and
// what it keeps must be much closer to steady state than the raw mean.
// (It may cut more: a congested spell right after the transient looks like
// more of it; seed 17 cuts 4150.)
func TestMSER5TruncatesMM1Transient(t *testing.T) {
	const n = 20000
	var rawErr, cutErr float64
	cuts := make([]int64, 0, 20)
	for seed := range uint64(20) {
		xs := mm1(newRand(seed), n, 0.8, 1, 200)
		w := MSER5(xs)
		cuts = append(cuts, w.Truncate)
		if w.Failed || w.Truncate < 400 || w.Truncate > n/4 {
			t.Errorf("seed %d: %v, want a cut between 400 and %d customers", seed, w, n/4)
		}
		raw, _ := meanVar(xs)
		cut, _ := meanVar(xs[w.Truncate:])
		rawErr += math.Abs(raw-5) / 20
		cutErr += math.Abs(cut-5) / 20
	}
	slices.Sort(cuts)
	t.Logf("cuts %v; mean |error| raw %.2f, after the cut %.3f", cuts, rawErr, cutErr)
	if median := cuts[10]; median < 500 || median > 1500 {
		t.Errorf("median cut %d customers, want 500..1500 (the backlog drains in about 1000)", median)
	}
	if rawErr < 3 || cutErr > 0.5 {
		t.Errorf("mean |error| raw %.2f, after MSER-5 %.2f: want raw >= 3 and truncated <= 0.5", rawErr, cutErr)
	}
}

// Started empty, the M/M/1 transient is short (a few hundred customers):
// MSER-5 cuts at most a few percent in most seeds.
func TestMSER5MM1EmptyStartCutsLittle(t *testing.T) {
	small := 0
	for seed := range uint64(20) {
		w := MSER5(mm1(newRand(seed), 20000, 0.8, 1, 0))
		if w.Failed {
			t.Errorf("seed %d: %v", seed, w)
		}
		if w.Truncate <= 1000 {
			small++
		}
	}
	t.Logf("%d of 20 empty-start runs cut at most 5%%", small)
	if small < 17 {
		t.Errorf("only %d of 20 empty-start runs cut at most 5%%", small)
	}
}

// Too short for the 200-customer transient: the rule must fail in most
// seeds rather than claim a steady state.
func TestMSER5FailsWhenRunTooShort(t *testing.T) {
	failed := 0
	for seed := range uint64(20) {
		if MSER5(mm1(newRand(seed), 1000, 0.8, 1, 200)).Failed {
			failed++
		}
	}
	t.Logf("the rule failed in %d of 20 seeds", failed)
	if failed < 18 {
		t.Errorf("1000 customers after 200 queued: the rule failed in only %d of 20 seeds", failed)
	}
}

// While a Series holds at most 5120 observations its groups are the
// batches of 5, so its warm-up is MSER-5 exactly; beyond that it evaluates
// the same statistic at group boundaries only (every 160 observations for
// 100000), and must cut within a couple of groups of MSER-5 on all data.
func TestSeriesWarmupIsMSER5(t *testing.T) {
	xs := mm1(newRand(11), 5120, 0.8, 1, 100)
	s := NewSeries()
	for i, x := range xs {
		s.Add(int64(i), x)
	}
	if got, want := s.Warmup(), MSER5(xs); got != want {
		t.Errorf("streaming %+v, MSER5 %+v", got, want)
	}
	for seed := range uint64(5) {
		xs := mm1(newRand(seed), 100000, 0.8, 1, 200)
		s := NewSeries()
		for i, x := range xs {
			s.Add(int64(3*i), x) // keys need not be indices
		}
		w, ref := s.Warmup(), MSER5(xs)
		if w.Failed || w.At != 3*w.Truncate || w.Step != 160 || w.Truncate < ref.Truncate-2*w.Step || w.Truncate > ref.Truncate+2*w.Step {
			t.Errorf("seed %d: streaming warm-up %v (step %d), MSER5 on all data %v", seed, w, w.Step, ref)
		}
	}
	if w := NewSeries().Warmup(); !w.Failed || w.At != math.MinInt64 {
		t.Errorf("empty series: %+v", w)
	}
}
