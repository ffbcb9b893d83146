package proxy

import (
	"reflect"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// The convenience forms (for a driver with no network between proxy and
// broker) do what their parts do.
func TestConvenienceForms(t *testing.T) {
	w := newWorld()
	if _, err := w.do("setup", args{}); err != nil {
		t.Fatal(err)
	}
	w.b.Put(w.now, &model.Message{Topic: "t", UniqKey: "m", ID: 1})
	req, st := w.px.PopRequest(w.now, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", BatchSize: 1, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second})
	if !st.IsOK() {
		t.Fatal(st)
	}
	var res ReceiveResult
	w.px.Pop(w.now, &req, 17, &res)
	if !res.Status.IsOK() || len(res.Pop.Messages) != 1 {
		t.Fatalf("receive: %v, %d messages", res.Status, len(res.Pop.Messages))
	}
	m := &res.Pop.Messages[0]
	w.px.Manage(w.now, "c", "g", m)
	c, st := w.px.ChangeInvisibleDuration(w.now, &ChangeRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: m.Handle, Lease: m.Lease, InvisibleTime: 40 * clock.Second})
	if !st.IsOK() || c.Removed != m.Lease {
		t.Fatalf("change: %v, removed %d", st, c.Removed)
	}
	// The client acks with the handle it received; the proxy uses the
	// managed one, which the change replaced.
	a, st := w.px.AckMessage(w.now, &AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: m.Handle, Lease: m.Lease})
	if !st.IsOK() || a.Removed != c.Lease || w.px.Managed() != 0 {
		t.Fatalf("ack: %v, removed %d (want %d), %d managed", st, a.Removed, c.Lease, w.px.Managed())
	}
	if _, st := w.px.AckMessage(w.now.Add(time30s), &AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: m.Handle}); st.Code != InvalidReceiptHandle {
		t.Fatalf("an expired handle: %v", st)
	}
	if st := brokerStatus(model.TopicNotExist, "ack"); st.Code != TopicNotFound || !strings.Contains(st.String(), "TOPIC_NOT_FOUND(40402)") {
		t.Fatalf("broker code mapping: %v", st)
	}
}

const time30s = 30 * clock.Second

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.MaxLongPollingTimeout = clock.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "grpcClientConsumerMaxLongPollingTimeoutMillis") {
		t.Fatalf("max below min: %v", err)
	}
	c = DefaultConfig()
	c.MaxInvisibleTime = clock.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "maxInvisibleTimeMills") {
		t.Fatalf("max invisible below min: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("New with an invalid configuration did not panic")
		}
	}()
	b, _ := pop.New(pop.KVConfig())
	New(b, c)
}

func TestRetryDelay(t *testing.T) {
	for r, want := range map[int32]clock.Duration{0: 10 * clock.Second, 1: 30 * clock.Second, 14: clock.Hour, 15: 2 * clock.Hour, 99: 2 * clock.Hour, -5: clock.Second} {
		if got := RetryDelay(r); got != want {
			t.Errorf("RetryDelay(%d) = %v, want %v", r, got.Std(), want.Std())
		}
	}
}

// A client's renewal answered after the proxy registered a later delivery
// of the same message (to the same client) renews only the registration it
// was made from: the later delivery keeps its own handle, so the ack that
// takes it still ends that delivery's lease.
func TestChangedKeepsLaterDelivery(t *testing.T) {
	w := newWorld()
	if _, err := w.do("setup", args{}); err != nil {
		t.Fatal(err)
	}
	w.b.Put(w.now, &model.Message{Topic: "t", UniqKey: "m", ID: 1})
	receive := func(at clock.Time) *pop.PoppedMessage {
		req, st := w.px.PopRequest(at, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", BatchSize: 1, InvisibleTime: 10 * clock.Second, Timeout: 10 * clock.Second})
		if !st.IsOK() {
			t.Fatal(st)
		}
		var res ReceiveResult
		w.px.Pop(at, &req, 17, &res)
		if !res.Status.IsOK() || len(res.Pop.Messages) != 1 {
			t.Fatalf("receive at %v: %v, %d messages", at, res.Status, len(res.Pop.Messages))
		}
		m := res.Pop.Messages[0]
		w.px.Manage(at, "c", "g", &m)
		return &m
	}
	first := receive(w.now)
	creq, target, st := w.px.Change(w.now, &ChangeRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: first.Handle, Lease: first.Lease, InvisibleTime: 5 * clock.Second})
	if !st.IsOK() || !target.Managed || target.Entry == 0 {
		t.Fatalf("change: %v, target %+v", st, target)
	}
	r := w.b.ChangeInvisibleTime(w.now, &creq)
	if r.Code != model.Success || r.Lease == 0 {
		t.Fatalf("broker change: %v lease %d", r.Code, r.Lease)
	}
	// The renewed lease runs out and the message comes back to the same
	// client before the renewal's answer reaches the proxy.
	later := w.now.Add(6 * clock.Second)
	for at := w.now; at <= later; at = at.Add(100 * clock.Millisecond) {
		w.b.Revive(at)
	}
	second := receive(later.Add(clock.Second))
	w.px.Changed("c", "g", "m", target.Entry, &r)
	a, st := w.px.AckMessage(later.Add(clock.Second), &AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: first.Handle, Lease: first.Lease})
	if !st.IsOK() || a.Removed != second.Lease {
		t.Fatalf("ack: %v, removed %d, want the later delivery's lease %d (the renewal made %d)", st, a.Removed, second.Lease, r.Lease)
	}
}

