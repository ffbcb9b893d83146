package workload

import (
	"hash/fnv"
	"math"
	"strconv"
	"testing"

	"popsim/clock"
)

func mustArrivals(t testing.TB, s string) Arrivals {
	t.Helper()
	a, err := ParseArrivals(s)
	if err != nil {
		t.Fatalf("ParseArrivals(%q): %v", s, err)
	}
	return a
}

// collect returns the offsets from the origin (clock.Epoch) of the
// arrivals of spec before end, at most max of them, passing the previous
// arrival as now. It fails if arrivals go backwards.
func collect(t *testing.T, spec string, seed uint64, end clock.Duration, max int) []clock.Duration {
	t.Helper()
	a, r := mustArrivals(t, spec), newRand(seed)
	now := clock.Epoch
	var out []clock.Duration
	for len(out) < max {
		at, ok := a.Next(r, now)
		if !ok || at.Sub(clock.Epoch) >= end {
			break
		}
		if at < now {
			t.Fatalf("%s: arrival %d at %v is before the previous one at %v", spec, len(out), at, now)
		}
		out = append(out, at.Sub(clock.Epoch))
		now = at
	}
	return out
}

func TestConstantRateExactOverAnHour(t *testing.T) {
	got := collect(t, "const(3/s)", 1, clock.Hour+1, 1<<20)
	if len(got) != 3*3600+1 {
		t.Fatalf("const(3/s) over [0, 1h]: %d arrivals, want %d", len(got), 3*3600+1)
	}
	perSecond := make([]int, 3601)
	for _, off := range got {
		perSecond[off/clock.Second]++
	}
	for s, n := range perSecond[:3600] {
		if n != 3 {
			t.Fatalf("const(3/s): %d arrivals in second %d, want exactly 3", n, s)
		}
	}
	if last := got[len(got)-1]; last != clock.Hour {
		t.Errorf("const(3/s): arrival 10800 at %v, want exactly 1h (no drift)", last)
	}
	if got[1] != 333333 || got[2] != 666666 || got[3] != clock.Second {
		t.Errorf("const(3/s): first arrivals %v, want [0 333333 666666 1000000]us", got[:4])
	}
}

func TestConstantRateOtherUnits(t *testing.T) {
	for _, c := range []struct {
		spec string
		end  clock.Duration
		want int
	}{
		{"const(1/m)", clock.Hour, 60},
		{"const(7/ms)", clock.Second, 7000},
		{"const(1/2s)", clock.Minute, 30},
		{"const(1000/s)", clock.Minute, 60000},
	} {
		if got := collect(t, c.spec, 1, c.end, 1<<20); len(got) != c.want {
			t.Errorf("%s over %v: %d arrivals, want %d", c.spec, c.end, len(got), c.want)
		}
	}
}

func TestPoissonCountOverWindow(t *testing.T) {
	got := collect(t, "poisson(1000/s)", 7, 100*clock.Second, 1<<20)
	// Expected 100000, standard deviation 316: allow 4 sigma.
	if n := len(got); math.Abs(float64(n)-100_000) > 1300 {
		t.Errorf("poisson(1000/s) over 100s: %d arrivals, want 100000 ± 1300", n)
	}
	if got[0] <= 0 {
		t.Errorf("poisson: first arrival at the origin, want one gap after it")
	}
}

func TestPoissonGapsAreExponential(t *testing.T) {
	got := collect(t, "poisson(100/s)", 8, clock.Hour, 200_000)
	// P(gap > mean) = 1/e for an exponential distribution.
	var longer int
	prev := clock.Duration(0)
	for _, off := range got {
		if off-prev > 10*clock.Millisecond {
			longer++
		}
		prev = off
	}
	if f := float64(longer) / float64(len(got)); math.Abs(f-math.Exp(-1)) > 0.005 {
		t.Errorf("poisson(100/s): fraction of gaps above the mean %.4f, want 1/e = 0.3679", f)
	}
}

func TestOnOffSilentWhenOff(t *testing.T) {
	got := collect(t, "onoff(rate=2000/s,on=10s,off=20s)", 9, 300*clock.Second, 1<<20)
	for _, off := range got {
		if off%(30*clock.Second) >= 10*clock.Second {
			t.Fatalf("onoff: arrival at %v falls in an off period", off)
		}
	}
	// Ten 10 s bursts at 2000/s: expected 200000, sd 447.
	if n := len(got); math.Abs(float64(n)-200_000) > 1800 {
		t.Errorf("onoff over 300s: %d arrivals, want 200000 ± 1800", n)
	}
}

func TestRampRates(t *testing.T) {
	got := collect(t, "ramp(from=100/s,to=1000/s,over=60s)", 10, 120*clock.Second, 1<<20)
	var first, second, during int
	for _, off := range got {
		switch {
		case off < 60*clock.Second:
			during++
			if off < 30*clock.Second {
				first++
			}
		default:
			second++
		}
	}
	// Λ(30s) = 100·30 + 900·30²/120 = 9750; Λ(60s) = 33000; then 1000/s.
	check := func(what string, n int, want float64) {
		if math.Abs(float64(n)-want) > 4*math.Sqrt(want) {
			t.Errorf("ramp: %s: %d arrivals, want %.0f ± 4 sigma", what, n, want)
		}
	}
	check("first 30s", first, 9750)
	check("first 60s", during, 33000)
	check("60s to 120s", second, 60000)
}

