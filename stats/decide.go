package stats

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Goal says which side of a threshold meets a target.
type Goal int

const (
	// AtMost: the metric must be at most the threshold (latency,
	// duplicates).
	AtMost Goal = iota
	// AtLeast: the metric must be at least the threshold (throughput).
	AtLeast
)

// Target is a requirement on a metric: "p99 <= 200 ms" is
// Target{AtMost, 200000} with the metric in microseconds.
type Target struct {
	Goal      Goal    `json:"goal"`
	Threshold float64 `json:"threshold"`
}

// String renders "<=" or ">=".
func (g Goal) String() string {
	if g == AtLeast {
		return ">="
	}
	return "<="
}

// MarshalText makes a Goal "at_most" or "at_least" in JSON (words, since
// encoding/json escapes < and >).
func (g Goal) MarshalText() ([]byte, error) {
	if g == AtLeast {
		return []byte("at_least"), nil
	}
	return []byte("at_most"), nil
}

// UnmarshalText reads "at_most" or "at_least".
func (g *Goal) UnmarshalText(b []byte) error {
	switch string(b) {
	case "at_most":
		*g = AtMost
	case "at_least":
		*g = AtLeast
	default:
		return errors.New("stats: goal " + strconv.Quote(string(b)) + ": want at_most or at_least")
	}
	return nil
}

// MetBy reports whether the value x meets the target.
func (t Target) MetBy(x float64) bool {
	if t.Goal == AtLeast {
		return x >= t.Threshold
	}
	return x <= t.Threshold
}

// String renders "<= 200" or ">= 1000".
func (t Target) String() string { return t.Goal.String() + " " + fx(t.Threshold) }

// Verdict is the outcome of a statistical decision.
type Verdict int

const (
	// Undecided: the interval still contains the threshold.
	Undecided Verdict = iota
	// Met: the whole interval meets the target.
	Met
	// NotMet: the whole interval fails the target.
	NotMet
)

func (v Verdict) String() string {
	switch v {
	case Met:
		return "met"
	case NotMet:
		return "not met"
	}
	return "undecided"
}

// MarshalText makes a Verdict its String in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads "met", "not met" or "undecided".
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, c := range []Verdict{Undecided, Met, NotMet} {
		if c.String() == string(b) {
			*v = c
			return nil
		}
	}
	return errors.New("stats: verdict " + strconv.Quote(string(b)) + ": want met, not met or undecided")
}

// Decision is whether one parameter value meets a target, judged from
// independent replications (one value per seed).
type Decision struct {
	Target   Target   `json:"target"`
	Verdict  Verdict  `json:"verdict"`
	Interval Interval `json:"interval"` // MeanCI of the values
	// More is how many further replications would likely settle an
	// Undecided verdict: the n at which the interval's half-width, at the
	// current standard deviation, falls below the distance from the mean to
	// the threshold, minus the replications so far. It is an estimate
	// (about even odds of being enough): add at least that many, then
	// decide again. 0 once decided; -1 when the mean sits exactly on the
	// threshold and no sample size can be named.
	More int `json:"more"`
}

// String renders "met: 41.20 [39.80, 42.60] 95% t over replications n=10
// (target <= 50)", with "(N more replications likely settle it)" when
// undecided.
func (d Decision) String() string {
	s := d.Verdict.String() + ": " + d.Interval.String() + " (target " + d.Target.String() + ")"
	switch {
	case d.Verdict != Undecided:
	case d.More > 0:
		s += ", " + strconv.Itoa(d.More) + " more replications likely settle it"
	case d.More < 0:
		s += ", the estimate sits on the threshold"
	}
	return s
}

// maxReplications caps Decision.More.
const maxReplications = 1 << 30

