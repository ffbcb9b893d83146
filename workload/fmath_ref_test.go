package workload

import (
	"math"
	"testing"
)

// logRef and expRef are logP and expP as they were before they took their
// normal-number fast paths inline (frexpNormal, ldexpNormal): FreeBSD's
// e_log.c and e_exp.c with math.Frexp and math.Ldexp, the references the
// fast paths must match bit for bit.
func logRef(x float64) float64 {
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
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
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

// expRef: see logRef.
func expRef(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
		p1        = 1.66666666666666657415e-01
		p2        = -2.77777777770155933842e-03
		p3        = 6.61375632143793436117e-05
		p4        = -1.65339022054652515390e-06
		p5        = 4.13813679705723846039e-08
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
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// sameBits reports whether a and b are the same float64, any NaN matching
// any NaN.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestLogExpMatchReference checks logP and expP against logRef and expRef
// bit for bit: over every draw the samplers feed them (1 - a uniform, the
// polar method's s, an exponent times a logarithm), random bit patterns
// (subnormals, both ends of the range, NaN and infinities among them) and
// the exponential's range end to end, where its result falls below the
// normal range and ldexpNormal hands it to math.Ldexp.
func TestLogExpMatchReference(t *testing.T) {
	r := newRand(7)
	xs := fieldCases(r)
	for range 300_000 {
		u := r.Float64()
		xs = append(xs, 1-u, u, float64(u*u)+float64(r.Float64()*r.Float64()))
	}
	for i, x := range xs {
		if got, want := logP(x), logRef(x); !sameBits(got, want) {
			t.Fatalf("case %d: logP(%g) = %g, the reference %g", i, x, got, want)
		}
	}
	ys := append(xs, -745.2, -745.1, -744.5, -708.5, -708.3, 709.7, 709.8, 0x1p-29, -0x1p-29)
	for range 300_000 {
		ys = append(ys, (r.Float64()-0.5)*1460, (r.Float64()-0.5)*20)
	}
	for i, y := range ys {
		if got, want := expP(y), expRef(y); !sameBits(got, want) {
			t.Fatalf("case %d: expP(%g) = %g, the reference %g", i, y, got, want)
		}
	}
}
