package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"popsim/clock"
	"popsim/model"
)

// wait bounds every blocking call of these tests; none relies on timing
// for its result.
const wait = 30 * time.Second

type fixture struct {
	t   *testing.T
	s   *Server
	cli v2.MessagingServiceClient
}

// start serves cfg (topic orders with 2 queues, group billing) on a
// loopback port and dials it like the official clients: TLS, verifying
// nothing.
func start(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Path = PathKV // these tests read the KV path's records; checkpoint_test.go covers the default path
	cfg.Addr = "127.0.0.1:0"
	cfg.Topics = []TopicSpec{{Name: "orders", Queues: 2}}
	cfg.Groups = []string{"billing"}
	cfg.Logf = t.Logf
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fixture{t: t, s: s, cli: v2.NewMessagingServiceClient(conn)}
}

// as is a call context of client id, with the test's bound.
func as(t *testing.T, id string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	if id == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", id, "x-mq-client-version", "5.0.1-rc1")
}

func res(name string) *v2.Resource { return &v2.Resource{Name: name} }

func wantCode(t *testing.T, what string, st *v2.Status, code v2.Code) {
	t.Helper()
	if st.GetCode() != code {
		t.Fatalf("%s: status %v %q, want %v", what, st.GetCode(), st.GetMessage(), code)
	}
}

func TestQueryRoute(t *testing.T) {
	f := start(t, nil)
	ask := &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 1}}}
	r, err := f.cli.QueryRoute(as(t, "c1"), &v2.QueryRouteRequest{Topic: res("orders"), Endpoints: ask})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "route", r.GetStatus(), v2.Code_OK)
	if len(r.GetMessageQueues()) != 2 {
		t.Fatalf("route: %d queues, want 2", len(r.GetMessageQueues()))
	}
	addr := f.s.Addr()
	for i, q := range r.GetMessageQueues() {
		a := q.GetBroker().GetEndpoints().GetAddresses()
		// The route names this server: the host the client dialed, with
		// the port the server listens on (not the port the client said).
		if q.GetId() != int32(i) || len(a) != 1 || a[0].GetHost() != "127.0.0.1" || !strings.HasSuffix(addr, ":"+itoa(a[0].GetPort())) {
			t.Fatalf("queue %d: %v", i, q)
		}
		if q.GetPermission() != v2.Permission_READ_WRITE || len(q.GetAcceptMessageTypes()) != 1 || q.GetAcceptMessageTypes()[0] != v2.MessageType_NORMAL {
			t.Fatalf("queue %d: permission %v, types %v", i, q.GetPermission(), q.GetAcceptMessageTypes())
		}
	}
	for _, c := range []struct {
		id, topic string
		code      v2.Code
	}{
		{"", "orders", v2.Code_CLIENT_ID_REQUIRED},
		{"c1", "nope", v2.Code_TOPIC_NOT_FOUND},
		{"c1", "bad topic", v2.Code_ILLEGAL_TOPIC},
		{"c1", "%RETRY%billing_orders", v2.Code_ILLEGAL_TOPIC},
	} {
		r, err := f.cli.QueryRoute(as(t, c.id), &v2.QueryRouteRequest{Topic: res(c.topic), Endpoints: ask})
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, "route "+c.topic, r.GetStatus(), c.code)
	}
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }

// telemetry opens a client's stream, sends settings and returns the
// server's answer.
func (f *fixture) telemetry(id string, st *v2.Settings) *v2.TelemetryCommand {
	f.t.Helper()
	stream, err := f.cli.Telemetry(as(f.t, id))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: st}}); err != nil {
		f.t.Fatal(err)
	}
	cmd, err := stream.Recv()
	if err != nil {
		f.t.Fatal(err)
	}
	return cmd
}

func producer() *v2.Settings {
	typ := v2.ClientType_PRODUCER
	return &v2.Settings{ClientType: &typ, RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{res("orders")}}}}
}

