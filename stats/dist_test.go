package stats

import (
	"math"
	"testing"
)

// A printed table of upper t quantiles (three decimals, as in every
// statistics textbook's appendix): rows df, columns P(T <= t).
var tTableP = []float64{0.90, 0.95, 0.975, 0.99, 0.995, 0.999}

var tTable = []struct {
	df   float64
	want []float64
}{
	{1, []float64{3.078, 6.314, 12.706, 31.821, 63.657, 318.309}},
	{2, []float64{1.886, 2.920, 4.303, 6.965, 9.925, 22.327}},
	{3, []float64{1.638, 2.353, 3.182, 4.541, 5.841, 10.215}},
	{4, []float64{1.533, 2.132, 2.776, 3.747, 4.604, 7.173}},
	{5, []float64{1.476, 2.015, 2.571, 3.365, 4.032, 5.893}},
	{10, []float64{1.372, 1.812, 2.228, 2.764, 3.169, 4.144}},
	{20, []float64{1.325, 1.725, 2.086, 2.528, 2.845, 3.552}},
	{30, []float64{1.310, 1.697, 2.042, 2.457, 2.750, 3.385}},
	{60, []float64{1.296, 1.671, 2.000, 2.390, 2.660, 3.232}},
	{120, []float64{1.289, 1.658, 1.980, 2.358, 2.617, 3.160}},
	{math.Inf(1), []float64{1.282, 1.645, 1.960, 2.326, 2.576, 3.090}},
}

func TestStudentTQuantileMatchesPrintedTable(t *testing.T) {
	for _, row := range tTable {
		for j, p := range tTableP {
			got := StudentTQuantile(p, row.df)
			if math.Abs(got-row.want[j]) > 0.0005+1e-9 {
				t.Errorf("t(%v, df=%v) = %.6f, table says %.3f", p, row.df, got, row.want[j])
			}
			if neg := StudentTQuantile(1-p, row.df); neg != -got {
				t.Errorf("t(%v, df=%v) = %v, not the mirror of %v", 1-p, row.df, neg, got)
			}
		}
	}
}

func TestNormalQuantileKnownValues(t *testing.T) {
	for _, c := range []struct{ p, z float64 }{
		{0.9, 1.2815515655446004}, {0.95, 1.6448536269514722}, {0.975, 1.959963984540054},
		{0.99, 2.3263478740408408}, {0.995, 2.5758293035489004}, {0.999, 3.090232306167813},
		{0.5, 0}, {0.025, -1.959963984540054},
	} {
		if got := NormalQuantile(c.p); !closeRel(got, c.z, 1e-14) {
			t.Errorf("NormalQuantile(%v) = %.16g, want %.16g", c.p, got, c.z)
		}
	}
	for _, p := range []float64{1e-100, 1e-12, 1e-6, 0.01, 0.3, 0.7, 0.99, 1 - 1e-12} {
		if got := NormalCDF(NormalQuantile(p)); !closeRel(got, p, 1e-12) {
			t.Errorf("NormalCDF(NormalQuantile(%g)) = %g", p, got)
		}
	}
}

// refTCDF is an independent reference for integer df: the finite sums of
// Abramowitz & Stegun 26.7.3 and 26.7.4 for A(t|df) = P(|T| <= t).
func refTCDF(t float64, df int) float64 {
	theta := math.Atan(t / math.Sqrt(float64(df)))
	s, c := math.Sin(theta), math.Cos(theta)
	var a float64
	if df%2 == 1 {
		sum, term := 0.0, c
		if df > 1 {
			sum = c
			for k := 3; k <= df-2; k += 2 {
				term *= c * c * float64(k-1) / float64(k)
				sum += term
			}
		}
		a = 2 / math.Pi * (theta + s*sum)
	} else {
		sum, term := 1.0, 1.0
		for k := 2; k <= df-2; k += 2 {
			term *= c * c * float64(k-1) / float64(k)
			sum += term
		}
		a = s * sum
	}
	return (1 + a) / 2
}