// The result filter's NO_MATCH: the broker's tag filter compares hash
// codes, so a message tagged "BB" passes a subscription to "Aa" (both
// hash to 2112); the proxy checks the tag exactly, acks the message and
// leaves it out of the answer. SQL92 and "*" subscriptions pass every tag.
func TestNoMatchIsAcked(t *testing.T) {
	for _, c := range []struct {
		typ, expr string
		kept      []string
		taken     int // the broker lets "BB" through for "Aa", not the untagged one
	}{
		{"", "Aa", []string{"Aa"}, 1},
		{"TAG", "Aa || x", []string{"Aa"}, 1},
		{"TAG", "*", []string{"Aa", "BB", ""}, 0},
		{"SQL92", "TRUE", []string{"Aa", "BB", ""}, 0},
	} {
		w := newWorld()
		if _, err := w.do("setup", args{}); err != nil {
			t.Fatal(err)
		}
		for i, tag := range []string{"Aa", "BB", ""} {
			w.b.Put(w.now, &model.Message{Topic: "t", UniqKey: "m" + tag, Tags: tag, ID: model.MsgID(i + 1)})
		}
		req, st := w.px.PopRequest(w.now, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", ExpressionType: c.typ, Expression: c.expr,
			BatchSize: 32, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second})
		if !st.IsOK() {
			t.Fatal(st)
		}
		var res ReceiveResult
		w.px.Pop(w.now, &req, 17, &res)
		var kept []string
		for _, m := range res.Pop.Messages {
			kept = append(kept, m.Message.Tags)
		}
		if strings.Join(kept, ",") != strings.Join(c.kept, ",") {
			t.Errorf("%s %q: kept tags %q, want %q", c.typ, c.expr, kept, c.kept)
		}
		for _, f := range res.Forwarded {
			if !f.NoMatch || f.Ack.Code != model.Success || f.Ack.Removed != f.Lease || f.DLQTopic != "" {
				t.Errorf("%s %q: taken %+v: want a NO_MATCH acked with its lease removed and no DLQ write", c.typ, c.expr, f)
			}
		}
		if len(res.Forwarded) != c.taken || w.b.InFlightCount() != len(kept) {
			t.Errorf("%s %q: %d taken, %d kept, %d in flight", c.typ, c.expr, len(res.Forwarded), len(kept), w.b.InFlightCount())
		}
	}
}

// FilterAPI.build's refusals are ILLEGAL_FILTER_EXPRESSION with its message.
func TestIllegalFilterExpression(t *testing.T) {
	w := newWorld()
	if _, err := w.do("setup", args{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ typ, expr, msg string }{
		{"TAG", "||", "subString split error"},
		{"SQL92", "", "Expression can't be null! SQL92"},
	} {
		_, st := w.px.PopRequest(w.now, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", ExpressionType: c.typ, Expression: c.expr,
			BatchSize: 1, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second})
		if st.Code != IllegalFilterExpression || st.Message != c.msg {
			t.Errorf("%s %q: %v, want ILLEGAL_FILTER_EXPRESSION %q", c.typ, c.expr, st, c.msg)
		}
	}
}

