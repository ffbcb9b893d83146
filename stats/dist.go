package stats

import "math"

// NormalQuantile returns the p-quantile of the standard normal
// distribution (the z with P(Z <= z) = p). It returns -Inf at 0, +Inf at 1
// and NaN outside [0, 1].
//
// It starts from math.Erfinv (Wichura's AS 241 rational approximation) and
// polishes with Newton steps on log Phi, computed from math.Erfc, which
// restores full precision in the far lower tail where 1-2p loses digits
// (below 1e-8 the start is the tail asymptote instead).
func NormalQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	}
	if p > 0.5 {
		return -NormalQuantile(1 - p)
	}
	lp := math.Log(p)
	z := -math.Sqrt2 * math.Erfcinv(2*p)
	if p < 1e-8 {
		// 1-2p has lost most digits: start from the tail asymptote
		// p ~ phi(z)/|z|, i.e. z² = -2 ln p - ln z² - ln 2π.
		z2 := -2 * lp
		z2 = -2*lp - math.Log(z2) - math.Log(2*math.Pi)
		z = -math.Sqrt(z2)
	}
	for range 8 {
		c, d := NormalCDF(z), NormalPDF(z)
		if c <= 0 || d <= 0 {
			break
		}
		step := (math.Log(c) - lp) * c / d
		z -= step
		if math.Abs(step) <= 1e-16*math.Abs(z) {
			break
		}
	}
	return z
}

// NormalCDF returns P(Z <= z) for a standard normal Z.
func NormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// NormalPDF returns the standard normal density at z.
func NormalPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// StudentTCDF returns P(T <= t) for Student's t distribution with df > 0
// degrees of freedom (df need not be an integer). It returns NaN for
// df <= 0 or a NaN argument.
func StudentTCDF(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if t > 0 {
		return 1 - studentTTail(t, df)
	}
	return studentTTail(-t, df)
}

// studentTTail returns P(T > t) for t >= 0, without cancellation: with
// x = df/(df+t²), P(T > t) = I_x(df/2, 1/2) / 2.
func studentTTail(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 0
	}
	if math.IsInf(df, 1) {
		return NormalCDF(-t)
	}
	// x and 1-x computed separately so that neither loses digits.
	x, y := df/(df+t*t), t*t/(df+t*t)
	ix, _ := betaInc(df/2, 0.5, x, y)
	return ix / 2
}

// StudentTPDF returns the density of Student's t with df degrees of freedom.
func StudentTPDF(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return NormalPDF(t)
	}
	lg1, _ := math.Lgamma((df + 1) / 2)
	lg2, _ := math.Lgamma(df / 2)
	return math.Exp(lg1 - lg2 - 0.5*math.Log(df*math.Pi) - (df+1)/2*math.Log1p(t*t/df))
}

// largeDF is where StudentTQuantile switches to the Cornish-Fisher
// expansion: from there on its first omitted term is below 1e-12 relative
// for the tails in use, while the incomplete beta function starts losing
// digits to the log-gamma terms of its prefactor.
const largeDF = 1000

// StudentTQuantile returns the p-quantile of Student's t distribution with
// df > 0 degrees of freedom (df need not be an integer; +Inf gives the
// normal quantile). It returns -Inf at 0, +Inf at 1 and NaN for p outside
// [0, 1] or df <= 0.
//
// df 1 and 2 use their closed forms; df >= 1000 the Cornish-Fisher
// expansion (Abramowitz & Stegun 26.7.5); otherwise a bracketed Newton
// iteration on the upper tail computed from the regularized incomplete beta
// function. Relative accuracy is about 1e-12 for p in [1e-10, 1-1e-10].
func StudentTQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || math.IsNaN(df) || p < 0 || p > 1 || df <= 0:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	}
	if p < 0.5 {
		return -studentTUpper(p, df)
	}
	return studentTUpper(1-p, df)
}

