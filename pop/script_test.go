package pop

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestScripts runs every testdata/script/*.txt file against a fresh broker.
// Each file documents, block by block, what the spec says and what the
// engine answers. Regenerate expected outputs with
//
//	go test ./pop -run TestScripts -rewrite
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
			e := newScriptEnvFor(t, filepath.Base(path))
			if err := runScriptFile(path, e.exec, *rewriteScripts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// heldHandle is the receipt handle a script's client holds for a message,
// with the topic the message was presented under.
type heldHandle struct {
	topic string
	h     model.ReceiptHandle
}

// scriptEnv is the state a script drives: a broker, the virtual now, and the
// handles the clients hold (by group and message key).
type scriptEnv struct {
	t        testing.TB
	b        *Broker
	now      clock.Time
	handles  map[string]heldHandle
	lastPop  int64                  // popTime of the last found pop, the default for batch-ack-raw
	lastRes  PopResult              // the last pop's result (the buffer every pop command reuses)
	pullRes  PullResult             // the buffer every pull command reuses
	kept     map[string]*PopRequest // requests kept by pop keep=NAME
	out      strings.Builder
	maxWakes int
	// twin is the same script's broker on the other path (command twin):
	// every command then runs on both.
	twin *scriptEnv
	// kvRevive and kvCleanup are when settle next runs the KV path's
	// Revive and CleanupCache.
	kvRevive, kvCleanup clock.Time
}

// newScriptEnv is a script environment on the KV path.
func newScriptEnv(t testing.TB) *scriptEnv { return newScriptEnvFor(t, "") }

// newScriptEnvFor starts a script's broker: ck_*.txt scripts run the
// checkpoint path (RocketMQ's default), the others the KV path; a script
// may switch with config popConsumerKVServiceEnable=....
func newScriptEnvFor(t testing.TB, file string) *scriptEnv {
	cfg := KVConfig()
	if strings.HasPrefix(file, "ck_") {
		cfg = DefaultConfig()
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &scriptEnv{t: t, b: b, now: clock.Epoch, handles: map[string]heldHandle{}, kept: map[string]*PopRequest{}, maxWakes: 1000}
	return e
}

func (e *scriptEnv) printf(format string, args ...any) {
	fmt.Fprintf(&e.out, format+"\n", args...)
}

// scriptCommand is one entry of the command table.
type scriptCommand struct {
	usage string
	run   func(e *scriptEnv, a *cmdArgs) error
}

var scriptCommands map[string]scriptCommand

func init() {
	scriptCommands = map[string]scriptCommand{
		"config":        {"config <field>=<v> ... bug.<switch>=<bool> ...", cmdConfig},
		"advance":       {"advance <duration>", cmdAdvance},
		"topic":         {"topic <name> read=N write=N perm=rw|r|w|- type=PRIORITY|...", cmdTopic},
		"group":         {"group <name> consumeEnable=B retryMaxTimes=N orderly=B priorityFactor=N", cmdGroup},
		"put":           {"put <topic> q=N key=K tag=T keys=K born=T flag=N sysFlag=N reconsume=N props=k:v,... body=B n=N", cmdPut},
		"fail-puts":     {"fail-puts topic=T q=N n=N|all|0", cmdFailPuts},
		"faults":        {"faults seed=N writePPM=N retryWritePPM=N reviveReadPPM=N lockBusyPPM=N", cmdFaults},
		"truncate":      {"truncate <topic> q=N offset=N", cmdTruncate},
		"reset-offset":  {"reset-offset <group> <topic> q=N offset=N", cmdResetOffset},
		"pop":           {"pop <group> <topic> q=N n=N it=MS poll=MS born=T client=C init=min|max type=T exp=E attempt=A order=B keep=NAME", cmdPop},
		"repop":         {"repop <name>", cmdRepop},
		"scribble":      {"scribble", cmdScribble},
		"ack":           {"ack <group> <key> topic=T q=N offset=N extra=S", cmdAck},
		"ack-raw":       {"ack-raw <group> <topic> q=N offset=N extra=S", cmdAckRaw},
		"batch-ack":     {"batch-ack <group> <key>...", cmdBatchAck},
		"batch-ack-raw": {"batch-ack-raw <group> [<topic>/<qid>/<startOffset>/<bit,bit|->]... retry=N pt=T it=MS revive=N", cmdBatchAckRaw},
		"change":        {"change <group> <key> it=MS topic=T q=N offset=N extra=S", cmdChange},
		"change-raw":    {"change-raw <group> <topic> q=N offset=N extra=S it=MS", cmdChangeRaw},
		"revive":        {"revive", cmdRevive},
		"pull":          {"pull <group> <topic> q=N offset=N n=N suspend=B timeout=MS type=T exp=E commit=N client=C", cmdPull},
		"hold-check":    {"hold-check", cmdHoldCheck},
		"holds":         {"holds", cmdHolds},
		"commit-offset": {"commit-offset <group> <topic> q=N offset=N", cmdCommitOffset},
		"query-offset":  {"query-offset <group> <topic> q=N nozero=B", cmdQueryOffset},
		"cleanup-cache": {"cleanup-cache", cmdCleanupCache},
		"poll-tick":     {"poll-tick", cmdPollTick},
		"polls":         {"polls", cmdPolls},
		"restart":       {"restart", cmdRestart},
		"stop-polling":  {"stop-polling: a graceful stop's PopLongPollingService shutdown (wakes and re-runs every parked pop)", cmdStopPolling},
		"flush-offsets": {"flush-offsets: persist every commit offset now (a graceful stop)", cmdFlushOffsets},
		"disconnect":    {"disconnect <client>", cmdDisconnect},
		"inflight":      {"inflight", cmdInflight},
		"offsets":       {"offsets <group> <topic> q=N", cmdOffsets},
		"messages":      {"messages <topic> q=N", cmdMessages},
		"stats":         {"stats", cmdStats},
		"state":         {"state", cmdState},
		"tick":          {"tick", cmdTick},
		"run":           {"run <duration>: tick at every NextCheckpointTick for that long", cmdRun},
		"ckstate":       {"ckstate", cmdCkState},
		"twin":          {"twin: from here on every command also runs on a broker on the other path", cmdTwin},
		"settle":        {"settle <duration>: run the path's periodic work for that long, as a driver does", cmdSettle},
		"order-tick":    {"order-tick: OrderTick now (FIFO lapses and lock-free notifications)", cmdOrderTick},
		"orderinfo":     {"orderinfo: the FIFO OrderInfo table, live and as last flushed", cmdOrderInfo},
		"set-mode":      {"set-mode <topic> <group> mode=POP|PULL|<other> share=N: SET_MESSAGE_REQUEST_MODE", cmdSetMode},
		"assign":        {"assign <topic> <group> clients=a,b,...|- client=C strategy=AVG model=CLUSTERING: QUERY_ASSIGNMENT for each client (or C)", cmdAssign},
	}
}

// exec runs one command line. Every command accepts at=+<duration> to move
// the clock (forward only) before it runs.
func (e *scriptEnv) exec(line string) (string, error) {
	if e.twin != nil {
		return e.execTwin(line)
	}
	return e.execOne(line)
}

// execTwin runs a command on the broker and its twin (the other path) at
// the same time; the output is printed once when both agree, else under
// [kv] and [fs].
func (e *scriptEnv) execTwin(line string) (string, error) {
	e.twin.now = e.now
	a, err := e.execOne(line)
	if err != nil {
		return "", err
	}
	b, err := e.twin.execOne(line)
	if err != nil {
		return "", err
	}
	e.now = max(e.now, e.twin.now)
	e.twin.now = e.now
	if a == b {
		return a, nil
	}
	kv, fs := a, b
	if !e.b.cfg.UsesKV() {
		kv, fs = b, a
	}
	indent := func(s string) string {
		return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
	}
	return "[kv]\n" + indent(kv) + "[fs]\n" + indent(fs), nil
}

// execOne runs a command on this environment's broker.
func (e *scriptEnv) execOne(line string) (string, error) {
	e.out.Reset()
	a, err := parseCommand(line)
	if err != nil {
		return "", err
	}
	c, ok := scriptCommands[a.name]
	if !ok {
		return "", fmt.Errorf("unknown command %q; commands: %s", a.name, commandNames())
	}
	if a.has("at") {
		ms := a.time("at", 0)
		if a.err != nil {
			return "", a.err
		}
		if err := e.setNow(ms); err != nil {
			return "", err
		}
	}
	if err := c.run(e, a); err != nil {
		return "", fmt.Errorf("%v (usage: %s)", err, c.usage)
	}
	return e.out.String(), nil
}

func commandNames() string {
	names := make([]string, 0, len(scriptCommands))
	for n := range scriptCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (e *scriptEnv) setNow(ms int64) error {
	t := clock.FromMillis(ms)
	if t < e.now {
		return fmt.Errorf("at=%v is before now (%v): time only moves forward", t, e.now)
	}
	e.now = t
	return nil
}

// configFields maps RocketMQ names (lowerCamel field names, bug.<switch> for
// Bugs) to the fields of Config.
func configField(cfg *Config, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(cfg).Elem()
	if bug, ok := strings.CutPrefix(name, "bug."); ok {
		v, name = v.FieldByName("Bugs"), bug
	}
	f := v.FieldByNameFunc(func(n string) bool { return lowerFirst(n) == name && n != "Bugs" })
	return f, f.IsValid()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func cmdConfig(e *scriptEnv, a *cmdArgs) error {
	cfg := e.b.cfg
	for _, k := range a.keys {
		if k == "at" {
			continue
		}
		f, ok := configField(&cfg, k)
		if !ok {
			return fmt.Errorf("no config field %s", k)
		}
		if err := setField(f, a.str(k, "")); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		e.printf("error: %v", err)
		return nil
	}
	e.b.cfg = cfg
	e.b.buf.changed() // nextBufferWork's answer depends on it
	return nil
}

func setField(f reflect.Value, v string) error {
	switch f.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q: want true or false", v)
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || f.OverflowInt(n) {
			return fmt.Errorf("%q: want an integer that fits %s", v, f.Kind())
		}
		f.SetInt(n)
	case reflect.String:
		f.SetString(v)
	default:
		return fmt.Errorf("field kind %s cannot be set from a script", f.Kind())
	}
	return nil
}

func cmdAdvance(e *scriptEnv, a *cmdArgs) error {
	d, err := clock.ParseDuration(a.arg(0, "duration"))
	if err := a.done(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("advance %v: time only moves forward", d)
	}
	e.now = e.now.Add(d)
	e.printf("now=%v", e.now)
	return nil
}

var permNames = map[string]int32{"rw": PermRead | PermWrite, "r": PermRead, "w": PermWrite, "-": 0}

func cmdTopic(e *scriptEnv, a *cmdArgs) error {
	c := TopicConfig{Name: a.arg(0, "topic"), ReadQueueNums: int32(a.int("read", 1)), WriteQueueNums: int32(a.int("write", 1)),
		MessageType: a.str("type", "")}
	perm, ok := permNames[a.str("perm", "rw")]
	if err := a.done(); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("perm: want rw, r, w or -")
	}
	c.Perm = perm
	if perm == 0 {
		c.Perm = 1 // PERM_INHERIT only: CreateTopic reads 0 as "read and write"
	}
	e.printOK(e.b.CreateTopic(c))
	return nil
}

func cmdGroup(e *scriptEnv, a *cmdArgs) error {
	g := DefaultGroup(a.arg(0, "group"))
	g.ConsumeEnable = a.bool("consumeEnable", true)
	g.RetryMaxTimes = int32(a.int("retryMaxTimes", 16))
	g.ConsumeMessageOrderly = a.bool("orderly", false)
	g.PriorityFactor = int64(a.int("priorityFactor", 100))
	if err := a.done(); err != nil {
		return err
	}
	e.printOK(e.b.CreateGroup(g))
	return nil
}

func (e *scriptEnv) printOK(err error) {
	if err != nil {
		e.printf("error: %v", err)
		return
	}
	e.printf("ok")
}

func cmdPut(e *scriptEnv, a *cmdArgs) error {
	proto := model.Message{
		Topic: a.arg(0, "topic"), QueueID: int32(a.int("q", 0)), Tags: a.str("tag", ""), Keys: a.str("keys", ""),
		BornTimestamp: a.time("born", e.now.Millis()), Flag: int32(a.int("flag", 0)), SysFlag: int32(a.int("sysFlag", 0)),
		ReconsumeTimes: int32(a.int("reconsume", 0)),
	}
	if body := a.str("body", ""); body != "" {
		proto.Body = []byte(body)
	}
	for _, kv := range splitList(a.str("props", "")) {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			return fmt.Errorf("props: %q: want key:value", kv)
		}
		if err := proto.SetProperty(k, v); err != nil {
			return err
		}
	}
	key, n := a.str("key", ""), a.int("n", 1)
	if err := a.done(); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("n=%d: want >= 1", n)
	}
	first, last := int64(-1), int64(-1)
	for i := int64(0); i < n; i++ {
		m := proto.Clone()
		m.UniqKey = key
		if n > 1 {
			m.UniqKey = key + strconv.FormatInt(i, 10)
		}
		before := m.Clone()
		res := e.b.Put(e.now, m)
		if !reflect.DeepEqual(m, before) {
			return fmt.Errorf("Put modified the message: %+v, was %+v", *m, *before)
		}
		switch {
		case res.Code != model.Success:
			e.printf("%s code=%v remark=%q", m.UniqKey, res.Code, res.Remark)
			e.printFailures(res.Failures)
			continue
		case n == 1:
			e.printf("offset=%d", res.Offset)
		case len(res.Woken) > 0:
			e.printf("%s offset=%d", m.UniqKey, res.Offset)
		}
		if first < 0 {
			first = res.Offset
		}
		last = res.Offset
		if err := e.wake(res.Woken); err != nil {
			return err
		}
		e.wakePulls(res.PullWoken)
	}
	if n > 1 && first >= 0 {
		e.printf("offsets=%d..%d", first, last)
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// cmdFailPuts sets a counted write fault (Faults.Writes): the next n writes
// to a topic (and queue, unless -1) fail; all fails them forever, 0 clears.
// A rule for the same topic and queue replaces the old one.
func cmdFailPuts(e *scriptEnv, a *cmdArgs) error {
	w := WriteFault{Topic: a.str("topic", ""), QueueID: int32(a.int("q", -1))}
	nv := a.str("n", "all")
	if err := a.done(); err != nil {
		return err
	}
	if w.Topic == "" {
		return fmt.Errorf("topic= is required")
	}
	if nv == "all" {
		w.Count = -1
	} else {
		n, err := strconv.ParseInt(nv, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("n=%q: want a count, all, or 0 to clear", nv)
		}
		w.Count = n
	}
	f := e.b.State().Faults
	var ws []WriteFault
	for _, x := range f.Writes {
		if x.Count != 0 && (x.Topic != w.Topic || x.QueueID != w.QueueID) {
			ws = append(ws, x)
		}
	}
	if w.Count != 0 {
		ws = append(ws, w)
	}
	f.Writes = ws
	e.printOK(e.b.SetFaults(f))
	return nil
}

// cmdFaults sets the hash-decided write faults (seed and probabilities),
// keeping the counted rules.
func cmdFaults(e *scriptEnv, a *cmdArgs) error {
	f := e.b.State().Faults
	f.Seed, f.WritePPM, f.RetryWritePPM, f.ReviveReadPPM = uint64(a.int("seed", 0)), a.int("writePPM", 0), a.int("retryWritePPM", 0), a.int("reviveReadPPM", 0)
	f.LockBusyPPM = a.int("lockBusyPPM", 0)
	if err := a.done(); err != nil {
		return err
	}
	e.printOK(e.b.SetFaults(f))
	return nil
}

// printFailures prints the failed writes a result reports.
func (e *scriptEnv) printFailures(fs []WriteFailure) {
	for _, f := range fs {
		e.printf("write-failed ordinal=%d %s/%d key=%s", f.Ordinal, f.Topic, f.QueueID, f.UniqKey)
	}
}

func cmdTruncate(e *scriptEnv, a *cmdArgs) error {
	tp, qid, off := a.arg(0, "topic"), int32(a.int("q", 0)), a.int("offset", 0)
	if err := a.done(); err != nil {
		return err
	}
	n, err := e.b.Truncate(tp, qid, off)
	if err != nil {
		e.printf("error: %v", err)
		return nil
	}
	e.printf("removed=%d min=%d max=%d", n, e.b.MinOffset(tp, qid), e.b.MaxOffset(tp, qid))
	return nil
}

func cmdResetOffset(e *scriptEnv, a *cmdArgs) error {
	g, tp, qid, off := a.arg(0, "group"), a.arg(1, "topic"), int32(a.int("q", 0)), a.int("offset", 0)
	if err := a.done(); err != nil {
		return err
	}
	r, err := e.b.ResetOffset(g, tp, qid, off)
	if err == nil && len(r.Discarded) > 0 {
		e.printf("discarded=%v", r.Discarded)
	}
	e.printOK(err)
	return nil
}

var initModes = map[string]int32{"min": InitModeMin, "max": InitModeMax}

func cmdPop(e *scriptEnv, a *cmdArgs) error {
	req := &PopRequest{
		ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", -1)),
		MaxMsgNums: int32(a.int("n", 32)), InvisibleTime: clock.MillisDuration(a.int("it", 60000)), PollTime: clock.MillisDuration(a.int("poll", 0)),
		ClientID: a.str("client", ""), ExpressionType: a.str("type", "TAG"),
		Expression: a.str("exp", "*"), AttemptID: a.str("attempt", ""), Order: a.bool("order", false),
	}
	if born := a.time("born", 0); born != 0 {
		req.BornTime = clock.FromMillis(born)
	}
	mode, ok := initModes[a.str("init", "min")]
	keep := a.str("keep", "")
	if err := a.done(); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("init: want min or max")
	}
	req.InitMode = mode
	if keep != "" {
		e.kept[keep] = req
	}
	return e.pop(req, "")
}

// pop sends req, checks that Pop left it as it was, prints the answer and
// runs the wake-ups it caused.
func (e *scriptEnv) pop(req *PopRequest, indent string) error {
	before := *req
	e.b.Pop(e.now, req, &e.lastRes)
	if *req != before {
		return fmt.Errorf("Pop modified the request: %+v, was %+v", *req, before)
	}
	e.printPop(req, &e.lastRes, indent)
	woken := append([]Wakeup(nil), e.lastRes.Woken...)
	return e.wake(woken)
}

// cmdRepop sends again, unchanged, a request kept by pop keep=NAME: the
// same PopRequest value, as a client reusing its request object does.
func cmdRepop(e *scriptEnv, a *cmdArgs) error {
	name := a.arg(0, "name")
	if err := a.done(); err != nil {
		return err
	}
	req, ok := e.kept[name]
	if !ok {
		return fmt.Errorf("no request kept as %q: pop ... keep=%s first", name, name)
	}
	return e.pop(req, "")
}

// cmdScribble overwrites every message of the last pop result, as a careless
// client might: what the broker stores must not change.
func cmdScribble(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	for i := range e.lastRes.Messages {
		m := &e.lastRes.Messages[i].Message
		m.Topic, m.QueueOffset, m.UniqKey, m.Tags, m.ReconsumeTimes = "scribbled", -9, "scribbled", "scribbled", 99
		for j := range m.Body {
			m.Body[j] = 'X'
		}
		for j := range m.Properties {
			m.Properties[j].Value = "scribbled"
		}
		e.lastRes.Messages[i].Handle.QueueOffset = -9
	}
	e.printf("scribbled over %d messages", len(e.lastRes.Messages))
	return nil
}

// printPop renders a pop response and remembers the handles it carries.
func (e *scriptEnv) printPop(req *PopRequest, res *PopResult, indent string) {
	e.printLapses(res.Lapsed, indent)
	if len(res.Cleared) > 0 {
		e.printf("%scleared=%v", indent, res.Cleared)
	}
	switch res.Status {
	case PopSuspended:
		e.printf("%sstatus=SUSPENDED poll=%d", indent, res.PollID)
	case PopFound:
		e.printf("%scode=%v status=FOUND popTime=%d restNum=%d start=%q msgs=%q", indent, res.Code, res.PopTime.Millis(), res.RestNum, res.StartOffsetInfo(), res.MsgOffsetInfo())
		if req.Order {
			e.printf("%s  reviveQid=%d orderCount=%q", indent, res.ReviveQid, res.OrderCountInfo())
		}
		for i := range res.Messages {
			m, h := &res.Messages[i].Message, res.Messages[i].Handle
			e.printf("%s  %s lease=%d handle=%q", indent, fmtMsg(m), res.Messages[i].Lease, h.String())
			e.handles[req.ConsumerGroup+"/"+m.UniqKey] = heldHandle{topic: m.Topic, h: h}
		}
		e.lastPop = res.PopTime.Millis()
		if len(res.Replaced) > 0 {
			e.printf("%s  replaced=%v", indent, res.Replaced)
		}
	default:
		e.printf("%scode=%v status=%v restNum=%d remark=%q", indent, res.Code, res.Status, res.RestNum, res.Remark)
	}
}

// printLapses renders FIFO lapses.
func (e *scriptEnv) printLapses(ls []Lapse, indent string) {
	for _, l := range ls {
		s := fmt.Sprintf("%slapse lease=%d %s@%s@%d@%d deadline=%s", indent, l.Lease, l.Group, l.Topic, l.QueueID, l.Offset, rel(l.Deadline.Millis()))
		if l.Reattempt {
			s += " reattempt"
		}
		e.printf("%s", s)
	}
}

// fmtMsg is the short form of a delivered message.
func fmtMsg(m *model.Message) string {
	s := fmt.Sprintf("%s %s/%d@%d", m.UniqKey, m.Topic, m.QueueID, m.QueueOffset)
	if m.Tags != "" {
		s += " tag=" + m.Tags
	}
	s += " reconsume=" + strconv.Itoa(int(m.ReconsumeTimes))
	if m.FirstPopTime != 0 {
		s += " 1st_pop=" + strconv.FormatInt(m.FirstPopTime, 10)
	}
	if m.OriginGroup != "" {
		s += " " + model.PropertyOriginGroup + "=" + m.OriginGroup
	}
	for _, p := range m.Properties {
		s += " " + p.Key + "=" + p.Value
	}
	if len(m.Body) > 0 {
		s += fmt.Sprintf(" body=%q", m.Body)
	}
	return s
}

// wake re-runs woken requests as the broker does (processRequest is
// resubmitted), printing each answer; answers can wake further requests.
func (e *scriptEnv) wake(ws []Wakeup) error {
	queue := append([]Wakeup(nil), ws...)
	for n := 0; len(queue) > 0; n++ {
		if n >= e.maxWakes {
			return fmt.Errorf("more than %d chained wake-ups", e.maxWakes)
		}
		w := queue[0]
		queue = queue[1:]
		how := "woke"
		if w.Expired {
			how = "expired"
		}
		r := w.Request
		e.printf("%s poll=%d (%s %s q=%d client=%s)", how, w.ID, r.ConsumerGroup, r.Topic, r.QueueID, r.ClientID)
		before := r
		var res PopResult
		e.b.Pop(e.now, &r, &res)
		if r != before {
			return fmt.Errorf("Pop modified the woken request: %+v, was %+v", r, before)
		}
		e.printPop(&r, &res, "  ")
		queue = append(queue, res.Woken...)
	}
	return nil
}

func (e *scriptEnv) handle(group, key string) (heldHandle, error) {
	h, ok := e.handles[group+"/"+key]
	if !ok {
		return h, fmt.Errorf("no handle for message %s of group %s: pop it first", key, group)
	}
	return h, nil
}

func cmdAck(e *scriptEnv, a *cmdArgs) error {
	g := a.arg(0, "group")
	hh, err := e.handle(g, a.arg(1, "key"))
	if err != nil {
		return err
	}
	req := NewAckRequest(g, hh.topic, &hh.h)
	req.Topic, req.QueueID, req.Offset = a.str("topic", req.Topic), int32(a.int("q", int64(req.QueueID))), a.int("offset", req.Offset)
	extra, wire := a.kv["extra"]
	a.str("extra", "")
	if err := a.done(); err != nil {
		return err
	}
	if wire {
		e.printAck(e.b.AckHeader(e.now, &AckMessageRequestHeader{ConsumerGroup: g, Topic: req.Topic, QueueID: req.QueueID, Offset: req.Offset, ExtraInfo: extra}))
		return nil
	}
	e.printAck(e.b.Ack(e.now, &req))
	return nil
}

func cmdAckRaw(e *scriptEnv, a *cmdArgs) error {
	req := &AckMessageRequestHeader{ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", 0)), Offset: a.int("offset", 0), ExtraInfo: a.str("extra", "")}
	if err := a.done(); err != nil {
		return err
	}
	e.printAck(e.b.AckHeader(e.now, req))
	return nil
}

func (e *scriptEnv) printAck(r AckResult) {
	e.printFailures(r.Failures)
	e.printLapses(r.Lapsed, "")
	switch {
	case r.Code != model.Success:
		e.printf("code=%v remark=%q", r.Code, r.Remark)
	case r.Pending != 0:
		e.printf("code=%v pending=%d", r.Code, r.Pending)
	case r.Removed == 0:
		e.printf("code=%v deleted=false", r.Code)
	default:
		e.printf("code=%v deleted=true lease=%d", r.Code, r.Removed)
	}
	if err := e.wake(r.Woken); err != nil {
		e.printf("error: %v", err)
	}
}

// cmdBatchAck groups the held handles as a client does: one BatchAck per
// (topic, retry flag, queue, batch start, popTime, invisibleTime), bit i
// for offset start+i.
func cmdBatchAck(e *scriptEnv, a *cmdArgs) error {
	g := a.arg(0, "group")
	keys := a.rest(1)
	if err := a.done(); err != nil {
		return err
	}
	var acks []BatchAck
	for _, k := range keys {
		hh, err := e.handle(g, k)
		if err != nil {
			return err
		}
		acks = addToBatch(acks, g, hh)
	}
	var res BatchAckResult
	e.b.BatchAckMessages(e.now, acks, &res)
	e.printBatch(&res)
	return nil
}

func addToBatch(acks []BatchAck, g string, hh heldHandle) []BatchAck {
	h := hh.h
	for i := range acks {
		x := &acks[i]
		if x.Topic == hh.topic && x.RetryFlag == h.RetryFlag && x.QueueID == h.QueueID && x.StartOffset == h.CkQueueOffset && x.PopTime == h.PopTime && x.InvisibleTime == h.InvisibleTime {
			x.SetBit(int(h.QueueOffset - h.CkQueueOffset))
			return acks
		}
	}
	n := BatchAck{ConsumerGroup: g, Topic: hh.topic, RetryFlag: h.RetryFlag, StartOffset: h.CkQueueOffset, QueueID: h.QueueID,
		ReviveQueueID: h.ReviveQueueID, PopTime: h.PopTime, InvisibleTime: h.InvisibleTime}
	n.SetBit(int(h.QueueOffset - h.CkQueueOffset))
	return append(acks, n)
}

func cmdBatchAckRaw(e *scriptEnv, a *cmdArgs) error {
	g := a.arg(0, "group")
	entries := a.rest(1)
	proto := BatchAck{ConsumerGroup: g, RetryFlag: model.RetryType(a.int("retry", 0)), PopTime: a.time("pt", e.lastPop),
		InvisibleTime: a.int("it", 60000), ReviveQueueID: int32(a.int("revive", 0))}
	if err := a.done(); err != nil {
		return err
	}
	var acks []BatchAck
	for _, ent := range entries {
		x, err := parseBatchEntry(proto, ent)
		if err != nil {
			return err
		}
		acks = append(acks, x)
	}
	var res BatchAckResult
	e.b.BatchAckMessages(e.now, acks, &res)
	e.printBatch(&res)
	return nil
}

// parseBatchEntry reads <topic>/<qid>/<startOffset>/<bits>, bits being a
// comma list of bit indexes or "-" for none.
func parseBatchEntry(x BatchAck, ent string) (BatchAck, error) {
	p := strings.Split(ent, "/")
	if len(p) != 4 {
		return x, fmt.Errorf("batch entry %q: want <topic>/<qid>/<startOffset>/<bit,bit|->", ent)
	}
	q, err1 := strconv.ParseInt(p[1], 10, 32)
	so, err2 := strconv.ParseInt(p[2], 10, 64)
	if err1 != nil || err2 != nil {
		return x, fmt.Errorf("batch entry %q: queue id and start offset must be integers", ent)
	}
	x.Topic, x.QueueID, x.StartOffset = p[0], int32(q), so
	if p[3] == "-" {
		return x, nil
	}
	for _, s := range splitList(p[3]) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 {
			return x, fmt.Errorf("batch entry %q: bit %q: want a non-negative integer", ent, s)
		}
		x.SetBit(i)
	}
	return x, nil
}

func (e *scriptEnv) printBatch(r *BatchAckResult) {
	e.printLapses(r.Lapsed, "")
	defer func() {
		if err := e.wake(r.Woken); err != nil {
			e.printf("error: %v", err)
		}
	}()
	if r.Code != model.Success && len(r.Offsets) == 0 {
		e.printf("code=%v remark=%q", r.Code, r.Remark)
		return
	}
	e.printFailures(r.Failures)
	var ls []string
	for _, o := range r.Offsets {
		switch {
		case o.Skipped:
			ls = append(ls, fmt.Sprintf("%d:skipped", o.Offset))
		case o.Removed != 0:
			ls = append(ls, fmt.Sprintf("%d:%d", o.Offset, o.Removed))
		case o.Pending != 0:
			ls = append(ls, fmt.Sprintf("%d:pending=%d", o.Offset, o.Pending))
		}
	}
	s := fmt.Sprintf("code=%v deleted=%d skipped=%d", r.Code, r.Deleted, r.Skipped)
	if r.Remark != "" && r.Code != model.Success {
		s += fmt.Sprintf(" remark=%q", r.Remark)
	}
	if r.Pending != 0 {
		s += fmt.Sprintf(" pending=%d", r.Pending)
	}
	if len(ls) > 0 {
		s += " leases=[" + strings.Join(ls, " ") + "]"
	}
	e.printf("%s", s)
}

func cmdChange(e *scriptEnv, a *cmdArgs) error {
	g, key := a.arg(0, "group"), a.arg(1, "key")
	hh, err := e.handle(g, key)
	if err != nil {
		return err
	}
	req := NewChangeInvisibleTimeRequest(g, hh.topic, &hh.h, clock.MillisDuration(a.int("it", 60000)))
	req.Topic, req.QueueID, req.Offset = a.str("topic", req.Topic), int32(a.int("q", int64(req.QueueID))), a.int("offset", req.Offset)
	extra, wire := a.kv["extra"]
	a.str("extra", "")
	if err := a.done(); err != nil {
		return err
	}
	var r ChangeInvisibleTimeResult
	if wire {
		r = e.b.ChangeInvisibleTimeHeader(e.now, &ChangeInvisibleTimeRequestHeader{ConsumerGroup: g, Topic: req.Topic, QueueID: req.QueueID,
			Offset: req.Offset, ExtraInfo: extra, InvisibleTime: req.InvisibleTime.Millis()})
	} else {
		r = e.b.ChangeInvisibleTime(e.now, &req)
	}
	if r.Code == model.Success {
		e.handles[g+"/"+key] = heldHandle{topic: hh.topic, h: r.Handle}
	}
	e.printChange(r)
	return nil
}

func cmdChangeRaw(e *scriptEnv, a *cmdArgs) error {
	req := &ChangeInvisibleTimeRequestHeader{ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", 0)),
		Offset: a.int("offset", 0), ExtraInfo: a.str("extra", ""), InvisibleTime: a.int("it", 60000)}
	if err := a.done(); err != nil {
		return err
	}
	e.printChange(e.b.ChangeInvisibleTimeHeader(e.now, req))
	return nil
}

func (e *scriptEnv) printChange(r ChangeInvisibleTimeResult) {
	e.printFailures(r.Failures)
	var own []Lapse
	for _, l := range r.Lapsed {
		if l.Lease == r.Lease && l.Lease != 0 {
			own = append(own, l)
		} else {
			e.printLapses([]Lapse{l}, "")
		}
	}
	defer e.printLapses(own, "")
	if r.Code != model.Success {
		e.printf("code=%v remark=%q", r.Code, r.Remark)
		return
	}
	s := fmt.Sprintf("code=%v popTime=%d invisibleTime=%d oldDeleted=%v lease=%d", r.Code, r.PopTime.Millis(), r.InvisibleTime.Millis(), r.OldDeleted, r.Lease)
	if r.Removed != 0 {
		s += fmt.Sprintf(" removed=%d", r.Removed)
	}
	if r.Replaced != 0 {
		s += fmt.Sprintf(" replaced=%d", r.Replaced)
	}
	if r.Pending != 0 {
		s += fmt.Sprintf(" pending=%d", r.Pending)
	}
	e.printf("%s handle=%q", s, r.Handle.String())
}

func cmdRevive(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.Revive(e.now)
	e.printf("window=[%d,%d) records=%d fullPage=%v", r.Lower.Millis(), r.Upper.Millis(), len(r.Revivals), r.FullPage)
	e.printFailures(r.Failures)
	e.printRevivals(r.Revivals)
	e.wakePulls(r.PullWoken)
	return e.wake(r.Woken)
}

func (e *scriptEnv) printRevivals(rs []Revival) {
	for _, rv := range rs {
		s := fmt.Sprintf("%s lease=%d %s", rv.Outcome, rv.Lease, rv.Record.String())
		switch rv.Outcome {
		case Revived:
			s += fmt.Sprintf(" -> %s/%d@%d reconsume=%d", rv.Copy.Topic, rv.Copy.QueueID, rv.Copy.Offset, rv.CopyReconsumeTimes)
		case ReviveSkipped:
			s += " (message gone)"
		case ReviveRetried:
			s += fmt.Sprintf(" next-vt=%d lease=%d", rv.NextDeadline.Millis(), rv.NewLease)
			if rv.Replaced != 0 {
				s += fmt.Sprintf(" replaced=%d", rv.Replaced)
			}
		case ReviveDropped:
			s += " (message may be lost)"
		}
		e.printf("%s", s)
	}
}

// rel renders epoch milliseconds relative to clock.Epoch: +61.05s.
func rel(ms int64) string {
	return "+" + clock.FromMillis(ms).Sub(clock.Epoch).String()
}

// printCkRevivals renders the leases a checkpoint tick settled.
func (e *scriptEnv) printCkRevivals(rs []Revival) {
	for _, rv := range rs {
		r := &rv.Record
		s := fmt.Sprintf("  %s lease=%d %s@%s@%d@%d deadline=%s", rv.Outcome, rv.Lease, r.GroupID, r.TopicID, r.QueueID, r.Offset, rel(rv.Deadline.Millis()))
		if r.AttemptTimes > 0 {
			s += fmt.Sprintf(" rePut=%d", r.AttemptTimes)
		}
		switch rv.Outcome {
		case Revived:
			s += fmt.Sprintf(" -> %s/%d@%d reconsume=%d", rv.Copy.Topic, rv.Copy.QueueID, rv.Copy.Offset, rv.CopyReconsumeTimes)
		case ReviveRetried:
			s += fmt.Sprintf(" -> lease=%d deadline=%s", rv.NewLease, rel(rv.NextDeadline.Millis()))
		}
		if rv.Unpaired != AckPaired {
			s += " unpaired=" + rv.Unpaired.String()
		}
		e.printf("%s", s)
	}
}

// printTick renders what one CheckpointTick did; quiet rounds (nothing
// read) and quiet scans are not printed.
func (e *scriptEnv) printTick(r *CheckpointResult) error {
	for _, c := range r.Buffer.Commits {
		e.printf("  commit %s@%s@%d=%d", c.Group, c.Topic, c.QueueID, c.Commit)
	}
	if r.Buffer.Unwritten > 0 {
		e.printf("  buffer: %d CKs acked in time, never written", r.Buffer.Unwritten)
	}
	for _, rd := range r.Rounds {
		if rd.Cks == 0 && rd.OldOffset == rd.NewOffset {
			continue // an idle round, or one that only re-read acks
		}
		e.printf("  round rq=%d %s..%s read=%d cks=%d offset %d->%d", rd.ReviveQueue, rel(rd.Start.Millis()), rel(rd.End.Millis()), rd.Read, rd.Cks, rd.OldOffset, rd.NewOffset)
	}
	e.printFailures(r.Failures)
	e.printCkRevivals(r.Revivals)
	e.wakePulls(r.PullWoken)
	return e.wake(r.Woken)
}

func cmdTick(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.CheckpointTick(e.now)
	e.printf("tick %s", rel(e.now.Millis()))
	return e.printTick(&r)
}

// cmdRun drives the checkpoint services for a while, as a driver does:
// a CheckpointTick at every NextCheckpointTick up to now + d, printing the
// ticks that did something.
func cmdRun(e *scriptEnv, a *cmdArgs) error {
	d, err := clock.ParseDuration(a.arg(0, "duration"))
	if err := a.done(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	until := e.now.Add(d)
	for n := 0; ; n++ {
		if n > 1_000_000 {
			return fmt.Errorf("run: more than a million ticks")
		}
		t, ok := e.b.NextCheckpointTick()
		if !ok || t > until {
			break
		}
		e.now = max(e.now, t)
		r := e.b.CheckpointTick(e.now)
		saved := e.out.String()
		e.out.Reset()
		err := e.printTick(&r)
		body := e.out.String()
		e.out.Reset()
		e.out.WriteString(saved)
		if body != "" { // a tick with nothing to say is not printed
			e.printf("tick %s", rel(e.now.Millis()))
			e.out.WriteString(body)
		}
		if err != nil {
			return err
		}
	}
	e.now = until
	e.printf("now=%s", rel(e.now.Millis()))
	return nil
}

// cmdCkState prints the checkpoint path's state.
func cmdCkState(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	c := e.b.State().Checkpoint
	for _, l := range c.Leases {
		s := fmt.Sprintf("lease %d %s@%s@%d@%d deadline=%s rq=%d", l.Lease, l.Group, l.Topic, l.QueueID, l.Offset, rel(l.Deadline), l.ReviveQueue)
		if !l.Stored {
			s += " buffered"
		}
		if l.AckPending {
			s += " ack-pending"
		}
		e.printf("%s", s)
	}
	for _, t := range c.Timer {
		e.printf("timer %s rq=%d %s %s", rel(t.Due), t.ReviveQueue, t.Tag, t.UniqKey)
	}
	for _, w := range c.Buffer {
		e.printf("buffer %s rq=%d lease=%d n=%d bits=%b stored=%b justOffset=%v ckStored=%v next=%d", w.MergeKey, w.ReviveQueue, w.FirstLease, w.Num, w.Bits, w.StoredBits, w.JustOffset, w.CkStored, w.NextBegin)
	}
	for _, q := range c.CommitQueues {
		e.printf("commitQueue %s@%s@%d next=%v done=%v", q.Group, q.Topic, q.QueueID, q.NextBegins, q.Done)
	}
	for _, s := range c.Revive {
		if s.Offset < 0 && s.Committed < 0 {
			continue // never revived anything
		}
		e.printf("revive rq=%d offset=%d committed=%d slow=%d pulling=%v due=%s", s.ReviveQueue, s.Offset, s.Committed, s.Slow, s.Pulling, rel(s.Due))
	}
	for _, n := range c.Inflight {
		e.printf("inflight %s@%s@%d=%d", n.Group, n.Topic, n.QueueID, n.Count)
	}
	if e.out.Len() == 0 {
		e.printf("empty")
	}
	return nil
}

func cmdCleanupCache(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.CleanupCache(e.now)
	s := fmt.Sprintf("flushed=%d offline=%d revives=%d", r.Flushed, r.Offline, len(r.Revives))
	if len(r.Replaced) > 0 {
		s += fmt.Sprintf(" replaced=%v", r.Replaced)
	}
	e.printf("%s", s)
	e.printFailures(r.Failures)
	e.printRevivals(r.Revives)
	e.wakePulls(r.PullWoken)
	return e.wake(r.Woken)
}

func cmdPollTick(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	ws := e.b.PollTick(e.now)
	if len(ws) == 0 {
		e.printf("none")
	}
	return e.wake(ws)
}

func cmdPolls(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State()
	if next, ok := e.b.NextPollExpiry(); ok {
		e.printf("suspended=%d nextExpiry=%d", st.SuspendedPolls, next.Millis())
		return nil
	}
	e.printf("suspended=%d", st.SuspendedPolls)
	return nil
}

func cmdStopPolling(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	ws := e.b.StopPolling(e.now)
	if len(ws) == 0 {
		e.printf("none")
	}
	return e.wake(ws)
}

func cmdFlushOffsets(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	e.b.FlushConsumerOffsets(e.now)
	return nil
}

func cmdRestart(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.Restart(e.now)
	ids := make([]string, len(r.DroppedPolls))
	for i, w := range r.DroppedPolls {
		ids[i] = strconv.FormatUint(w.ID, 10)
	}
	e.printLapses(r.Lapsed, "")
	s := fmt.Sprintf("droppedPolls=[%s] cachedLost=%d lostLeases=%v", strings.Join(ids, " "), r.CachedLost, r.LostLeases)
	if len(r.ReopenedLeases) > 0 {
		s += fmt.Sprintf(" reopenedLeases=%v", r.ReopenedLeases)
	}
	if len(r.DroppedPulls) > 0 {
		var hs []string
		for _, w := range r.DroppedPulls {
			hs = append(hs, strconv.FormatUint(w.ID, 10))
		}
		s += " droppedPulls=[" + strings.Join(hs, " ") + "]"
	}
	e.printf("%s", s)
	return nil
}

func cmdDisconnect(e *scriptEnv, a *cmdArgs) error {
	c := a.arg(0, "client")
	if err := a.done(); err != nil {
		return err
	}
	e.printf("dropped=%d", e.b.Disconnect(c))
	return nil
}

func cmdInflight(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State()
	store, cached := st.InFlight, st.Cached
	for i := range store {
		e.printf("store lease=%d %s", store[i].Lease, store[i].Record.String())
	}
	for i := range cached {
		e.printf("cache lease=%d %s", cached[i].Lease, cached[i].Record.String())
	}
	if len(store)+len(cached) == 0 {
		e.printf("none")
	}
	return nil
}

func cmdOffsets(e *scriptEnv, a *cmdArgs) error {
	g, tp := a.arg(0, "group"), a.arg(1, "topic")
	qs := []int64{a.int("q", -1)}
	if err := a.done(); err != nil {
		return err
	}
	t := e.b.topics[tp]
	if t == nil {
		e.printf("error: topic %s does not exist", tp)
		return nil
	}
	if qs[0] < 0 {
		qs = qs[:0]
		for q := int64(0); q < int64(t.cfg.ReadQueueNums); q++ {
			qs = append(qs, q)
		}
	}
	for _, q := range qs {
		qid := int32(q)
		o := e.b.ConsumerOffsets(g, tp, qid)
		e.printf("q=%d commit=%d pull=%d min=%d max=%d", qid, o.Commit, o.Pull, e.b.MinOffset(tp, qid), e.b.MaxOffset(tp, qid))
	}
	return nil
}

func cmdMessages(e *scriptEnv, a *cmdArgs) error {
	tp, qid := a.arg(0, "topic"), int32(a.int("q", 0))
	if err := a.done(); err != nil {
		return err
	}
	lo, hi := e.b.MinOffset(tp, qid), e.b.MaxOffset(tp, qid)
	if hi < 0 {
		e.printf("error: no queue %s/%d", tp, qid)
		return nil
	}
	e.printf("min=%d max=%d", lo, hi)
	for o := lo; o < hi; o++ {
		m, ok := e.b.Message(tp, qid, o)
		if !ok {
			return fmt.Errorf("message %s/%d@%d missing between min and max", tp, qid, o)
		}
		s := m.String()
		if m.Flag != 0 || m.SysFlag != 0 {
			s += fmt.Sprintf(" flag=%d sysFlag=%d", m.Flag, m.SysFlag)
		}
		if len(m.Body) > 0 {
			s += fmt.Sprintf(" body=%q", m.Body)
		}
		e.printf("  %s", s)
	}
	return nil
}

// cmdStats prints the non-zero counters in field order.
func cmdStats(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	v := reflect.ValueOf(e.b.State().Stats)
	var parts []string
	for i := 0; i < v.NumField(); i++ {
		if n := v.Field(i).Int(); n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", lowerFirst(v.Type().Field(i).Name), n))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	e.printf("%s", strings.Join(parts, " "))
	return nil
}

// cmdState prints the broker's State snapshot, one fact per line: topics
// and queues, groups, consumer offsets, in-flight records, polls, the lease
// and write counters and the faults (stats has its own command).
func cmdState(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State()
	for _, t := range st.Topics {
		var qs []string
		for _, q := range t.Queues {
			qs = append(qs, fmt.Sprintf("%d:%d~%d", q.QueueID, q.MinOffset, q.MaxOffset))
		}
		e.printf("topic %s read=%d write=%d perm=%d queues=[%s]", t.Config.Name, t.Config.ReadQueueNums, t.Config.WriteQueueNums, t.Config.Perm, strings.Join(qs, " "))
	}
	for _, g := range st.Groups {
		e.printf("group %s consumeEnable=%v retryMaxTimes=%d", g.Name, g.ConsumeEnable, g.RetryMaxTimes)
	}
	for _, o := range st.Offsets {
		e.printf("offsets %s@%s@%d commit=%d pull=%d reset=%d", o.Group, o.Topic, o.QueueID, o.Commit, o.Pull, o.Reset)
	}
	for _, r := range st.InFlight {
		e.printf("store lease=%d %s", r.Lease, r.Record.String())
	}
	for _, r := range st.Cached {
		e.printf("cache lease=%d %s", r.Lease, r.Record.String())
	}
	polls := fmt.Sprintf("polls suspended=%d", st.SuspendedPolls)
	if st.HasPollExpiry {
		polls += fmt.Sprintf(" nextExpiry=%d", st.NextPollExpiry.Millis())
	}
	e.printf("%s", polls)
	e.printf("lastLease=%d writeOrdinal=%d faults=%+v", st.LastLease, st.WriteOrdinal, st.Faults)
	return nil
}

func cmdPull(e *scriptEnv, a *cmdArgs) error {
	req := &PullRequest{
		ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", 0)), QueueOffset: a.int("offset", 0),
		MaxMsgNums: int32(a.int("n", 32)), Suspend: a.bool("suspend", false), SuspendTimeout: clock.MillisDuration(a.int("timeout", 15000)),
		ExpressionType: a.str("type", "TAG"), Subscription: a.str("exp", "*"), ClientID: a.str("client", ""),
	}
	if a.has("commit") {
		req.HasCommitOffset, req.CommitOffset = true, a.int("commit", 0)
	}
	if err := a.done(); err != nil {
		return err
	}
	before := *req
	e.b.Pull(e.now, req, &e.pullRes)
	if *req != before {
		return fmt.Errorf("Pull modified the request: %+v, was %+v", *req, before)
	}
	e.printPull(&e.pullRes, "")
	return nil
}

// printPull renders a pull response.
func (e *scriptEnv) printPull(r *PullResult, indent string) {
	switch r.Status {
	case PullSuspended:
		e.printf("%sstatus=SUSPENDED hold=%d", indent, r.HoldID)
		return
	case PullError:
		e.printf("%scode=%v remark=%q", indent, r.Code, r.Remark)
		return
	}
	e.printf("%scode=%v status=%v remark=%s next=%d min=%d max=%d", indent, r.Code, r.Status, r.Remark, r.NextBeginOffset, r.MinOffset, r.MaxOffset)
	for i := range r.Messages {
		e.printf("%s  %s", indent, fmtMsg(&r.Messages[i]))
	}
}

// wakePulls re-runs woken held pulls as the broker does
// (executeRequestWhenWakeup), printing each answer.
func (e *scriptEnv) wakePulls(ws []PullWakeup) {
	for _, w := range ws {
		how := "woke"
		if w.Expired {
			how = "expired"
		}
		r := w.Request
		e.printf("%s hold=%d (%s %s q=%d offset=%d client=%s)", how, w.ID, r.ConsumerGroup, r.Topic, r.QueueID, r.QueueOffset, r.ClientID)
		var res PullResult
		e.b.RerunPull(e.now, &r, &res)
		e.printPull(&res, "  ")
	}
}

func cmdHoldCheck(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	ws := e.b.CheckHoldRequest(e.now)
	if len(ws) == 0 {
		e.printf("none")
	}
	e.wakePulls(ws)
	return nil
}

func cmdHolds(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State()
	if st.HasHoldCheck {
		e.printf("held=%d nextCheck=%d", st.PullHolds, st.NextHoldCheck.Millis())
		return nil
	}
	e.printf("held=%d", st.PullHolds)
	return nil
}

func cmdCommitOffset(e *scriptEnv, a *cmdArgs) error {
	req := &UpdateConsumerOffsetRequest{ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", 0)), CommitOffset: a.int("offset", 0)}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.UpdateConsumerOffset(req)
	if r.Remark != "" {
		e.printf("code=%v remark=%q", r.Code, r.Remark)
		return nil
	}
	e.printf("code=%v", r.Code)
	return nil
}

func cmdQueryOffset(e *scriptEnv, a *cmdArgs) error {
	req := &QueryConsumerOffsetRequest{ConsumerGroup: a.arg(0, "group"), Topic: a.arg(1, "topic"), QueueID: int32(a.int("q", 0)), NoZeroIfNotFound: a.bool("nozero", false)}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.QueryConsumerOffset(req)
	if r.Code != model.Success {
		e.printf("code=%v remark=%q", r.Code, r.Remark)
		return nil
	}
	e.printf("code=%v offset=%d", r.Code, r.Offset)
	return nil
}

// cmdTwin starts the twin: a broker with this one's configuration on the
// other path, with the same topics and groups. Commands then run on both,
// at the same times, and the output shows where the paths differ.
func cmdTwin(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	if e.twin != nil {
		return fmt.Errorf("twin already started")
	}
	cfg := e.b.cfg
	cfg.PopConsumerKVServiceEnable = !cfg.PopConsumerKVServiceEnable
	t := newScriptEnv(e.t)
	b, err := New(cfg)
	if err != nil {
		return err
	}
	t.b, t.now = b, e.now
	st := e.b.State()
	for _, tc := range st.Topics {
		if err := b.CreateTopic(tc.Config); err != nil {
			return err
		}
	}
	for _, g := range st.Groups {
		if err := b.CreateGroup(g); err != nil {
			return err
		}
	}
	e.twin = t
	e.printf("twin: %s path beside %s", pathName(&cfg), pathName(&e.b.cfg))
	return nil
}

func pathName(c *Config) string {
	if c.UsesKV() {
		return "kv"
	}
	return "fs"
}

// cmdSettle drives the broker's periodic work for d as a driver does: on
// the KV path Revive every ReviveIdleInterval (at once after a full page)
// and CleanupCache every CacheCleanupInterval; on the checkpoint path
// CheckpointTick at every NextCheckpointTick; PollTick at NextPollExpiry
// on both. It prints what settled the leases, with times.
func cmdSettle(e *scriptEnv, a *cmdArgs) error {
	d, err := clock.ParseDuration(a.arg(0, "duration"))
	if err := a.done(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	until := e.now.Add(d)
	kv := e.b.cfg.UsesKV()
	e.kvRevive, e.kvCleanup = max(e.kvRevive, e.now), max(e.kvCleanup, e.now)
	for n := 0; n < 1_000_000; n++ {
		next, ok := until, false
		if kv {
			next, ok = min(e.kvRevive, e.kvCleanup), true
		} else if t, has := e.b.NextCheckpointTick(); has {
			next, ok = t, true
		}
		if t, has := e.b.NextPollExpiry(); has && (!ok || t < next) {
			next, ok = t, true
		}
		if t, has := e.b.NextOrderTick(); has && (!ok || t < next) {
			next, ok = t, true
		}
		if !ok || next > until {
			break
		}
		e.now = max(e.now, next)
		var revs []Revival
		var woken []Wakeup
		if kv && e.kvRevive <= e.now {
			r := e.b.Revive(e.now)
			revs, woken = append(revs, r.Revivals...), append(woken, r.Woken...)
			e.kvRevive = e.now.Add(ReviveIdleInterval * clock.Millisecond)
			if r.FullPage {
				e.kvRevive = e.now
			}
		}
		if kv && e.kvCleanup <= e.now {
			r := e.b.CleanupCache(e.now)
			revs, woken = append(revs, r.Revives...), append(woken, r.Woken...)
			e.kvCleanup = e.now.Add(CacheCleanupInterval * clock.Millisecond)
		}
		if !kv {
			if t, has := e.b.NextCheckpointTick(); has && t <= e.now {
				r := e.b.CheckpointTick(e.now)
				revs, woken = append(revs, r.Revivals...), append(woken, r.Woken...)
			}
		}
		var ot OrderTickResult
		if t, has := e.b.NextOrderTick(); has && t <= e.now {
			ot = e.b.OrderTick(e.now)
			woken = append(woken, ot.Woken...)
		}
		woken = append(woken, e.b.PollTick(e.now)...)
		if len(revs) > 0 || len(ot.Lapsed) > 0 || len(ot.Woken) > 0 {
			e.printf("at %s", rel(e.now.Millis()))
			e.printCkRevivals(revs)
			e.printLapses(ot.Lapsed, "  ")
		}
		if err := e.wake(woken); err != nil {
			return err
		}
	}
	e.now = until
	e.printf("now=%s", rel(e.now.Millis()))
	return nil
}

func cmdOrderTick(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.OrderTick(e.now)
	e.printLapses(r.Lapsed, "")
	if len(r.Lapsed)+len(r.Woken) == 0 {
		e.printf("none")
	}
	if t, ok := e.b.NextOrderTick(); ok {
		defer e.printf("next=%s", rel(t.Millis()))
	}
	return e.wake(r.Woken)
}

// cmdOrderInfo prints the FIFO table: each queue's OrderInfo (its JSON),
// live leases, lapse and notify times, then what the last flush wrote.
func cmdOrderInfo(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State().Order
	at := func(t int64) string {
		if t < 0 {
			return "-"
		}
		return rel(t)
	}
	for _, q := range st.Queues {
		e.printf("order %s@%s@%d %s leases=%v lapse=%s notify=%s", q.Group, q.Topic, q.QueueID, q.Info.AppendJSON(nil), q.Leases, at(q.LapseAt), at(q.NotifyAt))
	}
	for _, q := range st.Flushed {
		e.printf("flushed %s@%s@%d %s", q.Group, q.Topic, q.QueueID, q.Info.AppendJSON(nil))
	}
	e.printf("nextFlush=%s", at(st.NextFlush))
	return nil
}
