package stats

import (
	"math"
	"strconv"
	"strings"
)

// Method names how an Interval was computed.
type Method string

// The methods of this package.
const (
	// Replications: Student-t interval over independent values, one per
	// seed (MeanCI).
	Replications Method = "t over replications"
	// RatioReplications: delta-method t interval for a ratio of sums over
	// independent replications (RatioCI).
	RatioReplications Method = "ratio over replications"
	// OrderStatistics: distribution-free interval for a quantile of
	// i.i.d. observations from two order statistics (QuantileCI).
	OrderStatistics Method = "order statistics"
	// BatchMeans: t interval over the means of consecutive batches of one
	// long run (Series.MeanCI, BatchMeansCI).
	BatchMeans Method = "batch means"
	// BatchRatio: delta-method t interval for a ratio over batches of one
	// long run (RatioSeries.CI).
	BatchRatio Method = "batch ratio"
	// BatchQuantiles: t interval over per-block quantiles of one long run
	// (QuantileSeries.CI, BatchQuantileCI).
	BatchQuantiles Method = "batch quantiles"
	// BatchProportion: a quantile's interval from the batch-means interval
	// of the proportion of values at or below it, inverted through the
	// empirical distribution (QuantileByProportion).
	BatchProportion Method = "batch proportion"
)

// Interval is a confidence interval for one metric: with probability
// about Level the procedure that produced it covers the true value.
//
// The zero Interval is "no interval". When OK is false Lo and Hi are 0 and
// mean nothing; Est may still hold a point estimate and Note says why there
// is no interval ("not enough data: 12 batches, need 20"). Est, Lo and Hi
// are in the unit of the data that went in.
type Interval struct {
	Est    float64 `json:"est"`            // point estimate
	Lo     float64 `json:"lo"`             // lower bound (when OK)
	Hi     float64 `json:"hi"`             // upper bound (when OK)
	Level  float64 `json:"level"`          // confidence level, e.g. 0.95
	N      int     `json:"n"`              // independent units behind it: replications, batches or observations
	Method Method  `json:"method"`         // how it was computed
	OK     bool    `json:"ok"`             // false: no interval, see Note
	Note   string  `json:"note,omitempty"` // details (batch size, lag-1 correlation, ranks) or why there is no interval
}

// HalfWidth returns (Hi-Lo)/2, or +Inf when there is no interval.
func (iv Interval) HalfWidth() float64 {
	if !iv.OK {
		return math.Inf(1)
	}
	return (iv.Hi - iv.Lo) / 2
}

// Contains reports whether x lies in [Lo, Hi]. Without an interval nothing
// is excluded, so every x is contained.
func (iv Interval) Contains(x float64) bool {
	return !iv.OK || (iv.Lo <= x && x <= iv.Hi)
}

// String renders the interval on one line, numbers with four significant
// digits: "50.20 [48.10, 52.30] 95% batch means n=30", or
// "50.20 (no 95% interval: not enough data: 12 batches, need 20)".
func (iv Interval) String() string { return iv.Format(FormatNumber) }

// Format is String with the caller's number format (for units):
//
//	iv.Format(func(us float64) string { return stats.FormatNumber(us/1000) + " ms" })
func (iv Interval) Format(num func(float64) string) string {
	var b strings.Builder
	b.WriteString(num(iv.Est))
	if !iv.OK {
		b.WriteString(" (no " + formatLevel(iv.Level) + " interval")
		if iv.Note != "" {
			b.WriteString(": " + iv.Note)
		}
		b.WriteString(")")
		return b.String()
	}
	b.WriteString(" [" + num(iv.Lo) + ", " + num(iv.Hi) + "] ")
	b.WriteString(formatLevel(iv.Level) + " " + string(iv.Method) + " n=" + strconv.Itoa(iv.N))
	return b.String()
}

// formatLevel renders 0.95 as "95%" and 0.999 as "99.9%".
func formatLevel(level float64) string {
	return strconv.FormatFloat(level*100, 'g', 6, 64) + "%"
}

// FormatNumber renders x with four significant digits and no exponent for
// magnitudes from 1e-4 to 1e9: 50.2 -> "50.20", 12345.6 -> "12346",
// 0.00146 -> "0.001460".
func FormatNumber(x float64) string {
	ax := math.Abs(x)
	switch {
	case x == 0:
		return "0"
	case math.IsNaN(x) || math.IsInf(x, 0) || ax < 1e-4 || ax >= 1e9:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	decimals := max(0, 3-int(math.Floor(math.Log10(ax))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// none returns "no interval" with its reason.
func none(est, level float64, n int, m Method, why string) Interval {
	return Interval{Est: est, Level: level, N: n, Method: m, Note: why}
}

// checkLevel returns a reason when level is not a usable confidence level.
func checkLevel(level float64) string {
	if !(level > 0 && level < 1) {
		return "confidence level " + strconv.FormatFloat(level, 'g', -1, 64) + " out of range: want 0 < level < 1 (e.g. 0.95)"
	}
	return ""
}

// tInterval is est ± t(level, df)·se.
func tInterval(est, se float64, df int, level float64) (lo, hi float64) {
	h := StudentTQuantile((1+level)/2, float64(df)) * se
	return est - h, est + h
}

// meanVar returns the mean and the sample variance (n-1 denominator) by
// Welford's update, which stays accurate when the mean is large compared
// with the spread.
func meanVar(xs []float64) (mean, variance float64) {
	var m2 float64
	for i, x := range xs {
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	if len(xs) > 1 {
		variance = m2 / float64(len(xs)-1)
	}
	return mean, variance
}

// finite reports whether every value is a finite number.
func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
