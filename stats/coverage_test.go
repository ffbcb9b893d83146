package stats

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// Coverage checks: how often does a 95% interval contain the true value,
// over independent seeded data sets? Each test's seeds are fixed, so its
// figure is too (the comment records it); the bounds are wide enough for
// other seeds and tight enough that a wrong method (the naive interval,
// a missing warm-up cut, the wrong degrees of freedom) falls outside.

// coverage counts how many intervals contain truth, and how many gave none.
type coverage struct{ in, none, reps int }

func (c *coverage) add(iv Interval, truth float64) {
	c.reps++
	switch {
	case !iv.OK:
		c.none++
	case iv.Lo <= truth && truth <= iv.Hi:
		c.in++
	}
}

func (c coverage) rate() float64 { return float64(c.in) / float64(c.reps) }

func (c coverage) check(t *testing.T, name string, lo, hi float64) {
	t.Helper()
	t.Logf("%s: %d of %d intervals cover (%.3f), %d without interval", name, c.in, c.reps, c.rate(), c.none)
	if r := c.rate(); r < lo || r > hi {
		t.Errorf("%s: coverage %.3f, want %.3f..%.3f", name, r, lo, hi)
	}
}

// Seeds 0..1999, 10 values of N(5, 4) each: measured 0.951 at 95% and
// 0.903 at 90%.
func TestCoverageMeanCIIID(t *testing.T) {
	var c95, c90 coverage
	for s := range uint64(2000) {
		xs := normals(newRand(s), 10, 5, 2)
		c95.add(MeanCI(xs, 0.95), 5)
		c90.add(MeanCI(xs, 0.90), 5)
	}
	c95.check(t, "t interval, 95%", 0.935, 0.965)
	c90.check(t, "t interval, 90%", 0.88, 0.92)
}

// AR(1) with phi = 0.9, 20000 values, seeds 0..399: batch means keep
// about 95% (measured 0.958, every run with an interval); the naive t
// interval over the 20000 correlated values covers about a third of the
// time (measured 0.325).
func TestCoverageAR1BatchMeans(t *testing.T) {
	var batch, naive coverage
	for s := range uint64(400) {
		xs := ar1(newRand(s), 20000, 10, 0.9)
		batch.add(BatchMeansCI(xs, 0.95), 10)
		naive.add(MeanCI(xs, 0.95), 10)
	}
	batch.check(t, "batch means", 0.92, 0.975)
	naive.check(t, "naive t over observations", 0, 0.5)
	if batch.none > 8 {
		t.Errorf("%d of 400 runs without an interval", batch.none)
	}
}

// M/M/1 at rho = 0.8 started empty, 100000 customers, seeds 0..199, fed
// to a streaming Series with the automatic warm-up: the interval for the
// mean sojourn time (theory: 1/(mu-lambda) = 5) covers about 95%
// (measured 0.965, every run with an interval).
func TestCoverageMM1SeriesAutoWarmup(t *testing.T) {
	var c coverage
	for s := range uint64(200) {
		ser := NewSeries()
		for i, x := range mm1(newRand(s), 100000, 0.8, 1, 0) {
			ser.Add(int64(i), x)
		}
		c.add(ser.MeanCI(ser.Warmup().At, 0.95), 5)
	}
	c.check(t, "M/M/1 batch means after MSER-5", 0.9, 0.98)
}

// Duplicates per produced message over 4000 intervals whose duplicate rate
// drifts (AR(1), phi 0.9, around 2%): the batch ratio covers the true
// 0.02 about 95% of the time (measured 0.943, seeds 0..399, 4 runs told
// to run longer); treating the intervals as independent replications does
// not (measured 0.495).
func TestCoverageRatioSeries(t *testing.T) {
	var batch, naive coverage
	for s := range uint64(400) {
		r := newRand(s)
		drift := ar1(r, 4000, 0, 0.9)
		rs := NewRatioSeries()
		num, den := make([]float64, 4000), make([]float64, 4000)
		for j, a := range drift {
			produced := float64(100 + r.IntN(101))
			rate := 0.02 * (1 + 0.5*math.Max(-1.9, math.Min(1.9, a)))
			mean := produced * rate
			num[j], den[j] = mean+math.Sqrt(mean)*r.NormFloat64(), produced
			rs.Add(int64(j), num[j], den[j])
		}
		batch.add(rs.CI(0, 0.95), 0.02)
		naive.add(RatioCI(num, den, 0.95), 0.02)
	}
	batch.check(t, "batch ratio", 0.92, 0.975)
	naive.check(t, "intervals as replications", 0, 0.75)
}

// Across seeds: 10 seeds of 1000 (duplicates, produced) pairs with
// different volumes, ratio 0.02; measured 0.942 over seeds 0..999.
func TestCoverageRatioCIReplications(t *testing.T) {
	var c coverage
	for s := range uint64(1000) {
		r := newRand(s)
		num, den := make([]float64, 10), make([]float64, 10)
		for i := range num {
			n := 500 + r.IntN(1000)
			den[i] = float64(n)
			for range n {
				if r.Float64() < 0.02 {
					num[i]++
				}
			}
		}
		c.add(RatioCI(num, den, 0.95), 0.02)
	}
	c.check(t, "ratio over replications", 0.93, 0.965)
}

