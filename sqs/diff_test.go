package sqs_test

// The differential test: random operation sequences run against the engine
// (sqs.Service) and the plain reference (sqs/internal/ref); after every
// operation their results and observable state must be identical (error
// codes, not messages), and the engine's invariants must hold. The
// harness, the operation generators and the comparison are shared with the
// rapid state machine in prop_test.go.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
	"popsim/sqs/internal/ref"
)

var (
	diffSeqs = flag.Int("diff.seqs", 300, "random sequences the differential test runs")
	diffFrom = flag.Uint64("diff.from", 1, "first sequence seed")
	diffOps  = flag.Int("diff.ops", 250, "operations per sequence")
	diffSeed = flag.Uint64("diff.seed", 0, "run only this sequence seed (0: seeds diff.from.. diff.from+diff.seqs-1)")
)

// service is what the engine and the reference both offer.
type service interface {
	CreateQueue(clock.Time, string, map[string]string) sqs.CreateQueueResult
	SendMessage(clock.Time, *sqs.SendMessageRequest) sqs.SendMessageResult
	SendMessageBatch(clock.Time, *sqs.SendMessageBatchRequest) sqs.SendMessageBatchResult
	ReceiveMessage(clock.Time, *sqs.ReceiveMessageRequest) sqs.ReceiveMessageResult
	DeleteMessage(clock.Time, *sqs.DeleteMessageRequest) sqs.DeleteMessageResult
	DeleteMessageBatch(clock.Time, *sqs.DeleteMessageBatchRequest) sqs.DeleteMessageBatchResult
	ChangeMessageVisibility(clock.Time, *sqs.ChangeMessageVisibilityRequest) sqs.ChangeMessageVisibilityResult
	ChangeMessageVisibilityBatch(clock.Time, *sqs.ChangeMessageVisibilityBatchRequest) sqs.ChangeMessageVisibilityBatchResult
	PurgeQueue(clock.Time, string) sqs.PurgeQueueResult
	Tick(clock.Time) sqs.TickResult
	CancelPoll(clock.Time, uint64) sqs.TickResult

	NextDue() (clock.Time, bool)
	ParkedPolls() int
	Queues() []string
	Counts() []sqs.Counts
	State(string) (sqs.QueueState, bool)
	Messages(string) []sqs.MessageInfo
}

var (
	_ service = (*sqs.Service)(nil)
	_ service = (*ref.Service)(nil)
)

// chooser draws from a seeded math/rand/v2 source (the differential test)
// or through rapid (the state machine), so both share the generators.
type chooser struct {
	r *rand.Rand
	t *rapid.T
}

func pick[T any](c chooser, label string, xs ...T) T {
	if c.t != nil {
		return rapid.SampledFrom(xs).Draw(c.t, label)
	}
	return xs[c.r.IntN(len(xs))]
}

func between(c chooser, label string, lo, hi int64) int64 {
	if c.t != nil {
		return rapid.Int64Range(lo, hi).Draw(c.t, label)
	}
	return lo + c.r.Int64N(hi-lo+1)
}

func bits(c chooser, label string) uint64 {
	if c.t != nil {
		return rapid.Uint64().Draw(c.t, label)
	}
	return c.r.Uint64()
}

// world is the configuration and queues a sequence runs with.
type world struct {
	cfg    sqs.Config
	queues []queueSpec
}

type queueSpec struct {
	name  string
	attrs map[string]string
}

