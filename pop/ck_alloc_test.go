package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A pop and an ack of one message on the checkpoint path (buffer merge
// off: the CK and the ack are written to the revive topic at once) cost
// less than one allocation on average: the CK's merge key, the strings
// of its message and its ack's, its wrapper and ref and its merge-key
// entry come from blocks, not one object each (main before this had 5).
func TestCkPopAckAllocs(t *testing.T) {
	if invariants {
		t.Skip("the invariants build's checks allocate")
	}
	cfg := DefaultConfig()
	cfg.EnablePopBufferMerge = false
	br, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	if err := br.CreateGroup(DefaultGroup("g")); err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch
	const n = 3000
	msgs := make([]model.Message, n)
	for i := range msgs {
		msgs[i] = model.Message{Topic: "t"}
		br.Put(now, &msgs[i])
	}
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second}
	var res PopResult
	round := func() {
		now = now.Add(clock.Millisecond)
		br.Pop(now, &req, &res)
		if len(res.Messages) != 1 {
			t.Fatalf("popped %d", len(res.Messages))
		}
		a := NewAckRequest("g", "t", &res.Messages[0].Handle)
		if r := br.Ack(now, &a); r.Code != model.Success || r.Pending == 0 {
			t.Fatalf("ack: %v, pending %d", r.Code, r.Pending)
		}
	}
	for range 200 { // the first blocks, the tables' growth
		round()
	}
	got := testing.AllocsPerRun(2000, round)
	t.Logf("%.3f allocations per pop and ack", got)
	if got >= 1 { // AllocsPerRun's average is whole: below one reads 0
		t.Errorf("%.0f allocations per pop and ack, want fewer than one on average", got)
	}
}