// A percentile across seeds: the t interval of 10 per-seed p90s (2000
// Exp(1) values each) for the true ln 10; measured 0.950 over seeds
// 0..399.
func TestCoveragePercentileAcrossSeeds(t *testing.T) {
	var c coverage
	p90 := make([]float64, 10)
	for s := range uint64(400) {
		r := newRand(s)
		for i := range p90 {
			xs := make([]float64, 2000)
			for j := range xs {
				xs[j] = r.ExpFloat64()
			}
			slices.Sort(xs)
			p90[i] = xs[nearestRank(2000, 0.9)-1]
		}
		c.add(MeanCI(p90, 0.95), math.Ln10)
	}
	c.check(t, "t over per-seed p90", 0.92, 0.975)
}

// The order-statistic interval is exact for i.i.d. data: p90 of 200
// Exp(1) values: ranks 171 and 189, exact coverage 96.7%; measured 0.966
// over seeds 0..1999.
func TestCoverageOrderStatistics(t *testing.T) {
	var c coverage
	for s := range uint64(2000) {
		r := newRand(s)
		xs := make([]float64, 200)
		for i := range xs {
			xs[i] = r.ExpFloat64()
		}
		c.add(QuantileCI(xs, 0.9, 0.95), math.Ln10)
	}
	c.check(t, "order statistics", 0.95, 0.985)
}

// Batch quantiles: p90 of AR(1) data (phi 0.5, marginal N(0, 1), true p90
// 1.28155), 40 blocks of 1000; measured 0.955 over seeds 0..199.
func TestCoverageBatchQuantiles(t *testing.T) {
	var c coverage
	for s := range uint64(200) {
		c.add(BatchQuantileCI(ar1(newRand(s), 40000, 0, 0.5), 0.9, 0, 0.95), NormalQuantile(0.9))
	}
	c.check(t, "batch quantiles", 0.9, 0.985)
}

// AR(1) with phi = 0.9 (marginal N(10, 1)), 20000 values, seeds 0..399:
// the interval for p50, p90 and p99 from the batch-means interval of the
// proportion at or below the estimate covers the true quantile about 95 %
// of the time (measured 0.968, 0.948, 0.943).
func TestCoverageAR1QuantileByProportion(t *testing.T) {
	qs := []float64{0.5, 0.9, 0.99}
	prop := make([]coverage, len(qs))
	for s := range uint64(400) {
		xs := ar1(newRand(s), 20000, 10, 0.9)
		sorted := slices.Sorted(slices.Values(xs))
		quantile := func(p float64) float64 { return sorted[nearestRank(len(sorted), p)-1] }
		for j, q := range qs {
			est := quantile(q)
			ind := make([]float64, len(xs))
			for i, x := range xs {
				if x <= est {
					ind[i] = 1
				}
			}
			prop[j].add(QuantileByProportion(q, est, BatchMeansCI(ind, 0.95), quantile), 10+NormalQuantile(q))
		}
	}
	for j, q := range qs {
		prop[j].check(t, "p"+strconv.FormatFloat(100*q, 'g', -1, 64)+" by proportion", 0.92, 0.975)
	}
}

// M/M/1 at rho = 0.8 (sojourn Exp(0.2) in steady state), 100000
// customers after 20000 cut from an empty start, seeds 0..99: by
// proportion, p50, p90 and p99 keep about 95 % (measured 0.94, 0.95,
// 0.93); batch quantiles at their default blocks do not: their estimate,
// the mean of per-block quantiles of correlated, skewed values, is 20 %
// above the true median (0 of 100 cover) and has no p99 interval at this
// length.
func TestCoverageMM1QuantileByProportion(t *testing.T) {
	qs := []float64{0.5, 0.9, 0.99}
	prop, batch := make([]coverage, len(qs)), make([]coverage, len(qs))
	bias := make([]float64, len(qs))
	const seeds = 100
	for s := range uint64(seeds) {
		xs := mm1(newRand(s), 120000, 0.8, 1, 0)[20000:]
		sorted := slices.Sorted(slices.Values(xs))
		quantile := func(p float64) float64 { return sorted[nearestRank(len(sorted), p)-1] }
		for j, q := range qs {
			truth, est := -math.Log(1-q)/0.2, quantile(q)
			ser := NewSeries()
			for i, x := range xs {
				ind := 0.0
				if x <= est {
					ind = 1
				}
				ser.Add(int64(i), ind)
			}
			prop[j].add(QuantileByProportion(q, est, ser.MeanCI(math.MinInt64, 0.95), quantile), truth)
			b := BatchQuantileCI(xs, q, 0, 0.95)
			batch[j].add(b, truth)
			bias[j] += (b.Est/truth - 1) / seeds
		}
	}
	for j, q := range qs {
		name := "p" + strconv.FormatFloat(100*q, 'g', -1, 64)
		prop[j].check(t, name+" by proportion", 0.89, 0.99)
		t.Logf("%s by batch quantiles: %d of %d cover (%.3f), %d without interval; estimate %+.1f %% off on average",
			name, batch[j].in, batch[j].reps, batch[j].rate(), batch[j].none, 100*bias[j])
	}
	if batch[0].rate() > 0.5 {
		t.Errorf("batch quantiles covered the M/M/1 median in %.0f %% of seeds: the bias this test documents is gone, update docs/statistics.md", 100*batch[0].rate())
	}
}
