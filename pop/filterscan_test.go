package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A filtered read inspects at most 800 consume-queue entries
// (maxFilterMessageSize 16000 B over 20-byte entries): with 1000
// non-matching messages before the one that matches, the first pop reads
// 800 entries, finds nothing and moves the group's read position past
// them; the second reads on and finds the match at offset 1000. Both paths.
func TestFilteredReadScansAtMost800Entries(t *testing.T) {
	for _, kv := range []bool{true, false} {
		cfg := DefaultConfig()
		if kv {
			cfg = KVConfig()
		}
		b := testBroker(t, cfg, 1)
		now := clock.Epoch.Add(clock.Second)
		for i := 0; i <= 1000; i++ {
			tag := "B"
			if i == 1000 {
				tag = "A"
			}
			if r := b.Put(now, &model.Message{Topic: "t", Tags: tag, UniqKey: "m" + itoa(int64(i))}); r.Code != model.Success {
				t.Fatalf("put %d: %v", i, r.Code)
			}
		}
		pop := func() PopResult {
			var res PopResult
			b.Pop(now, &PopRequest{ClientID: "c", ConsumerGroup: "g", Topic: "t", QueueID: 0, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second,
				BornTime: now, InitMode: InitModeMin, ExpressionType: "TAG", Expression: "A"}, &res)
			return res
		}
		if r := pop(); len(r.Messages) != 0 {
			t.Fatalf("kv=%v: the first pop found %d messages (first at offset %d): want none within 800 entries", kv, len(r.Messages), r.Messages[0].Handle.QueueOffset)
		}
		if got := b.ConsumerOffsets("g", "t", 0); kv && got.Pull != 800 {
			t.Errorf("KV: after the first pop the pull offset is %d, want 800 (the read's next begin)", got.Pull)
		}
		r := pop()
		if len(r.Messages) != 1 || r.Messages[0].Handle.QueueOffset != 1000 {
			t.Fatalf("kv=%v: the second pop found %d messages, want the match at offset 1000", kv, len(r.Messages))
		}
	}
}
