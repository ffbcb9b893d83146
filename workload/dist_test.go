package workload

import (
	"hash/fnv"
	"math"
	"strconv"
	"testing"

	"popsim/clock"
)

func mustDist(t testing.TB, s string) Dist {
	t.Helper()
	d, err := ParseDist(s)
	if err != nil {
		t.Fatalf("ParseDist(%q): %v", s, err)
	}
	return d
}

// analyticMean computes the mean independently of the package, with the
// standard library's math.
func analyticMean(t *testing.T, s string) float64 {
	sigma := math.Log(20) / 2.3263478740408408
	pareto := func(a, l, h float64) float64 {
		q := l / h
		return l * a / (a - 1) * (1 - math.Pow(q, a-1)) / (1 - math.Pow(q, a))
	}
	switch s {
	case "const(5ms)":
		return 5000
	case "uniform(1ms,5ms)":
		return 3000
	case "exp(10ms)":
		return 10000
	case "lognormal(median=10ms,p99=200ms)":
		return 10000 * math.Exp(sigma*sigma/2)
	case "pareto(alpha=2.5,min=1ms,max=1s)":
		return pareto(2.5, 1e3, 1e6)
	case "pareto(alpha=1,min=1ms,max=100ms)":
		return 1e3 * math.Log(100) / (1 - 0.01)
	case "mix(0.9:const(5ms),0.1:exp(100ms))":
		return 0.9*5000 + 0.1*100000
	}
	t.Fatalf("no analytic mean for %s", s)
	return 0
}

func TestDistMeans(t *testing.T) {
	const n = 200_000
	for i, c := range []struct {
		spec string
		tol  float64 // relative tolerance of the sample mean
	}{
		{"const(5ms)", 0x7cdb583210b7d65},
		{"uniform(1ms,5ms)", 0.01},
		{"exp(10ms)", 0.01},
		{"lognormal(median=10ms,p99=200ms)", 0.03},
		{"pareto(alpha=2.5,min=1ms,max=1s)", 0.02},
		{"pareto(alpha=1,min=1ms,max=100ms)", 0.02},
		{"mix(0.9:const(5ms),0.1:exp(100ms))", 0.03},
	} {
		d := mustDist(t, c.spec)
		want := analyticMean(t, c.spec)
		if got := float64(d.Mean()); math.Abs(got-want) > 1 {
			t.Errorf("%s: Mean() = %v us, want %.1f us", c.spec, got, want)
		}
		r := newRand(uint64(i))
		var sum float64
		for range n {
			s := d.Sample(r)
			if s < 0 || s > MaxSample {
				t.Fatalf("%s: sample %d out of [0, MaxSample]", c.spec, s)
			}
			sum += float64(s)
		}
		if got := sum / n; math.Abs(got-want) > c.tol*want {
			t.Errorf("%s: sample mean %.1f us, want %.1f us within %.0f%%", c.spec, got, want, c.tol*100)
		}
	}
}

func TestDistBounds(t *testing.T) {
	for _, c := range []struct {
		spec   string
		lo, hi clock.Duration
	}{
		{"uniform(1ms,5ms)", clock.Millisecond, 5 * clock.Millisecond},
		{"uniform(7us,7us)", 7, 7},
		{"pareto(alpha=0.5,min=1ms,max=10s)", clock.Millisecond, 10 * clock.Second},
		{"lognormal(median=1h,p99=24h)", 0, MaxSample},
		{"exp(24h)", 0, MaxSample},
	} {
		d, r := mustDist(t, c.spec), newRand(3)
		seenLo, seenHi := false, false
		for range 50_000 {
			s := d.Sample(r)
			if s < c.lo || s > c.hi {
				t.Fatalf("%s: sample %v outside [%v, %v]", c.spec, s, c.lo, c.hi)
			}
			seenLo, seenHi = seenLo || s == c.lo, seenHi || s == c.hi
		}
		if c.spec[0] == 'u' && !(seenLo && seenHi) {
			t.Errorf("%s: never sampled an end point (lo %v, hi %v)", c.spec, seenLo, seenHi)
		}
	}
}

func TestLogNormalP99(t *testing.T) {
	d, r := mustDist(t, "lognormal(median=10ms,p99=200ms)"), newRand(4)
	const n = 200_000
	var below10, below200 int
	for range n {
		s := d.Sample(r)
		if s <= 10*clock.Millisecond {
			below10++
		}
		if s <= 200*clock.Millisecond {
			below200++
		}
	}
	if f := float64(below10) / n; math.Abs(f-0.5) > 0.005 {
		t.Errorf("P(sample <= median) = %.4f, want 0.5", f)
	}
	if f := float64(below200) / n; math.Abs(f-0.99) > 0.001 {
		t.Errorf("P(sample <= p99) = %.4f, want 0.99", f)
	}
}

// sampleHash hashes n samples of spec drawn from a fixed seed.
func sampleHash(t *testing.T, spec string, n int) uint64 {
	d, r, h := mustDist(t, spec), newRand(42), fnv.New64a()
	for range n {
		h.Write(strconv.AppendInt(nil, int64(d.Sample(r)), 10))
	}
	return h.Sum64()
}

func TestDistDeterminism(t *testing.T) {
	for _, spec := range distGolden {
		if a, b := sampleHash(t, spec.spec, 1000), sampleHash(t, spec.spec, 1000); a != b {
			t.Errorf("%s: two runs with the same seed differ", spec.spec)
		}
	}
}

// distGolden pins the first 1000 samples of each kind from seed 42. A
// change means recorded seeds no longer reproduce: if intended, say so in
// the commit and update the hashes.
var distGolden = []struct {
	spec string
	hash uint64
}{
	{"const(5ms)", 0x7cdb583210b7d65},
	{"uniform(1ms,5ms)", 0x8fc609da9a034c4e},
	{"exp(10ms)", 0x4927fd9d0fe75219},
	{"lognormal(median=10ms,p99=200ms)", 0xb3e6c6bf5604e1f0},
	{"pareto(alpha=1.5,min=1ms,max=10s)", 0x7a663b24d9ee92ab},
	{"mix(0.99:const(5ms),0.01:const(30s))", 0x29c3f64356ee73},
}

func TestDistGolden(t *testing.T) {
	for _, g := range distGolden {
		if got := sampleHash(t, g.spec, 1000); got != g.hash {
			t.Errorf("%s: first 1000 samples from seed 42 hash to %#x, want %#x", g.spec, got, g.hash)
		}
	}
}

func TestDistConstructorErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"const negative", second(NewConstant(-1)), "workload: const duration -1us out of range: want 0s to 24h"},
		{"uniform reversed", second(NewUniform(5, 1)), "workload: uniform max 1us out of range: want >= min 5us"},
		{"exp zero", second(NewExponential(0)), "workload: exp mean 0s out of range: want 1us to 24h"},
		{"lognormal p99<=median", second(NewLogNormal(10, 10)), "workload: lognormal p99 10us out of range: want > median 10us"},
		{"pareto alpha", second(NewBoundedPareto(0, 1, 2)), "workload: pareto alpha 0 out of range: want 0.01 to 100"},
		{"pareto NaN", second(NewBoundedPareto(math.NaN(), 1, 2)), "workload: pareto alpha NaN out of range: want 0.01 to 100"},
		{"mix empty", second(NewMixture()), "workload: mix has 0 parts: want 1 to 64"},
		{"mix nil", second(NewMixture(Part{PPM: ppmOne})), "workload: mix part 1 has no distribution"},
		{"mix sum", second(NewMixture(Part{PPM: 500_000, Dist: Constant{}})), "workload: mix weights sum to 0.5: want exactly 1"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