// refTQuantile inverts refTCDF by plain bisection.
func refTQuantile(p float64, df int) float64 {
	lo, hi := 0.0, 1.0
	for refTCDF(hi, df) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if refTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func TestStudentTQuantileAgainstReferenceSums(t *testing.T) {
	for df := 1; df <= 40; df++ {
		for _, p := range []float64{0.6, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995} {
			want := refTQuantile(p, df)
			if got := StudentTQuantile(p, float64(df)); !closeRel(got, want, 1e-9) {
				t.Errorf("t(%v, df=%d) = %.15g, reference %.15g", p, df, got, want)
			}
		}
	}
}

func TestStudentTQuantileClosedFormDF4(t *testing.T) {
	// df = 4: t = 2·sqrt(cos(acos(sqrt(a))/3)/sqrt(a) - 1), a = 4p(1-p).
	for _, p := range []float64{0.9, 0.95, 0.975, 0.99, 0.999} {
		a := 4 * p * (1 - p)
		want := 2 * math.Sqrt(math.Cos(math.Acos(math.Sqrt(a))/3)/math.Sqrt(a)-1)
		if got := StudentTQuantile(p, 4); !closeRel(got, want, 1e-12) {
			t.Errorf("t(%v, 4) = %.15g, closed form %.15g", p, got, want)
		}
	}
}

func TestStudentTCDFRoundTripNonIntegerDF(t *testing.T) {
	for _, df := range []float64{0.3, 0.5, 1.5, 2.5, 7.3, 19.5, 250.25, 5e4} {
		for _, p := range []float64{1e-6, 0.001, 0.1, 0.4, 0.6, 0.9, 0.975, 0.999} {
			q := StudentTQuantile(p, df)
			if got := StudentTCDF(q, df); !closeRel(got, p, 1e-10) {
				t.Errorf("df=%v: CDF(Quantile(%v)) = %.15g (t=%g)", df, p, got, q)
			}
		}
	}
}

// The incomplete-beta CDF against Simpson's rule on the density, for
// non-integer df where no closed form exists.
func TestStudentTCDFAgainstQuadrature(t *testing.T) {
	for _, df := range []float64{1.5, 3.7, 12.5} {
		for _, x := range []float64{0.5, 1.5, 3} {
			const n = 20000 // even
			h := x / n
			sum := StudentTPDF(0, df) + StudentTPDF(x, df)
			for i := 1; i < n; i++ {
				w := 2.0
				if i%2 == 1 {
					w = 4
				}
				sum += w * StudentTPDF(float64(i)*h, df)
			}
			want := 0.5 + sum*h/3
			if got := StudentTCDF(x, df); !closeRel(got, want, 1e-10) {
				t.Errorf("CDF(%v, df=%v) = %.15g, quadrature %.15g", x, df, got, want)
			}
		}
	}
}

// The Cornish-Fisher branch used from 1000 df on against the Newton
// solver: checks the expansion's coefficients where both are accurate.
func TestCornishFisherAgreesWithSolver(t *testing.T) {
	for _, c := range []struct{ df, tol float64 }{{200, 1e-9}, {500, 1e-11}, {1e3, 1e-12}, {1e4, 1e-11}} {
		df := c.df
		for _, q := range []float64{0.1, 0.025, 0.005, 0.001} {
			cf := cornishFisherT(-NormalQuantile(q), df)
			solved := solveTUpper(q, df)
			tol := c.tol
			if !closeRel(cf, solved, tol) {
				t.Errorf("df=%v q=%v: expansion %.15g, solver %.15g", df, q, cf, solved)
			}
		}
	}
	if got, want := StudentTQuantile(0.975, 1e12), NormalQuantile(0.975); !closeRel(got, want, 1e-11) {
		t.Errorf("t(0.975, 1e12) = %v, normal %v", got, want)
	}
}

func TestQuantileEdges(t *testing.T) {
	if !math.IsNaN(StudentTQuantile(1.5, 3)) || !math.IsNaN(StudentTQuantile(0.5, 0)) || !math.IsNaN(NormalQuantile(-1)) {
		t.Error("out-of-range input must give NaN")
	}
	if !math.IsInf(StudentTQuantile(1, 3), 1) || !math.IsInf(StudentTQuantile(0, 3), -1) {
		t.Error("p = 0 and 1 must give -Inf and +Inf")
	}
	if StudentTQuantile(0.5, 7) != 0 {
		t.Error("the median of t is 0")
	}
}

func TestBinomialCDFExact(t *testing.T) {
	for _, c := range []struct {
		n int
		p float64
	}{{20, 0.5}, {30, 0.9}, {7, 0.01}, {100, 0.99}} {
		acc := 0.0
		for k := 0; k <= c.n; k++ {
			acc += binomPMF(k, c.n, c.p)
			if got := binomialCDF(k, c.n, c.p); !closeRel(got, acc, 1e-10) && math.Abs(got-acc) > 1e-15 {
				t.Errorf("P(Bin(%d,%v) <= %d) = %.15g, sum %.15g", c.n, c.p, k, got, acc)
			}
		}
	}
}

func binomPMF(k, n int, p float64) float64 {
	lc, _ := math.Lgamma(float64(n + 1))
	la, _ := math.Lgamma(float64(k + 1))
	lb, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(lc - la - lb + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

func closeRel(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}
