package sqs

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestScripts runs every testdata/script/*.txt file against a fresh
// service. Each file documents, block by block, what AWS says and what the
// engine answers; after every command the engine's invariants must hold.
// Regenerate the expected outputs with
//
//	go test ./sqs -run TestScripts -rewrite
//
// and review the diff.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/script")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			e := newScriptEnv(t)
			if err := runScriptFile(path, e.exec, *rewriteScripts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// scriptEnv is what a script drives: a service, the virtual now, the
// receipt handles clients hold (by lease), and the next message id.
type scriptEnv struct {
	t       testing.TB
	cfg     Config
	s       *Service
	now     clock.Time
	handles map[model.LeaseID]string
	nextMsg model.MsgID
	out     strings.Builder
}

func newScriptEnv(t testing.TB) *scriptEnv {
	e := &scriptEnv{t: t, cfg: DefaultConfig(), now: clock.Epoch, handles: map[model.LeaseID]string{}, nextMsg: 1}
	s, err := New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	return e
}

func (e *scriptEnv) printf(format string, args ...any) {
	fmt.Fprintf(&e.out, format+"\n", args...)
}

type scriptCommand struct {
	usage string
	run   func(e *scriptEnv, a *cmdArgs) error
}

var scriptCommands map[string]scriptCommand

func init() {
	scriptCommands = map[string]scriptCommand{
		"config":       {"config servers=N standardLimit=N fifoLimit=N window=N salt=N (before any queue)", cmdConfig},
		"advance":      {"advance <duration>", cmdAdvance},
		"create":       {"create <queue> [<Attribute>=<value>...] [redrive=<dlq>:<maxReceiveCount>]", cmdCreate},
		"send":         {"send <queue> msg=N body=S size=N delay=N group=G dedup=D n=N", cmdSend},
		"send-batch":   {"send-batch <queue> <id>[:<body>|:@<size>]... group=G dedup=D delay=N size=N", cmdSendBatch},
		"receive":      {"receive <queue> max=N vt=N wait=N attempt=A sample=<bits> dup=SEQ verbose=B", cmdReceive},
		"delete":       {"delete <queue> <lease>|handle=H", cmdDelete},
		"delete-batch": {"delete-batch <queue> <id>:<lease>|<id>:h:<handle>...", cmdDeleteBatch},
		"change":       {"change <queue> <lease>|handle=H vt=N", cmdChange},
		"change-batch": {"change-batch <queue> <id>:<lease>:<vt>|<id>:h:<handle>:<vt>...", cmdChangeBatch},
		"purge":        {"purge <queue>", cmdPurge},
		"tick":         {"tick", cmdTick},
		"due":          {"due", cmdDue},
		"cancel":       {"cancel <poll>", cmdCancel},
		"state":        {"state <queue>", cmdState},
		"counts":       {"counts", cmdCounts},
		"messages":     {"messages <queue>", cmdMessages},
	}
}

// exec runs one command line. Every command accepts at=+<duration> (from
// clock.Epoch) to move the clock forward before it runs. After it, the
// service's invariants must hold.
func (e *scriptEnv) exec(line string) (string, error) {
	e.out.Reset()
	a, err := parseCommand(line)
	if err != nil {
		return "", err
	}
	c, ok := scriptCommands[a.name]
	if !ok {
		names := make([]string, 0, len(scriptCommands))
		for n := range scriptCommands {
			names = append(names, n)
		}
		slices.Sort(names)
		return "", fmt.Errorf("unknown command %q; commands: %s", a.name, strings.Join(names, ", "))
	}
	if a.has("at") {
		t := a.instant("at", e.now)
		if a.err != nil {
			return "", a.err
		}
		if t < e.now {
			return "", fmt.Errorf("at=%v is before now (%v): time only moves forward", t, e.now)
		}
		e.now = t
	}
	if err := c.run(e, a); err != nil {
		return "", fmt.Errorf("%v (usage: %s)", err, c.usage)
	}
	if err := e.s.CheckInvariants(); err != nil {
		return "", fmt.Errorf("invariant broken after %q: %v", line, err)
	}
	return e.out.String(), nil
}

func (e *scriptEnv) printErr(err *Error) {
	e.printf("error %v: %s", err.Code, err.Message)
}

// effects prints what happened inside the call, and remembers the handles
// of answered polls.
func (e *scriptEnv) effects(fx Effects) {
	for _, ev := range fx.Events {
		e.printf("  event %v", ev)
	}
	for _, an := range fx.Answers {
		if len(an.Messages) == 0 {
			e.printf("  answer poll=%d at %v %s: empty (wait ended)", an.PollID, an.At, an.Queue)
			continue
		}
		e.printf("  answer poll=%d at %v %s:", an.PollID, an.At, an.Queue)
		e.deliveries(an.Messages, "    ", false)
	}
}

func (e *scriptEnv) deliveries(ds []Delivery, indent string, verbose bool) {
	for i := range ds {
		d := &ds[i]
		e.handles[d.Lease] = d.ReceiptHandle
		s := d.String()
		if verbose {
			s += fmt.Sprintf(" sent=%v first=%v body=%q dedup=%s handle=%s", d.Sent, d.FirstReceive, d.Body, d.MessageDeduplicationID, d.ReceiptHandle)
		}
		e.printf("%s%s", indent, s)
	}
}

func cmdConfig(e *scriptEnv, a *cmdArgs) error {
	c := e.cfg
	c.Servers = int(a.int("servers", int64(c.Servers)))
	c.StandardInFlightLimit = int(a.int("standardLimit", int64(c.StandardInFlightLimit)))
	c.FifoInFlightLimit = int(a.int("fifoLimit", int64(c.FifoInFlightLimit)))
	c.FifoScanWindow = int(a.int("window", int64(c.FifoScanWindow)))
	c.HandleSalt = uint64(a.int("salt", int64(c.HandleSalt)))
	if err := a.done(); err != nil {
		return err
	}
	if len(e.s.Queues()) > 0 {
		return fmt.Errorf("config must come before the first queue")
	}
	s, err := New(c)
	if err != nil {
		e.printf("error: %v", err)
		return nil
	}
	e.cfg, e.s = c, s
	e.printf("ok")
	return nil
}

func cmdAdvance(e *scriptEnv, a *cmdArgs) error {
	d, err := clock.ParseDuration(a.arg(0, "duration"))
	if err := a.done(); err != nil {
		return err
	}
	if err != nil || d < 0 {
		return fmt.Errorf("advance: want a non-negative duration")
	}
	e.now = e.now.Add(d)
	e.printf("now=%v", e.now)
	return nil
}

func cmdCreate(e *scriptEnv, a *cmdArgs) error {
	name := a.arg(0, "queue")
	attrs := map[string]string{}
	for _, k := range a.keys {
		switch k {
		case "at":
		case "redrive":
			dlq, n, ok := strings.Cut(a.str(k, ""), ":")
			if !ok {
				return fmt.Errorf("redrive=<dlq>:<maxReceiveCount>")
			}
			attrs[AttrRedrivePolicy] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%s}`, e.cfg.ARN(dlq), n)
		default:
			attrs[k] = a.str(k, "")
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.CreateQueue(e.now, name, attrs)
	switch {
	case r.Err != nil:
		e.printErr(r.Err)
	case r.Existed:
		e.printf("existed %s", r.ARN)
	default:
		e.printf("created %s", r.ARN)
	}
	e.effects(r.Effects)
	return nil
}

func (e *scriptEnv) msgID(a *cmdArgs) model.MsgID {
	if a.has("msg") {
		return model.MsgID(a.int("msg", 0))
	}
	id := e.nextMsg
	e.nextMsg++
	return id
}

func optInt(a *cmdArgs, k string) Int {
	if !a.has(k) {
		return Int{}
	}
	return Some(int(a.int(k, 0)))
}

func cmdSend(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	n := a.int("n", 1)
	req := SendMessageRequest{Queue: q, DelaySeconds: optInt(a, "delay"), MessageGroupID: a.str("group", ""), MessageDeduplicationID: a.str("dedup", "")}
	body, hasBody := a.str("body", ""), a.has("body")
	size := a.int("size", 0)
	first := e.msgID(a)
	if err := a.done(); err != nil {
		return err
	}
	for i := int64(0); i < n; i++ {
		req.MsgID = first + model.MsgID(i)
		e.nextMsg = max(e.nextMsg, req.MsgID+1)
		switch {
		case size > 0:
			req.MessageBody = []byte(strings.Repeat("x", int(size)))
		case hasBody:
			req.MessageBody = []byte(body)
		default:
			req.MessageBody = []byte("m" + strconv.Itoa(int(req.MsgID)))
		}
		r := e.s.SendMessage(e.now, &req)
		switch {
		case r.Err != nil:
			e.printf("msg=%d", req.MsgID)
			e.printErr(r.Err)
		case r.Deduplicated:
			e.printf("msg=%d deduplicated: seq=%d msg=%d", req.MsgID, r.Seq, r.Original)
		default:
			e.printf("msg=%d seq=%d", req.MsgID, r.Seq)
		}
		e.effects(r.Effects)
	}
	return nil
}

func cmdSendBatch(e *scriptEnv, a *cmdArgs) error {
	req := SendMessageBatchRequest{Queue: a.arg(0, "queue")}
	group, dedup, delay := a.str("group", ""), a.str("dedup", ""), optInt(a, "delay")
	size := a.int("size", 0)
	for _, tok := range a.rest(1) {
		id, body, hasBody := strings.Cut(tok, ":")
		x := SendMessageBatchEntry{ID: id, MsgID: e.nextMsg, MessageGroupID: group, DelaySeconds: delay}
		e.nextMsg++
		if dedup != "" {
			x.MessageDeduplicationID = dedup + "-" + id
		}
		n, err := strconv.Atoi(strings.TrimPrefix(body, "@"))
		switch {
		case size > 0:
			body = strings.Repeat("x", int(size))
		case strings.HasPrefix(body, "@") && err == nil:
			body = strings.Repeat("x", n) // <id>:@N is a body of N bytes
		case !hasBody:
			body = "m" + strconv.Itoa(int(x.MsgID))
		}
		x.MessageBody = []byte(body)
		req.Entries = append(req.Entries, x)
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.SendMessageBatch(e.now, &req)
	if r.Err != nil {
		e.printErr(r.Err)
	}
	for i, x := range r.Entries {
		msg := req.Entries[i].MsgID
		switch {
		case x.Err != nil:
			e.printf("%s msg=%d error %v: %s", x.ID, msg, x.Err.Code, x.Err.Message)
		case x.Deduplicated:
			e.printf("%s msg=%d deduplicated: seq=%d msg=%d", x.ID, msg, x.Seq, x.Original)
		default:
			e.printf("%s msg=%d seq=%d", x.ID, msg, x.Seq)
		}
	}
	e.effects(r.Effects)
	return nil
}

func cmdReceive(e *scriptEnv, a *cmdArgs) error {
	req := ReceiveMessageRequest{Queue: a.arg(0, "queue"), MaxNumberOfMessages: optInt(a, "max"), VisibilityTimeout: optInt(a, "vt"),
		WaitTimeSeconds: optInt(a, "wait"), ReceiveRequestAttemptID: a.str("attempt", ""), DuplicateSeq: a.int("dup", 0)}
	if bits := a.str("sample", ""); bits != "" {
		for _, b := range strings.Split(bits, ",") {
			i, err := strconv.Atoi(b)
			if err != nil || i < 0 || i > 63 {
				return fmt.Errorf("sample=%s: want a comma list of server numbers 0..63", bits)
			}
			req.Sample |= 1 << uint(i)
		}
	}
	verbose := a.bool("verbose", false)
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.ReceiveMessage(e.now, &req)
	switch {
	case r.Err != nil:
		e.printErr(r.Err)
	case r.Parked:
		e.printf("parked poll=%d until %v", r.PollID, r.WaitUntil)
	case len(r.Messages) == 0:
		e.printf("empty")
	}
	e.deliveries(r.Messages, "", verbose)
	e.effects(r.Effects)
	return nil
}

// handleArg returns the handle a command names: handle=H verbatim, or the
// handle of the lease in positional argument i.
func (e *scriptEnv) handleArg(a *cmdArgs, i int) (string, error) {
	if a.has("handle") {
		return a.str("handle", ""), nil
	}
	return e.leaseHandle(a.arg(i, "lease"))
}

func (e *scriptEnv) leaseHandle(tok string) (string, error) {
	if h, ok := strings.CutPrefix(tok, "h:"); ok {
		return h, nil
	}
	n, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return "", fmt.Errorf("lease %q: want a lease number", tok)
	}
	h, ok := e.handles[model.LeaseID(n)]
	if !ok {
		return "", fmt.Errorf("no handle for lease %d: receive it first", n)
	}
	return h, nil
}

func cmdDelete(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	h, err := e.handleArg(a, 1)
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.DeleteMessage(e.now, &DeleteMessageRequest{Queue: q, ReceiptHandle: h})
	switch {
	case r.Err != nil:
		e.printErr(r.Err)
	case r.Deleted:
		e.printf("deleted (lease %d)", r.Lease)
	default:
		e.printf("ok, nothing deleted (lease %d)", r.Lease)
	}
	e.effects(r.Effects)
	return nil
}

func cmdDeleteBatch(e *scriptEnv, a *cmdArgs) error {
	req := DeleteMessageBatchRequest{Queue: a.arg(0, "queue")}
	for _, tok := range a.rest(1) {
		id, l, _ := strings.Cut(tok, ":")
		h, err := e.leaseHandle(l)
		if err != nil {
			return err
		}
		req.Entries = append(req.Entries, DeleteMessageBatchEntry{ID: id, ReceiptHandle: h})
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.DeleteMessageBatch(e.now, &req)
	if r.Err != nil {
		e.printErr(r.Err)
	}
	for _, x := range r.Entries {
		switch {
		case x.Err != nil:
			e.printf("%s error %v: %s", x.ID, x.Err.Code, x.Err.Message)
		case x.Deleted:
			e.printf("%s deleted (lease %d)", x.ID, x.Lease)
		default:
			e.printf("%s ok, nothing deleted (lease %d)", x.ID, x.Lease)
		}
	}
	e.effects(r.Effects)
	return nil
}

func cmdChange(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	h, err := e.handleArg(a, 1)
	if err != nil {
		return err
	}
	vt := int(a.int("vt", 0))
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.ChangeMessageVisibility(e.now, &ChangeMessageVisibilityRequest{Queue: q, ReceiptHandle: h, VisibilityTimeout: vt})
	e.printChange(r.Err, r.Lease, r.Deadline, r.Ended, "")
	e.effects(r.Effects)
	return nil
}

func (e *scriptEnv) printChange(err *Error, lease model.LeaseID, deadline clock.Time, ended bool, prefix string) {
	switch {
	case err != nil:
		e.printf("%serror %v: %s", prefix, err.Code, err.Message)
	case ended:
		e.printf("%slease %d ended: visible now", prefix, lease)
	default:
		e.printf("%slease %d deadline=%v", prefix, lease, deadline)
	}
}

func cmdChangeBatch(e *scriptEnv, a *cmdArgs) error {
	req := ChangeMessageVisibilityBatchRequest{Queue: a.arg(0, "queue")}
	for _, tok := range a.rest(1) {
		id, rest, ok1 := strings.Cut(tok, ":")
		i := strings.LastIndexByte(rest, ':')
		if !ok1 || i < 0 {
			return fmt.Errorf("entry %q: want <id>:<lease>:<vt> or <id>:h:<handle>:<vt>", tok)
		}
		p := []string{id, rest[:i], rest[i+1:]}
		h, err := e.leaseHandle(p[1])
		if err != nil {
			return err
		}
		vt, err := strconv.Atoi(p[2])
		if err != nil {
			return fmt.Errorf("entry %q: vt must be an integer", tok)
		}
		req.Entries = append(req.Entries, ChangeVisibilityBatchEntry{ID: p[0], ReceiptHandle: h, VisibilityTimeout: vt})
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.ChangeMessageVisibilityBatch(e.now, &req)
	if r.Err != nil {
		e.printErr(r.Err)
	}
	for _, x := range r.Entries {
		e.printChange(x.Err, x.Lease, x.Deadline, x.Ended, x.ID+" ")
	}
	e.effects(r.Effects)
	return nil
}

func cmdPurge(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.PurgeQueue(e.now, q)
	if r.Err != nil {
		e.printErr(r.Err)
	} else {
		e.printf("purged %d", r.Purged)
	}
	e.effects(r.Effects)
	return nil
}

func cmdTick(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.s.Tick(e.now)
	if len(r.Events)+len(r.Answers) == 0 {
		e.printf("nothing")
	}
	e.effects(r.Effects)
	return nil
}

func cmdDue(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	if t, ok := e.s.NextDue(); ok {
		e.printf("next due %v", t)
	} else {
		e.printf("nothing due")
	}
	return nil
}

func cmdCancel(e *scriptEnv, a *cmdArgs) error {
	id, err := strconv.ParseUint(a.arg(0, "poll"), 10, 64)
	if err := a.done(); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("poll must be a number")
	}
	r := e.s.CancelPoll(e.now, id)
	e.printf("cancelled=%v", r.Cancelled)
	e.effects(r.Effects)
	return nil
}

func cmdState(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	if err := a.done(); err != nil {
		return err
	}
	st, ok := e.s.State(q)
	if !ok {
		e.printf("no queue %s", q)
		return nil
	}
	at := st.Attributes
	e.printf("%s %s fifo=%v next-seq=%d groups=%d", st.Name, st.ARN, at.FifoQueue, st.NextSeq, st.Groups)
	e.printf("  VisibilityTimeout=%d MessageRetentionPeriod=%d DelaySeconds=%d ReceiveMessageWaitTimeSeconds=%d MaximumMessageSize=%d",
		at.VisibilityTimeout, at.MessageRetentionPeriod, at.DelaySeconds, at.ReceiveMessageWaitTimeSeconds, at.MaximumMessageSize)
	if p := at.RedrivePolicy; p != nil {
		e.printf("  RedrivePolicy deadLetterTargetArn=%s maxReceiveCount=%d", p.DeadLetterTargetArn, p.MaxReceiveCount)
	}
	if at.FifoQueue {
		e.printf("  ContentBasedDeduplication=%v DeduplicationScope=%s FifoThroughputLimit=%s", at.ContentBasedDeduplication, at.DeduplicationScope, at.FifoThroughputLimit)
	}
	e.printf("  %v", st.Counts)
	e.printf("  stats %s", nonZero(st.Stats))
	return nil
}

// nonZero prints the non-zero fields of a struct of ints, in field order.
func nonZero(x any) string {
	v := reflect.ValueOf(x)
	var parts []string
	for i := 0; i < v.NumField(); i++ {
		if n := v.Field(i).Int(); n != 0 {
			name := v.Type().Field(i).Name
			parts = append(parts, fmt.Sprintf("%s=%d", strings.ToLower(name[:1])+name[1:], n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func cmdCounts(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	for _, c := range e.s.Counts() {
		e.printf("%v", c)
	}
	return nil
}

func cmdMessages(e *scriptEnv, a *cmdArgs) error {
	q := a.arg(0, "queue")
	if err := a.done(); err != nil {
		return err
	}
	ms := e.s.Messages(q)
	if len(ms) == 0 {
		e.printf("none")
	}
	for _, m := range ms {
		e.printf("%v", m)
	}
	return nil
}

// TestScriptErrors checks that mistakes in a script fail instead of
// becoming expected output.
func TestScriptErrors(t *testing.T) {
	for _, line := range []string{
		"frobnicate", "send", "send q n=x", "send q bogus=1", "receive q extra", "delete q 7",
		"advance 1s x", "config noSuch=1", "send q at=-5", `send q body="a`, "change-batch q a:1",
	} {
		e := newScriptEnv(t)
		if _, err := e.exec(line); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
	e := newScriptEnv(t)
	if _, err := e.exec("advance 2s"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.exec("counts at=+1s"); err == nil {
		t.Error("time moved backwards without an error")
	}
}

// TestScriptFormatRoundTrip checks that -rewrite keeps comments, commands
// and layout.
func TestScriptFormatRoundTrip(t *testing.T) {
	const text = "# header\n\ncmd a\n----\nout 1\nout 2\n\n# before b\ncmd b x=\"1 2\"\n----\n\ncmd c\n----\nlast\n\n# trailer\n"
	f, err := parseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.format(); got != text {
		t.Fatalf("format changed the script:\n%s\nwant:\n%s", got, text)
	}
	if _, err := parseScript("cmd\nout\n"); err == nil {
		t.Fatal("a command without ---- parsed")
	}
	toks, err := tokenize(`create q RedrivePolicy='{"a":"b c"}' x="y z"`)
	if err != nil || len(toks) != 4 || toks[2] != `RedrivePolicy={"a":"b c"}` || toks[3] != "x=y z" {
		t.Fatalf("tokenize: %q %v", toks, err)
	}
}
