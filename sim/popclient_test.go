package sim

import (
	"strings"
	"testing"

	"popsim/model"
	"popsim/pop"
)

// TestAckRequestIsNewAckRequest: the ack a POP client writes for its held
// message is pop.NewAckRequest's, for every retry flag (an unknown one
// too), a message shown under its group's topic or another (a leaked
// retry name), twice each, so that the group's kept names are read back;
// it is written over a request with every field set (a recycled ack's).
func TestAckRequestIsNewAckRequest(t *testing.T) {
	g := &group{name: "g", topic: "t"}
	c := &consumer{g: g}
	topics := []string{strings.Clone("t"), "u", model.BuildPopRetryTopicV1("t", "g"), model.BuildPopRetryTopicV2("t", "g")}
	for round := range 2 {
		for _, flag := range []model.RetryType{model.NormalTopic, model.RetryTopicV1Type, model.RetryTopicV2Type, 3} {
			for _, topic := range topics {
				h := &popHeld{held: held{c: c, msg: &model.Message{Topic: topic}}}
				h.handle = model.ReceiptHandle{PopTime: 5, InvisibleTime: 60000, RetryFlag: flag, BrokerName: "b", QueueID: 3, QueueOffset: 42, CommitLogOffset: -1}
				got := pop.AckRequest{ClientID: "c", ConsumerGroup: "x", Topic: "y", QueueID: 9, Offset: 7,
					Handle: model.ReceiptHandle{CkQueueOffset: 1, PopTime: 2, InvisibleTime: 3, ReviveQueueID: 4, RetryFlag: 2, BrokerName: "z", QueueID: 5, QueueOffset: 6, CommitLogOffset: 7}}
				h.ackRequest(&got)
				if want := pop.NewAckRequest(g.name, topic, &h.handle); got != want {
					t.Fatalf("round %d, flag %d, topic %q: got %+v, want %+v", round, flag, topic, got, want)
				}
			}
		}
	}
	if g.retry[0] != model.BuildPopRetryTopicV1("t", "g") || g.retry[1] != model.BuildPopRetryTopicV2("t", "g") {
		t.Fatalf("kept names %q, want the group's V1 and V2 retry topics", g.retry)
	}
}

// TestLivesIn: a popped message lives in the topic its broker filled in,
// else in a retry topic it was shown under, else in the real topic its
// handle names for the topic it was shown under.
func TestLivesIn(t *testing.T) {
	v1 := model.BuildPopRetryTopicV1("t", "g")
	for _, c := range []struct {
		real, shown string
		flag        model.RetryType
		want        string
	}{
		{"x", "t", model.RetryTopicV1Type, "x"},
		{"", v1, model.RetryTopicV1Type, v1},
		{"", "t", model.RetryTopicV1Type, v1},
		{"", "t", model.RetryTopicV2Type, model.BuildPopRetryTopicV2("t", "g")},
		{"", "t", model.NormalTopic, "t"},
	} {
		m := &pop.PoppedMessage{RealTopic: c.real, Message: model.Message{Topic: c.shown}, Handle: model.ReceiptHandle{RetryFlag: c.flag}}
		if got := livesIn(m, "g"); got != c.want {
			t.Fatalf("livesIn(real %q, shown %q, flag %d) = %q, want %q", c.real, c.shown, c.flag, got, c.want)
		}
	}
}

// TestNewAckWritesAllButItsRequest: a recycled ack, which keeps every
// field of its last use, comes back from takeAck and fillAck (sendAck's
// first steps) with every field but its request written for its new
// message, on one broker and on the second of two.
func TestNewAckWritesAllButItsRequest(t *testing.T) {
	for _, brokers := range []int32{1, 2} {
		s := &sim{rt: newRoute(brokers, nil)}
		old := &ackReq{reqBase: reqBase{c: &consumer{}, epoch: 9, broker: 1, loss: lossPop, reply: true, done: true, reported: true, timer: &task{}, timerSeq: 4},
			req: pop.AckRequest{ClientID: "c", ConsumerGroup: "g"}, msg: 1, lease: 2, deliveredAt: 3}
		old.recycle(s)
		c := &consumer{epoch: 5}
		h := &popHeld{held: held{c: c, msg: &model.Message{ID: 11}, deliveredAt: 13}}
		handle := &model.ReceiptHandle{BrokerName: s.rt.names[brokers-1]}
		r := s.takeAck()
		if r != old {
			t.Fatalf("%d brokers: takeAck did not reuse the recycled ack", brokers)
		}
		s.fillAck(r, h, handle, 12)
		want := ackReq{reqBase: reqBase{c: c, epoch: 5, broker: brokers - 1, loss: lossAck}, req: old.req, msg: 11, lease: 12, deliveredAt: 13}
		if *r != want {
			t.Fatalf("%d brokers: the filled ack = %+v, want %+v", brokers, *r, want)
		}
	}
}
