package share

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
// Each file documents, block by block, what Kafka does and what the engine
// answers. Regenerate the expected outputs with
//
//	go test ./share -run TestScripts -rewrite
//
// and review the diff. CheckInvariants runs after every command.
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

type memberKey struct{ group, member string }

// scriptEnv is the state a script drives: a broker, the virtual now, the
// message ids produced so far, and what each client would send next (its
// member epoch and share session epoch).
type scriptEnv struct {
	t        testing.TB
	b        *Broker
	cfg      Config
	gcs      map[string]GroupConfig
	now      clock.Time
	nextMsg  model.MsgID
	epochs   map[memberKey]int32 // member epoch from the last heartbeat
	sessions map[memberKey]int32 // share session epoch to send next
	started  bool                // something other than config ran
	out      strings.Builder
}

func newScriptEnv(t testing.TB) *scriptEnv {
	e := &scriptEnv{t: t, cfg: DefaultConfig(), gcs: map[string]GroupConfig{}, now: clock.Epoch, nextMsg: 1,
		epochs: map[memberKey]int32{}, sessions: map[memberKey]int32{}}
	b, err := New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.b = b
	return e
}

func (e *scriptEnv) printf(format string, args ...any) { fmt.Fprintf(&e.out, format+"\n", args...) }

type scriptCommand struct {
	usage string
	run   func(e *scriptEnv, a *cmdArgs) error
}

var scriptCommands map[string]scriptCommand

func init() {
	scriptCommands = map[string]scriptCommand{
		"config":         {"config <kafka.key>=<v> ... bug.<switch>=<bool> (before anything else)", cmdConfig},
		"group-config":   {"group-config <group> <share.key>=<v> ...", cmdGroupConfig},
		"advance":        {"advance <duration>", cmdAdvance},
		"topic":          {"topic <name> partitions=N", cmdTopic},
		"produce":        {"produce <topic> p=N n=N body=S (one batch of n records)", cmdProduce},
		"delete-records": {"delete-records <topic> p=N offset=N", cmdDeleteRecords},
		"heartbeat":      {"heartbeat <group> <member> epoch=N|leave topics=a,b|-", cmdHeartbeat},
		"fetch":          {"fetch <group> <member> [t-p ...] epoch=N|final max=N batch=N mode=batch|record renew=B acks=...", cmdFetch},
		"ack":            {"ack <group> <member> epoch=N|final renew=B acks=t-p:first-last:type[,type...];...", cmdAck},
		"close":          {"close <group> <member>", cmdClose},
		"tick":           {"tick", cmdTick},
		"next":           {"next", cmdNext},
		"restart":        {"restart", cmdRestart},
		"fault":          {"fault <group> topic=T p=N count=N|all|0 err=NAME", cmdFault},
		"state":          {"state", cmdState},
		"records":        {"records <group> <t-p>", cmdRecords},
		"batches":        {"batches <group> <t-p>", cmdBatches},
		"groups":         {"groups", cmdGroups},
		"sessions":       {"sessions", cmdSessions},
		"log":            {"log <t-p>", cmdLog},
		"stats":          {"stats", cmdStats},
	}
}

