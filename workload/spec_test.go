package workload

import (
	"math"
	"testing"

	"popsim/clock"
	"popsim/workload/pcg"
)

// New gives a fresh iterator each time, drawing exactly as a freshly
// parsed process does.
func TestArrivalsSpecNewIsFresh(t *testing.T) {
	for _, text := range []string{
		"const(3/s)", "poisson(1000/s)", "backlog(5)", "onoff(rate=100/s,on=1s,off=2s)",
		"ramp(from=0/s,to=100/s,over=10s)", "limit(poisson(50/s),count=7,for=1m)",
	} {
		spec := MustArrivals(text)
		for run := 0; run < 2; run++ {
			a, b := spec.New(), mustArrivals(t, text)
			ra, rb := pcg.New(1, 2), pcg.New(1, 2)
			for i := 0; i < 50; i++ {
				x, okx := a.Next(ra, clock.Epoch)
				y, oky := b.Next(rb, clock.Epoch)
				if x != y || okx != oky {
					t.Fatalf("%s run %d arrival %d: spec gives %v,%v; a parsed process %v,%v", text, run, i, x, okx, y, oky)
				}
			}
		}
		if spec.String() != text {
			t.Errorf("String() = %q, want %q", spec.String(), text)
		}
	}
}

func TestArrivalsSpecExpected(t *testing.T) {
	for _, c := range []struct {
		text string
		span clock.Duration
		want float64
	}{
		{"const(3/s)", 10 * clock.Second, 30},
		{"poisson(1000/s)", 720 * clock.Hour, 2.592e9},
		{"poisson(1000000000/s)", 720 * clock.Hour, 2.592e15},
		{"backlog(1000000000)", clock.Second, 1e9},
		{"onoff(rate=100/s,on=1s,off=3s)", 9 * clock.Second, 300},
		{"ramp(from=0/s,to=100/s,over=10s)", 10 * clock.Second, 500},
		{"ramp(from=0/s,to=100/s,over=10s)", 20 * clock.Second, 1500},
		{"limit(poisson(50/s),count=7)", time60s, 7},
		{"limit(poisson(50/s),for=2s)", time60s, 100},
	} {
		got := MustArrivals(c.text).Expected(c.span)
		if math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("%s over %v: Expected = %g, want %g", c.text, c.span, got, c.want)
		}
	}
	if (ArrivalsSpec{}).Expected(clock.Second) != 0 {
		t.Error("the zero spec expects arrivals")
	}
}

const time60s = 60 * clock.Second

func TestSpecText(t *testing.T) {
	var d DistSpec
	if err := d.UnmarshalText([]byte("uniform(1s,5s)")); err != nil || d.String() != "uniform(1s,5s)" {
		t.Errorf("DistSpec: %v, %q", err, d)
	}
	if err := d.UnmarshalText([]byte("gauss(1s)")); err == nil {
		t.Error("DistSpec accepted gauss")
	}
	var o Outcomes
	if err := o.UnmarshalText([]byte("outcomes(exception=0.5)")); err != nil || o.ExceptionPPM() != 500_000 {
		t.Errorf("Outcomes: %v, %v", err, o)
	}
	b, _ := o.MarshalText()
	var o2 Outcomes
	if err := o2.UnmarshalText(b); err != nil || o2 != o {
		t.Errorf("Outcomes round trip: %q -> %v, %v", b, o2, err)
	}
	var tg Tags
	if err := tg.UnmarshalText([]byte("tags(A:3,B:1)")); err != nil || tg.String() != "tags(A:3,B:1)" {
		t.Errorf("Tags: %v, %v", err, tg)
	}
	if n := tg.Names(); len(n) != 2 || n[0] != "A" || n[1] != "B" {
		t.Errorf("Names = %q", n)
	}
	if n := (Tags{}).Names(); len(n) != 1 || n[0] != "" {
		t.Errorf("zero Names = %q", n)
	}
	if !(DistSpec{}).IsZero() || !(ArrivalsSpec{}).IsZero() || (DistSpec{}).String() != "" {
		t.Error("zero specs")
	}
}