func genWorld(c chooser) world {
	cfg := sqs.DefaultConfig()
	cfg.Servers = pick(c, "cfg.servers", 1, 2, 4, 8)
	cfg.StandardInFlightLimit = pick(c, "cfg.standardLimit", 3, 10, 120000)
	cfg.FifoInFlightLimit = pick(c, "cfg.fifoLimit", 2, 5, 120000)
	cfg.FifoScanWindow = pick(c, "cfg.window", 3, 10, 120000)
	cfg.HandleSalt = bits(c, "cfg.salt")
	w := world{cfg: cfg}
	std := func(name string, dlq string) {
		a := map[string]string{
			sqs.AttrVisibilityTimeout:             pick(c, name+".vt", "0", "1", "5", "30"),
			sqs.AttrMessageRetentionPeriod:        pick(c, name+".retention", "60", "120", "345600"),
			sqs.AttrDelaySeconds:                  pick(c, name+".delay", "0", "0", "3"),
			sqs.AttrReceiveMessageWaitTimeSeconds: pick(c, name+".wait", "0", "0", "2"),
		}
		if dlq != "" && pick(c, name+".redrive", true, true, false) {
			a[sqs.AttrRedrivePolicy] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%s}`, cfg.ARN(dlq), pick(c, name+".maxReceiveCount", "1", "2", "3"))
		}
		w.queues = append(w.queues, queueSpec{name, a})
	}
	fifo := func(name string, dlq string) {
		std(name, dlq)
		a := w.queues[len(w.queues)-1].attrs
		a[sqs.AttrFifoQueue] = "true"
		a[sqs.AttrContentBasedDeduplication] = pick(c, name+".contentBased", "true", "false")
		a[sqs.AttrDeduplicationScope] = pick(c, name+".scope", sqs.ScopeQueue, sqs.ScopeMessageGroup)
	}
	std("dlq", "")
	std("q", "dlq")
	fifo("dlq.fifo", "")
	fifo("f.fifo", "dlq.fifo")
	fifo("h.fifo", "")
	return w
}

var queueNames = []string{"q", "q", "q", "f.fifo", "f.fifo", "f.fifo", "h.fifo", "dlq", "dlq.fifo", "nope"}

// held is a receipt handle a client holds.
type held struct {
	queue  string
	handle string
	seq    int64
}

// harness drives the engine and the reference in lockstep.
type harness struct {
	eng     *sqs.Service
	ref     *ref.Service
	world   world
	now     clock.Time
	handles []held
	polls   []uint64
	nextMsg model.MsgID
	ops     []string
}

func newHarness(w world) (*harness, error) {
	eng, err := sqs.New(w.cfg)
	if err != nil {
		return nil, err
	}
	r, err := ref.New(w.cfg)
	if err != nil {
		return nil, err
	}
	h := &harness{eng: eng, ref: r, world: w, now: clock.Epoch, nextMsg: 1}
	for _, q := range w.queues {
		for _, s := range []service{eng, r} {
			if res := s.CreateQueue(h.now, q.name, q.attrs); res.Err != nil {
				return nil, fmt.Errorf("create %s: %v", q.name, res.Err)
			}
		}
	}
	return h, nil
}

// op is one resolved operation: run calls it on a service.
type op struct {
	name string
	text string
	run  func(s service, now clock.Time) any
	dt   clock.Duration
}

func (o op) String() string { return o.name + " " + o.text }

var cmpOpts = []cmp.Option{
	cmpopts.IgnoreFields(sqs.Error{}, "Message"),
	cmpopts.EquateEmpty(),
}

func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got, cmpOpts...)
}

// apply runs o on both services, diffs the results and remembers handles
// and parked polls.
func (h *harness) apply(o op) error {
	h.ops = append(h.ops, o.String())
	if o.name == "advance" {
		h.now = h.now.Add(o.dt)
		return nil
	}
	got, want := o.run(h.eng, h.now), o.run(h.ref, h.now)
	h.remember(got)
	if d := diff(want, got); d != "" {
		return fmt.Errorf("%s result differs (-ref +engine):\n%s", o.name, d)
	}
	return nil
}

func (h *harness) remember(r any) {
	keep := func(ds []sqs.Delivery) {
		for _, d := range ds {
			h.handles = append(h.handles, held{d.Queue, d.ReceiptHandle, d.Seq})
		}
	}
	v := reflect.ValueOf(r)
	if f := v.FieldByName("Answers"); f.IsValid() {
		for _, a := range f.Interface().([]sqs.Answer) {
			keep(a.Messages)
		}
	}
	if rr, ok := r.(sqs.ReceiveMessageResult); ok {
		keep(rr.Messages)
		if rr.Parked {
			h.polls = append(h.polls, rr.PollID)
		}
	}
	if len(h.handles) > 300 {
		h.handles = h.handles[len(h.handles)-300:]
	}
	if len(h.polls) > 30 {
		h.polls = h.polls[len(h.polls)-30:]
	}
}

// snapshot is everything observable between operations.
type snapshot struct {
	Queues   []string
	Counts   []sqs.Counts
	States   []sqs.QueueState
	Messages [][]sqs.MessageInfo
	Parked   int
	Next     clock.Time
	NextOK   bool
}

func snap(s service) snapshot {
	x := snapshot{Queues: s.Queues(), Counts: s.Counts(), Parked: s.ParkedPolls()}
	x.Next, x.NextOK = s.NextDue()
	for _, q := range x.Queues {
		st, _ := s.State(q)
		x.States = append(x.States, st)
		x.Messages = append(x.Messages, s.Messages(q))
	}
	return x
}

func (h *harness) check() error {
	if d := diff(snap(h.ref), snap(h.eng)); d != "" {
		return fmt.Errorf("state differs (-ref +engine):\n%s", d)
	}
	return h.eng.CheckInvariants()
}

// ---- generators ----

func optInt(c chooser, label string, xs ...int) sqs.Int {
	v := pick(c, label, xs...)
	if v == -1 {
		return sqs.Int{}
	}
	return sqs.Some(v)
}

func (h *harness) msgID() model.MsgID {
	h.nextMsg++
	return h.nextMsg - 1
}

func genSendFields(c chooser, h *harness, label string) (model.MsgID, []byte, sqs.Int, string, string) {
	id := h.msgID()
	body := pick(c, label+".body", "a", "b", "c", "", fmt.Sprintf("u%d", id), fmt.Sprintf("u%d", id))
	delay := optInt(c, label+".delay", -1, -1, -1, 0, 2, 901)
	group := pick(c, label+".group", "g1", "g2", "g3", "g1", "")
	dedup := pick(c, label+".dedup", "", "", "d1", "d2", fmt.Sprintf("x%d", id))
	return id, []byte(body), delay, group, dedup
}

func genSend(c chooser, h *harness) op {
	req := sqs.SendMessageRequest{Queue: pick(c, "send.queue", queueNames...)}
	req.MsgID, req.MessageBody, req.DelaySeconds, req.MessageGroupID, req.MessageDeduplicationID = genSendFields(c, h, "send")
	return op{name: "send", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { r := req; return s.SendMessage(now, &r) }}
}

func genSendBatch(c chooser, h *harness) op {
	req := sqs.SendMessageBatchRequest{Queue: pick(c, "sendBatch.queue", queueNames...)}
	n := pick(c, "sendBatch.n", 1, 2, 3, 3, 0, 11)
	for i := 0; i < n; i++ {
		e := sqs.SendMessageBatchEntry{ID: fmt.Sprintf("e%d", i)}
		e.MsgID, e.MessageBody, e.DelaySeconds, e.MessageGroupID, e.MessageDeduplicationID = genSendFields(c, h, "sendBatch")
		req.Entries = append(req.Entries, e)
	}
	if n > 1 && pick(c, "sendBatch.dupID", false, false, false, true) {
		req.Entries[1].ID = req.Entries[0].ID
	}
	return op{name: "sendBatch", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.SendMessageBatch(now, &req) }}
}

func genReceive(c chooser, h *harness) op {
	req := sqs.ReceiveMessageRequest{
		Queue:                   pick(c, "receive.queue", queueNames...),
		MaxNumberOfMessages:     optInt(c, "receive.max", -1, 1, 2, 3, 10, 10, 11),
		VisibilityTimeout:       optInt(c, "receive.vt", -1, -1, 0, 1, 5, 30, 600),
		WaitTimeSeconds:         optInt(c, "receive.wait", -1, -1, 0, 1, 3),
		ReceiveRequestAttemptID: pick(c, "receive.attempt", "", "", "", "a1", "a2"),
	}
	if pick(c, "receive.sampled", false, true) {
		req.Sample = bits(c, "receive.sample")
	}
	if len(h.handles) > 0 && pick(c, "receive.dup", false, false, false, true) {
		req.DuplicateSeq = h.handles[between(c, "receive.dupIndex", 0, int64(len(h.handles)-1))].seq
	}
	return op{name: "receive", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.ReceiveMessage(now, &req) }}
}

func (h *harness) pickHandle(c chooser, label string) (string, string) {
	lo := int64(0)
	if pick(c, label+".recent", true, true, false) { // mostly one of the last few handles: live leases
		lo = max(0, int64(len(h.handles))-6)
	}
	x := h.handles[between(c, label+".index", lo, int64(len(h.handles)-1))]
	switch pick(c, label+".variant", "ok", "ok", "ok", "ok", "ok", "garbage", "otherQueue", "forged") {
	case "garbage":
		return x.queue, "garbage"
	case "otherQueue":
		return pick(c, label+".queue", queueNames...), x.handle
	case "forged":
		hd, _ := sqs.ParseReceiptHandle(x.handle)
		hd.Tag++
		return x.queue, hd.String()
	}
	return x.queue, x.handle
}

func genDelete(c chooser, h *harness) op {
	q, hd := h.pickHandle(c, "delete")
	req := sqs.DeleteMessageRequest{Queue: q, ReceiptHandle: hd}
	return op{name: "delete", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.DeleteMessage(now, &req) }}
}

func genDeleteBatch(c chooser, h *harness) op {
	q, _ := h.pickHandle(c, "deleteBatch.queue")
	req := sqs.DeleteMessageBatchRequest{Queue: q}
	for i := 0; i < pick(c, "deleteBatch.n", 1, 2, 3, 0); i++ {
		_, hd := h.pickHandle(c, "deleteBatch.entry")
		req.Entries = append(req.Entries, sqs.DeleteMessageBatchEntry{ID: fmt.Sprintf("d%d", i), ReceiptHandle: hd})
	}
	return op{name: "deleteBatch", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.DeleteMessageBatch(now, &req) }}
}

var visibilities = []int{0, 0, 1, 5, 30, 600, 43200, 43201, -1}

func genChange(c chooser, h *harness) op {
	q, hd := h.pickHandle(c, "change")
	req := sqs.ChangeMessageVisibilityRequest{Queue: q, ReceiptHandle: hd, VisibilityTimeout: pick(c, "change.vt", visibilities...)}
	return op{name: "change", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.ChangeMessageVisibility(now, &req) }}
}

func genChangeBatch(c chooser, h *harness) op {
	q, _ := h.pickHandle(c, "changeBatch.queue")
	req := sqs.ChangeMessageVisibilityBatchRequest{Queue: q}
	for i := 0; i < pick(c, "changeBatch.n", 1, 2, 3, 0); i++ {
		_, hd := h.pickHandle(c, "changeBatch.entry")
		req.Entries = append(req.Entries, sqs.ChangeVisibilityBatchEntry{ID: fmt.Sprintf("c%d", i), ReceiptHandle: hd, VisibilityTimeout: pick(c, "changeBatch.vt", visibilities...)})
	}
	return op{name: "changeBatch", text: fmt.Sprintf("%+v", req), run: func(s service, now clock.Time) any { return s.ChangeMessageVisibilityBatch(now, &req) }}
}

func genPurge(c chooser, _ *harness) op {
	q := pick(c, "purge.queue", queueNames...)
	return op{name: "purge", text: q, run: func(s service, now clock.Time) any { return s.PurgeQueue(now, q) }}
}

func genAdvance(c chooser, _ *harness) op {
	ms := pick(c, "advance.ms", int64(0), 250, 1000, 1000, 2000, 5000, 10000, 30000, 61000, 300000, 301000, 43200000)
	return op{name: "advance", text: fmt.Sprintf("%dms", ms), dt: clock.MillisDuration(ms)}
}

func genTick(_ chooser, _ *harness) op {
	return op{name: "tick", run: func(s service, now clock.Time) any { return s.Tick(now) }}
}

func genCancel(c chooser, h *harness) op {
	id := uint64(between(c, "cancel.random", 1, 50))
	if len(h.polls) > 0 && pick(c, "cancel.known", true, true, false) {
		id = h.polls[between(c, "cancel.index", 0, int64(len(h.polls)-1))]
	}
	return op{name: "cancel", text: fmt.Sprint(id), run: func(s service, now clock.Time) any { return s.CancelPoll(now, id) }}
}

func genCreate(c chooser, h *harness) op {
	spec := h.world.queues[between(c, "create.index", 0, int64(len(h.world.queues)-1))]
	attrs := map[string]string{}
	for k, v := range spec.attrs {
		attrs[k] = v
	}
	if pick(c, "create.differ", false, true) {
		attrs[sqs.AttrVisibilityTimeout] = "7"
	}
	return op{name: "create", text: fmt.Sprintf("%s %v", spec.name, attrs), run: func(s service, now clock.Time) any { return s.CreateQueue(now, spec.name, attrs) }}
}

// actions lists every operation with its weight and whether it can apply.
var actions = []struct {
	name   string
	weight int
	gen    func(chooser, *harness) op
	ready  func(*harness) bool
}{
	{"send", 14, genSend, nil},
	{"sendBatch", 4, genSendBatch, nil},
	{"receive", 16, genReceive, nil},
	{"delete", 10, genDelete, func(h *harness) bool { return len(h.handles) > 0 }},
	{"deleteBatch", 3, genDeleteBatch, func(h *harness) bool { return len(h.handles) > 0 }},
	{"change", 6, genChange, func(h *harness) bool { return len(h.handles) > 0 }},
	{"changeBatch", 2, genChangeBatch, func(h *harness) bool { return len(h.handles) > 0 }},
	{"purge", 1, genPurge, nil},
	{"advance", 14, genAdvance, nil},
	{"tick", 4, genTick, nil},
	{"cancel", 2, genCancel, nil},
	{"create", 1, genCreate, nil},
}

func genOp(r *rand.Rand, h *harness) op {
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	for {
		n := r.IntN(total)
		for _, a := range actions {
			if n -= a.weight; n < 0 {
				if a.ready != nil && !a.ready(h) {
					break
				}
				return a.gen(chooser{r: r}, h)
			}
		}
	}
}

// coverage sums the engine's counters over all sequences: a path that
// never fired proves nothing.
var coverage = map[string]int{}

func addCoverage(s *sqs.Service) {
	for _, q := range s.Queues() {
		st, _ := s.State(q)
		v := reflect.ValueOf(st.Stats)
		for i := 0; i < v.NumField(); i++ {
			coverage[v.Type().Field(i).Name] += int(v.Field(i).Int())
		}
	}
}

func runSequence(seed uint64, nops int, counts map[string]int) string {
	r := rand.New(rand.NewPCG(seed, 0x7371736469666600))
	w := genWorld(chooser{r: r})
	h, err := newHarness(w)
	if err != nil {
		return fmt.Sprintf("seed %d: %v", seed, err)
	}
	for i := 0; i < nops; i++ {
		o := genOp(r, h)
		counts[o.name]++
		err := h.apply(o)
		if err == nil {
			err = h.check()
		}
		if err != nil {
			return fmt.Sprintf("seed %d, op %d (%s): %v\nworld: %+v\nops so far:\n  %s\nreplay: go test ./sqs -run TestDifferential -diff.seed %d",
				seed, i, o, err, w, strings.Join(h.ops, "\n  "), seed)
		}
	}
	addCoverage(h.eng)
	return ""
}

func TestDifferential(t *testing.T) {
	seeds := []uint64{*diffSeed}
	if *diffSeed == 0 {
		seeds = seeds[:0]
		for s := *diffFrom; s < *diffFrom+uint64(*diffSeqs); s++ {
			seeds = append(seeds, s)
		}
	}
	counts := map[string]int{}
	for _, s := range seeds {
		if msg := runSequence(s, *diffOps, counts); msg != "" {
			t.Fatal(msg)
		}
	}
	t.Logf("%d sequences x %d ops; ops by kind: %v", len(seeds), *diffOps, counts)
	t.Logf("engine counters summed: %v", coverage)
	for name, n := range coverage {
		if n == 0 && len(seeds) >= 100 {
			t.Errorf("counter %s never moved in %d sequences: the generators miss that path", name, len(seeds))
		}
	}
}

// TestTickInvariance runs one sequence twice on the engine: once as is,
// once with a Tick at every NextDue before each operation. When the driver
// calls does not change what happens: the streams of events and answers,
// and every operation's own answer, are the same.
func TestTickInvariance(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x7469636b))
		w := genWorld(chooser{r: r})
		h, err := newHarness(w)
		if err != nil {
			t.Fatal(err)
		}
		ticked, err := sqs.New(w.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range w.queues {
			ticked.CreateQueue(clock.Epoch, q.name, q.attrs)
		}
		var lazy, eager sqs.Effects
		add := func(fx *sqs.Effects, x any) {
			v := reflect.ValueOf(x).FieldByName("Effects")
			if v.IsValid() {
				e := v.Interface().(sqs.Effects)
				fx.Events = append(fx.Events, e.Events...)
				fx.Answers = append(fx.Answers, e.Answers...)
			}
		}
		for i := 0; i < 200; i++ {
			o := genOp(r, h)
			if o.name == "advance" {
				h.now = h.now.Add(o.dt)
				continue
			}
			if o.name == "tick" {
				continue
			}
			for {
				at, ok := ticked.NextDue()
				if !ok || at > h.now {
					break
				}
				add(&eager, ticked.Tick(at))
			}
			a, b := o.run(h.eng, h.now), o.run(ticked, h.now)
			h.remember(a)
			add(&lazy, a)
			add(&eager, b)
			strip := func(x any) any {
				v := reflect.New(reflect.TypeOf(x)).Elem()
				v.Set(reflect.ValueOf(x))
				if f := v.FieldByName("Effects"); f.IsValid() {
					f.Set(reflect.Zero(f.Type()))
				}
				return v.Interface()
			}
			if d := cmp.Diff(strip(a), strip(b), cmpOpts...); d != "" {
				t.Fatalf("seed %d op %d %s: answers differ (-lazy +ticked):\n%s", seed, i, o, d)
			}
		}
		add(&lazy, h.eng.Tick(h.now))
		add(&eager, ticked.Tick(h.now))
		if d := cmp.Diff(lazy, eager, cmpOpts...); d != "" {
			t.Fatalf("seed %d: effects differ (-lazy +ticked):\n%s", seed, d)
		}
	}
}
