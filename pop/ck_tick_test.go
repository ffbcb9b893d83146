package pop

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

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

// nextScan's remembered answer (workMemo) is nextBufferWork's, asked
// after every put, pop, ack, renewal, checkpoint tick, restart and
// configuration change of random checkpoint-path runs: CKs buffered and
// merged, written at once, refused by a timer of a short reach, mock CKs
// of reads that find nothing the filter takes, acked in
// and out of the buffer, with the timer switched off and on between calls
// (as a script's config does, which forgets the answer). It fails when a
// change to the buffer (an ack merged, a mock CK enqueued) does not
// forget the answer (checked).
func TestNextScanIsAsked(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := DefaultConfig()
		cfg.EnablePopBufferMerge = rapid.Bool().Draw(rt, "merge")
		cfg.EnablePopBatchAck = rapid.Bool().Draw(rt, "batchAck")
		cfg.TimerMaxDelaySec = rapid.SampledFrom([]int64{259200, 8, 20}).Draw(rt, "maxDelay")
		cfg.PopCkStayBufferTime = rapid.Int64Range(2000, 12000).Draw(rt, "stay")
		br := newTopicGroupBroker(t, cfg)
		now := clock.Epoch
		var held []model.ReceiptHandle
		var res PopResult
		steps := rapid.IntRange(1, 400).Draw(rt, "steps")
		for step := range steps {
			now = now.Add(clock.Duration(rapid.IntRange(0, 700).Draw(rt, "dt")) * clock.Millisecond)
			switch k := rapid.IntRange(0, 19).Draw(rt, "op"); {
			case k < 5:
				m := model.Message{Topic: "t", QueueID: int32(rapid.IntRange(0, 1).Draw(rt, "qid")), Tags: rapid.SampledFrom([]string{"A", "B"}).Draw(rt, "tag")}
				br.Put(now, &m)
			case k < 10:
				req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: int32(rapid.IntRange(1, 4).Draw(rt, "n")),
					InvisibleTime: clock.Duration(rapid.IntRange(2, 30).Draw(rt, "invisible")) * clock.Second}
				if rapid.Bool().Draw(rt, "filter") { // a read that skips B finds nothing: a mock CK
					req.ExpressionType, req.Expression = "TAG", "A"
				}
				br.Pop(now, &req, &res)
				for i := range res.Messages {
					held = append(held, res.Messages[i].Handle)
				}
			case k < 14 && len(held) > 0:
				i := rapid.IntRange(0, len(held)-1).Draw(rt, "ack")
				a := NewAckRequest("g", "t", &held[i])
				br.Ack(now, &a)
				held = append(held[:i], held[i+1:]...)
			case k < 15 && len(held) > 0:
				i := rapid.IntRange(0, len(held)-1).Draw(rt, "renew")
				c := NewChangeInvisibleTimeRequest("g", "t", &held[i], clock.Duration(rapid.IntRange(2, 30).Draw(rt, "renewal"))*clock.Second)
				if r := br.ChangeInvisibleTime(now, &c); r.Code == model.Success {
					held[i] = r.Handle
				}
			case k < 16:
				br.Restart(now)
				held = held[:0]
			case k < 17:
				br.cfg.TimerWheelEnable = !br.cfg.TimerWheelEnable
				br.buf.changed() // as the script's config does
			default:
				for tick, ok := br.NextCheckpointTick(); ok && tick <= now; tick, ok = br.NextCheckpointTick() {
					br.CheckpointTick(tick)
					checkNextScan(rt, br, step, "tick")
				}
			}
			checkNextScan(rt, br, step, "op")
		}
	})
}

// checkNextScan fails rt when nextScan differs from nextBufferWork.
func checkNextScan(rt *rapid.T, br *Broker, step int, op string) {
	if !br.started {
		return
	}
	from := scanGrid(max(br.buf.lastScan+BufferScanInterval, br.lastNow))
	at, has := br.nextScan()
	wat, whas := br.nextBufferWork(from)
	if has != whas || has && at != wat {
		rt.Fatalf("step %d (%s): next scan from %d remembered at %d (%v), asked %d (%v)", step, op, from, at, has, wat, whas)
	}
}
