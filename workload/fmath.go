package workload

import (
	"math"

	"popsim/workload/pcg"
)

// Portable floating point.
//
// The standard library's math.Log and math.Exp are assembly on amd64,
// arm64 and s390x, and Go may fuse x*y+z into one FMA instruction on
// arm64, ppc64, s390x and amd64 with GOAMD64=v3. Either can change the last
// bit of a result between machines, which can flip a rounded sample. logP
// and expP are the pure Go implementations from the standard library
// (FreeBSD's e_log.c and e_exp.c) with every product wrapped in an explicit
// float64 conversion, which the Go specification says rounds and prevents
// fusion. math.Sqrt, math.Floor, math.Round and math.Frexp/Ldexp are exact
// operations and safe as they are.

// logP returns the natural logarithm of x, bit for bit on every platform.
func logP(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	f1, ki, ok := frexpPositive(x) // one test for the special cases below
	if !ok {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 1):
			return x
		case x < 0:
			return math.NaN()
		case x == 0:
			return math.Inf(-1)
		}
		f1, ki = math.Frexp(x) // a subnormal
	}
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}

// expP returns e**x, bit for bit on every platform.
func expP(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	y := expMulti(hi, lo)
	if z, ok := ldexpNormal(y, k); ok { // ldexp, which does not inline
		return z
	}
	return math.Ldexp(y, k)
}

// expMulti returns e**r where r = hi - lo and |r| ≤ ln(2)/2 (expP scales
// it by 2**k).
func expMulti(hi, lo float64) float64 {
	const (
		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	return 1 - ((lo - float64(r*c)/(2-c)) - hi)
}

// IEEE 754 binary64 fields, for frexp and ldexp.
const (
	expShift = 52                          // the biased exponent's lowest bit
	expMask  = 0x7ff                       // the biased exponent, shifted down
	expBias  = 1022                        // the biased exponent of [0.5, 1)
	expField = uint64(expMask) << expShift // the biased exponent in place
)

// frexp is math.Frexp, the same results, with the common case written in:
// a normal x (a biased exponent neither 0 nor all ones) is its mantissa
// with the exponent of [0.5, 1) and the exponent's difference from that.
// Zero, subnormals, infinities and NaN go to math.Frexp.
func frexp(x float64) (float64, int) {
	if f, e, ok := frexpNormal(x); ok {
		return f, e
	}
	return math.Frexp(x)
}

// frexpNormal is frexp's common case, which inlines where frexp does not
// (its call of math.Frexp spends the inliner's budget): a normal x's
// mantissa and exponent, and ok; ok is false for zero, subnormals,
// infinities and NaN, whose mantissa and exponent are math.Frexp's to give.
func frexpNormal(x float64) (frac float64, exp int, ok bool) {
	b := math.Float64bits(x)
	e := int(b >> expShift & expMask)
	return math.Float64frombits(b&^expField | expBias<<expShift), e - expBias, e != 0 && e != expMask
}

// Bounds of the positive normal numbers' bit patterns: x is one if its
// bits less minNormalBits, as an unsigned number, fall below normalSpan.
const (
	minNormalBits = uint64(1) << expShift         // 0x1p-1022
	normalSpan    = uint64(expMask-1) << expShift // up to math.MaxFloat64
)

// frexpPositive is frexpNormal for logP, which needs no negative numbers:
// a positive normal x's mantissa and exponent, and ok; ok is false for
// everything else (NaN, infinities, zeros, subnormals and negative
// numbers), found by one unsigned comparison where frexpNormal and the
// tests of NaN, +Inf, x < 0 and x == 0 took six (default scenario: its
// 60 529 calls of logP from 5.13 to 4.59 M instructions, callgrind).
func frexpPositive(x float64) (frac float64, exp int, ok bool) {
	b := math.Float64bits(x)
	return math.Float64frombits(b&^expField | expBias<<expShift), int(b>>expShift) - expBias, b-minNormalBits < normalSpan
}

// ldexp is math.Ldexp, the same results, with the common case written in:
// a normal x times 2**k whose result is normal too is x with k added to
// its biased exponent, exactly. Everything else (zero, subnormal, infinite
// or NaN x, a result that overflows or falls below the normal range) goes
// to math.Ldexp.
func ldexp(x float64, k int) float64 {
	if y, ok := ldexpNormal(x, k); ok {
		return y
	}
	return math.Ldexp(x, k)
}

// ldexpNormal is ldexp's common case, which inlines where ldexp does not:
// x × 2**k for a normal x whose result is normal too, and ok; ok is false
// for everything else, which is math.Ldexp's to compute.
func ldexpNormal(x float64, k int) (float64, bool) {
	b := math.Float64bits(x)
	e := int(b >> expShift & expMask)
	n := e + k
	return math.Float64frombits(b + uint64(k)<<expShift), e != 0 && e != expMask && n > 0 && n < expMask
}

// powP returns x**y for x > 0.
func powP(x, y float64) float64 { return expP(float64(y * logP(x))) }

// expSample draws a standard exponential variate (mean 1) by inversion.
// It makes exactly one call on r.
func expSample(r *pcg.Rand) float64 { return -logP(1 - r.Float64()) }

// normalSample draws a standard normal variate with Marsaglia's polar
// method, which needs only logP and math.Sqrt. The second variate of each
// pair is discarded so that samplers stay stateless.
func normalSample(r *pcg.Rand) float64 {
	const maxTries = 1000 // each try succeeds with probability π/4
	for range maxTries {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*logP(s)/s)
		}
	}
	panic("workload: normal sampler rejected 1000 candidate pairs: the rand source is broken")
}

// roundClamp rounds x to the nearest integer (halves away from zero, as
// math.Round) and clamps it to [0, hi]. NaN maps to 0. Converting an
// out-of-range float to an integer is implementation-defined in Go, hence
// the clamp before the conversion. Within range, x less its truncation is
// exact (the fraction of a positive float below 2^63 fits its mantissa),
// so rounding up from a fraction of a half or more is math.Round's
// result, in a conversion, a subtraction and a comparison where
// math.Round took its bit manipulation (TestRoundClampMatchesRound); toDur
// (cost 37, was 81) then inlines. BenchmarkRunDefault: 1 413.7 -> 1 412.6
// M instructions outside the runtime, hot topic 584.8 -> 584.2 M
// (callgrind).
func roundClamp(x float64, hi int64) int64 {
	if !(x > 0) {
		return 0
	}
	if x >= float64(hi) {
		return hi
	}
	n := int64(x)
	if x-float64(n) >= 0.5 {
		n++
	}
	return n
}
