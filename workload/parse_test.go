package workload

import (
	"strings"
	"testing"

	"popsim/clock"
)

func TestDistRoundTrip(t *testing.T) {
	for _, s := range []string{
		"const(5ms)",
		"const(0s)",
		"const(1500us)",
		"uniform(1ms,5ms)",
		"exp(10ms)",
		"exp(90s)",
		"lognormal(median=10ms,p99=200ms)",
		"pareto(alpha=1.5,min=1ms,max=10s)",
		"pareto(alpha=0.01,min=1us,max=24h)",
		"mix(0.99:const(5ms),0.01:const(30s))",
		"mix(0.5:exp(1ms),0.25:uniform(1ms,2ms),0.25:mix(0.000001:const(1s),0.999999:const(2s)))",
	} {
		d := mustDist(t, s)
		if got := d.String(); got != s {
			t.Errorf("ParseDist(%q).String() = %q", s, got)
		}
		if again := mustDist(t, d.String()); again.String() != s || again.Mean() != d.Mean() {
			t.Errorf("%q does not round-trip", s)
		}
	}
}

func TestDistCanonicalForm(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{" exp( 10ms ) ", "exp(10ms)"},
		{"exp(0.01s)", "exp(10ms)"},
		{"uniform(1000us,5000us)", "uniform(1ms,5ms)"},
		{"const(1h30m)", "const(90m)"},
		{"lognormal(p99=200ms,median=10ms)", "lognormal(median=10ms,p99=200ms)"},
		{"pareto(max=10s,min=1ms,alpha=1.50)", "pareto(alpha=1.5,min=1ms,max=10s)"},
		{"mix(0.990:const(5ms),0.010:exp(1s))", "mix(0.99:const(5ms),0.01:exp(1s))"},
		{"mix(1:const(5ms))", "mix(1:const(5ms))"},
	} {
		if got := mustDist(t, c.in).String(); got != c.want {
			t.Errorf("ParseDist(%q).String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestArrivalsRoundTrip(t *testing.T) {
	for _, s := range append([]string{
		"const(3/s)",
		"const(5/ms)",
		"const(1/m)",
		"const(1/h)",
		"poisson(5/2s)",
		"poisson(1/100ms)",
		"ramp(from=0/s,to=10/ms,over=1h)",
		"limit(limit(backlog(5),count=3),for=1s)",
		"limit(const(1/s),for=10s)",
	}, arrivalSpecs...) {
		a := mustArrivals(t, s)
		if got := a.String(); got != s {
			t.Errorf("ParseArrivals(%q).String() = %q", s, got)
		}
	}
}

func TestArrivalsCanonicalForm(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"poisson(0.5/s)", "poisson(1/2s)"},
		{"poisson(2.5/s)", "poisson(5/2s)"},
		{"poisson(2.0/s)", "poisson(2/s)"},
		{"const(60/60s)", "const(60/m)"},
		{"const(1/1000ms)", "const(1/s)"},
		{"const(1/0.5s)", "const(1/500ms)"},
		{"onoff(off=20s,on=10000ms,rate=2000/s)", "onoff(rate=2000/s,on=10s,off=20s)"},
		{"ramp( over = 1m , from = 1/s , to = 2/s )", "ramp(from=1/s,to=2/s,over=1m)"},
		{"limit(backlog(7),for=1m0s,count=3)", "limit(backlog(7),count=3,for=1m)"},
	} {
		if got := mustArrivals(t, c.in).String(); got != c.want {
			t.Errorf("ParseArrivals(%q).String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Rate
	}{
		{"1000/s", Rate{1000, clock.Second}},
		{"5/ms", Rate{5, clock.Millisecond}},
		{"1/m", Rate{1, clock.Minute}},
		{"0/s", Rate{0, clock.Second}},
		{"0.5/s", Rate{1, 2 * clock.Second}},
		{"5/100ms", Rate{5, 100 * clock.Millisecond}},
		{"0.001/ms", Rate{1, clock.Second}},
	} {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if again, err := ParseRate(got.String()); err != nil || again != got {
			t.Errorf("ParseRate(%q) does not round-trip: %v, %v", got.String(), again, err)
		}
	}
	if f := (Rate{3, clock.Second}).MessagesPerSecond(); f != 3 {
		t.Errorf("MessagesPerSecond of 3/s = %g", f)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		dist bool // ParseDist, else ParseArrivals
		in   string
		want string // substring of the error
	}{
		{true, "", "at offset 0: want a name or a value, got end of input"},
		{true, "exp", "want kind(arguments), e.g. exp(10ms)"},
		{true, "exp(", "at offset 4: want a name or a value, got end of input"},
		{true, "exp(10ms", `want "," or ")", got end of input`},
		{true, "exp(10ms))", `want end of input after the expression, got ")"`},
		{true, "exp(10ms) x", `want end of input after the expression, got "x"`},
		{true, "foo(1ms)", `dist kind "foo" unknown: want const, uniform, exp, lognormal, pareto or mix`},
		{true, "exp()", "exp has 0 arguments: want exp(mean)"},
		{true, "exp(1ms,2ms)", "exp has 2 arguments: want exp(mean)"},
		{true, "exp(ten)", `exp mean "ten": want a duration such as 250ms`},
		{true, "exp(1ns)", `exp mean "1ns": want a duration`},
		{true, "exp(0s)", "exp mean 0s out of range: want 1us to 24h"},
		{true, "exp(25h)", "exp mean 25h out of range: want 1us to 24h"},
		{true, "exp(const(1ms))", "exp mean: want a duration, got const(...)"},
		{true, "const(-5ms)", "const duration -5ms out of range: want 0s to 24h"},
		{true, "uniform(5ms,1ms)", "uniform max 1ms out of range: want >= min 5ms"},
		{true, "uniform(mean=5ms,1ms)", "uniform argument 1 is named \"mean\": want uniform(min,max)"},
		{true, "lognormal(median=10ms)", `lognormal is missing argument "p99": want median, p99`},
		{true, "lognormal(median=10ms,p99=5ms)", "lognormal p99 5ms out of range: want > median 10ms"},
		{true, "lognormal(median=10ms,p99=5ms,p50=1ms)", `lognormal has unknown argument "p50": want median, p99`},
		{true, "lognormal(median=10ms,median=1ms)", `lognormal argument "median" given twice`},
		{true, "lognormal(10ms,200ms)", "lognormal argument 1 is not key=value: want median, p99"},
		{true, "pareto(alpha=0,min=1ms,max=1s)", "pareto alpha 0 out of range: want 0.01 to 100"},
		{true, "pareto(alpha=x,min=1ms,max=1s)", `pareto alpha "x": want a decimal number`},
		{true, "pareto(alpha=inf,min=1ms,max=1s)", "pareto alpha +Inf out of range"},
		{true, "pareto(alpha=1,min=1s,max=1s)", "pareto max 1s out of range: want > min 1s"},
		{true, "mix(0.5:const(1ms),0.4:const(2ms))", "mix weights sum to 0.9: want exactly 1"},
		{true, "mix(0.5:const(1ms),0.6:const(2ms))", "mix weights sum to 1.1: want exactly 1"},
		{true, "mix(const(1ms))", "mix part 1 is not probability:dist"},
		{true, "mix(1:5ms)", "mix part 1 is not probability:dist"},
		{true, "mix(1.5:const(1ms))", `mix part 1 weight "1.5": want a probability from 0 to 1`},
		{true, "mix(0.0000001:const(1ms),1:const(1ms))", "want a probability from 0 to 1 with at most 6 decimals"},
		{true, "mix()", "mix has 0 parts: want 1 to 64"},
		{true, "mix(1:foo(1ms))", `dist kind "foo" unknown`},
		{true, strings.Repeat("mix(1:", 17) + "const(1ms)" + strings.Repeat(")", 17), "calls nested more than 16 deep"},
		{true, strings.Repeat("x", 5000), "dist is 5000 bytes long: want at most 4096"},
		{false, "poisson(0/s)", "poisson rate 0/s out of range: want > 0"},
		{false, "poisson(1000)", `poisson rate "1000": want N/s, N/ms, N/m or N/<duration>`},
		{false, "poisson(-1/s)", `poisson rate "-1/s": count "-1": want an unsigned decimal`},
		{false, "poisson(1/d)", `poisson rate "1/d": period "1d": want a unit (us, ms, s, m, h)`},
		{false, "poisson(1/2h)", `poisson rate "1/2h": period 2h out of range: want 1us to 1h`},
		{false, "poisson(0.0001/s)", "nonzero rate below 1/h"},
		{false, "const(2000000000/s)", "const rate 2000000000/s out of range: want at most 1000000000 per period"},
		{false, "exp(1ms)", `arrivals kind "exp" unknown: want const, poisson, onoff, ramp, backlog or limit`},
		{false, "onoff(rate=1/s,on=1s)", `onoff is missing argument "off"`},
		{false, "onoff(rate=1/s,on=0s,off=1s)", "onoff on 0s out of range: want 1us to 8760h"},
		{false, "ramp(from=1/s,to=0/s,over=1s)", "ramp to 0/s out of range: want > 0"},
		{false, "ramp(from=1/s,to=1/s,over=9000h)", "ramp over 9000h out of range: want 1us to 8760h"},
		{false, "backlog(0)", "backlog size 0 out of range: want 1 to 1000000000"},
		{false, "backlog(-5)", `backlog size "-5": want an unsigned integer`},
		{false, "backlog(1e3)", `backlog size "1e3": want an unsigned integer`},
		{false, "limit(const(1/s))", "limit has neither count nor for"},
		{false, "limit(count=5)", "limit: want limit(<arrivals>,count=N,for=D)"},
		{false, "limit(const(1/s),5)", "limit argument 2 is not key=value: want count, for"},
		{false, "limit(const(1/s),until=5s)", `limit has unknown argument "until": want count, for`},
	} {
		var err error
		if c.dist {
			_, err = ParseDist(c.in)
		} else {
			_, err = ParseArrivals(c.in)
		}
		if err == nil {
			t.Errorf("parsing %q: no error, want one containing %q", c.in, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "workload: ") {
			t.Errorf("parsing %q:\n got error %q\nwant it to contain %q", c.in, err, c.want)
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{
		"const(5ms)", "uniform(1ms,5ms)", "exp(10ms)", "lognormal(median=10ms,p99=200ms)",
		"pareto(alpha=1.5,min=1ms,max=10s)", "mix(0.99:const(5ms),0.01:const(30s))",
		"mix(1:mix(1:exp(1us)))", "exp(", "(,)", "a=b:c", "pareto(alpha=1e-400,min=1us,max=2us)",
	} {
		f.Add(s)
	}
	r := newRand(1)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		canon := d.String()
		again, err := ParseDist(canon)
		if err != nil || again.String() != canon {
			t.Fatalf("ParseDist(%q) = %q, which does not round-trip: %v", s, canon, err)
		}
		if x := d.Sample(r); x < 0 || x > MaxSample {
			t.Fatalf("%s: sample %d out of range", canon, x)
		}
	})
}

func FuzzParseArrivals(f *testing.F) {
	for _, s := range append([]string{"poisson(0.5/s)", "limit(backlog(1),count=1)", "ramp(from=0/s,to=1/h,over=1us)",
		"const(1000000000/us)", "onoff(rate=1/h,on=1us,off=8760h)"}, arrivalSpecs...) {
		f.Add(s)
	}
	r := newRand(1)
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArrivals(s)
		if err != nil {
			return
		}
		canon := a.String()
		again, err := ParseArrivals(canon)
		if err != nil || again.String() != canon {
			t.Fatalf("ParseArrivals(%q) = %q, which does not round-trip: %v", s, canon, err)
		}
		prev := clock.Epoch
		for range 100 {
			at, ok := a.Next(r, prev)
			if !ok {
				break
			}
			if at < prev {
				t.Fatalf("%s: arrival %v before %v", canon, at, prev)
			}
			prev = at
		}
	})
}
