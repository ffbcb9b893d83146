package stats

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDecideExactSmallCase(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5} // 3.000 [1.037, 4.963] at 95%
	for _, c := range []struct {
		target Target
		want   Verdict
		more   int
	}{
		{Target{AtMost, 5}, Met, 0},
		{Target{AtMost, 1}, NotMet, 0},
		// t(0.975, 11)·s/√12 = 1.0046 > 1 but t(0.975, 12)·s/√13 = 0.9555:
		// 13 replications, 8 more.
		{Target{AtMost, 4}, Undecided, 8},
		{Target{AtLeast, 1}, Met, 0},
		{Target{AtLeast, 5}, NotMet, 0},
		{Target{AtLeast, 2}, Undecided, 8},
		{Target{AtMost, 3}, Undecided, -1},
	} {
		d := Decide(xs, c.target, 0.95)
		if d.Verdict != c.want || d.More != c.more {
			t.Errorf("%v: %v", c.target, d)
		}
	}
	want := "undecided: 3.000 [1.037, 4.963] 95% t over replications n=5 (target <= 4), 8 more replications likely settle it"
	if got := Decide(xs, Target{AtMost, 4}, 0.95).String(); got != want {
		t.Errorf("String() = %q\nwant       %q", got, want)
	}
	if got := Decide(xs, Target{AtLeast, 1}, 0.95).String(); !strings.HasPrefix(got, "met: 3.000") || !strings.HasSuffix(got, "(target >= 1)") {
		t.Errorf("String() = %q", got)
	}
}

func TestDecideTooFewReplications(t *testing.T) {
	for n, more := range []int{2, 1} {
		d := Decide(make([]float64, n), Target{AtMost, 1}, 0.95)
		if d.Verdict != Undecided || d.More != more || d.Interval.OK {
			t.Errorf("%d values: %v", n, d)
		}
	}
	if d := Decide([]float64{1, 2}, Target{AtMost, 1}, 2); d.Verdict != Undecided || d.More != -1 {
		t.Errorf("bad level: %v", d)
	}
}

// runSequential adds replications of N(mu, sigma²) until the decision is
// clear or the budget is spent: the loop popsim plan runs, with each look
// at level perLook.
func runSequential(r *rand.Rand, mu, sigma float64, target Target, perLook float64, start, budget int) (Decision, int) {
	xs := normals(r, start, mu, sigma)
	for {
		d := Decide(xs, target, perLook)
		if d.Verdict != Undecided || len(xs) >= budget {
			return d, len(xs)
		}
		add := min(max(d.More, len(xs)/2, 1), budget-len(xs))
		xs = append(xs, normals(r, add, mu, sigma)...)
	}
}

// The sequential decision on data with known mean (sigma 2, threshold
// 10, seeds 0..399, 5 replications to start, budget 400, about 11 looks):
// a true mean 0.25 sigma on either side of the threshold is decided
// correctly almost always and wrongly rarely; a mean on the threshold
// mostly stays undecided. Each look at PerLookLevel(0.95, 10) = 0.995, as
// the Decide documentation advises; at 0.95 per look a mean on the
// threshold is decided, wrongly, in about a fifth of the sequences.
func TestSequentialDecisionKnownMean(t *testing.T) {
	const reps = 400
	if got := PerLookLevel(0.95, 10); !closeRel(got, 0.995, 1e-15) {
		t.Fatalf("PerLookLevel(0.95, 10) = %v", got)
	}
	for _, c := range []struct {
		mu, perLook     float64
		right, wrong    Verdict
		minRight, maxWr float64
	}{
		{9.5, 0.995, Met, NotMet, 0.97, 0.01},
		{10.5, 0.995, NotMet, Met, 0.97, 0.01},
		{10, 0.995, Undecided, Met, 0.9, 0.06}, // "wrong" here: any verdict claims too much
		{10, 0.95, Undecided, Met, 0, 1},       // logged, and checked below
	} {
		right, wrong, used := 0, 0, 0
		for s := range uint64(reps) {
			d, n := runSequential(newRand(s), c.mu, 2, Target{AtMost, 10}, c.perLook, 5, 400)
			used += n
			switch {
			case d.Verdict == c.right:
				right++
			case c.right == Undecided || d.Verdict == c.wrong:
				wrong++
			}
		}
		fr, fw := float64(right)/reps, float64(wrong)/reps
		t.Logf("mu %v, %v per look: right %.3f wrong %.3f, mean replications %.0f", c.mu, c.perLook, fr, fw, float64(used)/reps)
		if fr < c.minRight || fw > c.maxWr {
			t.Errorf("mu %v: right %.3f (want >= %v), wrong %.3f (want <= %v)", c.mu, fr, c.minRight, fw, c.maxWr)
		}
		if c.perLook == 0.95 && fw < 0.1 {
			t.Errorf("uncorrected looks decided only %.3f of threshold cases: the hazard PerLookLevel guards against is gone?", fw)
		}
	}
}

