package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	"github.com/apache/rocketmq-clients/golang/v5/pkg/zaplog"

	"popsim/serve"
)

// TestMain sends the client's logs to a temporary folder: by default it
// writes $user.home/logs/rocketmqlogs (/logs/... when unset) and, for every
// call, /tmp/rocketmq-logger.log. Its logger is built in the package's
// init, before any test runs, so the folder is set here and the logger
// rebuilt.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "popsim-interop-logs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv(rmq.CLIENT_LOG_ROOT, dir)
	os.Setenv(rmq.CLIENT_LOG_LEVEL, "warn")
	rmq.ResetLogger()
	orig := rmq.NewRpcClient
	callLog := zaplog.New(zaplog.WithFileName(filepath.Join(dir, "rocketmq-logger.log")))
	rmq.NewRpcClient = func(target string, opts ...rmq.RpcClientOption) (rmq.RpcClient, error) {
		return orig(target, append(opts, rmq.WithRpcClientConnOption(rmq.WithZapLogger(callLog)))...)
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "client logs kept in", dir)
	} else {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

const (
	topic = "orders"
	group = "billing"
	// invisible is the proxy's smallest invisible duration for a receive
	// (minInvisibleTimeMillsForRecv).
	invisible = 10 * time.Second
	await     = 5 * time.Second
	// budget bounds every wait: the test stops by itself.
	budget = 60 * time.Second
)

func startServer(t *testing.T, path string) *serve.Server {
	t.Helper()
	cfg := serve.DefaultConfig()
	cfg.Path = path
	cfg.Addr = "127.0.0.1:0"
	cfg.Topics = []serve.TopicSpec{{Name: topic, Queues: 2}}
	cfg.Groups = []string{group}
	cfg.Logf = t.Logf
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func clientConfig(s *serve.Server) *rmq.Config {
	// Credentials may be empty but must be there: the client signs every
	// call with them.
	return &rmq.Config{Endpoint: s.Addr(), ConsumerGroup: group, Credentials: &credentials.SessionCredentials{}}
}

// delivery is one message as the consumer received it.
type delivery struct {
	id      string
	attempt int32
	view    *rmq.MessageView
}

// receive receives until pred holds for what came in, or the budget ends.
func receive(t *testing.T, c rmq.SimpleConsumer, deadline time.Time, pred func([]delivery) bool) []delivery {
	t.Helper()
	var got []delivery
	for !pred(got) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting after %v; received %d so far", budget, len(got))
		}
		mvs, err := c.Receive(context.Background(), 32, invisible)
		var st *rmq.ErrRpcStatus
		if errors.As(err, &st) && st.GetCode() == 40401 { // MESSAGE_NOT_FOUND: the long poll ended empty
			continue
		}
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, mv := range mvs {
			got = append(got, delivery{id: mv.GetMessageId(), attempt: mv.GetDeliveryAttempt(), view: mv})
		}
	}
	return got
}

// TestOfficialClientAgainstServe sends N messages with the official
// Producer, receives them with the official SimpleConsumer, acks most,
// renews one, abandons three and loses one ack to a fault, and checks that
// exactly the abandoned ones and the one whose ack was lost come back,
// each with delivery attempt 2, and that nothing is lost; on each of the
// engine's POP paths (the checkpoint path, serve's and RocketMQ's default,
// and the KV path).
func TestOfficialClientAgainstServe(t *testing.T) {
	for _, path := range []string{serve.PathCheckpoint, serve.PathKV} {
		t.Run(path, func(t *testing.T) { officialClientAgainstServe(t, path) })
	}
}

