package proxy

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// TestSubscriptionFollowsEachReceive: the proxy keeps the latest
// receive's subscription instead of rebuilding and re-storing it, yet the
// result filter must use, for each group, what that group's latest
// receive subscribed to, whatever other groups and expressions came in
// between.
func TestSubscriptionFollowsEachReceive(t *testing.T) {
	w := newWorld()
	if _, err := w.do("setup", args{}); err != nil {
		t.Fatal(err)
	}
	receive := func(group, expr string) {
		t.Helper()
		if _, st := w.px.PopRequest(w.now, &ReceiveRequest{ClientID: "c", Group: group, Topic: "t", Expression: expr, BatchSize: 1,
			InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second}); !st.IsOK() {
			t.Fatal(st)
		}
	}
	// kept reports whether group's result filter keeps a message tagged tag.
	kept := func(group, tag string) bool {
		var res ReceiveResult
		res.Pop.Status = pop.PopFound
		res.Pop.Messages = []pop.PoppedMessage{{Message: model.Message{Topic: "t", Tags: tag}}}
		w.px.Filter(w.now, group, 17, &res)
		return len(res.Pop.Messages) == 1
	}
	steps := []struct {
		group, expr string
		want        map[string][2]bool // group -> kept(a), kept(b)
	}{
		{"g", "a", map[string][2]bool{"g": {true, false}}},
		{"g", "a", map[string][2]bool{"g": {true, false}}},
		{"h", "b", map[string][2]bool{"g": {true, false}, "h": {false, true}}},
		{"g", "b", map[string][2]bool{"g": {false, true}, "h": {false, true}}},
		{"h", "b", map[string][2]bool{"g": {false, true}, "h": {false, true}}},
		{"h", "*", map[string][2]bool{"g": {false, true}, "h": {true, true}}},
		{"g", "*", map[string][2]bool{"g": {true, true}, "h": {true, true}}},
		{"g", "a", map[string][2]bool{"g": {true, false}, "h": {true, true}}},
	}
	for i, s := range steps {
		receive(s.group, s.expr)
		for g, want := range s.want {
			if got := [2]bool{kept(g, "a"), kept(g, "b")}; got != want {
				t.Fatalf("step %d (%s %q): group %s keeps a, b = %v, want %v", i, s.group, s.expr, g, got, want)
			}
		}
	}
}
