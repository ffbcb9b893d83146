package proxy

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// TestScripts runs the scripted tests in testdata/script: the proxy in
// front of a real pop.Broker, each command with the output it must give.
// A script is blocks of
//
//	# comments
//	command key=value ...
//	----
//	expected output (no blank line)
//
// separated by blank lines. `go test ./proxy -run TestScripts -rewrite`
// regenerates the outputs, to be reviewed as a diff. Times print as
// T+seconds from clock.Epoch.
var rewrite = flag.Bool("rewrite", false, "regenerate the expected output of testdata/script/*.txt")

func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/script/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runScript(string(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if *rewrite {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if out != string(data) {
				t.Errorf("%s: output differs; if the new output is right, run go test ./proxy -run TestScripts -rewrite and review the diff:\n%s", path, firstDiff(string(data), out))
			}
		})
	}
}

func firstDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return ""
}

// runScript runs every block and returns the script with its outputs.
func runScript(src string) (string, error) {
	w := newWorld()
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out.WriteString(l + "\n")
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return "", fmt.Errorf("line %d: command %q must be followed by ----", i+1, l)
		}
		got, err := w.run(l)
		if err != nil {
			return "", fmt.Errorf("line %d: %s: %v", i+1, l, err)
		}
		out.WriteString("----\n" + strings.TrimRight(got, "\n") + "\n")
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
		}
		if i < len(lines) {
			out.WriteString("\n")
		}
	}
	return out.String(), nil
}

// world is a broker, a proxy in front of it, the virtual time and what
// the script has received (by message key).
type world struct {
	b        *pop.Broker
	px       *Proxy
	now      clock.Time
	nextID   model.MsgID
	received map[string]pop.PoppedMessage // the latest delivery of each message key
	renewals map[uint64]Renewal
	res      ReceiveResult
}

func newWorld() *world {
	b, err := pop.New(pop.KVConfig())
	if err != nil {
		panic(err)
	}
	return &world{b: b, px: New(b, DefaultConfig()), now: clock.Epoch, nextID: 1, received: map[string]pop.PoppedMessage{}, renewals: map[uint64]Renewal{}}
}

// args is a command's key=value arguments.
type args map[string]string

func (a args) str(k, def string) string {
	if v, ok := a[k]; ok {
		delete(a, k)
		return v
	}
	return def
}

func (a args) dur(k string, def clock.Duration) (clock.Duration, error) {
	v := a.str(k, "")
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	return clock.Duration(d / time.Microsecond), err
}

