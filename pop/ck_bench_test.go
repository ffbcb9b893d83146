package pop_test

// Pop+ack on the checkpoint path beside the KV path, in one harness: each
// round pops 32 messages (60 s leases) over 4 queues, acks them in pop
// order, moves virtual time 1 ms and runs the path's periodic work as a
// driver does (KV: Revive every 500 ms and CleanupCache every 1 s;
// checkpoint: CheckpointTick at NextCheckpointTick). The checkpoint path's
// round includes its CK and ack writes, the timer, the buffer scans and
// the revive rounds that pair the acks. An op is one round; ns/msg and the
// broker's store writes per message are reported. Runs shorter than about
// 62 000 rounds (62 s of virtual time) end before the first CK is due:
// they measure the pops and acks only, without the timer deliveries and
// revive rounds of the steady state.
//
//	go test ./pop -run '^$' -bench CkPopAck32 -benchtime=200000x -count 3

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

func BenchmarkCkPopAck32(b *testing.B) {
	for _, c := range []struct {
		name      string
		kv, merge bool
	}{{"fs/merge=off", false, false}, {"fs/merge=on", false, true}, {"kv/cache=off", true, false}, {"kv/cache=on", true, true}} {
		b.Run(c.name, func(b *testing.B) { benchPopAck(b, c.kv, c.merge) })
	}
}

func benchPopAck(b *testing.B, kv, merge bool) {
	cfg := pop.DefaultConfig()
	if kv {
		cfg = pop.KVConfig()
	}
	cfg.EnablePopBufferMerge = merge
	br, err := pop.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	const queues, batch = 4, 32
	if err := br.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: queues, WriteQueueNums: queues}); err != nil {
		b.Fatal(err)
	}
	if err := br.CreateGroup(pop.DefaultGroup("g")); err != nil {
		b.Fatal(err)
	}
	now := clock.Epoch
	stock := func(n int) {
		msgs := make([]model.Message, n)
		for i := range msgs {
			msgs[i] = model.Message{Topic: "t", QueueID: int32(i % queues)}
			br.Put(now, &msgs[i])
		}
	}
	stock(4096 * batch)
	req := pop.PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: batch, InvisibleTime: 60 * clock.Second}
	var res pop.PopResult
	nextRevive, nextCleanup := now, now
	periodic := func() {
		if kv {
			if now >= nextRevive {
				br.Revive(now)
				nextRevive = now.Add(pop.ReviveIdleInterval * clock.Millisecond)
			}
			if now >= nextCleanup {
				br.CleanupCache(now)
				nextCleanup = now.Add(pop.CacheCleanupInterval * clock.Millisecond)
			}
			return
		}
		for {
			t, ok := br.NextCheckpointTick()
			if !ok || t > now {
				return
			}
			br.CheckpointTick(now)
		}
	}
	start := br.State().Stats
	b.ReportAllocs()
	b.ResetTimer()
	rounds := 0
	for b.Loop() {
		br.Pop(now, &req, &res)
		if len(res.Messages) != batch {
			b.StopTimer()
			stock(4096 * batch)
			b.StartTimer()
			continue
		}
		for i := range res.Messages {
			p := &res.Messages[i]
			a := pop.NewAckRequest("g", "t", &p.Handle)
			if r := br.Ack(now, &a); r.Code != model.Success {
				b.Fatalf("ack: %v", r.Code)
			}
		}
		now = now.Add(clock.Millisecond)
		periodic()
		rounds++
	}
	b.StopTimer()
	msgs := float64(rounds * batch)
	if msgs == 0 {
		return
	}
	st := br.State().Stats
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/msgs, "ns/msg")
	writes := (st.RecordPuts - start.RecordPuts) + (st.RecordDeletes - start.RecordDeletes) +
		(st.CkPuts - start.CkPuts) + (st.AckPuts - start.AckPuts) + (st.BatchAckPuts - start.BatchAckPuts) + (st.TimerDeliveries - start.TimerDeliveries)
	b.ReportMetric(float64(writes)/msgs, "writes/msg")
}
