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

// filtered-fanout runs with zero violations: three groups on one topic,
// TAG and SQL92, one orderly, each measured on its own; billing is lent
// the messages whose tag collides with one it subscribes to and acks them
// unconsumed (no-match).
func TestFilteredFanoutBuiltin(t *testing.T) {
	s, err := Builtin("filtered-fanout")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(s.Config(s.Seed), sim.RunOptions{Scenario: "filtered-fanout"})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	for _, v := range sum.Violations {
		t.Errorf("violation %s: %s", v.Invariant, v.Detail)
	}
	if len(sum.Groups) != 3 || sum.Lost != 0 || sum.Coverage["drop-no-match"] == 0 {
		t.Fatalf("groups %+v, lost %d, collisions acked %d: want three groups, nothing lost, the BB messages acked by billing unconsumed",
			sum.Groups, sum.Lost, sum.Coverage["drop-no-match"])
	}
	var produced int64
	for _, g := range sum.Groups {
		if g.Topic != "orders" || g.Produced != sum.Groups[0].Produced || g.Acked+g.Dropped != g.Produced || g.Acked == 0 || g.Dropped == 0 || g.EndToEnd.Count == 0 {
			t.Errorf("group %+v: want every message of orders, some acked, some not subscribed to, latencies measured", g)
		}
		produced += g.Produced
	}
	if produced != sum.Produced || sum.DroppedByPolicy["no-match"] != sum.Dropped {
		t.Errorf("produced %d over the groups, %d in all; dropped %v", produced, sum.Produced, sum.DroppedByPolicy)
	}
}
