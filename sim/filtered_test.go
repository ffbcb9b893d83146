package sim

import (
	"testing"

	"popsim/model"
)

// A subscription that does not accept every produced tag: the messages it
// does not match are owed to no one. The simulator settles each as a drop
// r=no-match naming the group when it is stored, the broker never hands
// one out, and the run settles with no violation, for the pop-push and
// simple consumers (the Pull baseline refuses such subscriptions).
func TestUnsubscribedMessagesAreOwedToNoOne(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple} {
		cfg := tinyConfig(kind)
		cfg.Producers[0].Arrivals = arrivals("backlog(300)")
		cfg.Producers[0].Tags = tags("tags(A:1,B:1,C:1)")
		cfg.Consumers[0].Expression = "A || C"
		r := runKeep(t, cfg)
		noViolations(t, r)
		unowed := map[model.MsgID]bool{}
		for _, e := range only(r, model.EvDrop) {
			if e.Reason == model.RNoMatch && e.Group == "g" {
				unowed[e.Msg] = true
			}
		}
		for _, e := range only(r, model.EvDeliver) {
			if unowed[e.Msg] {
				t.Fatalf("%s: message %d delivered though the group does not subscribe to it", kind, e.Msg)
			}
		}
		s := r.Summary
		if n := int64(len(unowed)); n < 70 || n > 130 || s.DroppedByPolicy["no-match"] != n || s.Acked+n != s.Produced {
			t.Fatalf("%s: %d messages owed to no one (want about 100), dropped %v, acked %d of %d", kind, n, s.DroppedByPolicy, s.Acked, s.Produced)
		}
	}
}
