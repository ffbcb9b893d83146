package main

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// summary is a sample's median with a distribution-free confidence
// interval (benchmath.AssumeNothing, as benchstat reports it).
type summary struct {
	Center, Lo, Hi float64
	Confidence     float64 // actual coverage of [Lo, Hi], >= the requested one
	N              int
}

// thresholds are benchstat's defaults (alpha 0.05).
var mathThresholds = benchmath.DefaultThresholds

func sample(xs []float64) *benchmath.Sample {
	// NewSample sorts its argument: keep the caller's order intact.
	return benchmath.NewSample(append([]float64(nil), xs...), &mathThresholds)
}

// summarize returns the median of xs and its confidence interval at conf.
// With too few values for conf, Lo and Hi are infinite.
func summarize(xs []float64, conf float64) summary {
	if len(xs) == 0 {
		return summary{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	s := benchmath.AssumeNothing.Summary(sample(xs), conf)
	return summary{Center: s.Center, Lo: s.Lo, Hi: s.Hi, Confidence: s.Confidence, N: len(xs)}
}

// mannWhitney is the two-sided Mann-Whitney U test p-value of "the two
// samples come from the same distribution" (benchmath.AssumeNothing.Compare).
func mannWhitney(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	return benchmath.AssumeNothing.Compare(sample(a), sample(b)).P
}