func (a args) num(k string, def int64) (int64, error) {
	v := a.str(k, "")
	if v == "" {
		return def, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

func (w *world) run(line string) (string, error) {
	f := strings.Fields(line)
	a := args{}
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		a[k] = v
	}
	out, err := w.do(f[0], a)
	if err == nil && len(a) > 0 {
		err = fmt.Errorf("unknown arguments %v", a)
	}
	return out, err
}

func (w *world) do(cmd string, a args) (string, error) {
	switch cmd {
	case "setup":
		topic, group := a.str("topic", "t"), a.str("group", "g")
		retry, err := a.num("retry", 16)
		if err != nil {
			return "", err
		}
		if err := w.b.CreateTopic(pop.TopicConfig{Name: topic, ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
			return "", err
		}
		g := pop.DefaultGroup(group)
		g.RetryMaxTimes = int32(retry)
		g.ConsumeMessageOrderly = a.str("orderly", "") == "true"
		return "ok", w.b.CreateGroup(g)
	case "put":
		n, err := a.num("n", 1)
		if err != nil {
			return "", err
		}
		var out []string
		for i := int64(0); i < n; i++ {
			m := &model.Message{Topic: a["topic"], UniqKey: a["key"] + strconv.FormatInt(i, 10), ID: w.nextID}
			if m.Topic == "" {
				m.Topic = "t"
			}
			w.nextID++
			r := w.b.Put(w.now, m)
			out = append(out, fmt.Sprintf("%s stored at %s/0@%d", m.UniqKey, m.Topic, r.Offset))
		}
		delete(a, "topic")
		delete(a, "key")
		return strings.Join(out, "\n"), nil
	case "advance":
		d, err := a.dur("by", 0)
		w.now = w.now.Add(d)
		return "now " + w.at(w.now), err
	case "revive":
		r := w.b.Revive(w.now)
		return fmt.Sprintf("revived %d", len(r.Revivals)), nil
	case "receive":
		return w.receive(a)
	case "manage":
		m, ok := w.received[a.str("msg", "")]
		if !ok {
			return "", fmt.Errorf("no such message received")
		}
		w.px.Manage(w.now, a.str("client", "c1"), "g", &m)
		return fmt.Sprintf("managed: %d handle(s)", w.px.Managed()), nil
	case "ack":
		return w.ack(a)
	case "change":
		return w.change(a)
	case "release":
		w.px.Release(a.str("client", "c1"), "g", a.str("msg", ""))
		return fmt.Sprintf("managed: %d handle(s)", w.px.Managed()), nil
	case "forget":
		w.px.Forget(a.str("client", "c1"))
		return fmt.Sprintf("managed: %d handle(s)", w.px.Managed()), nil
	case "next-due":
		t, ok := w.px.NextDue()
		if !ok {
			return "nothing due", nil
		}
		return "next due " + w.at(t), nil
	case "tick":
		return w.tick(), nil
	case "renewed":
		return w.renewed(a)
	case "renew-failed":
		id, err := a.num("id", 0)
		return fmt.Sprintf("retry=%v managed: %d handle(s)", w.px.RenewFailed(uint64(id)), w.px.Managed()), err
	}
	return "", fmt.Errorf("unknown command %q", cmd)
}

func (w *world) at(t clock.Time) string {
	return "T+" + strconv.FormatFloat(t.Sub(clock.Epoch).Seconds(), 'f', -1, 64) + "s"
}

func (w *world) receive(a args) (string, error) {
	req := ReceiveRequest{ClientID: a.str("client", "c1"), Group: "g", Topic: a.str("topic", "t"), Expression: "*", AutoRenew: a.str("auto-renew", "") == "true",
		AttemptID: a.str("attempt", "")}
	var err error
	var n int64
	if n, err = a.num("batch", 32); err != nil {
		return "", err
	}
	req.BatchSize = int32(n)
	if n, err = a.num("max-attempts", 17); err != nil {
		return "", err
	}
	req.MaxAttempts = int32(n)
	for _, d := range []struct {
		k   string
		p   *clock.Duration
		def clock.Duration
	}{{"invisible", &req.InvisibleTime, 30 * clock.Second}, {"poll", &req.LongPollingTimeout, 0}, {"timeout", &req.Timeout, 30 * clock.Second}, {"request-timeout", &req.RequestTimeout, 3 * clock.Second}} {
		if *d.p, err = a.dur(d.k, d.def); err != nil {
			return "", err
		}
	}
	preq, st := w.px.PopRequest(w.now, &req)
	if !st.IsOK() {
		return "status " + st.String(), nil
	}
	out := []string{fmt.Sprintf("pop maxMsgNums=%d invisible=%v poll=%v queueId=%d initMode=%d", preq.MaxMsgNums, preq.InvisibleTime.Std(), preq.PollTime.Std(), preq.QueueID, preq.InitMode)}
	if preq.Order {
		out[0] += fmt.Sprintf(" order=true attemptId=%q", preq.AttemptID)
	}
	preq.PollTime = 0 // the script does not park
	w.px.Pop(w.now, &preq, req.MaxAttempts, &w.res)
	out = append(out, fmt.Sprintf("status %s broker=%s", w.res.Status, w.res.Pop.Code))
	for _, l := range w.res.Pop.Lapsed {
		out = append(out, fmt.Sprintf("  lapsed lease %d (%s@%d, reattempt %v)", l.Lease, l.Topic, l.Offset, l.Reattempt))
	}
	for i := range w.res.Pop.Messages {
		m := &w.res.Pop.Messages[i]
		w.received[m.Message.UniqKey] = *m
		out = append(out, fmt.Sprintf("  %s id=%s attempt=%d lease=%d shown=%s lives=%s/%d@%d until %s", m.Message.UniqKey, MessageID(&m.Message), DeliveryAttempt(&m.Message),
			m.Lease, m.Message.Topic, m.Handle.RealTopic(m.Message.Topic, "g"), m.Handle.QueueID, m.Handle.QueueOffset, w.at(m.Deadline)))
	}
	for _, f := range w.res.Forwarded {
		cp, _ := w.b.Message(f.DLQTopic, 0, f.Put.Offset)
		origin, _ := cp.Property(model.PropertyOriginMessageID)
		retry, _ := cp.Property(model.PropertyRetryTopic)
		out = append(out, fmt.Sprintf("  to DLQ %s (lease %d, from %s/%d@%d): %s/0@%d reconsumeTimes=%d ORIGIN_MESSAGE_ID=%s RETRY_TOPIC=%s; original acked, removed lease %d",
			f.UniqKey, f.Lease, f.Topic, f.QueueID, f.Offset, f.DLQTopic, f.Put.Offset, cp.ReconsumeTimes, origin, retry, f.Ack.Removed))
	}
	return strings.Join(out, "\n"), nil
}

func (w *world) ack(a args) (string, error) {
	m, ok := w.received[a.str("msg", "")]
	if !ok {
		return "", fmt.Errorf("no such message received")
	}
	req := AckRequest{ClientID: a.str("client", "c1"), Group: "g", Topic: m.Message.Topic, MessageID: m.Message.UniqKey, Handle: m.Handle, Lease: m.Lease}
	before := w.b.InFlightCount()
	areq, target, st := w.px.Ack(w.now, &req)
	if !st.IsOK() {
		return fmt.Sprintf("handle of lease %d (managed %v): status %s, in flight %d", target.Lease, target.Managed, st, before), nil
	}
	r := w.b.Ack(w.now, &areq)
	return fmt.Sprintf("handle of lease %d (managed %v): status %s, broker removed lease %d, in flight %d -> %d", target.Lease, target.Managed, st, r.Removed, before, w.b.InFlightCount()), nil
}

func (w *world) change(a args) (string, error) {
	m, ok := w.received[a.str("msg", "")]
	if !ok {
		return "", fmt.Errorf("no such message received")
	}
	inv, err := a.dur("invisible", 30*clock.Second)
	if err != nil {
		return "", err
	}
	req := ChangeRequest{ClientID: a.str("client", "c1"), Group: "g", Topic: m.Message.Topic, MessageID: m.Message.UniqKey, Handle: m.Handle, Lease: m.Lease, InvisibleTime: inv}
	creq, target, st := w.px.Change(w.now, &req)
	if !st.IsOK() {
		return fmt.Sprintf("handle of lease %d (managed %v): status %s", target.Lease, target.Managed, st), nil
	}
	r := w.b.ChangeInvisibleTime(w.now, &creq)
	w.px.Changed(req.ClientID, req.Group, req.MessageID, target.Entry, &r)
	return fmt.Sprintf("handle of lease %d (managed %v): status %s, new lease %d until %s, removed %d", target.Lease, target.Managed, st, r.Lease, w.at(r.Deadline), r.Removed), nil
}

func (w *world) tick() string {
	rs := w.px.Tick(w.now, nil)
	if len(rs) == 0 {
		return "no renewal due"
	}
	var out []string
	for _, r := range rs {
		if r.Expired {
			out = append(out, fmt.Sprintf("%s lease %d: expired, dropped", r.MessageID, r.Lease))
			continue
		}
		w.renewals[r.ID] = r
		out = append(out, fmt.Sprintf("renewal id=%d %s lease %d for %v last=%v (topic %s)", r.ID, r.MessageID, r.Lease, r.Request.InvisibleTime.Std(), r.Last, r.Request.Topic))
	}
	return strings.Join(out, "\n")
}

// renewed sends renewal id to the broker and reports the answer.
func (w *world) renewed(a args) (string, error) {
	id, err := a.num("id", 0)
	if err != nil {
		return "", err
	}
	r, ok := w.renewals[uint64(id)]
	if !ok {
		return "", fmt.Errorf("no renewal %d", id)
	}
	res := w.b.ChangeInvisibleTime(w.now, &r.Request)
	if a.str("code", "") == "error" {
		res.Code = model.SystemError
	}
	managed := w.px.Renewed(r.ID, &res)
	return fmt.Sprintf("broker %s: new lease %d until %s; still managed %v, managed: %d handle(s)", res.Code, res.Lease, w.at(res.Deadline), managed, w.px.Managed()), nil
}