func officialClientAgainstServe(t *testing.T, path string) {
	s := startServer(t, path)
	deadline := time.Now().Add(budget)

	p, err := rmq.NewProducer(clientConfig(s), rmq.WithTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer p.GracefulStop()

	const n = 20
	sent := map[string]int{}
	for i := 0; i < n; i++ {
		msg := &rmq.Message{Topic: topic, Body: []byte("order " + strconv.Itoa(i))}
		msg.SetTag("created")
		msg.SetKeys("order-" + strconv.Itoa(i))
		receipts, err := p.Send(context.Background(), msg)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if len(receipts) != 1 || receipts[0].MessageID == "" {
			t.Fatalf("send %d: receipts %+v", i, receipts)
		}
		sent[receipts[0].MessageID] = i
	}

	c, err := rmq.NewSimpleConsumer(clientConfig(s), rmq.WithAwaitDuration(await),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("consumer start: %v", err)
	}
	defer c.GracefulStop()

	// Round 1: everything arrives once, on its first attempt.
	first := receive(t, c, deadline, func(d []delivery) bool { return len(d) >= n })
	if len(first) != n {
		t.Fatalf("round 1: %d deliveries, want %d", len(first), n)
	}
	sort.Slice(first, func(i, j int) bool { return sent[first[i].id] < sent[first[j].id] })
	for i, d := range first {
		if _, ok := sent[d.id]; !ok || d.attempt != 1 {
			t.Fatalf("round 1: delivery %d: id %s attempt %d, want a sent id on attempt 1", i, d.id, d.attempt)
		}
		if string(d.view.GetBody()) != "order "+strconv.Itoa(sent[d.id]) || d.view.GetTag() == nil || *d.view.GetTag() != "created" {
			t.Fatalf("round 1: delivery %d: body %q tag %v", i, d.view.GetBody(), d.view.GetTag())
		}
	}

	// The causes of redelivery: three messages are abandoned (neither
	// acked nor renewed, so their lease runs out) and one ack is lost on
	// the way (the ack_loss fault: the client's call times out and the
	// lease stays). One message is renewed for longer than the test
	// waits, so it must not come back.
	cause := map[string]string{first[0].id: "abandoned", first[1].id: "abandoned", first[2].id: "abandoned"}
	renewed := first[3]
	if err := c.ChangeInvisibleDuration(renewed.view, 50*time.Second); err != nil {
		t.Fatalf("renew: %v", err)
	}
	lostAck := first[4]
	if err := s.SetFaults(serve.Faults{AckLoss: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(context.Background(), lostAck.view); err == nil {
		t.Fatal("an ack the server lost returned no error")
	}
	if err := s.SetFaults(serve.Faults{}); err != nil {
		t.Fatal(err)
	}
	cause[lostAck.id] = "ack lost"
	acked := map[string]bool{}
	for _, d := range first[5:] {
		if err := c.Ack(context.Background(), d.view); err != nil {
			t.Fatalf("ack %s: %v", d.id, err)
		}
		acked[d.id] = true
	}

	// Round 2: the abandoned messages and the one whose ack was lost come
	// back when their invisible time ends, on attempt 2; nothing else
	// comes back.
	back := receive(t, c, deadline, func(d []delivery) bool { return len(d) >= len(cause) })
	for _, d := range back {
		if cause[d.id] == "" {
			t.Fatalf("round 2: %s came back but had no cause to (acked %v, renewed %v)", d.id, acked[d.id], d.id == renewed.id)
		}
		if d.attempt != 2 {
			t.Fatalf("round 2: %s came back on attempt %d, want 2", d.id, d.attempt)
		}
		if err := c.Ack(context.Background(), d.view); err != nil {
			t.Fatalf("ack %s: %v", d.id, err)
		}
		acked[d.id] = true
	}
	if len(back) != len(cause) {
		t.Fatalf("round 2: %d came back, want %d (%v)", len(back), len(cause), cause)
	}
	// The renewed message is acked with the handle the renewal returned.
	if err := c.Ack(context.Background(), renewed.view); err != nil {
		t.Fatalf("ack renewed: %v", err)
	}
	acked[renewed.id] = true

	// Nothing is lost: every sent message was acked, and the engine holds
	// no lease and nothing more to deliver.
	for id := range sent {
		if !acked[id] {
			t.Errorf("message %s (order %d) was never acked", id, sent[id])
		}
	}
	st := s.State()
	if len(st.InFlight)+len(st.Cached) != 0 {
		t.Errorf("engine still holds %d leases after every ack", len(st.InFlight)+len(st.Cached))
	}
	for _, l := range st.Checkpoint.Leases { // acks written as ack messages wait for their revive round
		if !l.AckPending {
			t.Errorf("engine still holds checkpoint lease %d (%s/%d@%d) after every ack", l.Lease, l.Topic, l.QueueID, l.Offset)
		}
	}
	stats := s.Stats()
	if stats.Sent != n || stats.Acks != n || stats.Renewals != 1 || stats.Revived != len(cause) || stats.AcksLost != 1 {
		t.Errorf("server stats %+v: want %d sent, %d acks, 1 renewal, %d revived, 1 ack lost", stats, n, n, len(cause))
	}
}
