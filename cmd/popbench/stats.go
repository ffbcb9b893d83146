package main

import (
	"math"
	"sort"
)

// summary is a sample's median with a distribution-free confidence
// interval, as benchmath.AssumeNothing.Summary computes it.
type summary struct {
	Center, Lo, Hi float64
	Confidence     float64 // actual coverage of [Lo, Hi], >= the requested one
	N              int
}

// summarize returns the median of xs and the narrowest symmetric pair of
// order statistics covering the population median with at least conf
// probability. With too few values for conf, Lo and Hi are infinite.
func summarize(xs []float64, conf float64) summary {
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	n := len(v)
	s := summary{N: n, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if n == 0 {
		s.Center = math.NaN()
		return s
	}
	if n%2 == 1 {
		s.Center = v[n/2]
	} else {
		s.Center = (v[n/2-1] + v[n/2]) / 2
	}
	// [v[k], v[n-1-k]] covers the median unless at most k values fall on
	// one side: coverage = 1 - 2 P(B <= k), B ~ Binomial(n, 1/2).
	for k := (n - 1) / 2; k >= 0; k-- {
		if c := 1 - 2*binomCDFHalf(n, k); c >= conf {
			s.Lo, s.Hi, s.Confidence = v[k], v[n-1-k], c
			return s
		}
	}
	return s
}

// binomCDFHalf is P(B <= k) for B ~ Binomial(n, 1/2).
func binomCDFHalf(n, k int) float64 {
	sum, c := 0.0, 1.0 // c = C(n, i)
	for i := 0; i <= k; i++ {
		sum += c
		c = c * float64(n-i) / float64(i+1)
	}
	return sum / math.Pow(2, float64(n))
}

// mannWhitney is the two-sided Mann-Whitney U test of "the two samples come
// from the same distribution". Without ties and with both samples of at
// most 50 values the p-value is exact; otherwise it uses the normal
// approximation with tie and continuity corrections.
func mannWhitney(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, x := range a {
		all = append(all, obs{x, true})
	}
	for _, x := range b {
		all = append(all, obs{x, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var r1, tieSum float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieSum += t*t*t - t
		}
		i = j
	}
	u := r1 - float64(n1*(n1+1))/2
	if !ties && n1 <= 50 && n2 <= 50 {
		return exactU(n1, n2, u)
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma2 := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if sigma2 <= 0 {
		return 1 // every value equal
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(sigma2)
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// exactU is the exact two-sided p-value of U for samples of n1 and n2
// distinct values: 2 min(P(U' <= u), P(U' >= u)), capped at 1.
func exactU(n1, n2 int, u float64) float64 {
	// counts[m][k]: arrangements of m first-sample and the current second-
	// sample count with U = k, built up one second-sample value at a time.
	maxU := n1 * n2
	prev := make([][]float64, n1+1)
	for m := range prev {
		prev[m] = make([]float64, maxU+1)
		prev[m][0] = 1 // with no second-sample value, U = 0
	}
	for j := 1; j <= n2; j++ {
		cur := make([][]float64, n1+1)
		cur[0] = make([]float64, maxU+1)
		cur[0][0] = 1
		for m := 1; m <= n1; m++ {
			cur[m] = make([]float64, maxU+1)
			// the largest value is a second-sample one (U unchanged) or a
			// first-sample one (it beats all j second-sample values).
			for k := 0; k <= maxU; k++ {
				c := prev[m][k]
				if k >= j {
					c += cur[m-1][k-j]
				}
				cur[m][k] = c
			}
		}
		prev = cur
	}
	counts := prev[n1]
	var total, le, ge float64
	for k, c := range counts {
		total += c
		if float64(k) <= u+1e-9 {
			le += c
		}
		if float64(k) >= u-1e-9 {
			ge += c
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}
