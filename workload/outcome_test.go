package workload

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/workload/pcg"
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
		{"outcomes(success=1)", `workload: outcomes has unknown argument "success": want reconsume_later, exception, poison_every, poison_count, ack_then_fail`},
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

func TestOutcomesPoison(t *testing.T) {
	o, err := ParseOutcomes("outcomes(poison_every=300, poison_count=2)")
	if err != nil {
		t.Fatal(err)
	}
	const canon = "outcomes(reconsume_later=0,exception=0,poison_every=300,poison_count=2)"
	if o.String() != canon {
		t.Errorf("String() = %q, want %q", o, canon)
	}
	if back, err := ParseOutcomes(canon); err != nil || back != o {
		t.Errorf("ParseOutcomes(%q) = %v, %v; want %v", canon, back, err, o)
	}
	if !o.CanFail() || (Outcomes{}).CanFail() {
		t.Error("CanFail: want true with poison, false for the zero Outcomes")
	}
	r := pcg.New(1, 2)
	var poisoned []uint64
	for n := uint64(0); n <= 1200; n++ {
		if got := o.SampleFor(r, n); got == Exception {
			poisoned = append(poisoned, n)
		} else if got != Success {
			t.Fatalf("message %d: %v, want Success or Exception", n, got)
		}
	}
	if fmt.Sprint(poisoned) != "[300 600]" {
		t.Errorf("poison messages %v, want [300 600]", poisoned)
	}
	all, _ := ParseOutcomes("outcomes(poison_every=1)")
	for n := uint64(1); n <= 5; n++ {
		if !all.Poisoned(n) {
			t.Errorf("poison_every=1: message %d not poisoned", n)
		}
	}
	// A poison message draws once like any other: the stream after it is
	// the one without poison.
	r1, r2 := pcg.New(3, 4), pcg.New(3, 4)
	mixed, _ := ParseOutcomes("outcomes(exception=0.5,poison_every=2)")
	plain, _ := ParseOutcomes("outcomes(exception=0.5)")
	for n := uint64(1); n <= 100; n++ {
		a, b := mixed.SampleFor(r1, n), plain.SampleFor(r2, n)
		if n%2 == 1 && a != b {
			t.Fatalf("message %d: %v with poison, %v without", n, a, b)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"outcomes(poison_count=1)", "workload: outcomes poison_count 1 without poison_every: want poison_every=N too"},
		{"outcomes(poison_every=x)", `workload: outcomes poison_every "x": want an unsigned integer of at most 18 digits`},
		{"outcomes(poison_every=4294967296)", "workload: outcomes poison_every 4294967296 out of range: want 1 to 4294967295 (0: no poison message)"},
		{"outcomes(poison=1)", `workload: outcomes has unknown argument "poison": want reconsume_later, exception, poison_every, poison_count, ack_then_fail`},
	} {
		if _, err := ParseOutcomes(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseOutcomes(%q): error %v, want %q", c.in, err, c.want)
		}
	}
}

// ack_then_fail: a share of the deliveries that would succeed is acked
// and then fails its commit; it round-trips, is refused past the success
// probability, and draws from the same single call on the stream, so the
// other outcomes keep their draws.
func TestOutcomesAckThenFail(t *testing.T) {
	o, err := ParseOutcomes("outcomes(reconsume_later=0.1,ack_then_fail=0.2)")
	if err != nil {
		t.Fatal(err)
	}
	if o.AckedNotDonePPM() != 200_000 || !o.CanFail() || o.String() != "outcomes(reconsume_later=0.1,exception=0,ack_then_fail=0.2)" {
		t.Fatalf("parsed %v (%d ppm)", o, o.AckedNotDonePPM())
	}
	if _, err := ParseOutcomes("outcomes(reconsume_later=0.9,ack_then_fail=0.2)"); err == nil || !strings.Contains(err.Error(), "ack_then_fail") {
		t.Fatalf("over 1 in all: err %v", err)
	}
	plain, _ := ParseOutcomes("outcomes(reconsume_later=0.1)")
	r1, r2 := pcg.New(1, 2), pcg.New(1, 2)
	counts := map[Outcome]int{}
	for range 10000 {
		a, b := o.Sample(r1), plain.Sample(r2)
		counts[a]++
		if (a == ReconsumeLater) != (b == ReconsumeLater) || (a == AckedNotDone && b != Success) {
			t.Fatalf("draws diverge: %v with ack_then_fail, %v without", a, b)
		}
	}
	if n := counts[AckedNotDone]; n < 1800 || n > 2200 || !AckedNotDone.Succeeded() || ReconsumeLater.Succeeded() {
		t.Fatalf("%d of 10000 acked-not-done, want about 2000", n)
	}
}

// TestSampleForMatchesReference checks SampleFor, whose draw is written
// out, against the plain form (Int64N, then the thresholds, then the
// poison): the same outcome for every message, and the same stream after.
func TestSampleForMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rl := rapid.Int64Range(0, ppmOne).Draw(t, "reconsume_later")
		ex := rapid.Int64Range(0, ppmOne-rl).Draw(t, "exception")
		o, err := NewOutcomes(rl, ex)
		if err != nil {
			t.Fatal(err)
		}
		if o, err = o.WithAckedNotDone(rapid.Int64Range(0, ppmOne-rl-ex).Draw(t, "ack_then_fail")); err != nil {
			t.Fatal(err)
		}
		if every := rapid.Int64Range(0, 5).Draw(t, "poison_every"); every > 0 {
			if o, err = o.WithPoison(every, rapid.Int64Range(0, 3).Draw(t, "poison_count")); err != nil {
				t.Fatal(err)
			}
		}
		seed := rapid.Uint64().Draw(t, "seed")
		got, want := pcg.New(seed, 3), pcg.New(seed, 3)
		for n := range uint64(rapid.IntRange(1, 40).Draw(t, "messages")) {
			x, w := want.Int64N(ppmOne), Success
			switch {
			case x < rl:
				w = ReconsumeLater
			case x < rl+ex:
				w = Exception
			case x < rl+ex+o.AckedNotDonePPM():
				w = AckedNotDone
			}
			if o.Poisoned(n) {
				w = Exception
			}
			if g := o.SampleFor(got, n); g != w {
				t.Fatalf("%v, message %d (draw %d): %v, want %v", o, n, x, g, w)
			}
		}
		if *got != *want {
			t.Fatalf("%v: the streams differ after sampling", o)
		}
	})
}