// Decide judges whether the metric whose per-seed values are given meets
// the target, from their t interval (MeanCI) at the given level: Met when
// the whole interval meets it, NotMet when none of it does, Undecided
// otherwise. With a two-sided interval at level L, each wrong verdict has
// probability at most (1-L)/2 at a fixed number of replications.
//
// Sequential use (add seeds until decided or a budget runs out) looks at
// the data several times, and every look is a chance to decide wrongly:
// decide each look at PerLookLevel(level, looks) to keep the overall error
// within 1-level. Stop at the budget and report Undecided honestly.
func Decide(values []float64, target Target, level float64) Decision {
	iv := MeanCI(values, level)
	d := Decision{Target: target, Interval: iv}
	n := len(values)
	switch {
	case !iv.OK && n < 2 && checkLevel(level) == "" && finite(values):
		d.More = 2 - n
	case !iv.OK:
		d.More = -1
	case target.MetBy(iv.Lo) && target.MetBy(iv.Hi):
		d.Verdict = Met
	case !target.MetBy(iv.Lo) && !target.MetBy(iv.Hi):
		d.Verdict = NotMet
	default:
		d.More = moreReplications(values, target.Threshold, level)
	}
	return d
}

// PerLookLevel is the level at which to decide each of at most looks
// looks so that the chance of any wrong verdict over all of them stays
// within 1-level (Bonferroni): PerLookLevel(0.95, 10) = 0.995. Without it,
// deciding at 0.95 after every batch of seeds decides wrongly far more
// often than 5% when the truth sits near the threshold.
func PerLookLevel(level float64, looks int) float64 {
	return 1 - (1-level)/float64(max(looks, 1))
}

// moreReplications finds the smallest N > n with
// t(level, N-1)·s/√N < |mean - threshold| (the left side falls with N:
// doubling, then bisection) and returns N - n.
func moreReplications(values []float64, threshold, level float64) int {
	n := len(values)
	mean, variance := meanVar(values)
	dist := math.Abs(mean - threshold)
	if dist == 0 {
		return -1
	}
	ratio := math.Sqrt(variance) / dist
	enough := func(N int) bool {
		return StudentTQuantile((1+level)/2, float64(N-1))*ratio < math.Sqrt(float64(N))
	}
	// t > z, so the normal-theory size is a lower bound.
	z := NormalQuantile((1 + level) / 2)
	lo := max(n+1, int(math.Min(z*z*ratio*ratio, maxReplications)))
	if enough(lo) {
		return lo - n
	}
	hi := lo
	for !enough(hi) {
		if hi >= maxReplications {
			return maxReplications
		}
		lo, hi = hi, min(2*hi, maxReplications)
	}
	// enough(hi) holds, enough(lo) does not.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - n
}

// Direction says which way along the searched parameter the target
// becomes easier to meet.
type Direction int

const (
	// Increasing: larger values meet the target (consumers, threads);
	// the answer is the smallest value that meets it.
	Increasing Direction = iota
	// Decreasing: smaller values meet the target (offered load, message
	// size); the answer is the largest value that meets it.
	Decreasing
)

// Point is one tried parameter value and its decisions, one per condition
// of the target ("p99 <= 2s and dup <= 0.1%": two); the value meets the
// target when it meets every condition.
type Point struct {
	X         float64    `json:"x"`
	Decisions []Decision `json:"decisions"`
}

// Verdict combines the decisions: NotMet when any condition is clearly
// not met, Met when all are clearly met, Undecided otherwise (and without
// decisions).
func (p Point) Verdict() Verdict {
	met := len(p.Decisions) > 0
	for _, d := range p.Decisions {
		if d.Verdict == NotMet {
			return NotMet
		}
		met = met && d.Verdict == Met
	}
	if met {
		return Met
	}
	return Undecided
}

// EstimateMeets reports whether the point estimates meet every condition.
func (p Point) EstimateMeets() bool {
	for _, d := range p.Decisions {
		if d.Interval.N == 0 || !d.Target.MetBy(d.Interval.Est) {
			return false
		}
	}
	return len(p.Decisions) > 0
}

// Answer is a capacity boundary with its uncertainty: "457, but 458 is not
// excluded at 95%".
type Answer struct {
	Est  float64 `json:"est"`  // the boundary by the point estimates
	Safe float64 `json:"safe"` // the first value that clearly meets the target (provision this)
	// NotExcluded lists the other tried values that could still be the
	// boundary at Level: undecided ones, and Safe when it differs from Est.
	NotExcluded []float64 `json:"not_excluded,omitempty"`
	Level       float64   `json:"level"`
	Found       bool      `json:"found"`          // false: no tried value clearly meets the target (Est and Safe are 0)
	Note        string    `json:"note,omitempty"` // caveats: the range may extend past the values tried, non-monotone decisions
}

