package sqs

import (
	"testing"

	"popsim/clock"
)

func TestSmoke(t *testing.T) {
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch
	if r := s.CreateQueue(now, "dlq", nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := s.CreateQueue(now, "q", map[string]string{"VisibilityTimeout": "10", "RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}`}); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.SendMessage(now, &SendMessageRequest{Queue: "q", MsgID: 1, MessageBody: []byte("a")})
	for i := 0; i < 3; i++ {
		r := s.ReceiveMessage(now, &ReceiveMessageRequest{Queue: "q"})
		t.Logf("%v %+v", r.Messages, r.Events)
		now = now.Add(11 * clock.Second)
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	r := s.ReceiveMessage(now, &ReceiveMessageRequest{Queue: "dlq"})
	t.Logf("%v %+v", r.Messages, r.Events)
	if len(r.Messages) != 1 || r.Messages[0].ReceiveCount != 3 {
		t.Fatalf("dlq: %+v", r)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
