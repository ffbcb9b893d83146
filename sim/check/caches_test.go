package check

import "testing"

// The wakeup check's remembered lookups give what a fresh lookup gives:
// a group waiting on two topics finds each one's count (find and findMsg
// each remember the group's last topic), and a receive parked before its client moved
// to another group counts in the new group's (waitOf remembers the
// group the receive parked in).
func TestWakeupLookupsFollowTopicAndGroup(t *testing.T) {
	w := newWakeup(DefaultWakeupSlack)
	a, b := w.wait(waitKey{group: 0, topic: "a"}), w.wait(waitKey{group: 0, topic: "b"})
	if a == b {
		t.Fatal("one count for two topics")
	}
	for _, topic := range []string{"a", "b", "b", "a", "a", "b"} {
		want := map[string]*topicWait{"a": a, "b": b}[topic]
		if got := w.find(waitKey{group: 0, topic: topic}); got != want {
			t.Fatalf("find(group 0, %s) is another topic's count", topic)
		}
		if got := w.findMsg(waitKey{group: 0, topic: topic}); got != want {
			t.Fatalf("findMsg(group 0, %s) is another topic's count", topic)
		}
	}
	w.client(3).group = 0
	r := &pollReq{topic: "a", t: a, grp: 0}
	if w.waitOf(3, r) != a {
		t.Fatal("waitOf: not the count the receive parked in")
	}
	w.client(3).group = 1
	if got, want := w.waitOf(3, r), w.wait(waitKey{group: 1, topic: "a"}); got != want || got == a {
		t.Fatal("waitOf: a receive of a client that changed group still counts in its old group")
	}
}
