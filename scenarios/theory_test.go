package scenarios

import (
	"math"
	"testing"
)

// The guide's worked examples (μ = 100 msg/s per consumer), to the digits
// the guide prints.
var workedExamples = []struct {
	c                  int
	lambda             float64
	pWait, wqMs, wMs   float64
	randomMM1Ms        float64
	pWaitTol, wqMsTol  float64
	wMsTol, randMM1Tol float64
}{
	{1, 80, 0.8000, 40.00, 50.00, 50.00, 5e-5, 5e-3, 5e-3, 5e-3},
	{2, 150, 0.6429, 12.86, 22.86, 40.00, 5e-5, 5e-3, 5e-3, 5e-3},
	{8, 700, 0.6353, 6.353, 16.35, 80.00, 5e-5, 5e-4, 5e-3, 5e-3},
	{32, 3000, 0.6302, 3.151, 13.15, 160.0, 5e-5, 5e-4, 5e-3, 5e-2},
}

func TestWorkedExamples(t *testing.T) {
	for _, ex := range workedExamples {
		q := MMc{Lambda: ex.lambda, Mu: 100, C: ex.c}
		if err := q.Check(); err != nil {
			t.Fatal(err)
		}
		check := func(name string, got, want, tol float64) {
			t.Helper()
			if math.Abs(got-want) > tol {
				t.Errorf("c=%d λ=%g: %s = %.6g, guide says %g (±%g)", ex.c, ex.lambda, name, got, want, tol)
			}
		}
		check("P(wait)", q.PWait(), ex.pWait, ex.pWaitTol)
		check("Wq ms", q.Wq()*1000, ex.wqMs, ex.wqMsTol)
		check("W ms", q.W()*1000, ex.wMs, ex.wMsTol)
		check("random M/M/1 W ms", Split(ex.lambda, 100, ex.c).W()*1000, ex.randomMM1Ms, ex.randMM1Tol)
		check("Little L", q.L(), ex.lambda*q.W(), 1e-12)
	}
}

func TestErlangBKnownValues(t *testing.T) {
	// Erlang B with a = c: classic table values.
	for _, c := range []struct {
		a    float64
		n    int
		want float64
	}{{1, 1, 0.5}, {2, 2, 0.4}, {10, 10, 0.21458}, {0.5, 0, 1}} {
		if got := ErlangB(c.a, c.n); math.Abs(got-c.want) > 5e-6 {
			t.Errorf("ErlangB(%g, %d) = %.6f, want %.5f", c.a, c.n, got, c.want)
		}
	}
}

func TestResponseQuantile(t *testing.T) {
	// c = 1: the M/M/c response time is exponential with rate μ − λ.
	q := MMc{Lambda: 80, Mu: 100, C: 1}
	want := math.Log(100) / 20
	if got := q.ResponseQuantile(0.99); math.Abs(got-want) > 1e-9 {
		t.Errorf("M/M/1 p99 = %.9f s, want ln(100)/(μ−λ) = %.9f s", got, want)
	}
	if got := (MM1{Lambda: 80, Mu: 100}).ResponseQuantile(0.99); math.Abs(got-want) > 1e-12 {
		t.Errorf("MM1 p99 = %.9f, want %.9f", got, want)
	}
	// The quantile inverts the CCDF, and the CCDF is a distribution.
	for _, ex := range workedExamples {
		q := MMc{Lambda: ex.lambda, Mu: 100, C: ex.c}
		for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
			x := q.ResponseQuantile(p)
			if got := 1 - q.ResponseCCDF(x); math.Abs(got-p) > 1e-9 {
				t.Errorf("c=%d: CDF(quantile(%g)) = %.12f", ex.c, p, got)
			}
		}
		if q.ResponseCCDF(0) != 1 || q.ResponseCCDF(100) > 1e-12 {
			t.Errorf("c=%d: CCDF(0) = %g, CCDF(100s) = %g", ex.c, q.ResponseCCDF(0), q.ResponseCCDF(100))
		}
		// The mean is the integral of the CCDF (trapezoid rule).
		var mean float64
		const dt = 1e-5
		for x := 0.0; x < 2; x += dt {
			mean += (q.ResponseCCDF(x) + q.ResponseCCDF(x+dt)) / 2 * dt
		}
		if math.Abs(mean-q.W()) > 1e-6 {
			t.Errorf("c=%d: ∫CCDF = %.7f s, W = %.7f s", ex.c, mean, q.W())
		}
	}
	// θ = μ (the removable singularity): c=2, λ=100, μ=100 gives θ=100.
	s := MMc{Lambda: 100, Mu: 100, C: 2}
	near := MMc{Lambda: 100 + 1e-4, Mu: 100, C: 2}
	if a, b := s.ResponseQuantile(0.99), near.ResponseQuantile(0.99); math.Abs(a-b) > 1e-5 {
		t.Errorf("θ = μ: p99 %.7f differs from its neighbour %.7f", a, b)
	}
}

func TestTheoryCheck(t *testing.T) {
	for _, q := range []MMc{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {100, 100, 1}, {math.NaN(), 1, 1}, {math.Inf(1), 1, 1}} {
		if q.Check() == nil {
			t.Errorf("%+v: Check accepted it", q)
		}
	}
	if err := (MM1{Lambda: 50, Mu: 100}).Check(); err != nil {
		t.Error(err)
	}
}