// String renders the answer for people: "457 (clear at 95%)", "457, but
// 458 is not excluded at 95%", "457, but 456 and 458 are not excluded at
// 95%", or "not found: ..." with the note.
func (a Answer) String() string {
	if !a.Found {
		return "not found: " + a.Note
	}
	x := strconv.FormatFloat
	var b strings.Builder
	b.WriteString(x(a.Est, 'g', -1, 64))
	lv := formatLevel(a.Level)
	switch n := len(a.NotExcluded); {
	case n == 0:
		b.WriteString(" (clear at " + lv + ")")
	case n == 1:
		b.WriteString(", but " + x(a.NotExcluded[0], 'g', -1, 64) + " is not excluded at " + lv)
	case n <= 3:
		parts := make([]string, n)
		for i, v := range a.NotExcluded {
			parts[i] = x(v, 'g', -1, 64)
		}
		b.WriteString(", but " + strings.Join(parts[:n-1], ", ") + " and " + parts[n-1] + " are not excluded at " + lv)
	default:
		b.WriteString(", but " + x(a.NotExcluded[0], 'g', -1, 64) + " to " + x(a.NotExcluded[n-1], 'g', -1, 64) +
			" (" + strconv.Itoa(n) + " values tried) are not excluded at " + lv)
	}
	if a.Note != "" {
		b.WriteString("; " + a.Note)
	}
	return b.String()
}

// Boundary reads the answer of a capacity search off its tried points (in
// any order; each X once), all judged at the same level. For Increasing
// (Decreasing mirrors it):
//
//   - values up to the largest NotMet are excluded (clearly not enough);
//   - Safe is the smallest value above it that is Met;
//   - Est is the smallest value above it whose point estimate meets the
//     target;
//   - every tried value from just above the largest NotMet up to Safe could
//     still be the true boundary: those other than Est are NotExcluded.
//
// Values that were not tried are not judged: a plan should try every value
// between the largest NotMet and Safe (for integer parameters) before it
// reports. The Note says when the smallest value tried is not excluded
// (the answer may lie below the range) or when decisions are not monotone.
func Boundary(points []Point, dir Direction) Answer {
	ps := slices.Clone(points)
	slices.SortFunc(ps, func(a, b Point) int {
		if dir == Decreasing {
			a, b = b, a
		}
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	var a Answer
	if len(ps) == 0 {
		a.Note = "no values tried"
		return a
	}
	for _, p := range ps {
		if len(p.Decisions) > 0 {
			a.Level = p.Decisions[0].Interval.Level
			break
		}
	}
	lastNot := -1
	for i, p := range ps {
		if p.Verdict() == NotMet {
			lastNot = i
		}
	}
	var notes []string
	for i := range lastNot {
		if ps[i].Verdict() == Met {
			notes = append(notes, "not monotone: "+fx(ps[i].X)+" met the target but "+fx(ps[lastNot].X)+
				" clearly did not; add replications or check the metric")
			break
		}
	}
	safe, est := -1, -1
	for i := lastNot + 1; i < len(ps) && safe < 0; i++ {
		if est < 0 && ps[i].EstimateMeets() {
			est = i
		}
		if ps[i].Verdict() == Met {
			safe = i
		}
	}
	if lastNot < 0 {
		edge, side := "smallest", "lower"
		if dir == Decreasing {
			edge, side = "largest", "higher"
		}
		notes = append(notes, "the "+edge+" value tried ("+fx(ps[0].X)+") is not excluded: the answer may be "+side)
	}
	if safe < 0 {
		what := "no value tried clearly meets the target at " + formatLevel(a.Level)
		if est >= 0 {
			what += " (by the estimates " + fx(ps[est].X) + ", undecided)"
		}
		a.Note = strings.Join(append([]string{what}, notes...), "; ")
		return a
	}
	a.Found, a.Est, a.Safe = true, ps[est].X, ps[safe].X
	for i := lastNot + 1; i <= safe; i++ {
		if i != est {
			a.NotExcluded = append(a.NotExcluded, ps[i].X)
		}
	}
	slices.Sort(a.NotExcluded)
	a.Note = strings.Join(notes, "; ")
	return a
}

func fx(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