// pt makes a point whose three replications are mean-h, mean, mean+h:
// the 95% interval is mean ± 2.484·h.
func pt(x, mean, h float64, target Target) Point {
	return Point{X: x, Decisions: []Decision{Decide([]float64{mean - h, mean, mean + h}, target, 0.95)}}
}

func TestBoundary(t *testing.T) {
	le := Target{AtMost, 100}   // p99 <= 100 ms: more consumers help
	ge := Target{AtLeast, 1000} // throughput >= 1000/s: less load helps
	for _, c := range []struct {
		name   string
		points []Point
		dir    Direction
		want   string
	}{
		{"the brief's example", []Point{pt(456, 130, 1, le), pt(457, 98, 5, le), pt(458, 80, 1, le)}, Increasing,
			"457, but 458 is not excluded at 95%"},
		{"clear", []Point{pt(458, 80, 1, le), pt(456, 130, 1, le), pt(457, 95, 1, le)}, Increasing,
			"457 (clear at 95%)"},
		{"undecided on both sides", []Point{pt(455, 130, 1, le), pt(456, 104, 5, le), pt(457, 98, 5, le), pt(458, 80, 1, le), pt(459, 70, 1, le)}, Increasing,
			"457, but 456 and 458 are not excluded at 95%"},
		{"wide", []Point{pt(450, 130, 1, le), pt(451, 104, 9, le), pt(452, 102, 9, le), pt(453, 99, 9, le), pt(454, 97, 9, le), pt(455, 96, 9, le), pt(456, 50, 1, le)}, Increasing,
			"453, but 451 to 456 (5 values tried) are not excluded at 95%"},
		{"decreasing", []Point{pt(1000, 1500, 1, ge), pt(1100, 1200, 10, ge), pt(1200, 1010, 10, ge), pt(1300, 900, 1, ge)}, Decreasing,
			"1200, but 1100 is not excluded at 95%"},
		{"not found", []Point{pt(456, 130, 1, le), pt(457, 104, 5, le), pt(460, 99, 5, le)}, Increasing,
			"not found: no value tried clearly meets the target at 95% (by the estimates 460, undecided)"},
		{"range too high", []Point{pt(400, 90, 1, le), pt(500, 50, 1, le)}, Increasing,
			"400 (clear at 95%); the smallest value tried (400) is not excluded: the answer may be lower"},
		{"range too high, decreasing", []Point{pt(400, 1500, 1, ge)}, Decreasing,
			"400 (clear at 95%); the largest value tried (400) is not excluded: the answer may be higher"},
		{"not monotone", []Point{pt(455, 90, 1, le), pt(456, 130, 1, le), pt(457, 80, 1, le)}, Increasing,
			"457 (clear at 95%); not monotone: 455 met the target but 456 clearly did not; add replications or check the metric"},
		{"nothing", nil, Increasing, "not found: no values tried"},
		{"two conditions", []Point{two(456, 80, 2), two(457, 80, 0.5), two(458, 80, 0.1), two(459, 60, 0.05)}, Increasing,
			"458, but 459 is not excluded at 95%"},
	} {
		a := Boundary(c.points, c.dir)
		if got := a.String(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	p := two(458, 80, 0.1)
	if p.Verdict() != Undecided || !p.EstimateMeets() || (Point{X: 1}).Verdict() != Undecided || (Point{X: 1}).EstimateMeets() {
		t.Errorf("combined verdicts: %v %v", p.Verdict(), p.EstimateMeets())
	}
	a := Boundary([]Point{pt(456, 130, 1, le), pt(457, 98, 5, le), pt(458, 80, 1, le)}, Increasing)
	if !a.Found || a.Est != 457 || a.Safe != 458 || a.Level != 0.95 || len(a.NotExcluded) != 1 {
		t.Errorf("fields: %+v", a)
	}
}

// two is a point judged on two conditions: p99 <= 100 (clearly met at
// mean 80 with spread 1, or at 60) and dup <= 0.2% (mean dup, spread 0.05).
func two(x, p99, dup float64) Point {
	p := pt(x, p99, 1, Target{AtMost, 100})
	p.Decisions = append(p.Decisions, Decide([]float64{dup - 0.05, dup, dup + 0.05}, Target{AtMost, 0.2}, 0.95))
	return p
}

func TestDecisionJSONRoundTrip(t *testing.T) {
	d := Decide([]float64{1, 2, 3, 4, 5}, Target{AtLeast, 2}, 0.95)
	b, err := json.Marshal(Point{X: 457, Decisions: []Decision{d}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"x":457,"decisions":[{"target":{"goal":"at_least","threshold":2},"verdict":"undecided",`,
		`"level":0.95,"n":5,"method":"t over replications","ok":true},"more":8}]}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s\nlacks %s", b, want)
		}
	}
	var back Point
	if err := json.Unmarshal(b, &back); err != nil || back.Decisions[0].String() != d.String() {
		t.Errorf("round trip: %v, %v", err, back)
	}
	var v Verdict
	var g Goal
	if v.UnmarshalText([]byte("maybe")) == nil || g.UnmarshalText([]byte("<=")) == nil {
		t.Error("bad text accepted")
	}
}
