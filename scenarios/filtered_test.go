package scenarios

import (
	"testing"

	"popsim/sim"
)

// filtered-groups runs with zero violations; the messages its groups do
// not subscribe to are settled as owed to no one (dropped, no-match), the
// rest acked.
func TestFilteredGroupsBuiltin(t *testing.T) {
	s, err := Builtin("filtered-groups")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(s.Config(s.Seed), sim.RunOptions{Scenario: "filtered-groups"})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	for _, v := range sum.Violations {
		t.Errorf("violation %s: %s", v.Invariant, v.Detail)
	}
	nm := sum.DroppedByPolicy["no-match"]
	if nm == 0 || nm != sum.Dropped || sum.Acked+nm != sum.Produced || sum.Lost != 0 {
		t.Fatalf("produced %d, acked %d, dropped %v, lost %d: want the unsubscribed ones dropped as no-match and the rest acked", sum.Produced, sum.Acked, sum.DroppedByPolicy, sum.Lost)
	}
}
