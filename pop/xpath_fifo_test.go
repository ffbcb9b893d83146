package pop_test

// The cross-path test of orderly (FIFO) POP: the same random sequences of
// orderly pops of one queue, acks, batch acks, renewals, time and the
// orderly timers, on a KV broker and a checkpoint broker. The OrderInfo
// table is shared by both paths upstream, so every answer must be
// identical, lease ids included. What the paths really do differently is
// kept out and pinned by testdata/script/xpath_fifo.txt: all-queue pops
// (the scan's first queue: the request count against randomQ), lock
// contention (group@topic against one queue's lock) and the FS in-flight
// counter (State, not compared here).

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

func TestCrossPathFIFO(t *testing.T) {
	for seed := uint64(1); seed <= 150; seed++ {
		if msg := runXFifo(seed, 150); msg != "" {
			t.Fatal(msg)
		}
	}
}

func runXFifo(seed uint64, nops int) string {
	r := rand.New(rand.NewPCG(seed, 0x78706669666f))
	kvc, fsc := pop.KVConfig(), pop.DefaultConfig()
	fsc.Seed = seed
	notify := r.IntN(4) != 0
	kvc.EnableNotifyAfterPopOrderLockRelease, fsc.EnableNotifyAfterPopOrderLockRelease = notify, notify
	var bs [2]*pop.Broker
	for i, c := range []pop.Config{kvc, fsc} {
		b, err := pop.New(c)
		if err != nil {
			return err.Error()
		}
		if err := b.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: 3, WriteQueueNums: 3}); err != nil {
			return err.Error()
		}
		if err := b.CreateGroup(pop.DefaultGroup("g")); err != nil {
			return err.Error()
		}
		bs[i] = b
	}
	if !bs[0].OrderIdle() || !bs[1].OrderIdle() {
		return "a new broker is not OrderIdle"
	}
	now := clock.Epoch
	var handles []model.ReceiptHandle
	var log []string
	fail := func(what string, kv, fs any) string {
		if d := diff(fs, kv); d != "" {
			return fmt.Sprintf("seed %d: %s differs (-fs +kv):\n%s\nops:\n  %s", seed, what, d, strings.Join(log, "\n  "))
		}
		return ""
	}
	for i := 0; i < nops; i++ {
		var got [2]any
		what := ""
		switch k := r.IntN(10); {
		case k < 2:
			q := int32(r.IntN(3))
			what = fmt.Sprintf("put q=%d", q)
			for j := range bs {
				got[j] = bs[j].Put(now, &model.Message{Topic: "t", QueueID: q, UniqKey: fmt.Sprintf("m%d", i)})
			}
		case k < 4:
			req := pop.PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: int32(r.IntN(3)), MaxMsgNums: int32(1 + r.IntN(4)),
				InvisibleTime: clock.MillisDuration([]int64{100, 1000, 5000}[r.IntN(3)]), Order: true, AttemptID: []string{"", "a", "b"}[r.IntN(3)]}
			what = fmt.Sprintf("pop %+v", req)
			for j := range bs {
				var res pop.PopResult
				bs[j].Pop(now, &req, &res)
				if j == 0 {
					for _, m := range res.Messages {
						handles = append(handles, m.Handle)
					}
				}
				res.Remark = ""
				got[j] = res
			}
		case k < 6 && len(handles) > 0:
			h := handles[r.IntN(len(handles))]
			what = fmt.Sprintf("ack %s", h.String())
			for j := range bs {
				req := pop.NewAckRequest("g", "t", &h)
				res := bs[j].Ack(now, &req)
				res.Remark = ""
				got[j] = res
			}
		case k < 7 && len(handles) > 0:
			h := handles[r.IntN(len(handles))]
			inv := clock.MillisDuration([]int64{0, 500, 3000}[r.IntN(3)])
			what = fmt.Sprintf("change %s by %v", h.String(), inv)
			for j := range bs {
				req := pop.NewChangeInvisibleTimeRequest("g", "t", &h, inv)
				res := bs[j].ChangeInvisibleTime(now, &req)
				if j == 0 && res.Code == model.Success && res.Handle.IsOrder() {
					handles = append(handles, res.Handle) // a zero-header answer's handle is no orderly handle
				}
				got[j] = res
			}
		case k < 8 && len(handles) > 0:
			h := handles[r.IntN(len(handles))]
			a := pop.BatchAck{ConsumerGroup: "g", Topic: "t", StartOffset: h.CkQueueOffset, QueueID: h.QueueID, ReviveQueueID: h.ReviveQueueID,
				PopTime: h.PopTime, InvisibleTime: h.InvisibleTime}
			a.SetBit(int(h.QueueOffset - h.CkQueueOffset))
			a.SetBit(int(h.QueueOffset - h.CkQueueOffset + 1))
			what = fmt.Sprintf("batch ack %+v", a)
			for j := range bs {
				var res pop.BatchAckResult
				bs[j].BatchAckMessages(now, []pop.BatchAck{a}, &res)
				res.Remark = ""
				got[j] = res
			}
		case k < 9:
			what = "order tick"
			for j := range bs {
				got[j] = bs[j].OrderTick(now)
			}
		default:
			d := clock.MillisDuration([]int64{1, 50, 700, 3000}[r.IntN(4)])
			what = fmt.Sprintf("advance %v", d)
			now = now.Add(d)
			continue
		}
		log = append(log, what)
		if msg := fail(what, got[0], got[1]); msg != "" {
			return msg
		}
		if msg := fail("order state", bs[0].State().Order, bs[1].State().Order); msg != "" {
			return msg
		}
		if msg := orderIdleHolds(bs, what); msg != "" {
			return fmt.Sprintf("seed %d: %s", seed, msg)
		}
	}
	return ""
}

// orderIdleHolds checks OrderIdle after op on both paths: a broker with
// FIFO queues in its order state is not idle, and an idle one has no
// OrderTick.
func orderIdleHolds(bs [2]*pop.Broker, op string) string {
	for j, b := range bs {
		if n := len(b.State().Order.Queues); n > 0 && b.OrderIdle() {
			return fmt.Sprintf("after %s, broker %d: idle with %d FIFO queues", op, j, n)
		}
		if _, ok := b.NextOrderTick(); ok && b.OrderIdle() {
			return fmt.Sprintf("after %s, broker %d: idle with an OrderTick", op, j)
		}
	}
	return ""
}
