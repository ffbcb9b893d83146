package proxy

import (
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// A proxy in front of two brokers sends an ack and a renewal to the broker
// the receipt handle names, and refuses a second broker of the same name.
func TestAckGoesToTheHandlesBroker(t *testing.T) {
	mk := func(name string) *pop.Broker {
		cfg := pop.KVConfig()
		cfg.BrokerName = name
		b, err := pop.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
			t.Fatal(err)
		}
		if err := b.CreateGroup(pop.DefaultGroup("g")); err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := mk("broker-a"), mk("broker-b")
	px := New(a, DefaultConfig())
	if err := px.AddBroker(b); err != nil {
		t.Fatal(err)
	}
	if err := px.AddBroker(mk("broker-b")); err == nil || !strings.Contains(err.Error(), "broker-b") {
		t.Fatalf("a second broker-b: err %v", err)
	}
	now := clock.Epoch.Add(clock.Second)
	b.Put(now, &model.Message{Topic: "t", UniqKey: "m", ID: 1})
	req, st := px.PopRequest(now, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", BatchSize: 1, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second})
	if !st.IsOK() {
		t.Fatal(st)
	}
	var res ReceiveResult
	b.Pop(now, &req, &res.Pop) // the driver pops the broker it routed the receive to
	px.Filter(now, "g", 17, &res)
	if len(res.Pop.Messages) != 1 || res.Pop.Messages[0].Handle.BrokerName != "broker-b" {
		t.Fatalf("receive from broker-b: %+v", res.Pop.Messages)
	}
	m := &res.Pop.Messages[0]
	c, st := px.ChangeInvisibleDuration(now, &ChangeRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: m.Handle, Lease: m.Lease, InvisibleTime: 40 * clock.Second})
	if !st.IsOK() || c.Removed != m.Lease {
		t.Fatalf("renewal on broker-b: %v, removed %d, want %d", st, c.Removed, m.Lease)
	}
	r, st := px.AckMessage(now, &AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: c.Handle, Lease: c.Lease})
	if !st.IsOK() || r.Removed != c.Lease {
		t.Fatalf("ack on broker-b: %v, removed %d, want %d", st, r.Removed, c.Lease)
	}
	if a.InFlightCount() != 0 || b.InFlightCount() != 0 {
		t.Fatalf("in flight after the ack: broker-a %d, broker-b %d", a.InFlightCount(), b.InFlightCount())
	}
}
