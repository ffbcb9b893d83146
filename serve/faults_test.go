package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults([]byte("seed: 7\nack_loss: 0.25\nreceive_loss: 0.1\ndelay: 200ms\nrevive_pause: true\nrestart_every: 90s\nwrite_fail: 0.001\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "ack_loss=0.25 receive_loss=0.1 delay=200ms revive_pause=true restart_every=1m30s write_fail=0.001"
	if f.String() != want || f.Seed != 7 {
		t.Fatalf("parsed %q seed %d, want %q seed 7", f.String(), f.Seed, want)
	}
	if ef := f.engineFaults(); ef.WritePPM != 1000 || ef.RetryWritePPM != 0 || ef.Seed != 7 {
		t.Fatalf("engine faults %+v", ef)
	}
	if f, err := ParseFaults(nil); err != nil || f.String() != "none" {
		t.Fatalf("empty file: %v %v", f, err)
	}
	for _, c := range []struct{ text, want string }{
		{"ack_los: 0.1\n", "field ack_los not found"},
		{"ack_loss: 1.5\n", "ack_loss = 1.5: want a fraction in [0, 1]"},
		{"delay: -1s\n", "delay = -1s"},
		{"restart_every: 10ms\n", "restart_every = 10ms: want 0 (never) or 1s to 24h"},
		{"send_loss: lots\n", "cannot unmarshal"},
	} {
		if _, err := ParseFaults([]byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.text, err, c.want)
		}
	}
}

// short is a deadline for calls whose answer a fault loses: the client
// hears nothing and its own deadline ends the call.
func short(t *testing.T, id string) context.Context {
	ctx, cancel := context.WithTimeout(as(t, id), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func wantLost(t *testing.T, what string, err error) {
	t.Helper()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("%s: %v, want the call to run into its deadline", what, err)
	}
}

func (f *fixture) leases() int {
	st := f.s.State()
	return len(st.InFlight) + len(st.Cached)
}

func TestSendLossMakesADuplicate(t *testing.T) {
	f := start(t, quickPolls)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	if err := f.s.SetFaults(Faults{SendLoss: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := f.cli.SendMessage(short(t, "p1"), &v2.SendMessageRequest{Messages: []*v2.Message{message("m1", "a")}})
	wantLost(t, "send", err)
	if err := f.s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	// The client retries with the same message id; the store has both.
	wantCode(t, "resend", f.sendOne("p1", message("m1", "a")).GetStatus(), v2.Code_OK)
	st, msgs := f.receive("c1", wait, receiveReq(32, time.Minute, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	if len(msgs) != 2 || msgs[0].GetSystemProperties().GetMessageId() != "m1" || msgs[1].GetSystemProperties().GetMessageId() != "m1" {
		t.Fatalf("received %d messages, want m1 twice", len(msgs))
	}
}

func TestAckAndReceiveLoss(t *testing.T) {
	f := start(t, quickPolls)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	f.sendOne("p1", message("m1", "a"))
	f.sendOne("p1", message("m2", "a"))

	// A lost receive response: the messages are leased all the same.
	if err := f.s.SetFaults(Faults{ReceiveLoss: 1}); err != nil {
		t.Fatal(err)
	}
	stream, err := f.cli.ReceiveMessage(short(t, "c1"), receiveReq(1, time.Minute, nil))
	if err == nil {
		_, err = stream.Recv()
	}
	wantLost(t, "receive", err)
	if n := f.leases(); n != 1 {
		t.Fatalf("%d leases after a lost receive, want 1", n)
	}

	if err := f.s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	st, msgs := f.receive("c1", wait, receiveReq(1, time.Minute, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	m := msgs[0].GetSystemProperties()
	ack := func(ctx context.Context) error {
		_, err := f.cli.AckMessage(ctx, &v2.AckMessageRequest{Group: res("billing"), Topic: res("orders"),
			Entries: []*v2.AckMessageEntry{{MessageId: m.GetMessageId(), ReceiptHandle: m.GetReceiptHandle()}}})
		return err
	}
	// A lost ack request: the lease stays.
	if err := f.s.SetFaults(Faults{AckLoss: 1}); err != nil {
		t.Fatal(err)
	}
	wantLost(t, "ack", ack(short(t, "c1")))
	if n := f.leases(); n != 2 {
		t.Fatalf("%d leases after a lost ack, want 2", n)
	}
	// A lost ack response: the ack took effect.
	if err := f.s.SetFaults(Faults{AckResponseLoss: 1}); err != nil {
		t.Fatal(err)
	}
	wantLost(t, "ack response", ack(short(t, "c1")))
	if n := f.leases(); n != 1 {
		t.Fatalf("%d leases after an ack whose response was lost, want 1", n)
	}
	stats := f.s.Stats()
	if stats.AcksLost != 1 || stats.AckResponsesLost != 1 || stats.ReceivesLost != 1 || stats.Acks != 1 {
		t.Fatalf("stats %+v: want 1 ack and 1 ack response lost, 1 receive lost, 1 ack", stats)
	}
}

func TestChangeLossKeepsTheOldHandleValid(t *testing.T) {
	f := start(t, quickPolls)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	f.sendOne("p1", message("m1", "a"))
	_, msgs := f.receive("c1", wait, receiveReq(1, time.Minute, nil))
	m := msgs[0].GetSystemProperties()
	if err := f.s.SetFaults(Faults{ChangeLoss: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := f.cli.ChangeInvisibleDuration(short(t, "c1"), &v2.ChangeInvisibleDurationRequest{Group: res("billing"), Topic: res("orders"),
		ReceiptHandle: m.GetReceiptHandle(), InvisibleDuration: durationpb.New(2 * time.Minute), MessageId: m.GetMessageId()})
	wantLost(t, "change", err)
	// The renewal replaced the lease; the client's old handle has not
	// expired, so its ack passes the proxy but deletes nothing: the
	// renewed lease stays and the message will come back.
	if err := f.s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	r, err := f.cli.AckMessage(as(t, "c1"), &v2.AckMessageRequest{Group: res("billing"), Topic: res("orders"),
		Entries: []*v2.AckMessageEntry{{MessageId: m.GetMessageId(), ReceiptHandle: m.GetReceiptHandle()}}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "ack with the old handle", r.GetStatus(), v2.Code_OK)
	if n := f.leases(); n != 1 {
		t.Fatalf("%d leases, want the renewed one", n)
	}
}