func consumer(group string, requestTimeout time.Duration) *v2.Settings {
	typ := v2.ClientType_SIMPLE_CONSUMER
	return &v2.Settings{ClientType: &typ, RequestTimeout: durationpb.New(requestTimeout),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: res(group),
			Subscriptions: []*v2.SubscriptionEntry{{Topic: res("orders"), Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}}}}}
}

func TestTelemetrySettings(t *testing.T) {
	f := start(t, nil)
	cmd := f.telemetry("p1", producer())
	wantCode(t, "producer settings", cmd.GetStatus(), v2.Code_OK)
	st := cmd.GetSettings()
	// max_body_size must be set: the client rejects every body larger
	// than it, so 0 rejects them all.
	if st.GetPublishing().GetMaxBodySize() != 4*1024*1024 || !st.GetPublishing().GetValidateMessageType() {
		t.Fatalf("publishing %v: want max_body_size 4 MiB and type validation", st.GetPublishing())
	}
	if bp := st.GetBackoffPolicy(); bp.GetMaxAttempts() != 3 || bp.GetExponentialBackoff().GetMultiplier() != 2 {
		t.Fatalf("producer backoff %v", bp)
	}
	cmd = f.telemetry("c1", consumer("audit", 3*time.Second))
	sub := cmd.GetSettings().GetSubscription()
	if sub.GetReceiveBatchSize() != 32 || sub.GetLongPollingTimeout().AsDuration() != 20*time.Second || sub.GetFifo() {
		t.Fatalf("subscription %v", sub)
	}
	// The group did not exist: it was created with RocketMQ's defaults,
	// so maxAttempts is retryMaxTimes (16) + 1.
	if bp := cmd.GetSettings().GetBackoffPolicy(); bp.GetMaxAttempts() != 17 || len(bp.GetCustomizedBackoff().GetNext()) != 18 {
		t.Fatalf("consumer backoff %v", bp)
	}
}

func TestHeartbeatUnknownClientAndRestart(t *testing.T) {
	f := start(t, nil)
	hb := func(id string) *v2.Status {
		r, err := f.cli.Heartbeat(as(t, id), &v2.HeartbeatRequest{Group: res("billing"), ClientType: v2.ClientType_SIMPLE_CONSUMER})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus()
	}
	wantCode(t, "unknown client", hb("c1"), v2.Code_UNRECOGNIZED_CLIENT_TYPE)
	wantCode(t, "no client id", hb(""), v2.Code_CLIENT_ID_REQUIRED)
	f.telemetry("c1", consumer("billing", 3*time.Second))
	wantCode(t, "known client", hb("c1"), v2.Code_OK)
	// A restart forgets the client table: the heartbeat says so, which
	// makes the client send its settings again.
	f.s.Restart()
	wantCode(t, "after restart", hb("c1"), v2.Code_UNRECOGNIZED_CLIENT_TYPE)
	f.telemetry("c1", consumer("billing", 3*time.Second))
	wantCode(t, "after resync", hb("c1"), v2.Code_OK)
}