func TestRampDownAndFromZero(t *testing.T) {
	// Falling rate: Λ(10s) = (1000+100)/2·10 = 5500.
	if n := len(collect(t, "ramp(from=1000/s,to=100/s,over=10s)", 11, 10*clock.Second, 1<<20)); math.Abs(float64(n)-5500) > 300 {
		t.Errorf("ramp down over 10s: %d arrivals, want 5500 ± 300", n)
	}
	// From zero: Λ(10s) = 1000/2·10 = 5000.
	if n := len(collect(t, "ramp(from=0/s,to=1000/s,over=10s)", 12, 10*clock.Second, 1<<20)); math.Abs(float64(n)-5000) > 300 {
		t.Errorf("ramp from zero over 10s: %d arrivals, want 5000 ± 300", n)
	}
}

func TestBacklog(t *testing.T) {
	a, r := mustArrivals(t, "backlog(3)"), newRand(1)
	for i := range 3 {
		at, ok := a.Next(r, clock.Epoch.Add(clock.Duration(i)*clock.Second))
		if !ok || at != clock.Epoch {
			t.Fatalf("backlog(3): arrival %d = %v, %v; want the origin, true", i, at, ok)
		}
	}
	for range 2 {
		if _, ok := a.Next(r, clock.Epoch); ok {
			t.Fatalf("backlog(3): a fourth arrival")
		}
	}
}

func TestLimit(t *testing.T) {
	if n := len(collect(t, "limit(const(10/s),count=25)", 1, clock.Hour, 1000)); n != 25 {
		t.Errorf("limit count=25: %d arrivals", n)
	}
	// Half-open: the arrival exactly at 2s is not produced.
	if n := len(collect(t, "limit(const(10/s),for=2s)", 1, clock.Hour, 1000)); n != 20 {
		t.Errorf("limit for=2s: %d arrivals, want 20", n)
	}
	if n := len(collect(t, "limit(const(10/s),count=100,for=2s)", 1, clock.Hour, 1000)); n != 20 {
		t.Errorf("limit count=100,for=2s: %d arrivals, want 20", n)
	}
	if n := len(collect(t, "limit(backlog(5),count=100)", 1, clock.Hour, 1000)); n != 5 {
		t.Errorf("limit of an exhausted process: %d arrivals, want 5", n)
	}
}

// TestScheduleIgnoresLateCallers: after the first call, now does not move
// the schedule: a caller that falls behind gets the intended instants.
func TestScheduleIgnoresLateCallers(t *testing.T) {
	for _, spec := range arrivalSpecs {
		a, b := mustArrivals(t, spec), mustArrivals(t, spec)
		ra, rb := newRand(5), newRand(5)
		for i := range 500 {
			now := clock.Epoch
			if i > 0 {
				now = clock.Epoch.Add(clock.Duration(i) * clock.Hour)
			}
			x, okx := a.Next(ra, clock.Epoch)
			y, oky := b.Next(rb, now)
			if x != y || okx != oky {
				t.Fatalf("%s: arrival %d is %v,%v with an on-time caller, %v,%v with a late one", spec, i, x, okx, y, oky)
			}
		}
	}
}

var arrivalSpecs = []string{
	"const(500/s)",
	"poisson(1000/s)",
	"onoff(rate=2000/s,on=10s,off=20s)",
	"ramp(from=100/s,to=1000/s,over=1m)",
	"backlog(10000)",
	"limit(poisson(1000/s),count=100,for=1m)",
}

// arrivalHash hashes the first n arrivals of spec from seed 42.
func arrivalHash(t *testing.T, spec string, n int) uint64 {
	a, r, h := mustArrivals(t, spec), newRand(42), fnv.New64a()
	now := clock.Epoch
	for range n {
		at, ok := a.Next(r, now)
		h.Write(strconv.AppendInt(strconv.AppendBool(nil, ok), int64(at), 10))
		now = max(now, at)
	}
	return h.Sum64()
}

// arrivalGolden pins the first 30000 arrivals of each kind from seed 42; see
// distGolden.
var arrivalGolden = []uint64{0x521f6559a559273d, 0xd4d8471472f1f4ea, 0x39fa16059a78a6e8, 0xa6a0235b05c985f0, 0x9674faeacd37b3a5, 0x23b693ed566785be}

func TestArrivalsGoldenAndDeterminism(t *testing.T) {
	for i, spec := range arrivalSpecs {
		got := arrivalHash(t, spec, 30000)
		if again := arrivalHash(t, spec, 30000); again != got {
			t.Errorf("%s: two runs with the same seed differ", spec)
		}
		if got != arrivalGolden[i] {
			t.Errorf("%s: first 30000 arrivals from seed 42 hash to %#x, want %#x", spec, got, arrivalGolden[i])
		}
	}
}

func TestArrivalConstructorErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"poisson zero", second(NewPoisson(PerSecond(0))), "workload: poisson rate 0/s out of range: want > 0"},
		{"const huge", second(NewConstantRate(PerSecond(2e9))), "workload: const rate 2000000000/s out of range: want at most 1000000000 per period"},
		{"poisson bad period", second(NewPoisson(Rate{Count: 1})), "workload: poisson rate period 0s out of range: want 1us to 1h"},
		{"onoff on", second(NewOnOff(PerSecond(1), 0, 0)), "workload: onoff on 0s out of range: want 1us to 8760h"},
		{"ramp to", second(NewRamp(PerSecond(1), PerSecond(0), clock.Second)), "workload: ramp to 0/s out of range: want > 0"},
		{"ramp from", second(NewRamp(PerSecond(-1), PerSecond(1), clock.Second)), "workload: ramp from -1/s out of range: want >= 0"},
		{"backlog", second(NewBacklog(0)), "workload: backlog size 0 out of range: want 1 to 1000000000"},
		{"limit none", second(NewLimit(&Backlog{n: 1}, 0, 0)), "workload: limit has neither count nor for: want at least one > 0"},
		{"limit nil", second(NewLimit(nil, 1, 0)), "workload: limit process is nil: want an arrival process"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
}
