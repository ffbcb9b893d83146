//go:build invariants

package pop

import (
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// Under the invariants tag a broken rule panics where it is broken.
func TestAssertionsFire(t *testing.T) {
	res := &PopResult{Messages: []PoppedMessage{{Lease: 1, Deadline: clock.Epoch, Handle: model.ReceiptHandle{PopTime: clock.Epoch.Millis(), InvisibleTime: 1000}}},
		Stages: []PopStage{{Count: 1}}}
	wantPopResultPanic(t, res, "deadline", "a pop result whose deadline contradicts its handle passed")
}

// Under the invariants tag a popped message whose handle names another
// stage than the one that read it panics (the offset-info headers, formatted
// from the stages, would contradict the handles).
func TestStageAssertionFires(t *testing.T) {
	h := model.ReceiptHandle{PopTime: clock.Epoch.Millis(), InvisibleTime: 1000, QueueID: 2, CkQueueOffset: 7, QueueOffset: 8}
	res := &PopResult{Messages: []PoppedMessage{{Lease: 1, Deadline: clock.FromMillis(h.NextVisibleTime()), Handle: h, Message: model.Message{Topic: "t"}, RealTopic: "t"}},
		Stages: []PopStage{{QueueID: 2, StartOffset: 8, Count: 1}}}
	wantPopResultPanic(t, res, "handle", "a message whose handle names another start offset than its stage passed")
}

// Under the invariants tag a popped retry message whose real topic is not
// its handle's panics.
func TestRealTopicAssertionFires(t *testing.T) {
	h := model.ReceiptHandle{PopTime: clock.Epoch.Millis(), InvisibleTime: 1000, RetryFlag: model.RetryTopicV1Type}
	res := &PopResult{Messages: []PoppedMessage{{Lease: 1, Deadline: clock.FromMillis(h.NextVisibleTime()), Handle: h, Message: model.Message{Topic: "t"}, RealTopic: "t"}},
		Stages: []PopStage{{RetryFlag: h.RetryFlag, Count: 1}}}
	wantPopResultPanic(t, res, "real topic", "a retry message whose real topic is its shown topic passed")
}

// wantPopResultPanic checks res, whose one message breaks the rule named
// rule, fails assertPopResult for group "g" with that rule's message.
func wantPopResultPanic(t *testing.T, res *PopResult, rule, passed string) {
	t.Helper()
	b, _ := New(DefaultConfig())
	b.lease.last = 1
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "pop: invariant: pop result message 0: "+rule) {
			t.Fatalf("recovered %q, want the %s rule", msg, rule)
		}
	}()
	b.assertPopResult(res, 0, "g")
	t.Fatal(passed)
}