// sendOne sends one message and returns the response.
func (f *fixture) sendOne(id string, m *v2.Message) *v2.SendMessageResponse {
	f.t.Helper()
	r, err := f.cli.SendMessage(as(f.t, id), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func message(id, tag string) *v2.Message {
	return &v2.Message{Topic: res("orders"), Body: []byte("body of " + id),
		SystemProperties: &v2.SystemProperties{MessageId: id, Tag: &tag, Keys: []string{"k1", "k2"},
			BornTimestamp: timestamppb.Now(), BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL},
		UserProperties: map[string]string{"color": "red"}}
}

func TestSendChecksAndQueueChoice(t *testing.T) {
	f := start(t, nil)
	var queues []int32
	for _, id := range []string{"m1", "m2", "m3"} {
		r := f.sendOne("p1", message(id, "a"))
		wantCode(t, "send "+id, r.GetStatus(), v2.Code_OK)
		if e := r.GetEntries(); len(e) != 1 || e[0].GetMessageId() != id {
			t.Fatalf("send %s: entries %v", id, e)
		}
	}
	for _, q := range f.s.State().Topics {
		if q.Config.Name == "orders" {
			for _, qs := range q.Queues {
				queues = append(queues, int32(qs.MaxOffset))
			}
		}
	}
	// The proxy's write selector takes the queues in turn.
	if len(queues) != 2 || queues[0] != 2 || queues[1] != 1 {
		t.Fatalf("messages per queue %v, want [2 1]", queues)
	}
	bad := func(edit func(*v2.Message)) *v2.Message {
		m := message("m9", "a")
		edit(m)
		return m
	}
	group := "g"
	for _, c := range []struct {
		what string
		m    *v2.Message
		code v2.Code
	}{
		{"fifo", bad(func(m *v2.Message) { m.SystemProperties.MessageGroup = &group }), v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"delay", bad(func(m *v2.Message) { m.SystemProperties.DeliveryTimestamp = timestamppb.Now() }), v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"transaction", bad(func(m *v2.Message) { m.SystemProperties.MessageType = v2.MessageType_TRANSACTION }), v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"no id", bad(func(m *v2.Message) { m.SystemProperties.MessageId = " " }), v2.Code_ILLEGAL_MESSAGE_ID},
		{"system key", bad(func(m *v2.Message) { m.UserProperties["UNIQ_KEY"] = "x" }), v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"tag", bad(func(m *v2.Message) { tag := "a|b"; m.SystemProperties.Tag = &tag }), v2.Code_ILLEGAL_MESSAGE_TAG},
		{"unknown topic", bad(func(m *v2.Message) { m.Topic = res("nope") }), v2.Code_TOPIC_NOT_FOUND},
		{"too large", bad(func(m *v2.Message) { m.Body = make([]byte, 4*1024*1024+1) }), v2.Code_MESSAGE_BODY_TOO_LARGE},
		{"empty body", bad(func(m *v2.Message) { m.Body = nil }), codeMessageBodyEmpty},
	} {
		wantCode(t, c.what, f.sendOne("p1", c.m).GetStatus(), c.code)
	}
	r, err := f.cli.SendMessage(as(t, "p1"), &v2.SendMessageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "no message", r.GetStatus(), v2.Code_MESSAGE_CORRUPTED)
}

// receiveAll reads a receive stream to its end.
func receiveAll(t *testing.T, stream v2.MessagingService_ReceiveMessageClient) (*v2.Status, []*v2.Message, bool) {
	t.Helper()
	var st *v2.Status
	var msgs []*v2.Message
	var stamped bool
	for i := 0; ; i++ {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return st, msgs, stamped
		}
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		switch c := r.GetContent().(type) {
		case *v2.ReceiveMessageResponse_Status:
			if i != 0 {
				t.Fatalf("status as response %d, want it first", i)
			}
			st = c.Status
		case *v2.ReceiveMessageResponse_Message:
			if stamped {
				t.Fatal("a message after the delivery timestamp")
			}
			msgs = append(msgs, c.Message)
		case *v2.ReceiveMessageResponse_DeliveryTimestamp:
			stamped = true
		}
	}
}

func receiveReq(batch int32, invisible time.Duration, filter *v2.FilterExpression) *v2.ReceiveMessageRequest {
	if filter == nil {
		filter = &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}
	}
	return &v2.ReceiveMessageRequest{Group: res("billing"), MessageQueue: &v2.MessageQueue{Topic: res("orders"), Id: -1},
		FilterExpression: filter, BatchSize: batch, InvisibleDuration: durationpb.New(invisible)}
}

func onTopic(name string) *v2.ReceiveMessageRequest {
	r := receiveReq(32, time.Minute, nil)
	r.MessageQueue.Topic = res(name)
	return r
}