// exec runs one command line. Every command accepts at=+<duration> to move
// the clock (forward only) before it runs; CheckInvariants runs after it.
func (e *scriptEnv) exec(line string) (string, error) {
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
		at := clock.FromMillis(ms)
		if at < e.now {
			return "", fmt.Errorf("at=%v is before now (%v): time only moves forward", at, e.now)
		}
		e.now = at
	}
	if err := c.run(e, a); err != nil {
		return "", fmt.Errorf("%v (usage: %s)", err, c.usage)
	}
	if a.name != "config" && a.name != "group-config" {
		e.started = true
	}
	if err := e.b.CheckInvariants(); err != nil {
		return "", fmt.Errorf("after %q: %v", line, err)
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

// brokerKeys maps Kafka broker config keys to Config fields.
func brokerKeys(c *Config) map[string]*int32 {
	return map[string]*int32{
		"group.share.record.lock.duration.ms":     &c.RecordLockDurationMs,
		"group.share.min.record.lock.duration.ms": &c.MinRecordLockDurationMs,
		"group.share.max.record.lock.duration.ms": &c.MaxRecordLockDurationMs,
		"group.share.delivery.count.limit":        &c.DeliveryCountLimit,
		"group.share.partition.max.record.locks":  &c.PartitionMaxRecordLocks,
		"group.share.heartbeat.interval.ms":       &c.HeartbeatIntervalMs,
		"group.share.session.timeout.ms":          &c.SessionTimeoutMs,
		"group.share.max.size":                    &c.MaxSize,
		"group.share.max.share.sessions":          &c.MaxShareSessions,
	}
}

// setGroupKey sets one group config key.
func setGroupKey(g *GroupConfig, k, v string) error {
	ints := map[string]*int32{
		"share.record.lock.duration.ms":    &g.RecordLockDurationMs,
		"share.delivery.count.limit":       &g.DeliveryCountLimit,
		"share.partition.max.record.locks": &g.PartitionMaxRecordLocks,
		"share.heartbeat.interval.ms":      &g.HeartbeatIntervalMs,
		"share.session.timeout.ms":         &g.SessionTimeoutMs,
	}
	if p, ok := ints[k]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%s=%q: want an integer", k, v)
		}
		*p = int32(n)
		return nil
	}
	switch k {
	case "share.auto.offset.reset":
		switch v {
		case "latest":
			g.AutoOffsetReset = ResetLatest
		case "earliest":
			g.AutoOffsetReset = ResetEarliest
		default:
			return fmt.Errorf("%s=%q: want latest or earliest", k, v)
		}
	case "share.renew.acknowledge.enable", "errors.deadletterqueue.copy.record.enable":
		bv, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: want true or false", k, v)
		}
		if k == "share.renew.acknowledge.enable" {
			g.RenewAcknowledgeEnable = bv
		} else {
			g.DeadLetterCopyRecord = bv
		}
	case "errors.deadletterqueue.topic.name":
		g.DeadLetterTopic = v
	default:
		return fmt.Errorf("no group config %s", k)
	}
	return nil
}

