package stats

import (
	"math"
	"strings"
	"testing"
)

func TestMeanCIExactSmallCase(t *testing.T) {
	iv := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	// mean 3, s² = 2.5, se = √(2.5/5); t(0.975, 4) from the closed form.
	a := 4 * 0.975 * 0.025
	t4 := 2 * math.Sqrt(math.Cos(math.Acos(math.Sqrt(a))/3)/math.Sqrt(a)-1)
	h := t4 * math.Sqrt(0.5)
	if !iv.OK || iv.Est != 3 || !closeRel(iv.Lo, 3-h, 1e-12) || !closeRel(iv.Hi, 3+h, 1e-12) || iv.N != 5 {
		t.Fatalf("MeanCI(1..5) = %+v, want 3 ± %v", iv, h)
	}
	if got, want := iv.String(), "3.000 [1.037, 4.963] 95% t over replications n=5"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestMeanCINotEnoughData(t *testing.T) {
	for _, c := range []struct {
		xs    []float64
		level float64
		want  string
	}{
		{[]float64{7}, 0.95, "7.000 (no 95% interval: not enough data: 1 replication, need at least 2)"},
		{nil, 0.95, "0 (no 95% interval: not enough data: 0 replications, need at least 2)"},
		{[]float64{1, 2}, 95, "0 (no 9500% interval: confidence level 95 out of range: want 0 < level < 1 (e.g. 0.95))"},
		{[]float64{1, math.NaN()}, 0.9, "NaN (no 90% interval: a value is NaN or infinite)"},
	} {
		iv := MeanCI(c.xs, c.level)
		if iv.OK || iv.String() != c.want {
			t.Errorf("MeanCI(%v, %v) = %q (OK %v), want %q", c.xs, c.level, iv.String(), iv.OK, c.want)
		}
		if !iv.Contains(1e300) || !math.IsInf(iv.HalfWidth(), 1) {
			t.Errorf("no interval must exclude nothing")
		}
	}
}

func TestMeanCIConstantValues(t *testing.T) {
	iv := MeanCI([]float64{4, 4, 4}, 0.99)
	if !iv.OK || iv.Lo != 4 || iv.Hi != 4 {
		t.Errorf("identical values: %+v, want the zero-width interval at 4", iv)
	}
}

func TestRatioCIExactSmallCase(t *testing.T) {
	iv := RatioCI([]float64{1, 2, 3}, []float64{10, 20, 40}, 0.95)
	// R = 6/70; residuals 1/7, 2/7, -3/7; se = √((2/7)/2/3)/(70/3).
	if !iv.OK || !closeRel(iv.Est, 6.0/70, 1e-15) || !closeRel(iv.Lo, 0.04547503709554022, 1e-12) ||
		!closeRel(iv.Hi, 0.12595353433303122, 1e-12) || iv.Method != RatioReplications {
		t.Fatalf("RatioCI = %+v", iv)
	}
}

func TestRatioCIEqualDenominatorsIsMeanCI(t *testing.T) {
	num := []float64{12, 15, 9, 20, 11}
	den := []float64{1000, 1000, 1000, 1000, 1000}
	r := RatioCI(num, den, 0.9)
	m := MeanCI([]float64{0.012, 0.015, 0.009, 0.020, 0.011}, 0.9)
	if !closeRel(r.Est, m.Est, 1e-12) || !closeRel(r.Lo, m.Lo, 1e-12) || !closeRel(r.Hi, m.Hi, 1e-12) {
		t.Errorf("ratio %v, mean of ratios %v", r, m)
	}
}

func TestRatioCIBadInput(t *testing.T) {
	for _, c := range []struct {
		num, den []float64
		want     string
	}{
		{[]float64{1, 2}, []float64{1}, "differ in length: 2 and 1"},
		{[]float64{1, 2}, []float64{0, 0}, "the denominators sum to 0: no ratio"},
		{[]float64{1}, []float64{5}, "not enough data: 1 replication, need at least 2"},
	} {
		if iv := RatioCI(c.num, c.den, 0.95); iv.OK || !strings.Contains(iv.Note, c.want) {
			t.Errorf("RatioCI(%v, %v) = %+v, want a note with %q", c.num, c.den, iv, c.want)
		}
	}
}

func TestQuantileCIMedianOfTwenty(t *testing.T) {
	// The textbook case: for n = 20 the 95% interval for the median is
	// [x(6), x(15)], with exact coverage P(6 <= B <= 14) = 0.9586.
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i) // unsorted on purpose
	}
	iv := QuantileCI(xs, 0.5, 0.95)
	if !iv.OK || iv.Lo != 6 || iv.Hi != 15 || iv.Est != 10 {
		t.Fatalf("median of 1..20: %+v, want 10 in [6, 15]", iv)
	}
	if iv.Note != "ranks 6 and 15 of 20, exact coverage 95.86%" {
		t.Errorf("note %q", iv.Note)
	}
}

func TestQuantileRanksSmallestSample(t *testing.T) {
	// Both tails need 0.99^n <= 0.025: n >= ln(0.025)/ln(0.99) = 367.04.
	if _, _, _, ok := QuantileRanks(367, 0.99, 0.95); ok {
		t.Error("367 observations cannot bound p99 at 95%")
	}
	lo, hi, cover, ok := QuantileRanks(368, 0.99, 0.95)
	if !ok || hi != 368 || cover < 0.95 {
		t.Errorf("n=368: ranks %d..%d coverage %v ok %v", lo, hi, cover, ok)
	}
	if iv := QuantileCI(make([]float64, 100), 0.99, 0.95); iv.OK || !strings.Contains(iv.Note, "cannot bound the 0.99 quantile at 95%") {
		t.Errorf("p99 of 100 values: %+v", iv)
	}
}

// For large n the ranks approach nq ± z·√(nq(1-q)).
func TestQuantileRanksLargeN(t *testing.T) {
	n, q := 1_000_000, 0.99
	lo, hi, cover, ok := QuantileRanks(n, q, 0.95)
	sd := math.Sqrt(float64(n) * q * (1 - q))
	wantLo, wantHi := float64(n)*q-1.96*sd, float64(n)*q+1.96*sd
	if !ok || math.Abs(float64(lo)-wantLo) > 3 || math.Abs(float64(hi)-wantHi) > 3 || cover < 0.95 || cover > 0.951 {
		t.Errorf("n=1e6 p99: ranks %d..%d (normal approx %.1f..%.1f) coverage %v", lo, hi, wantLo, wantHi, cover)
	}
}

func TestNearestRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{{100, 0.07, 7}, {100, 0.99, 99}, {10, 0.01, 1}, {3, 0.5, 2}, {1000, 0.999, 999}, {7, 0.999, 7}} {
		if got := nearestRank(c.n, c.q); got != c.want {
			t.Errorf("nearestRank(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}
