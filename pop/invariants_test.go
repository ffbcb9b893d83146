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
	b, _ := New(DefaultConfig())
	res := &PopResult{Messages: []PoppedMessage{{Lease: 1, Deadline: clock.Epoch, Handle: model.ReceiptHandle{PopTime: clock.Epoch.Millis(), InvisibleTime: 1000}}}}
	b.lease.last = 1
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "pop: invariant: pop result message 0: deadline") {
			t.Fatalf("recovered %q, want the deadline rule", msg)
		}
	}()
	b.assertPopResult(res, 0, "g")
	t.Fatal("a pop result whose deadline contradicts its handle passed")
}

// Under the invariants tag a popped retry message whose real topic is not
// its handle's panics.
func TestRealTopicAssertionFires(t *testing.T) {
	b, _ := New(DefaultConfig())
	h := model.ReceiptHandle{PopTime: clock.Epoch.Millis(), InvisibleTime: 1000, RetryFlag: model.RetryTopicV1Type}
	res := &PopResult{Messages: []PoppedMessage{{Lease: 1, Deadline: clock.FromMillis(h.NextVisibleTime()), Handle: h, Message: model.Message{Topic: "t"}, RealTopic: "t"}}}
	b.lease.last = 1
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "pop: invariant: pop result message 0: real topic") {
			t.Fatalf("recovered %q, want the real topic rule", msg)
		}
	}()
	b.assertPopResult(res, 0, "g")
	t.Fatal("a retry message whose real topic is its shown topic passed")
}
