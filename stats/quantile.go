package stats

import (
	"math"
	"strconv"
)

// QuantileByProportion returns a confidence interval for the q-quantile
// of one long run's output, the interval a run prints for its own p50, p90
// and p99.
//
// est is the run's q-quantile over all its values after the warm-up (the
// nearest-rank estimate, or a histogram's); p is the batch-means interval
// of the proportion of those values at or below est (a Series fed 1 for a
// value <= est and 0 otherwise, in the run's order); quantile is the run's
// empirical quantile function (quantile(0.95): the smallest value with
// 95 % of the values at or below it). The interval is
//
//	[quantile(q - h), quantile(q + h)],   h = the half-width of p,
//
// from the Bahadur representation est - ξ ≈ (q - F(ξ))/f(ξ) (Bahadur 1966;
// Sen 1972 for dependent sequences): the quantile's error is the error of
// a proportion seen through the density, so an interval for the
// proportion, inverted through the empirical distribution, is one for the
// quantile. The dependence between observations is handled where batch
// means handle it well, in the mean of an indicator, and the estimate is
// the quantile of all the data. (Batch quantiles, QuantileSeries, estimate
// a mean of per-block quantiles instead, which is biased when blocks are
// not much longer than the correlation time: on queueing output at the
// default blocks, by several percent.)
//
// Without an interval of p (too little data, batches still correlated)
// there is none, with p's note. est is returned as the estimate either way.
func QuantileByProportion(q, est float64, p Interval, quantile func(float64) float64) Interval {
	switch {
	case !(q > 0 && q < 1):
		return none(est, p.Level, p.N, BatchProportion, "quantile "+strconv.FormatFloat(q, 'g', -1, 64)+" out of range: want 0 < q < 1")
	case !p.OK:
		return none(est, p.Level, p.N, BatchProportion, p.Note)
	}
	h := p.HalfWidth()
	lo, hi := quantile(math.Max(0, q-h)), quantile(math.Min(1, q+h))
	return Interval{Est: est, Lo: math.Min(lo, est), Hi: math.Max(hi, est), Level: p.Level, N: p.N, Method: BatchProportion, OK: true,
		Note: "proportion at or below the estimate " + FormatNumber(p.Est) + " ± " + FormatNumber(h) + "; " + p.Note}
}