// The Into forms write what their plain forms return over whatever dst
// held, and leave dst alone on a refusal.
func TestIntoForms(t *testing.T) {
	w := newWorld()
	if _, err := w.do("setup", args{}); err != nil {
		t.Fatal(err)
	}
	junkPop := pop.PopRequest{ClientID: "x", ConsumerGroup: "y", Topic: "z", QueueID: 7, MaxMsgNums: 3, InvisibleTime: 1, PollTime: 2, BornTime: 3,
		InitMode: 4, ExpressionType: "SQL92", Expression: "a > 1", Order: true, AttemptID: "q"}
	if f := zeroField(junkPop); f != "" {
		t.Fatalf("the junk request leaves %s zero: PopRequestInto could leave it unset unseen", f)
	}
	for _, expr := range []string{"*", "||"} {
		rr := ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", Expression: expr, BatchSize: 1, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second}
		want, wantSt := w.px.PopRequest(w.now, &rr)
		dst := junkPop
		st := w.px.PopRequestInto(w.now, &rr, &dst)
		if st != wantSt || st.IsOK() && dst != want || !st.IsOK() && dst != junkPop {
			t.Fatalf("expression %q: %v %+v, want %v %+v", expr, st, dst, wantSt, want)
		}
	}
	w.b.Put(w.now, &model.Message{Topic: "t", UniqKey: "m", ID: 1})
	req, _ := w.px.PopRequest(w.now, &ReceiveRequest{ClientID: "c", Group: "g", Topic: "t", BatchSize: 1, InvisibleTime: 30 * clock.Second, Timeout: 30 * clock.Second})
	var res ReceiveResult
	w.px.Pop(w.now, &req, 17, &res)
	if len(res.Pop.Messages) != 1 {
		t.Fatalf("%d messages popped", len(res.Pop.Messages))
	}
	m := &res.Pop.Messages[0]
	junkAck := pop.AckRequest{ClientID: "x", ConsumerGroup: "y", Topic: "z", QueueID: 7, Offset: 8, Handle: model.ReceiptHandle{BrokerName: "w", QueueOffset: 9}}
	if f := zeroField(junkAck); f != "" {
		t.Fatalf("the junk ack leaves %s zero: AckInto could leave it unset unseen", f)
	}
	for _, at := range []clock.Time{w.now.Add(time30s), w.now} { // expired, then live
		ar := AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "m", Handle: m.Handle, Lease: m.Lease}
		want, wantT, wantSt := w.px.Ack(at, &ar)
		dst := junkAck
		tg, st := w.px.AckInto(at, &ar, &dst)
		if st != wantSt || tg != wantT || st.IsOK() && dst != want || !st.IsOK() && dst != junkAck {
			t.Fatalf("at %v: %v %+v %+v, want %v %+v %+v", at, st, tg, dst, wantSt, wantT, want)
		}
		if st.IsOK() != (at == w.now) {
			t.Fatalf("at %v: %v", at, st)
		}
		if st.IsOK() && dst != pop.NewAckRequest(ar.Group, ar.Topic, &ar.Handle) {
			t.Fatalf("at %v: %+v, want NewAckRequest's", at, dst)
		}
	}
	// A managed message's ack goes with the proxy's handle, which it stops
	// managing.
	w.b.Put(w.now, &model.Message{Topic: "t", UniqKey: "n", ID: 2})
	w.px.Pop(w.now, &req, 17, &res)
	if len(res.Pop.Messages) != 1 {
		t.Fatalf("%d messages popped", len(res.Pop.Messages))
	}
	m = &res.Pop.Messages[0]
	w.px.Manage(w.now, "c", "g", m)
	managed := m.Handle
	ar := AckRequest{ClientID: "c", Group: "g", Topic: "t", MessageID: "n", Handle: model.ReceiptHandle{BrokerName: "other", PopTime: w.now.Millis(), InvisibleTime: 1}, Lease: 99}
	dst := junkAck
	tg, st := w.px.AckInto(w.now, &ar, &dst)
	if !st.IsOK() || tg != (Target{Handle: managed, Lease: m.Lease, Managed: true}) || dst != pop.NewAckRequest("g", "t", &managed) || w.px.Managed() != 0 {
		t.Fatalf("managed ack: %v %+v %+v, %d still managed", st, tg, dst, w.px.Managed())
	}
}

// zeroField names the first field of the struct v that holds its zero
// value ("" when none does).
func zeroField(v any) string {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			return rv.Type().Field(i).Name
		}
	}
	return ""
}