func inGroup(name string) *v2.ReceiveMessageRequest {
	r := receiveReq(32, time.Minute, nil)
	r.Group = res(name)
	return r
}

// receive makes one receive with a deadline of d.
func (f *fixture) receive(id string, d time.Duration, req *v2.ReceiveMessageRequest) (*v2.Status, []*v2.Message) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(as(f.t, id), d)
	defer cancel()
	stream, err := f.cli.ReceiveMessage(ctx, req)
	if err != nil {
		f.t.Fatal(err)
	}
	st, msgs, stamped := receiveAll(f.t, stream)
	if !stamped {
		f.t.Fatal("receive: no delivery timestamp before the end")
	}
	return st, msgs
}

// quickPolls lets an empty receive end fast: the proxy's shortest long
// poll is 5 s by default.
func quickPolls(c *Config) { c.Proxy.MinLongPollingTimeout = 100 * clock.Millisecond }

func TestReceiveStreamAckAndRenew(t *testing.T) {
	f := start(t, quickPolls)
	f.telemetry("c1", consumer("billing", 1600*time.Millisecond))
	for _, id := range []string{"m1", "m2"} {
		f.sendOne("p1", message(id, "a"))
	}
	st, msgs := f.receive("c1", wait, receiveReq(64, 30*time.Second, nil))
	wantCode(t, "receive", st, v2.Code_OK)
	if len(msgs) != 2 {
		t.Fatalf("received %d, want 2", len(msgs))
	}
	m := msgs[0]
	sp := m.GetSystemProperties()
	if sp.GetDeliveryAttempt() != 1 || sp.GetReceiptHandle() == "" || string(m.GetBody()) != "body of "+sp.GetMessageId() ||
		m.GetUserProperties()["color"] != "red" || len(m.GetUserProperties()) != 1 || strings.Join(sp.GetKeys(), ",") != "k1,k2" || sp.GetTag() != "a" {
		t.Fatalf("message %v", m)
	}
	// A renewal answers a new handle; the old one no longer acks anything
	// but the new one does.
	ch, err := f.cli.ChangeInvisibleDuration(as(t, "c1"), &v2.ChangeInvisibleDurationRequest{Group: res("billing"), Topic: res("orders"),
		ReceiptHandle: sp.GetReceiptHandle(), InvisibleDuration: durationpb.New(time.Minute), MessageId: sp.GetMessageId()})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "renew", ch.GetStatus(), v2.Code_OK)
	if ch.GetReceiptHandle() == sp.GetReceiptHandle() {
		t.Fatal("renewal returned the same handle")
	}
	ack := func(handle, id string) *v2.AckMessageResponse {
		r, err := f.cli.AckMessage(as(t, "c1"), &v2.AckMessageRequest{Group: res("billing"), Topic: res("orders"),
			Entries: []*v2.AckMessageEntry{{MessageId: id, ReceiptHandle: handle}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	wantCode(t, "ack", ack(ch.GetReceiptHandle(), sp.GetMessageId()).GetStatus(), v2.Code_OK)
	wantCode(t, "ack 2", ack(msgs[1].GetSystemProperties().GetReceiptHandle(), msgs[1].GetSystemProperties().GetMessageId()).GetStatus(), v2.Code_OK)
	if st := f.s.State(); len(st.InFlight)+len(st.Cached) != 0 {
		t.Fatalf("%d leases left after the acks", len(st.InFlight)+len(st.Cached))
	}
	// An expired handle never reaches the broker; a malformed one is the
	// proxy's decoding error.
	h, _ := model.ParseReceiptHandle(sp.GetReceiptHandle())
	h.PopTime, h.InvisibleTime = 1000, 1000
	wantCode(t, "expired", ack(h.String(), sp.GetMessageId()).GetStatus(), v2.Code_INVALID_RECEIPT_HANDLE)
	wantCode(t, "malformed", ack("x y", sp.GetMessageId()).GetStatus(), v2.Code_INTERNAL_SERVER_ERROR)
	// Nothing left: an empty receive ends with MESSAGE_NOT_FOUND after its
	// poll (deadline 1 s less half the 1.6 s request timeout).
	st, msgs = f.receive("c1", time.Second, receiveReq(32, 30*time.Second, nil))
	wantCode(t, "empty receive", st, v2.Code_MESSAGE_NOT_FOUND)
	if len(msgs) != 0 {
		t.Fatalf("empty receive got %d messages", len(msgs))
	}
}

func TestReceiveRefusals(t *testing.T) {
	f := start(t, nil)
	f.telemetry("c1", consumer("billing", 3*time.Second))
	for _, c := range []struct {
		what string
		id   string
		d    time.Duration
		req  *v2.ReceiveMessageRequest
		code v2.Code
	}{
		{"no client id", "", wait, receiveReq(32, time.Minute, nil), v2.Code_CLIENT_ID_REQUIRED},
		{"invisible too short", "c1", wait, receiveReq(32, time.Second, nil), v2.Code_ILLEGAL_INVISIBLE_TIME},
		{"invisible too long", "c1", wait, receiveReq(32, 13*time.Hour, nil), v2.Code_ILLEGAL_INVISIBLE_TIME},
		// Less than the 5 s shortest poll left: ILLEGAL_POLLING_TIME, which
		// a client older than 5.0.3 (v5.1.2 says 5.0.1-rc1) gets as BAD_REQUEST.
		{"deadline too near", "c1", 2 * time.Second, receiveReq(32, time.Minute, nil), v2.Code_BAD_REQUEST},
		{"sql", "c1", wait, receiveReq(32, time.Minute, &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "a > 1"}), v2.Code_INTERNAL_SERVER_ERROR},
		{"bad tag expression", "c1", wait, receiveReq(32, time.Minute, &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "||"}), v2.Code_ILLEGAL_FILTER_EXPRESSION},
		{"unknown topic", "c1", wait, onTopic("nope"), v2.Code_TOPIC_NOT_FOUND},
		{"system topic", "c1", wait, onTopic("%RETRY%billing_orders"), v2.Code_ILLEGAL_TOPIC},
		{"bad group", "c1", wait, inGroup("bad group"), v2.Code_ILLEGAL_CONSUMER_GROUP},
	} {
		st, msgs := f.receive(c.id, c.d, c.req)
		wantCode(t, c.what, st, c.code)
		if len(msgs) != 0 {
			t.Fatalf("%s: %d messages", c.what, len(msgs))
		}
	}
	// A client that knows ILLEGAL_POLLING_TIME gets it.
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-mq-client-id", "c1", "x-mq-client-version", "5.0.3"), 2*time.Second)
	defer cancel()
	stream, err := f.cli.ReceiveMessage(ctx, receiveReq(32, time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := receiveAll(t, stream)
	wantCode(t, "deadline too near, client 5.0.3", st, codeIllegalPollingTime)
	// A client with no settings: the proxy has nothing to read the request
	// timeout and retry policy from.
	st, _ = f.receive("stranger", wait, receiveReq(32, time.Minute, nil))
	wantCode(t, "no settings", st, v2.Code_INTERNAL_SERVER_ERROR)
}

func TestUnimplementedCalls(t *testing.T) {
	f := start(t, nil)
	_, err := f.cli.EndTransaction(as(t, "p1"), &v2.EndTransactionRequest{Topic: res("orders")})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("EndTransaction: %v, want Unimplemented", err)
	}
	_, err = f.cli.QueryAssignment(as(t, "c1"), &v2.QueryAssignmentRequest{Topic: res("orders"), Group: res("billing")})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("QueryAssignment: %v, want Unimplemented", err)
	}
}
