package workload

import (
	"math"
	"testing"
)

func TestOutcomesProportions(t *testing.T) {
	o, err := NewOutcomes(50_000, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if o.SuccessPPM() != 940_000 {
		t.Errorf("SuccessPPM = %d, want 940000", o.SuccessPPM())
	}
	const n = 1_000_000
	var counts [3]int
	r := newRand(6)
	for range n {
		counts[o.Sample(r)]++
	}
	for i, want := range []float64{0.94, 0.05, 0.01} {
		sd := math.Sqrt(want * (1 - want) / n)
		if got := float64(counts[i]) / n; math.Abs(got-want) > 4*sd {
			t.Errorf("%v: fraction %.5f, want %.2f ± %.5f", Outcome(i), got, want, 4*sd)
		}
	}
}

func TestOutcomesDrawOnceEvenWhenCertain(t *testing.T) {
	a, b := newRand(7), newRand(7)
	var zero Outcomes
	all, _ := NewOutcomes(0, 1_000_000)
	for range 100 {
		if zero.Sample(a) != Success || all.Sample(b) != Exception {
			t.Fatal("certain outcomes came out otherwise")
		}
	}
	if a.Uint64() != b.Uint64() {
		t.Error("Sample consumed a different number of draws for different probabilities")
	}
}

func TestOutcomesText(t *testing.T) {
	o, err := ParseOutcomes("outcomes(exception=0.001, reconsume_later=0.05)")
	if err != nil {
		t.Fatal(err)
	}
	if o.ReconsumeLaterPPM() != 50_000 || o.ExceptionPPM() != 1_000 {
		t.Errorf("parsed %d, %d ppm", o.ReconsumeLaterPPM(), o.ExceptionPPM())
	}
	const canon = "outcomes(reconsume_later=0.05,exception=0.001)"
	if o.String() != canon {
		t.Errorf("String() = %q, want %q", o.String(), canon)
	}
	if z, err := ParseOutcomes("outcomes()"); err != nil || z != (Outcomes{}) {
		t.Errorf(`ParseOutcomes("outcomes()") = %v, %v; want the zero Outcomes`, z, err)
	}
	for _, c := range []struct {
		in   string
		want string
	}{
		{"outcomes(reconsume_later=0.6,exception=0.5)", "workload: outcomes reconsume_later+exception 1100000ppm out of range: want at most 1000000"},
		{"outcomes(exception=2)", `workload: outcomes exception "2": want a probability from 0 to 1 with at most 6 decimals, e.g. 0.01`},
		{"outcomes(success=1)", `workload: outcomes has unknown argument "success": want reconsume_later, exception`},
		{"result(exception=0.1)", `workload: outcomes kind "result" unknown: want outcomes(...)`},
	} {
		if _, err := ParseOutcomes(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseOutcomes(%q): error %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := NewOutcomes(-1, 0); err == nil || err.Error() != "workload: outcomes reconsume_later -1ppm out of range: want 0 to 1000000" {
		t.Errorf("NewOutcomes(-1, 0): %v", err)
	}
	if s := Outcome(9).String(); s != "Outcome(9)" {
		t.Errorf("Outcome(9).String() = %q", s)
	}
}
