package scenarios

import (
	"fmt"
	"testing"

	"popsim/clock"
	"popsim/sim"
)

// shortened returns the overrides that make a built-in quick to run in
// tests: a short safety phase (at most 5 s) and the same drain budget.
func shortened(s *Scenario) []Override {
	d := min(s.Duration, 5*clock.Second)
	over := []Override{{Path: "duration", Value: text(d)}, {Path: "warmup", Value: text(d / 10)}}
	for i, g := range s.Groups {
		if g.SwitchToPop.At >= d { // a scheduled switch stays inside the safety phase
			over = append(over, Override{Path: fmt.Sprintf("groups[%d].switchToPop.at", i), Value: text(d / 2)})
		}
	}
	return over
}

// TestBuiltinsRun runs every built-in scenario for its first seed with a
// shortened safety phase and requires every invariant to hold.
func TestBuiltinsRun(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			full, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			over := shortened(full)
			if name == "hot-topic-500x500" {
				over = append(over, Override{Path: "duration", Value: "1s"}, Override{Path: "warmup", Value: "100ms"})
			}
			s, err := Builtin(name, over...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Run(s.Config(s.Seed), sim.RunOptions{Scenario: name})
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			if sum.Produced == 0 || sum.Acked+sum.DLQ+sum.Dropped != sum.Produced {
				t.Errorf("produced %d, acked %d, dlq %d, dropped %d: not everything settled", sum.Produced, sum.Acked, sum.DLQ, sum.Dropped)
			}
			for i, v := range sum.Violations {
				if i == 5 {
					t.Errorf("... %d violations in all", len(sum.Violations))
					break
				}
				t.Errorf("%s at event %d (%s): %s", v.Invariant, v.EventIndex, v.Msg, v.Detail)
			}
		})
	}
}

// text is a value's text form.
func text(v interface{ MarshalText() ([]byte, error) }) string {
	b, err := v.MarshalText()
	if err != nil {
		panic(err)
	}
	return string(b)
}
