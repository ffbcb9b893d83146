package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

func TestSmokePopAckRevive(t *testing.T) {
	b, err := New(KVConfig())
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

// The simulator's message identity survives every copy the broker makes:
// the stored message, a pop's presentation, the revive's retry copy, a
// pull's copy and the retry copy's own pop.
func TestMsgIDSurvivesEveryCopy(t *testing.T) {
	b, err := New(KVConfig())
	if err != nil {
		t.Fatal(err)
	}
	must(t, b.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: 1, WriteQueueNums: 1}))
	must(t, b.CreateGroup(DefaultGroup("g")))
	now := clock.Epoch
	b.Put(now, &model.Message{ID: 7, Topic: "t", UniqKey: "m"})
	var res PopResult
	req := &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: clock.Second}
	b.Pop(now, req, &res)
	if len(res.Messages) != 1 || res.Messages[0].Message.ID != 7 {
		t.Fatalf("popped %+v", res.Messages)
	}
	rv := b.Revive(now.Add(2 * clock.Second))
	if len(rv.Revivals) != 1 || rv.Revivals[0].Msg != 7 || rv.Revivals[0].Outcome != Revived {
		t.Fatalf("revive %+v", rv.Revivals)
	}
	cp, ok := b.Message(rv.Revivals[0].Copy.Topic, 0, rv.Revivals[0].Copy.Offset)
	if !ok || cp.ID != 7 {
		t.Fatalf("retry copy %+v", cp)
	}
	var pr PullResult
	must(t, b.CreateGroup(DefaultGroup("h"))) // a pull by g would move g's pop position too
	b.Pull(now, &PullRequest{ConsumerGroup: "h", Topic: cp.Topic, MaxMsgNums: 1}, &pr)
	if len(pr.Messages) != 1 || pr.Messages[0].ID != 7 {
		t.Fatalf("pulled %+v", pr)
	}
	// The retry copy comes back on a preferRetry turn (every 5th request).
	for i := 0; i < 5; i++ {
		b.Pop(now.Add(3*clock.Second), req, &res)
		if len(res.Messages) == 1 {
			break
		}
	}
	if len(res.Messages) != 1 || res.Messages[0].Message.ID != 7 || res.Messages[0].Message.Topic != "t" || res.Messages[0].Message.ReconsumeTimes != 1 {
		t.Fatalf("retry pop %+v", res.Messages)
	}
}