// studentTUpper returns t > 0 with P(T > t) = q, for 0 < q < 1/2.
func studentTUpper(q, df float64) float64 {
	switch {
	case df == 1:
		return 1 / math.Tan(math.Pi*q)
	case df == 2:
		return (1 - 2*q) / math.Sqrt(2*q*(1-q))
	case df >= largeDF:
		return cornishFisherT(-NormalQuantile(q), df)
	}
	return solveTUpper(q, df)
}

// cornishFisherT is the expansion of the t quantile around the normal one,
// z, in powers of 1/df (Abramowitz & Stegun 26.7.5).
func cornishFisherT(z, df float64) float64 {
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + (g1+(g2+(g3+g4/df)/df)/df)/df
}

// solveTUpper finds t > 0 with studentTTail(t, df) = q by Newton's method
// inside a bracket that bisection keeps shrinking when a step leaves it.
// The tail is convex and decreasing on t > 0, so steps from the left
// never overshoot and convergence is quadratic.
func solveTUpper(q, df float64) float64 {
	lo, hi := 0.0, math.Max(1, 2*cornishFisherT(-NormalQuantile(q), df))
	for studentTTail(hi, df) > q {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return hi
		}
	}
	t := lo
	if g := cornishFisherT(-NormalQuantile(q), df); g > lo && g < hi {
		t = g
	}
	for range 200 {
		f := studentTTail(t, df) - q
		if f == 0 {
			return t
		}
		if f > 0 {
			lo = t
		} else {
			hi = t
		}
		next := t + f/StudentTPDF(t, df)
		if !(next > lo && next < hi) {
			next = bisect(lo, hi)
		}
		if math.Abs(next-t) <= 1e-15*next || hi-lo <= 1e-15*hi {
			return next
		}
		t = next
	}
	return t
}

// bisect splits [lo, hi]: geometrically while the bracket spans orders of
// magnitude (heavy tails at small df), arithmetically otherwise.
func bisect(lo, hi float64) float64 {
	if lo > 0 && hi > 4*lo {
		return math.Sqrt(lo * hi)
	}
	return lo + (hi-lo)/2
}

// betaInc returns the regularized incomplete beta function I_x(a, b) and
// its complement 1 - I_x(a, b), each computed without cancellation; y must
// be 1 - x (passed separately so callers keep its digits).
//
// It evaluates the continued fraction of Abramowitz & Stegun 26.5.8 by the
// modified Lentz method on whichever side converges quickly, and gets the
// other side from the symmetry I_x(a, b) = 1 - I_y(b, a).
func betaInc(a, b, x, y float64) (ix, iy float64) {
	switch {
	case x <= 0:
		return 0, 1
	case y <= 0:
		return 1, 0
	}
	if x > (a+1)/(a+b+2) {
		iy, ix = betaInc(b, a, y, x)
		return ix, iy
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x)+b*math.Log(y)-(lga+lgb-lgab)) / a
	ix = front / betaFraction(a, b, x)
	return ix, 1 - ix
}

// betaFraction evaluates 1 + d1/(1 + d2/(1 + ...)) with the coefficients
// of A&S 26.5.8: d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and
// d(2m) = m(b-m)x / ((a+2m-1)(a+2m)).
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	f, c, d := 1.0, 1.0, 0.0
	step := func(coef float64) float64 {
		d = 1 + coef*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + coef/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := c * d
		f *= delta
		return delta
	}
	// The number of terms needed grows like sqrt(max(a, b)).
	limit := 1000 + 20*int(math.Sqrt(math.Max(a, b)))
	for m := 0; m < limit; m++ {
		fm := float64(m)
		if m > 0 {
			step(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))
		}
		delta := step(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)))
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return f
}

// binomialCDF returns P(B <= k) for B ~ Binomial(n, p), from the identity
// P(B <= k) = I_(1-p)(n-k, k+1).
func binomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	v, _ := betaInc(float64(n-k), float64(k+1), 1-p, p)
	return v
}
