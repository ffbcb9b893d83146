package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"popsim/clock"
	"popsim/model"
)

// A message whose reconsumeTimes reached maxAttempts (the group's
// retryMaxTimes + 1 = 17) goes to %DLQ%group instead of the client, and the
// original is acked; one short of it is delivered on its last attempt.
func TestReceiveSendsExhaustedMessagesToTheDLQ(t *testing.T) {
	f := start(t, quickPolls)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	f.s.l.do(func(now clock.Time) {
		for i, rt := range []int32{17, 16} {
			m := model.Message{Topic: "orders", QueueID: 0, UniqKey: []string{"worn", "tired"}[i], Body: []byte("x"), ReconsumeTimes: rt}
			if r := f.s.l.b.Put(now, &m); r.Code != model.Success {
				t.Errorf("put: %v", r.Code)
			}
		}
	})
	st, msgs := f.receive("c1", wait, receiveReq(32, time.Minute, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	if len(msgs) != 1 || msgs[0].GetSystemProperties().GetMessageId() != "tired" || msgs[0].GetSystemProperties().GetDeliveryAttempt() != 17 {
		t.Fatalf("received %v, want only 'tired' on attempt 17", msgs)
	}
	state := f.s.State()
	var dlq int64 = -1
	for _, ts := range state.Topics {
		if ts.Config.Name == model.DLQTopic("billing") {
			dlq = ts.Queues[0].MaxOffset
		}
	}
	if dlq != 1 || f.s.Stats().Forwarded != 1 || f.leases() != 1 {
		t.Fatalf("DLQ holds %d, forwarded %d, leases %d: want 1, 1, 1 (the delivered one)", dlq, f.s.Stats().Forwarded, f.leases())
	}
}

// A restart drops the receives the broker had parked; their callers get
// an error at once instead of waiting out their poll.
func TestRestartAnswersParkedReceives(t *testing.T) {
	f := start(t, nil)
	parked := make(chan string, 1)
	f.s.l.do(func(clock.Time) { f.s.l.observe = func(e string) { parked <- e } })
	f.telemetry("c1", consumer("billing", 3*time.Second))
	done := make(chan *v2.Status, 1)
	go func() {
		ctx, cancel := context.WithTimeout(as(t, "c1"), 25*time.Second)
		defer cancel()
		stream, err := f.cli.ReceiveMessage(ctx, receiveReq(32, time.Minute, nil))
		if err != nil {
			done <- nil
			return
		}
		r, err := stream.Recv()
		if err != nil {
			done <- nil
			return
		}
		done <- r.GetStatus()
	}()
	select {
	case <-parked:
	case <-time.After(wait):
		t.Fatal("the receive never parked")
	}
	f.s.Restart()
	select {
	case st := <-done:
		wantCode(t, "parked receive after a restart", st, v2.Code_INTERNAL_SERVER_ERROR)
	case <-time.After(wait):
		t.Fatal("the parked receive was not answered")
	}
	if f.s.Stats().Restarts != 1 {
		t.Fatalf("restarts %d, want 1", f.s.Stats().Restarts)
	}
}

// Settings that cannot work are refused; the error says what is allowed.
func TestConfigRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Path = "fs" }, `want "checkpoint" (RocketMQ's default) or "kv"`},
		{func(c *Config) { c.Topics = nil }, "no topics"},
		{func(c *Config) { c.Topics = []TopicSpec{{Name: "a", Queues: 1}, {Name: "a", Queues: 2}} }, "listed twice"},
		{func(c *Config) { c.Topics = []TopicSpec{{Name: "%DLQ%g", Queues: 1}} }, "system topic"},
		{func(c *Config) { c.Groups = []string{"bad group"} }, "group name"},
		{func(c *Config) { c.Broker.PopPollingSize = -1 }, "popPollingSize"},
		{func(c *Config) { c.Faults.SendLoss = -0.1 }, "send_loss"},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
	}
	if ts, err := ParseTopics("orders:8, audit"); err != nil || len(ts) != 2 || ts[0] != (TopicSpec{"orders", 8}) || ts[1] != (TopicSpec{"audit", 4}) {
		t.Fatalf("ParseTopics: %v %v", ts, err)
	}
	if _, err := ParseTopics("orders:x"); err == nil {
		t.Fatal("ParseTopics accepted orders:x")
	}
}

// A receive that asks for auto-renew gets the proxy's default invisible
// time and is renewed ahead of its expiry; an ack with the handle the
// client was given then acks the latest renewed one.
func TestAutoRenewAndTheLatestHandle(t *testing.T) {
	f := start(t, func(c *Config) {
		quickPolls(c)
		c.Proxy.DefaultInvisibleTime = 20 * clock.Second
		c.Proxy.RenewAheadTime = 19900 * clock.Millisecond // due 100 ms after the receive
	})
	renewed := make(chan string, 8)
	f.s.l.do(func(clock.Time) {
		f.s.l.observe = func(e string) {
			if e == "auto-renew" {
				renewed <- e
			}
		}
	})
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	f.sendOne("p1", message("m1", "a"))
	req := receiveReq(1, time.Minute, nil)
	req.AutoRenew = true
	st, msgs := f.receive("c1", wait, req)
	wantCode(t, "receive", st, v2.Code_OK)
	m := msgs[0].GetSystemProperties()
	if h, _ := model.ParseReceiptHandle(m.GetReceiptHandle()); h.InvisibleTime != 20000 {
		t.Fatalf("invisible time %d ms, want the proxy's default 20000 for an auto-renewed receive", h.InvisibleTime)
	}
	select {
	case <-renewed:
	case <-time.After(wait):
		t.Fatal("no auto-renewal")
	}
	r, err := f.cli.AckMessage(as(t, "c1"), &v2.AckMessageRequest{Group: res("billing"), Topic: res("orders"),
		Entries: []*v2.AckMessageEntry{{MessageId: m.GetMessageId(), ReceiptHandle: m.GetReceiptHandle()}}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "ack with the first handle", r.GetStatus(), v2.Code_OK)
	if n := f.leases(); n != 0 {
		t.Fatalf("%d leases after the ack, want 0: the proxy acked a stale handle", n)
	}
}
