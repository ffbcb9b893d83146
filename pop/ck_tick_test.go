package pop

import (
	"math/rand/v2"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// nextService's remembered answer is the one asking every service gives,
// after every put, pop, ack and checkpoint tick of random runs on the
// checkpoint path, with and without the buffer merge (revive rounds that
// find CKs, acks and nothing, retries, timers). It fails when
// reviveChanged forgets only the service's own next step (checked).
func TestNextServiceIsScan(t *testing.T) {
	for seed := range uint64(6) {
		cfg := DefaultConfig()
		cfg.EnablePopBufferMerge = seed%2 == 0
		cfg.ReviveQueueNum = 1 + int32(seed%4)
		runServiceWalk(t, cfg, seed)
	}
}

// runServiceWalk drives one random run and checks nextService after each
// step.
func runServiceWalk(t *testing.T, cfg Config, seed uint64) {
	t.Helper()
	br := newTopicGroupBroker(t, cfg)
	r := rand.New(rand.NewPCG(seed, 35))
	now := clock.Epoch
	var held []model.ReceiptHandle
	var res PopResult
	check := func(step int, op string) {
		s, at := br.nextService()
		w, wat := br.scanServices()
		if s != w || at != wat {
			t.Fatalf("seed %d step %d (%s): nextService %p at %d, asking every service %p at %d", seed, step, op, s, at, w, wat)
		}
	}
	for step := range 3000 {
		now = now.Add(clock.Duration(r.IntN(400)) * clock.Millisecond)
		switch k := r.IntN(10); {
		case k < 3:
			m := model.Message{Topic: "t", QueueID: int32(r.IntN(2))}
			br.Put(now, &m)
			check(step, "put")
		case k < 5:
			req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1 + int32(r.IntN(4)),
				InvisibleTime: clock.Duration(5+r.IntN(20)) * clock.Second}
			br.Pop(now, &req, &res)
			for i := range res.Messages {
				held = append(held, res.Messages[i].Handle)
			}
			check(step, "pop")
		case k < 7 && len(held) > 0:
			i := r.IntN(len(held))
			a := NewAckRequest("g", "t", &held[i])
			br.Ack(now, &a)
			held = append(held[:i], held[i+1:]...)
			check(step, "ack")
		default:
			for tick, ok := br.NextCheckpointTick(); ok && tick <= now; tick, ok = br.NextCheckpointTick() {
				br.CheckpointTick(tick)
				check(step, "tick")
			}
		}
	}
}

// newTopicGroupBroker is a broker of cfg with topic "t" of two queues and
// group "g" (DefaultGroup).
func newTopicGroupBroker(t *testing.T, cfg Config) *Broker {
	t.Helper()
	br, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		t.Fatal(err)
	}
	if err := br.CreateGroup(DefaultGroup("g")); err != nil {
		t.Fatal(err)
	}
	return br
}
