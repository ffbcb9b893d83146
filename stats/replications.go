package stats

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// MeanCI is the Student-t interval for the mean of independent values,
// typically one value per seed (each seed's mean latency, p99, throughput
// or duplicate percentage): mean ± t(level, n-1)·s/√n. It needs at least
// two values; with fewer it returns no interval and says so.
//
// The values must be independent and roughly normal; means of long runs
// are (central limit theorem), and so are per-seed percentiles of runs
// long enough to hold many tail observations. The estimate for a
// percentile is then the mean of the per-seed percentiles, not the
// percentile of the pooled data. Law & Kelton call this the method of
// independent replications.
func MeanCI(xs []float64, level float64) Interval {
	n := len(xs)
	if why := checkLevel(level); why != "" {
		return none(0, level, n, Replications, why)
	}
	if !finite(xs) {
		return none(math.NaN(), level, n, Replications, "a value is NaN or infinite")
	}
	mean, variance := meanVar(xs)
	if n < 2 {
		return none(mean, level, n, Replications, "not enough data: "+plural(n, "replication")+", need at least 2")
	}
	lo, hi := tInterval(mean, math.Sqrt(variance/float64(n)), n-1, level)
	return Interval{Est: mean, Lo: lo, Hi: hi, Level: level, N: n, Method: Replications, OK: true}
}

// RatioCI is the interval for a ratio of sums, R = Σnum / Σden, over
// independent replications: duplicates per produced message (num =
// duplicates, den = produced per seed), acks per second, and the like. Each
// replication's pair may have a different denominator; the estimator
// weights them by it, which a plain mean of per-seed ratios does not.
//
// The standard error comes from the delta method: with residuals
// e_i = num_i - R·den_i, se(R) = s_e / (√n · mean(den)); the interval is
// R ± t(level, n-1)·se. It reduces to MeanCI of num/den when every den is
// equal. It needs two replications and a positive Σden.
func RatioCI(num, den []float64, level float64) Interval {
	n := len(num)
	switch {
	case checkLevel(level) != "":
		return none(0, level, n, RatioReplications, checkLevel(level))
	case len(den) != n:
		return none(0, level, n, RatioReplications, "numerators and denominators differ in length: "+strconv.Itoa(n)+" and "+strconv.Itoa(len(den)))
	case !finite(num) || !finite(den):
		return none(math.NaN(), level, n, RatioReplications, "a value is NaN or infinite")
	}
	return ratioInterval(num, den, level, RatioReplications, "replication")
}

// ratioInterval is the delta-method t interval shared by RatioCI and the
// batch forms (where each pair is one batch's sums).
func ratioInterval(num, den []float64, level float64, m Method, unit string) Interval {
	n := len(num)
	var sn, sd float64
	for i := range num {
		sn += num[i]
		sd += den[i]
	}
	if sd <= 0 {
		return none(0, level, n, m, "the denominators sum to "+FormatNumber(sd)+": no ratio")
	}
	r := sn / sd
	if n < 2 {
		return none(r, level, n, m, "not enough data: "+plural(n, unit)+", need at least 2")
	}
	var ss float64
	for i := range num {
		e := num[i] - r*den[i]
		ss += e * e
	}
	se := math.Sqrt(ss/float64(n-1)/float64(n)) / (sd / float64(n))
	lo, hi := tInterval(r, se, n-1, level)
	return Interval{Est: r, Lo: lo, Hi: hi, Level: level, N: n, Method: m, OK: true}
}

