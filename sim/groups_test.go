package sim

import (
	"testing"

	"popsim/model"
)

// threeGroups is one topic consumed by three groups of different kinds:
// billing (pop-push, everything, slow), audit (simple, tag A only) and
// archive (pull, everything, fast).
func threeGroups() Config {
	return sharedTopic(200, "tags(A:1,B:1)",
		ConsumerSpec{Kind: PopPush, Group: "billing", Topic: "t", Threads: 2, Processing: dist("const(20ms)")},
		ConsumerSpec{Kind: Simple, Group: "audit", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "A"},
		ConsumerSpec{Kind: Pull, Group: "archive", Topic: "t", Threads: 2, Processing: dist("const(1ms)")})
}

// Several groups on one topic: each group consumes every message it
// subscribes to, on its own. Every message is owed once per group that
// subscribes to it, the ones a group does not subscribe to are dropped
// (no-match) for that group only, and the meter measures each (group,
// message) pair: the summary's counts are over pairs, and each group has
// its own row with its own latency.
func TestSeveralGroupsOnOneTopic(t *testing.T) {
	r := runKeep(t, threeGroups())
	noViolations(t, r)
	s := r.Summary
	delivered := map[string]map[model.MsgID]bool{}
	group := map[int32]string{}
	for _, e := range only(r, model.EvSubscribe, model.EvDeliver) {
		if e.Kind == model.EvSubscribe {
			group[e.Client] = e.Group
			continue
		}
		g := group[e.Client]
		if delivered[g] == nil {
			delivered[g] = map[model.MsgID]bool{}
		}
		delivered[g][e.Msg] = true
	}
	unowed := map[model.MsgID]bool{}
	for _, e := range only(r, model.EvDrop) {
		if e.Reason == model.RNoMatch {
			if e.Group != "audit" {
				t.Fatalf("message %d dropped as no-match for %s, which subscribes to everything", e.Msg, e.Group)
			}
			unowed[e.Msg] = true
		}
	}
	if len(delivered["billing"]) != 200 || len(delivered["archive"]) != 200 || len(delivered["audit"])+len(unowed) != 200 {
		t.Fatalf("delivered to billing %d, archive %d, audit %d (+%d no-match): want every message to every group that subscribes to it",
			len(delivered["billing"]), len(delivered["archive"]), len(delivered["audit"]), len(unowed))
	}
	for id := range unowed {
		if delivered["audit"][id] {
			t.Fatalf("message %d delivered to audit, which does not subscribe to it", id)
		}
	}
	n := int64(len(unowed))
	if s.Produced != 600 || s.Acked != 600-n || s.Dropped != n || s.DroppedByPolicy["no-match"] != n || n < 70 || n > 130 {
		t.Fatalf("produced %d, acked %d, dropped %v: want 600 (group, message) pairs, about 100 of them no-match", s.Produced, s.Acked, s.DroppedByPolicy)
	}
	if len(s.Groups) != 3 {
		t.Fatalf("%d group rows, want 3", len(s.Groups))
	}
	var e2e int64
	for i, want := range []struct {
		name            string
		produced, acked int64
	}{{"billing", 200, 200}, {"audit", 200, 200 - n}, {"archive", 200, 200}} {
		g := s.Groups[i]
		if g.Group != want.name || g.Topic != "t" || g.Produced != want.produced || g.Acked != want.acked || g.Lost != 0 {
			t.Errorf("row %d: %+v, want %s on t, %d produced, %d acked", i, g, want.name, want.produced, want.acked)
		}
		if g.EndToEnd.Count == 0 || g.EndToEnd.Count > g.Acked {
			t.Errorf("%s: %d latencies measured of %d acked", g.Group, g.EndToEnd.Count, g.Acked)
		}
		e2e += g.EndToEnd.Count
	}
	if e2e != s.EndToEnd.Count {
		t.Errorf("the groups measured %d latencies, the run %d", e2e, s.EndToEnd.Count)
	}
	// billing consumes 200 messages at 20 ms on 2 threads: its backlog
	// drains over 2 s; the others take 200 ms.
	if b, a := s.Groups[0].EndToEnd.P50, s.Groups[2].EndToEnd.P50; b < 5*a {
		t.Errorf("end-to-end p50: billing %d µs, archive %d µs: want each group measured on its own", b, a)
	}
}

// With one group the summary has no per-group rows.
func TestOneGroupHasNoGroupRows(t *testing.T) {
	r := runKeep(t, tinyConfig(PopPush))
	if r.Summary.Groups != nil {
		t.Fatalf("per-group rows %+v in a run with one group", r.Summary.Groups)
	}
}
