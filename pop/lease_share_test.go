package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// Two brokers sharing lease ids grant 1, 2, 3, ... between them, and each
// keeps its invariants (every live lease at most the shared last id).
func TestShareLeaseIDs(t *testing.T) {
	mk := func(name string) *Broker {
		cfg := DefaultConfig()
		cfg.BrokerName = name
		return testBroker(t, cfg, 1)
	}
	a, b := mk("broker-a"), mk("broker-b")
	if err := b.ShareLeaseIDs(a); err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch.Add(clock.Second)
	var got []model.LeaseID
	for i, x := range []*Broker{a, b, b, a} {
		m := &model.Message{Topic: "t", QueueID: 0, UniqKey: string(rune('a' + i))}
		if r := x.Put(now, m); r.Code != model.Success {
			t.Fatalf("put: %v", r.Code)
		}
		var res PopResult
		x.Pop(now, &PopRequest{ClientID: "c", ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second, BornTime: now, InitMode: InitModeMin}, &res)
		if len(res.Messages) == 0 {
			t.Fatalf("pop %d: %+v", i, res)
		}
		for _, pm := range res.Messages {
			got = append(got, pm.Lease)
		}
		if err := x.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	want := []model.LeaseID{1, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("leases %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("leases %v, want %v", got, want)
		}
	}
	if err := a.ShareLeaseIDs(b); err == nil {
		t.Fatal("ShareLeaseIDs after granting leases: no error")
	}
}

// testBroker is a broker of cfg with topic t of the given queues and
// group g with RocketMQ's defaults.
func testBroker(t *testing.T, cfg Config, queues int32) *Broker {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: queues, WriteQueueNums: queues}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateGroup(DefaultGroup("g")); err != nil {
		t.Fatal(err)
	}
	return b
}
