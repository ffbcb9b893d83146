package workload

import (
	"math"
	"testing"

	"popsim/workload/pcg"
)

func newRand(seed uint64) *pcg.Rand { return pcg.New(seed, 0x9e3779b97f4a7c15) }

// ulpDiff returns how many representable float64 values lie between a and b.
func ulpDiff(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// TestLogExpMatchStdlib checks the portable functions against the standard
// library, which may be assembly here: they agree to within 2 ulp (the
// amd64 assembly Exp is itself 1 ulp off near the bottom of the range).
func TestLogExpMatchStdlib(t *testing.T) {
	r := newRand(1)
	for i := range 20000 {
		x := math.Ldexp(1+r.Float64(), r.IntN(200)-100) // 2^-100 .. 2^100
		if d := ulpDiff(logP(x), math.Log(x)); d > 1 {
			t.Fatalf("case %d: logP(%g) = %g, math.Log = %g: %d ulp apart", i, x, logP(x), math.Log(x), d)
		}
		y := (r.Float64() - 0.5) * 1400
		if d := ulpDiff(expP(y), math.Exp(y)); d > 2 {
			t.Fatalf("case %d: expP(%g) = %g, math.Exp = %g: %d ulp apart", i, y, expP(y), math.Exp(y), d)
		}
	}
}

// fieldCases returns float64s for frexp and ldexp: random bit patterns
// (every exponent, both signs, NaNs and infinities among them), the
// normal range's edges, subnormals, zeros and infinities.
func fieldCases(r *pcg.Rand) []float64 {
	out := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 0.5,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1022 * (1 - 0x1p-52), math.Nextafter(1, 2)}
	for range 100_000 {
		out = append(out, math.Float64frombits(r.Uint64()))
	}
	for range 20_000 { // the logarithm's and the exponential's own range
		out = append(out, math.Ldexp(1+r.Float64(), r.IntN(80)-40))
	}
	return out
}

// TestFrexpIsMathFrexp checks frexp against math.Frexp bit for bit.
func TestFrexpIsMathFrexp(t *testing.T) {
	for _, x := range fieldCases(newRand(5)) {
		f, e := frexp(x)
		wf, we := math.Frexp(x)
		if math.Float64bits(f) != math.Float64bits(wf) || e != we {
			if math.IsNaN(f) && math.IsNaN(wf) {
				continue
			}
			t.Fatalf("frexp(%g) = %g, %d; math.Frexp: %g, %d", x, f, e, wf, we)
		}
	}
}

// TestFrexpPositiveIsMathFrexp checks frexpPositive against math.Frexp
// bit for bit on the positive normal numbers, and that it refuses every
// other number: NaN, infinities, zeros, subnormals and negative numbers.
func TestFrexpPositiveIsMathFrexp(t *testing.T) {
	for _, x := range fieldCases(newRand(8)) {
		f, e, ok := frexpPositive(x)
		normal := x >= 0x1p-1022 && x <= math.MaxFloat64
		if ok != normal {
			t.Fatalf("frexpPositive(%g): ok %v, want %v", x, ok, normal)
		}
		if wf, we := math.Frexp(x); ok && (math.Float64bits(f) != math.Float64bits(wf) || e != we) {
			t.Fatalf("frexpPositive(%g) = %g, %d; math.Frexp: %g, %d", x, f, e, wf, we)
		}
	}
}

// TestLdexpIsMathLdexp checks ldexp against math.Ldexp bit for bit, with
// k that keep the result normal, push it past either end of the normal
// range, and lie far out of range.
func TestLdexpIsMathLdexp(t *testing.T) {
	r := newRand(6)
	ks := []int{0, 1, -1, 1023, -1022, 2046, -2046, 2100, -2100, math.MaxInt, math.MinInt, math.MaxInt - 2000, math.MinInt + 2000}
	for i, x := range fieldCases(r) {
		k := r.IntN(4200) - 2100
		if i%4 == 0 {
			k = ks[r.IntN(len(ks))]
		}
		got, want := ldexp(x, k), math.Ldexp(x, k)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("ldexp(%g, %d) = %g; math.Ldexp: %g", x, k, got, want)
		}
	}
}

func TestLogExpSpecialCases(t *testing.T) {
	if logP(1) != 0 || !math.IsInf(logP(0), -1) || !math.IsNaN(logP(-1)) || !math.IsInf(logP(math.Inf(1)), 1) {
		t.Errorf("logP special cases wrong: log(1)=%g log(0)=%g log(-1)=%g", logP(1), logP(0), logP(-1))
	}
	if expP(0) != 1 || expP(-1000) != 0 || !math.IsInf(expP(1000), 1) || !math.IsNaN(expP(math.NaN())) {
		t.Errorf("expP special cases wrong: exp(0)=%g exp(-1000)=%g exp(1000)=%g", expP(0), expP(-1000), expP(1000))
	}
}

func TestRoundClamp(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want int64
	}{{-3, 0}, {math.NaN(), 0}, {0.49, 0}, {0.5, 1}, {2.5, 3}, {99.9, 99}, {1e300, 99}, {math.Inf(1), 99}} {
		if got := roundClamp(c.x, 99); got != c.want {
			t.Errorf("roundClamp(%g, 99) = %d, want %d", c.x, got, c.want)
		}
	}
}

// TestRoundClampMatchesRound checks roundClamp against math.Round on
// random floats (every exponent up to past the clamp), on halves and on their
// neighbours (0.49999999999999994 rounds to 0).
func TestRoundClampMatchesRound(t *testing.T) {
	const hi = 1 << 62
	check := func(x float64) {
		want := int64(hi)
		if x < hi {
			want = int64(math.Round(x))
		}
		if got := roundClamp(x, hi); got != want {
			t.Fatalf("roundClamp(%v) = %d, math.Round: %d", x, got, want)
		}
	}
	r := newRand(3)
	for range 1_000_000 {
		e := r.Uint64() % (1023 + 64)                             // biased exponents up to 2^63, past the clamp
		check(math.Float64frombits(e<<52 | r.Uint64()&(1<<52-1))) // positive
		h := float64(r.Uint64()>>(12+r.Uint64()%52)) + 0.5
		check(h)
		check(math.Nextafter(h, 0))
		check(math.Nextafter(h, math.Inf(1)))
	}
}

func TestNormalSampleMoments(t *testing.T) {
	r := newRand(2)
	const n = 200_000
	var sum, sq float64
	for range n {
		z := normalSample(r)
		sum += z
		sq += z * z
	}
	mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.01 {
		t.Errorf("normal sample mean %g variance %g: want 0 and 1 within 0.01", mean, variance)
	}
}