func cmdConfig(e *scriptEnv, a *cmdArgs) error {
	if e.started {
		return fmt.Errorf("config must come before every other command")
	}
	cfg := e.cfg
	keys := brokerKeys(&cfg)
	for _, k := range a.keys {
		if k == "at" {
			continue
		}
		v := a.str(k, "")
		switch {
		case k == "bug.decrementDeliveryCountOnSessionRelease":
			bv, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s=%q: want true or false", k, v)
			}
			cfg.Bugs.DecrementDeliveryCountOnSessionRelease = bv
		case keys[k] != nil:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return fmt.Errorf("%s=%q: want an integer", k, v)
			}
			*keys[k] = int32(n)
		case strings.HasPrefix(k, "share.") || strings.HasPrefix(k, "errors."):
			if err := setGroupKey(&cfg.Group, k, v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("no config field %s", k)
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	b, err := New(cfg)
	if err != nil {
		e.printf("error: %v", err)
		return nil
	}
	e.cfg, e.b = cfg, b
	e.printf("ok")
	return nil
}

func cmdGroupConfig(e *scriptEnv, a *cmdArgs) error {
	g := a.arg(0, "group")
	gc := e.b.GroupConfig(g)
	for _, k := range a.keys {
		if k == "at" {
			continue
		}
		if err := setGroupKey(&gc, k, a.str(k, "")); err != nil {
			return err
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	e.printOK(e.b.SetGroupConfig(g, gc))
	return nil
}

func (e *scriptEnv) printOK(err error) {
	if err != nil {
		e.printf("error: %v", err)
		return
	}
	e.printf("ok")
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

func cmdTopic(e *scriptEnv, a *cmdArgs) error {
	name, n := a.arg(0, "topic"), a.int("partitions", 1)
	if err := a.done(); err != nil {
		return err
	}
	e.printOK(e.b.CreateTopic(name, int32(n)))
	return nil
}

func cmdProduce(e *scriptEnv, a *cmdArgs) error {
	tp := TopicPartition{a.arg(0, "topic"), int32(a.int("p", 0))}
	n := a.int("n", 1)
	body := a.str("body", "")
	if err := a.done(); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("n=%d: want >= 1", n)
	}
	msgs := make([]*model.Message, n)
	for i := range msgs {
		msgs[i] = &model.Message{ID: e.nextMsg + model.MsgID(i), UniqKey: fmt.Sprintf("k%d", e.nextMsg+model.MsgID(i)), BornTimestamp: e.now.Millis()}
		if body != "" {
			msgs[i].Body, msgs[i].Tags = []byte(body), "tag"
		}
	}
	r := e.b.Produce(e.now, ProduceRequest{TopicPartition: tp, Records: msgs})
	if r.Err != None {
		e.printf("err=%v", r.Err)
		return nil
	}
	e.printf("offsets=%d..%d msg=%d..%d", r.BaseOffset, r.LastOffset, e.nextMsg, e.nextMsg+model.MsgID(n)-1)
	e.nextMsg += model.MsgID(n)
	return nil
}

func cmdDeleteRecords(e *scriptEnv, a *cmdArgs) error {
	tp := TopicPartition{a.arg(0, "topic"), int32(a.int("p", 0))}
	off := a.int("offset", 0)
	if err := a.done(); err != nil {
		return err
	}
	if err := e.b.DeleteRecords(tp, off); err != nil {
		e.printf("error: %v", err)
		return nil
	}
	e.printf("log=%d..%d", e.b.LogStartOffset(tp), e.b.LogEndOffset(tp))
	return nil
}

func cmdHeartbeat(e *scriptEnv, a *cmdArgs) error {
	k := memberKey{a.arg(0, "group"), a.arg(1, "member")}
	req := HeartbeatRequest{GroupID: k.group, MemberID: k.member, MemberEpoch: e.epochs[k]}
	switch v := a.str("epoch", ""); v {
	case "":
	case "leave":
		req.MemberEpoch = -1
	default:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("epoch=%q: want a number or leave", v)
		}
		req.MemberEpoch = int32(n)
	}
	if a.has("topics") {
		req.SubscribedTopicNames = []string{}
		if v := a.str("topics", ""); v != "-" {
			req.SubscribedTopicNames = splitList(v)
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.Heartbeat(e.now, req)
	if r.Err != None {
		e.printf("err=%v", r.Err)
		return nil
	}
	if r.MemberEpoch == -1 {
		delete(e.epochs, k)
		e.printf("left")
		return nil
	}
	e.epochs[k] = r.MemberEpoch
	e.printf("epoch=%d interval=%dms assignment=[%s] changed=%v", r.MemberEpoch, r.HeartbeatIntervalMs, tps(r.Assignment), r.AssignmentChanged)
	return nil
}

func tps(xs []TopicPartition) string {
	s := make([]string, len(xs))
	for i, tp := range xs {
		s[i] = tp.String()
	}
	return strings.Join(s, " ")
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseTP reads "topic-3".
func parseTP(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("partition %q: want <topic>-<partition>", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil {
		return TopicPartition{}, fmt.Errorf("partition %q: want <topic>-<partition>", s)
	}
	return TopicPartition{s[:i], int32(p)}, nil
}

var ackTypes = map[string]AckType{"gap": AckGap, "accept": AckAccept, "release": AckRelease, "reject": AckReject, "renew": AckRenew}

// parseAcks reads "t-0:0-3:accept;t-0:4-5:release,reject;t-1:7:accept"
// (a single offset may stand for first-last; a number is a raw type).
func parseAcks(s string) ([]PartitionAcks, error) {
	var out []PartitionAcks
	for _, item := range strings.Split(s, ";") {
		p := strings.Split(item, ":")
		if len(p) != 3 {
			return nil, fmt.Errorf("ack %q: want <topic>-<partition>:<first>[-<last>]:<type>[,<type>...]", item)
		}
		tp, err := parseTP(p[0])
		if err != nil {
			return nil, err
		}
		lo, hi, ok := strings.Cut(p[1], "-")
		if !ok {
			hi = lo
		}
		first, err1 := strconv.ParseInt(lo, 10, 64)
		last, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("ack %q: offsets must be integers", item)
		}
		ab := AckBatch{FirstOffset: first, LastOffset: last}
		for _, ts := range strings.Split(p[2], ",") {
			t, ok := ackTypes[ts]
			if !ok {
				n, err := strconv.ParseInt(ts, 10, 8)
				if err != nil {
					return nil, fmt.Errorf("ack type %q: want gap, accept, release, reject, renew or a number", ts)
				}
				t = AckType(n)
			}
			ab.Types = append(ab.Types, t)
		}
		if n := len(out); n > 0 && out[n-1].TopicPartition == tp {
			out[n-1].Batches = append(out[n-1].Batches, ab)
		} else {
			out = append(out, PartitionAcks{TopicPartition: tp, Batches: []AckBatch{ab}})
		}
	}
	return out, nil
}

// sessionEpoch reads epoch=N|final, defaulting to what the client would send.
func (e *scriptEnv) sessionEpoch(a *cmdArgs, k memberKey) (int32, error) {
	switch v := a.str("epoch", ""); v {
	case "":
		return e.sessions[k], nil
	case "final":
		return -1, nil
	default:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("epoch=%q: want a number or final", v)
		}
		return int32(n), nil
	}
}

// sent records the session epoch the client sends next after a success.
func (e *scriptEnv) sent(k memberKey, epoch int32) {
	switch epoch {
	case -1:
		delete(e.sessions, k)
	default:
		e.sessions[k] = nextEpoch(epoch)
	}
}

func cmdFetch(e *scriptEnv, a *cmdArgs) error {
	k := memberKey{a.arg(0, "group"), a.arg(1, "member")}
	req := ShareFetchRequest{GroupID: k.group, MemberID: k.member, MaxRecords: int32(a.int("max", 500)), BatchSize: int32(a.int("batch", 500)),
		IsRenewAck: a.bool("renew", false)}
	if req.IsRenewAck {
		req.MaxRecords = int32(a.int("max", 0))
	}
	switch m := a.str("mode", "batch"); m {
	case "batch":
	case "record":
		req.AcquireMode = RecordLimit
	default:
		return fmt.Errorf("mode=%q: want batch or record", m)
	}
	var err error
	if req.ShareSessionEpoch, err = e.sessionEpoch(a, k); err != nil {
		return err
	}
	if s := a.str("acks", ""); s != "" {
		if req.Acks, err = parseAcks(s); err != nil {
			return err
		}
	}
	for _, s := range a.rest(2) {
		tp, err := parseTP(s)
		if err != nil {
			return err
		}
		req.Partitions = append(req.Partitions, tp)
	}
	if len(req.Partitions) == 0 && req.ShareSessionEpoch != -1 && !req.IsRenewAck {
		for _, g := range e.b.Groups() {
			for _, m := range g.Members {
				if g.ID == k.group && m.ID == k.member {
					req.Partitions = m.Assignment
				}
			}
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.ShareFetch(e.now, req)
	if r.Err != None {
		e.printf("err=%v", r.Err)
		return nil
	}
	e.sent(k, req.ShareSessionEpoch)
	e.printAckErrors(r.AckErrors)
	e.printRenewals(r.Renewed)
	e.printEnded(r.Ended)
	for _, pf := range r.Partitions {
		var rs []string
		for _, ar := range pf.Acquired {
			rs = append(rs, fmt.Sprintf("%s(%d)", span(ar.FirstOffset, ar.LastOffset), ar.DeliveryCount))
		}
		line := pf.String() + ":"
		if pf.Err != None {
			line += " err=" + pf.Err.String()
		}
		if len(rs) == 0 {
			rs = []string{"-"}
		}
		e.printf("%s %s", line, strings.Join(rs, " "))
	}
	e.printDeliveries(r.Deliveries)
	return nil
}

func span(a, b int64) string {
	if a == b {
		return strconv.FormatInt(a, 10)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

func (e *scriptEnv) printAckErrors(errs []PartitionError) {
	for _, pe := range errs {
		e.printf("ack %s: %v", pe.TopicPartition, pe.Err)
	}
}

// run is a group of consecutive items whose lease, offset and message id
// all step by one and whose rest is equal.
type run struct {
	lease0, off0, msg0 int64
	n                  int64
	tp                 string
	label, rest        string
}

func groupRuns(items []run) []run {
	var out []run
	for _, it := range items {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if p.tp == it.tp && p.label == it.label && p.rest == it.rest && p.lease0+p.n == it.lease0 && p.off0+p.n == it.off0 && p.msg0+p.n == it.msg0 {
				p.n++
				continue
			}
		}
		it.n = 1
		out = append(out, it)
	}
	return out
}

func (r run) String() string {
	sp := func(a int64) string { return span(a, a+r.n-1) }
	if r.n > 1 {
		sp = func(a int64) string { return fmt.Sprintf("%d..%d", a, a+r.n-1) }
	}
	return fmt.Sprintf("%slease=%s %s@%s msg=%s%s", r.label, sp(r.lease0), r.tp, sp(r.off0), sp(r.msg0), r.rest)
}

func (e *scriptEnv) printDeliveries(ds []Delivery) {
	var items []run
	for _, d := range ds {
		items = append(items, run{lease0: int64(d.Lease), off0: d.Offset, msg0: int64(msgID(d.Msg)), tp: d.Group + "/" + d.TopicPartition.String(),
			rest: fmt.Sprintf(" count=%d %s until=%v", d.DeliveryCount, d.Member, d.Deadline)})
	}
	for _, r := range groupRuns(items) {
		e.printf("  got %s", r)
	}
}

func (e *scriptEnv) printRenewals(rs []Renewal) {
	var items []run
	for _, x := range rs {
		items = append(items, run{lease0: int64(x.Lease), off0: x.Offset, msg0: int64(x.Msg), tp: x.Group + "/" + x.TopicPartition.String(),
			rest: fmt.Sprintf(" %s until=%v", x.Member, x.Deadline)})
	}
	for _, r := range groupRuns(items) {
		e.printf("  renewed %s", r)
	}
}

func (e *scriptEnv) printEnded(evs []LeaseEvent) {
	var items []run
	for _, x := range evs {
		rest := fmt.Sprintf(" %s count=%d -> %v", x.Member, x.DeliveryCount, x.State)
		if x.PersistFailed {
			rest += " persist-failed"
		}
		if x.DLQ != nil {
			rest += fmt.Sprintf(" dlq=%s-%d@%d", x.DLQ.Topic, x.DLQ.QueueID, x.DLQ.QueueOffset)
		}
		items = append(items, run{lease0: int64(x.Lease), off0: x.Offset, msg0: int64(x.Msg), tp: x.Group + "/" + x.TopicPartition.String(),
			label: x.End.String() + " ", rest: rest})
	}
	for _, r := range groupRuns(items) {
		e.printf("  %s", r)
	}
}

func cmdAck(e *scriptEnv, a *cmdArgs) error {
	k := memberKey{a.arg(0, "group"), a.arg(1, "member")}
	req := ShareAcknowledgeRequest{GroupID: k.group, MemberID: k.member, IsRenewAck: a.bool("renew", false)}
	var err error
	if req.ShareSessionEpoch, err = e.sessionEpoch(a, k); err != nil {
		return err
	}
	if s := a.str("acks", ""); s != "" {
		if req.Acks, err = parseAcks(s); err != nil {
			return err
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.ShareAcknowledge(e.now, req)
	if r.Err != None {
		e.printf("err=%v", r.Err)
		return nil
	}
	e.sent(k, req.ShareSessionEpoch)
	e.printAckErrors(r.Partitions)
	e.printRenewals(r.Renewed)
	e.printEnded(r.Ended)
	return nil
}

func cmdClose(e *scriptEnv, a *cmdArgs) error {
	k := memberKey{a.arg(0, "group"), a.arg(1, "member")}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.CloseSession(e.now, k.group, k.member)
	if r.Err != None {
		e.printf("err=%v", r.Err)
		return nil
	}
	delete(e.sessions, k)
	e.printf("closed")
	e.printEnded(r.Ended)
	return nil
}

func cmdTick(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.Tick(e.now)
	e.printEnded(r.Ended)
	for _, x := range r.Expired {
		e.printf("  expired %s/%s", x.Group, x.Member)
		delete(e.epochs, memberKey{x.Group, x.Member})
	}
	if len(r.Ended)+len(r.Expired) == 0 {
		e.printf("none")
	}
	return nil
}

func cmdNext(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	if t, ok := e.b.NextDeadline(); ok {
		e.printf("next=%v", t)
	} else {
		e.printf("none")
	}
	return nil
}

func cmdRestart(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.Restart(e.now)
	e.sessions = map[memberKey]int32{}
	e.printf("sessions=%d lost=%d", r.Sessions, len(r.Lost))
	e.printEnded(r.Lost)
	return nil
}

var errorByName = func() map[string]ErrorCode {
	m := map[string]ErrorCode{}
	for c, n := range errorNames {
		m[n] = c
	}
	return m
}()

func cmdFault(e *scriptEnv, a *cmdArgs) error {
	f := PersisterFault{Group: a.arg(0, "group"), Topic: a.str("topic", ""), Partition: int32(a.int("p", -1))}
	cv, en := a.str("count", "all"), a.str("err", "COORDINATOR_NOT_AVAILABLE")
	if err := a.done(); err != nil {
		return err
	}
	if cv == "all" {
		f.Count = -1
	} else {
		n, err := strconv.Atoi(cv)
		if err != nil || n < 0 {
			return fmt.Errorf("count=%q: want a count, all, or 0 to clear", cv)
		}
		f.Count = n
	}
	code, ok := errorByName[en]
	if !ok {
		return fmt.Errorf("err=%q: not a known error name", en)
	}
	f.Err = code
	e.b.SetPersisterFault(f)
	e.printf("ok")
	return nil
}

func cmdState(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	st := e.b.State()
	if len(st) == 0 {
		e.printf("none")
	}
	for _, s := range st {
		line := fmt.Sprintf("%s %s log=%d..%d persisted-start=%d batches=[%s]", s.Group, s.TopicPartition, s.LogStartOffset, s.LogEndOffset,
			s.PersistedStartOffset, pbatches(s.PersistedBatches))
		if s.Loaded {
			line += fmt.Sprintf(" | spso=%d speo=%d next=%d window=%d avail=%d acq=%d acked=%d archived=%d", s.SPSO, s.SPEO, s.NextFetchOffset,
				s.Window, s.Available, s.Acquired, s.Acknowledged, s.Archived)
			if s.AcquiredBelowStart > 0 {
				line += fmt.Sprintf(" acq-below-start=%d", s.AcquiredBelowStart)
			}
			if s.Quiescent {
				line += " quiescent"
			}
		} else {
			line += " | not loaded"
		}
		e.printf("%s", line)
	}
	return nil
}

func pbatches(bs []PersistedBatch) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = fmt.Sprintf("%s:%v(%d)", span(b.FirstOffset, b.LastOffset), b.State, b.DeliveryCount)
	}
	return strings.Join(s, " ")
}

func (e *scriptEnv) groupTP(a *cmdArgs) (string, TopicPartition, error) {
	g := a.arg(0, "group")
	tp, err := parseTP(a.arg(1, "t-p"))
	if a.err != nil {
		return "", tp, a.err
	}
	return g, tp, err
}

func cmdRecords(e *scriptEnv, a *cmdArgs) error {
	g, tp, err := e.groupTP(a)
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	rs := e.b.Records(g, tp)
	if len(rs) == 0 {
		e.printf("none")
	}
	// Group offsets with the same state, count and owner; acquired records
	// also need consecutive leases and the same deadline.
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].State == rs[i].State && rs[j].DeliveryCount == rs[i].DeliveryCount && rs[j].Member == rs[i].Member &&
			rs[j].Deadline == rs[i].Deadline && (rs[i].Lease == 0 || rs[j].Lease == rs[i].Lease+model.LeaseID(j-i)) {
			j++
		}
		line := fmt.Sprintf("  %s %v count=%d", span(rs[i].Offset, rs[j-1].Offset), rs[i].State, rs[i].DeliveryCount)
		if rs[i].State == Acquired {
			line += fmt.Sprintf(" %s lease=%s until=%v", rs[i].Member, span(int64(rs[i].Lease), int64(rs[j-1].Lease)), rs[i].Deadline)
		}
		e.printf("%s", line)
		i = j
	}
	return nil
}

func cmdBatches(e *scriptEnv, a *cmdArgs) error {
	g, tp, err := e.groupTP(a)
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	var s []string
	for _, b := range e.b.Batches(g, tp) {
		x := span(b.FirstOffset, b.LastOffset)
		if b.PerOffset {
			x += "*"
		}
		s = append(s, x)
	}
	if len(s) == 0 {
		s = []string{"none"}
	}
	e.printf("%s", strings.Join(s, " "))
	return nil
}

func cmdGroups(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	gs := e.b.Groups()
	if len(gs) == 0 {
		e.printf("none")
	}
	for _, g := range gs {
		e.printf("%s epoch=%d", g.ID, g.Epoch)
		for _, m := range g.Members {
			e.printf("  %s epoch=%d topics=%s assignment=[%s] session-until=%v", m.ID, m.Epoch, strings.Join(m.Topics, ","), tps(m.Assignment), m.SessionDeadline)
		}
	}
	return nil
}

func cmdSessions(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	ss := e.b.Sessions()
	if len(ss) == 0 {
		e.printf("none")
	}
	for _, s := range ss {
		e.printf("%s/%s epoch=%d", s.Group, s.Member, s.Epoch)
	}
	return nil
}

func cmdLog(e *scriptEnv, a *cmdArgs) error {
	tp, err := parseTP(a.arg(0, "t-p"))
	if a.err != nil {
		return a.err
	}
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	lo, hi := e.b.LogStartOffset(tp), e.b.LogEndOffset(tp)
	if hi < 0 {
		e.printf("error: no partition %s", tp)
		return nil
	}
	e.printf("log=%d..%d", lo, hi)
	for o := lo; o < hi; o++ {
		m := e.b.Record(tp, o)
		s := fmt.Sprintf("  %d msg=%d key=%s", o, m.ID, m.UniqKey)
		if len(m.Body) > 0 {
			s += fmt.Sprintf(" body=%q", m.Body)
		}
		if m.Tags != "" {
			s += " tag=" + m.Tags
		}
		for _, p := range m.Properties {
			s += fmt.Sprintf(" %s=%s", p.Key, p.Value)
		}
		e.printf("%s", s)
	}
	return nil
}

func cmdStats(e *scriptEnv, a *cmdArgs) error {
	if err := a.done(); err != nil {
		return err
	}
	v := reflect.ValueOf(e.b.Stats())
	var parts []string
	for i := 0; i < v.NumField(); i++ {
		if n := v.Field(i).Int(); n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", v.Type().Field(i).Name, n))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	e.printf("%s", strings.Join(parts, " "))
	return nil
}