// QuantileCI is the distribution-free interval for the q-quantile of
// i.i.d. observations: [x(l), x(u)], two order statistics whose ranks come
// from the Binomial(n, q) distribution of the number of observations
// below the true quantile, chosen so the coverage is at least level with
// about half the miss probability on each side. The estimate is the
// nearest-rank sample quantile x(⌈nq⌉), as HdrHistogram reports it.
//
// It holds for any continuous distribution, but only for independent
// observations: use it on one value per seed (the median or p90 of the
// per-seed p99s, robust to an outlying seed) or on observations thinned far
// apart. Pooled latencies from queueing runs are autocorrelated and give an
// interval far too narrow; use replications (MeanCI of per-seed
// percentiles) or batches (QuantileSeries) for those. When n is too small
// for the level (both tails need q^n and (1-q)^n below (1-level)/2, e.g.
// n >= 367 for p99 at 95%) it returns no interval.
func QuantileCI(xs []float64, q, level float64) Interval {
	n := len(xs)
	switch {
	case checkLevel(level) != "":
		return none(0, level, n, OrderStatistics, checkLevel(level))
	case !(q > 0 && q < 1):
		return none(0, level, n, OrderStatistics, "quantile "+strconv.FormatFloat(q, 'g', -1, 64)+" out of range: want 0 < q < 1")
	case !finite(xs):
		return none(math.NaN(), level, n, OrderStatistics, "a value is NaN or infinite")
	case n == 0:
		return none(0, level, n, OrderStatistics, "no data")
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	est := s[nearestRank(n, q)-1]
	lo, hi, cover, ok := QuantileRanks(n, q, level)
	if !ok {
		return none(est, level, n, OrderStatistics, "not enough data: "+plural(n, "observation")+" cannot bound the "+
			strconv.FormatFloat(q, 'g', -1, 64)+" quantile at "+formatLevel(level))
	}
	return Interval{Est: est, Lo: s[lo-1], Hi: s[hi-1], Level: level, N: n, Method: OrderStatistics, OK: true,
		Note: "ranks " + strconv.Itoa(lo) + " and " + strconv.Itoa(hi) + " of " + strconv.Itoa(n) +
			", exact coverage " + strconv.FormatFloat(100*cover, 'f', 2, 64) + "%"}
}

// QuantileRanks returns the 1-based ranks lo < hi of the order statistics
// that bound the q-quantile of n i.i.d. observations with coverage at
// least level, and that coverage, P(lo <= B < hi) for B ~ Binomial(n, q).
// lo is the largest rank with P(B < lo) <= (1-level)/2, hi the smallest
// with P(B >= hi) <= (1-level)/2. ok is false when n is too small.
//
// It needs no data, so it also serves sorted or histogram-backed samples:
// look the ranks up directly (with HdrHistogram, ValueAtQuantile at
// 100·rank/n).
func QuantileRanks(n int, q, level float64) (lo, hi int, coverage float64, ok bool) {
	if n < 1 || !(q > 0 && q < 1) || checkLevel(level) != "" {
		return 0, 0, 0, false
	}
	tail := (1 - level) / 2
	cdf := func(k int) float64 { return binomialCDF(k, n, q) }
	// Largest k in [0, n-1] with cdf(k) <= tail; lo = k+1.
	if cdf(0) > tail {
		return 0, 0, 0, false
	}
	k := sort.Search(n, func(k int) bool { return cdf(k) > tail }) - 1
	lo = k + 1
	// Smallest k in [0, n-1] with cdf(k) >= 1-tail; hi = k+1.
	if cdf(n-1) < 1-tail {
		return 0, 0, 0, false
	}
	hi = sort.Search(n, func(k int) bool { return cdf(k) >= 1-tail }) + 1
	return lo, hi, cdf(hi-1) - cdf(lo-1), true
}

// nearestRank is ⌈nq⌉ clamped to [1, n]; a product within rounding error
// of an integer counts as that integer (100·0.07 is 7, not 8).
func nearestRank(n int, q float64) int {
	r := float64(n) * q
	k := math.Ceil(r)
	if near := math.Round(r); math.Abs(r-near) <= 1e-9*math.Max(1, r) {
		k = near
	}
	return min(max(int(k), 1), n)
}

// plural renders "1 batch", "12 batches", "3 replications".
func plural(n int, unit string) string {
	s := strconv.Itoa(n) + " " + unit
	if n == 1 {
		return s
	}
	if unit == "batch" {
		return s + "es"
	}
	return s + "s"
}
