package pop

import (
	"testing"

	"pgregory.net/rapid"
)

// TestReviveQueueMatchesTopic checks reviveQueue's remembered queues
// (reviveQs) against the revive topic itself, the topic made by the user
// with any number of queues or by the engine on demand: a queue id a
// store accepts gets the topic's queue, the topic holding at least
// reviveQueueNum and id+1 queues; any other gets nil.
func TestReviveQueueMatchesTopic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := DefaultConfig()
		cfg.ReviveQueueNum = rapid.Int32Range(1, 20).Draw(rt, "reviveQueueNum")
		b, err := New(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		for range rapid.IntRange(1, 30).Draw(rt, "ops") {
			if rapid.IntRange(0, 4).Draw(rt, "userTopic") == 0 {
				n := rapid.Int32Range(1, 40).Draw(rt, "userQueues")
				if err := b.CreateTopic(TopicConfig{Name: b.reviveTopicName(), ReadQueueNums: n, WriteQueueNums: n}); err != nil {
					rt.Fatal(err)
				}
				continue
			}
			rq := rapid.SampledFrom([]int32{-1, 0, 1, 7, 8, 19, 30, 65534, 65535, 70000}).Draw(rt, "rq")
			q := b.reviveQueue(rq)
			if rq < 0 || rq >= 65535 {
				if q != nil {
					rt.Fatalf("reviveQueue(%d) = a queue, want nil", rq)
				}
				continue
			}
			qs := b.reviveT.queues
			if int32(len(qs)) < max(cfg.ReviveQueueNum, rq+1) || q == nil || q != qs[rq] {
				rt.Fatalf("reviveQueue(%d): not the topic's queue (%d queues)", rq, len(qs))
			}
		}
	})
}
