package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
)

// TestSimpleReceiveReuseKeepsHeldCopies: a simple consumer reuses its last
// answered receive (newReceive), and the next pop writes into the same
// result storage; the messages it holds from the earlier answer
// (deliverOwned's copies) must keep their bodies and properties, and the
// reused request must look fresh (no messages: a loss traced before the
// pop runs counts none).
func TestSimpleReceiveReuseKeepsHeldCopies(t *testing.T) {
	b, err := pop.New(pop.KVConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateGroup(pop.DefaultGroup("g")); err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch
	put := func(key, body, prop string) {
		m := &model.Message{Topic: "t", UniqKey: key, Body: []byte(body)}
		if err := m.SetProperty("p", prop); err != nil {
			t.Fatal(err)
		}
		if r := b.Put(now, m); r.Code != model.Success {
			t.Fatalf("put: %+v", r)
		}
	}
	p := &simpleConsumer{c: &consumer{epoch: 3}, px: proxy.New(b, proxy.DefaultConfig())}
	req := pop.PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second, InitMode: pop.InitModeMin}
	var held []model.Message
	for i, body := range []string{"first body", "second"} {
		put(string(rune('a'+i)), body, body+"-prop")
		r := p.newReceive(17, 0)
		r.pop = req
		if len(r.res.Pop.Messages) != 0 || r.maxAttempts != 17 || r.done || r.parked || r.c != p.c || r.epoch != 3 || !r.reply || r.loss != lossPop {
			t.Fatalf("receive %d is not fresh: %d messages, %+v", i, len(r.res.Pop.Messages), r.reqBase)
		}
		b.Pop(now, &r.pop, &r.res.Pop)
		if len(r.res.Pop.Messages) != 1 {
			t.Fatalf("pop %d: %+v", i, r.res.Pop)
		}
		held = append(held, (&ownedHeld{m: r.res.Pop.Messages[0].Message}).m)
		p.spare = r
	}
	for i, want := range []string{"first body", "second"} {
		v, _ := held[i].Property("p")
		if string(held[i].Body) != want || v != want+"-prop" {
			t.Fatalf("held message %d: body %q property %q, want %q", i, held[i].Body, v, want)
		}
	}
}
