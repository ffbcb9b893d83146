package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

func TestSmokePopAckRevive(t *testing.T) {
	b, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	must(t, b.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: 2, WriteQueueNums: 2}))
	must(t, b.CreateGroup(DefaultGroup("g")))
	now := clock.Epoch
	for i := 0; i < 4; i++ {
		b.Put(now, &model.Message{Topic: "t", QueueID: int32(i % 2), UniqKey: string(rune('a' + i))})
	}
	var res PopResult
	b.Pop(now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}, &res)
	if res.Code != model.Success || len(res.Messages) != 4 {
		t.Fatalf("pop: %+v", res)
	}
	ack := NewAckRequest("g", res.Messages[0].Message.Topic, &res.Messages[0].Handle)
	a := b.Ack(now, &ack)
	if a.Code != model.Success || a.Removed == 0 {
		t.Fatalf("ack: %+v", a)
	}
	if n := b.InFlightCount(); n != 3 {
		t.Fatalf("in flight %d", n)
	}
	rv := b.Revive(now.Add(61 * clock.Second))
	if len(rv.Revivals) != 3 || rv.Revivals[0].Outcome != Revived {
		t.Fatalf("revive: %+v", rv)
	}
	// retry messages come back on the first (preferRetry) turns of later requests
	got := 0
	for i := 0; i < 5 && got < 3; i++ {
		var r PopResult
		b.Pop(now.Add(62*clock.Second), &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}, &r)
		for _, p := range r.Messages {
			if m := p.Message; m.Topic != "t" || m.ReconsumeTimes != 1 || p.Handle.RetryFlag != model.RetryTopicV1Type {
				t.Fatalf("retry message %v handle %v", &m, p.Handle)
			}
		}
		got += len(r.Messages)
	}
	if got != 3 {
		t.Fatalf("got %d retry messages", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
