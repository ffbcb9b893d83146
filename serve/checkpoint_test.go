package serve

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"popsim/clock"
)

// startCheckpoint is start on the checkpoint path, serve's default.
func startCheckpoint(t *testing.T, edit func(*Config)) *fixture {
	return start(t, func(c *Config) {
		c.Path = PathCheckpoint
		quickPolls(c)
		if edit != nil {
			edit(c)
		}
	})
}

// ckLeases counts the checkpoint path's leases still live for their
// clients: those without an ack message waiting for its revive round.
func (f *fixture) ckLeases() int {
	n := 0
	for _, l := range f.s.State().Checkpoint.Leases {
		if !l.AckPending {
			n++
		}
	}
	return n
}

// The default path is the checkpoint path, as on a stock RocketMQ 5 broker.
func TestDefaultPathIsCheckpoint(t *testing.T) {
	if c := DefaultConfig(); c.Path != PathCheckpoint || c.Broker.UsesKV() {
		t.Fatalf("default path %q (broker KV %v), want %q", c.Path, c.Broker.UsesKV(), PathCheckpoint)
	}
}

// On the checkpoint path a receive writes a CK per batch and an ack ends
// the lease (an ack message, which the revive round pairs): nothing is
// left for the client.
func TestCheckpointReceiveAndAck(t *testing.T) {
	f := startCheckpoint(t, nil)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	for _, id := range []string{"m1", "m2"} {
		f.sendOne("p1", message(id, "a"))
	}
	st, msgs := f.receive("c1", wait, receiveReq(64, 30*time.Second, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	if len(msgs) != 2 || f.ckLeases() != 2 {
		t.Fatalf("received %d, %d checkpoint leases: want 2 and 2", len(msgs), f.ckLeases())
	}
	for _, m := range msgs {
		sp := m.GetSystemProperties()
		r, err := f.cli.AckMessage(as(t, "c1"), &v2.AckMessageRequest{Group: res("billing"), Topic: res("orders"),
			Entries: []*v2.AckMessageEntry{{MessageId: sp.GetMessageId(), ReceiptHandle: sp.GetReceiptHandle()}}})
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, "ack", r.GetStatus(), v2.Code_OK)
	}
	if n := f.ckLeases(); n != 0 {
		t.Fatalf("%d checkpoint leases live for their clients after the acks, want 0", n)
	}
}

// The loop drives the checkpoint path's periodic work: a message whose
// lease runs out comes back from the revive round on attempt 2, and the
// revive is counted.
func TestCheckpointReviveComesBack(t *testing.T) {
	f := startCheckpoint(t, func(c *Config) { c.Proxy.MinInvisibleTimeForRecv = clock.Second })
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	f.sendOne("p1", message("m1", "a"))
	st, msgs := f.receive("c1", wait, receiveReq(1, time.Second, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	if len(msgs) != 1 {
		t.Fatalf("received %d, want 1", len(msgs))
	}
	// The lease ends after 1 s; the CK reaches the revive queue at its
	// revive time through the timer, and a round revives it.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, back := f.receive("c1", wait, receiveReq(1, 30*time.Second, nil))
		if st.GetCode() == v2.Code_OK && len(back) == 1 {
			if a := back[0].GetSystemProperties().GetDeliveryAttempt(); a != 2 {
				t.Fatalf("came back on attempt %d, want 2", a)
			}
			if f.s.Stats().Revived != 1 {
				t.Fatalf("revived %d, want 1", f.s.Stats().Revived)
			}
			return
		}
	}
	t.Fatal("the expired message never came back: the loop does not run the revive rounds")
}
