package sim

import (
	"fmt"
	"io"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
	"popsim/sim/check"
	"popsim/workload"
	"popsim/workload/pcg"
)

// RunOptions are the caller's choices that do not change the run itself.
type RunOptions struct {
	TraceWriter io.Writer // optional: the text trace, one canonical line per event
	KeepEvents  bool      // keep every trace event in Result.Events (short runs only)
	Scenario    string    // recorded in the summary
	Replay      string    // the command that replays this run, copied into violations
	// Progress, when set, is called before the first task and then every
	// ProgressEvery dispatched tasks. It is how the caller watches a long run and
	// stops it (the simulator reads no signals): a non-nil error ends the
	// run at once and Run returns it wrapped. It must not touch the run.
	Progress func(Progress) error
	// Reuse, when set, carries the run's largest buffers to the next run
	// given the same Reuse, which then allocates less (see Reuse). It
	// changes no result or trace.
	Reuse *Reuse

	// capture is used by SelfCheck: checkpoint hashes and a window of lines.
	capture *capture
	// script runs functions at chosen virtual times (scripted tests).
	script []scriptStep
	// restarts: the script restarts or stops a broker, so the run may
	// read below its commit offsets and keeps every message (releasable).
	restarts bool
	// renews: the script injects renewals, so the run keeps every message
	// (releasable, mayRenew).
	renews bool
}

type scriptStep struct {
	after clock.Duration // from the start
	f     func(*sim)
}

type capture struct {
	every       int64
	lo, hi      int64
	checkpoints [][traceHashSize]byte
	lines       []string
	traceHash   string
	dispatched  int64
}

// ProgressEvery is how many dispatched tasks pass between RunOptions.Progress calls.
const ProgressEvery = 1 << 16

// Progress is where a run stands: virtual time since its start and tasks
// dispatched. Header (the run's derived parameters, as Result.Header) is
// set in the first call only, before the first task.
type Progress struct {
	Virtual clock.Duration
	Tasks   int64
	Header  []string
}

// Result is everything a run produced. Summary.WallSeconds is left 0: the
// caller measures wall time (the simulator never reads the wall clock).
type Result struct {
	Summary model.Summary
	// EndToEnd is produce (intended time) to successful ack, ServiceTime
	// the successful delivery to its ack, both in microseconds (1us..1h, 3
	// significant figures), of the messages measured after the warm-up.
	EndToEnd, ServiceTime *hdrhistogram.Histogram
	// Parts are the parts of those messages' end-to-end latency, by name
	// (model.Parts): they add up to it message by message.
	Parts map[string]*hdrhistogram.Histogram
	// ReviveLag is a lease's deadline to the revive that wrote its copy
	// (Summary.ReviveLag), leases that ended in the warm-up excluded.
	ReviveLag *hdrhistogram.Histogram
	Events    []model.Event // when RunOptions.KeepEvents
	// Header lists the run's derived parameters (seed, fault activation and
	// weights): print it before the run's results.
	Header []string

	traceEvents int64
}

// TraceEvents is the number of trace events the run emitted.
func (r *Result) TraceEvents() int64 { return r.traceEvents }

// sim is one run's state. Everything is owned by the single loop in run.
type sim struct {
	c      *layout
	cfg    *Config
	opts   RunOptions
	q      *scheduler
	eng    Engine
	rt     *route        // the brokers and their queue numbering
	brks   []*broker     // every broker's cost model (none: no cost model)
	out    Outcome       // the effects of the engine call being carried out
	timers []engineTimer // the engine's timers, by id
	tr     *tracer
	chk    *check.Checker
	faults *faultSites
	cov    coverage
	meter  *meter

	netRng          *pcg.Rand
	reqLat, respLat workload.Sampler // the network latencies, sampled without the interface's call

	prods   []*producer
	cons    []*consumer
	groups  []*group
	byName  map[string]*group   // lookup only
	onTopic map[string][]*group // the groups consuming each topic, in s.groups order (subscribe)

	nextMsg  model.MsgID // the next stored message's id
	freeAcks []*ackReq   // served acks, for reuse (takeAck)
	freePuts []*putReq   // finished putReqs, for reuse (newPutReq)
	// freeHeld are held messages (deliverOwned's) the POP clients are done
	// with and nothing else refers to (recycle, recycleHeld), for any
	// client's next delivery: the last one freed is in cache, where a
	// client's own was last written some hundreds of deliveries before
	// (the hot topic's 500 consumers).
	freeHeld  []*popHeld
	engCopies bool            // the engine's Store copies the message (copyingStore)
	renewals  []proxy.Renewal // scratch for a proxy's due renewals
	// pins: the receipt handles clients may still renew with, in a run
	// that releases consumed messages and renews (nil otherwise: pins.go).
	pins      *pins
	positions []Position // scratch for the engine's positions
	commits   map[commitKey]int64

	start, safetyEnd, drainEnd clock.Time
	chainEnd                   clock.Time // safetyEnd + DrainBudget: the latest a retrying run may go on
	live, stopped, drained     bool
	// lossOn: a loss site may fire (lost): the safety phase of a run with
	// a loss site on with a probability, when drawn or once a window
	// switched one on (openWindow). startLiveness clears it. renewOn is
	// the same for the renewal sites (injectRenewals), on at all: one on
	// draws even with a probability of 0.
	lossOn, renewOn bool
	settling        bool   // drained once; waiting out the engine's SettleTime
	faultSeed       uint64 // the engine's fault seed (revive put failures)
}

// group is a consumer group and the topic it consumes.
type group struct {
	name    string
	idx     int   // in sim.groups
	pos     int32 // its place among the groups consuming its topic (subscribe)
	topic   string
	kind    ConsumerKind
	cfg     pop.GroupConfig
	queues  int32
	members []*consumer
	// sub is the group's subscription (its consumers' expression, TAG):
	// what the broker's store read hands out (nil: everything).
	sub *filter.Filter
	// retry are its topic's POP retry topics (V1, V2), built when first
	// needed (realTopic).
	retry [2]string
}

// owes reports whether the group is owed m: the broker's two-stage check
// of its subscription (the consume queue's tag code, then the stored
// message) passes it. A POP group may then be lent a message whose tag
// only collides with a subscribed one, which its client or proxy drops
// and acks (noMatch); a Pull client drops such a message silently
// (processPullResult), so for a Pull group the check is exact.
func (g *group) owes(m *model.Message) bool {
	if g.kind == Pull {
		return g.sub.Match(m)
	}
	return g.sub.MatchesAll() || g.sub.MatchConsumeQueue(filter.TagsCode(m.Tags)) && g.sub.MatchCommitLog(m)
}

// Run runs one simulation: setup, the safety phase, the liveness phase,
// then the checker's verdict. It fails on an invalid configuration and on
// hitting the event budget; checker violations are results, not errors.
func Run(cfg Config, opts RunOptions) (*Result, error) {
	c, err := cfg.WithDefaults().layout()
	if err != nil {
		return nil, err
	}
	c.sha256 = cfg.SHA256()
	s, err := newSim(c, opts)
	if err != nil {
		return nil, err
	}
	if err := s.loop(); err != nil {
		return nil, err
	}
	r, err := s.result()
	if err == nil {
		s.recycle()
	}
	return r, err
}

func newSim(c *layout, opts RunOptions) (*sim, error) {
	cfg := &c.cfg
	var cov []string
	if r := engineOf(cfg.Engine.Kind); r != nil {
		cov = r.coverage
	}
	s := &sim{
		c: c, cfg: cfg, opts: opts, cov: newCoverage(cov...),
		byName: map[string]*group{}, commits: map[commitKey]int64{}, nextMsg: 1,
		netRng: newStream(cfg.Seed, streamNetwork), reqLat: workload.NewSampler(cfg.Network.RequestLatency.Dist), respLat: workload.NewSampler(cfg.Network.ResponseLatency.Dist),
	}
	s.start = cfg.Start
	s.safetyEnd = s.start.Add(cfg.Duration)
	s.drainEnd = s.safetyEnd.Add(cfg.Drain)
	s.chainEnd = s.safetyEnd.Add(cfg.DrainBudget())
	s.q = newScheduler(s.start, newStream(cfg.Seed, streamTie), cfg.EventBudget, s.chainEnd)
	s.faults = drawFaultSites(cfg.Seed, cfg)
	s.lossOn, s.renewOn = s.faults.lossy(), s.faults.renewing()
	s.meter = newMeter(s.start, cfg.Warmup, s.safetyEnd)
	s.chk = check.New(check.Options{Seed: cfg.Seed, Replay: opts.Replay})
	s.tr = newTracer(opts.TraceWriter, opts.KeepEvents, s)
	s.chk.ShareBuffer(func() []byte { return s.tr.buf[:s.tr.used] }) // the history reads the events where the tracer wrote them
	s.useReuse()
	if cp := opts.capture; cp != nil {
		s.tr.selfCheck(cp.every, cp.lo, cp.hi)
	}
	s.rt = newRoute(cfg.Broker.brokers(), cfg.Topics)
	if err := s.setupEngine(); err != nil {
		return nil, err
	}
	s.setupClients()
	s.schedulePeriodic()
	s.scheduleSwitches()
	for i := range opts.script {
		st := &opts.script[i]
		s.q.after(st.after, tkScripted, -1, 0, &scripted{f: st.f})
	}
	return s, nil
}

// setupEngine builds the configured engine (its topics and groups) and
// hands it its faults.
func (s *sim) setupEngine() error {
	for _, r := range engineKinds {
		if r.kind == s.cfg.Engine.Kind {
			eng, err := r.open(s, s.cfg.Engine.Settings)
			if err != nil {
				return err
			}
			s.eng = eng
		}
	}
	if s.eng == nil {
		return fmt.Errorf("sim: engine kind %q has no adapter", s.cfg.Engine.Kind)
	}
	if c, ok := s.eng.(copyingStore); ok {
		s.engCopies = c.storesCopies()
	}
	for b := range s.rt.n {
		eng := s.eng
		if c, ok := s.eng.(*rocketCluster); ok {
			eng = c.engineOfBroker(b)
		}
		brk, err := newBroker(s, &s.cfg.Broker, b, eng)
		if err != nil {
			return err
		}
		if brk == nil {
			break
		}
		s.brks = append(s.brks, brk)
	}
	s.meter.atBroker = len(s.brks) > 0
	s.faultSeed = s.faults.rng[famPutFailure].Uint64()
	s.syncFaults()
	return nil
}

func (s *sim) setupClients() {
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Reason: model.RSafety})
	ordered := model.RNone
	if r := engineOf(s.cfg.Engine.Kind); r != nil && r.ordered {
		ordered = model.ROrdered
	}
	for i, cs := range s.c.consumers {
		e := model.Event{Kind: model.EvSubscribe, Client: int32(i), Group: cs.Group, Topic: cs.Topic, Reason: ordered}
		if s.c.groups[cs.Group].ConsumeMessageOrderly {
			e.Reason, e.Span = model.ROrderly, orderSlack
		}
		s.emit(e)
	}
	for i, ps := range s.c.producers {
		s.prods = append(s.prods, s.newProducer(int32(i), ps))
	}
	for _, name := range s.c.groupList {
		g := &group{name: name, idx: len(s.groups), cfg: s.c.groups[name]}
		s.groups = append(s.groups, g)
		s.byName[name] = g
	}
	for i, cs := range s.c.consumers {
		s.cons = append(s.cons, s.newConsumer(int32(i), cs))
	}
	s.subscribe()
	for _, p := range s.prods {
		p.groups = s.onTopic[p.topic]
		s.scheduleArrival(p)
	}
	for _, c := range s.cons {
		s.scheduleFaultClocks(c)
		c.cl.start(s)
	}
	for _, g := range s.groups {
		if g.kind == Pull {
			s.rebalance(g)
		}
	}
}

// schedulePeriodic arms the engine's periodic work, the sampler, the
// phase change and the end of the drain budget.
func (s *sim) schedulePeriodic() {
	s.eng.Start(s.q.now(), &s.out)
	s.settle(&s.out)
	s.q.after(s.cfg.SampleInterval, tkSample, -1, 0, nil)
	if s.faults.broker.on {
		s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.broker.every), tkBrokerRestart, -1, 0, nil)
	}
	if s.faults.stop.on {
		s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.stop.every), tkBrokerStop, -1, 0, nil)
	}
	s.q.at(s.safetyEnd, tkLiveness, -1, 0, nil)
	s.q.at(s.drainEnd, tkStop, -1, 0, nil)
}

// loop is the simulator: dispatch tasks in order until the run stops.
func (s *sim) loop() error {
	if err := s.progress(true); err != nil {
		return err
	}
	report := s.opts.Progress != nil // progress does nothing without it
	for !s.stopped {
		// The earliest task, taken here, not by a function of its own
		// (scheduler.next, the tests'): peek's first step, peek itself only
		// when front and near are empty (it moves the horizon), and start,
		// which all inline: a call fewer a task (callgrind:
		// BenchmarkRunDefault 1 537.1 -> 1 529.0 M instructions, hot topic
		// 631.2 -> 627.7 M).
		q := &s.q.q
		t := q.front.earlier(q.near.first())
		if t == nil {
			if t = q.peek(); t == nil {
				break
			}
		}
		if !s.q.start(t) {
			return s.q.bound(t)
		}
		// The one switch every task goes through, written here, not in a
		// function of its own (dispatch): a call fewer a task (callgrind:
		// BenchmarkRunDefault 1 550.8 -> 1 546.2 M instructions, hot
		// topic 637.06 -> 635.34 M).
		switch t.kind {
		case tkStop:
			s.stop()
		case tkLiveness:
			s.startLiveness()
		case tkDrainCheck:
			s.drainCheck()
		case tkSample:
			s.sample()
		case tkProduce:
			s.produce(s.prods[t.who])
		case tkPut:
			s.put(t.p.(*putReq))
		case tkEngine:
			s.engineTick(t.who, t.at)
		case tkNetRequest:
			s.atEngine(request(t.p))
		case tkNetResponse: // a client's task, without clientTask's look-up: atClient finds the client in the request
			s.atClient(t)
		case tkBrokerRestart:
			s.brokerRestart(-1)
		case tkBrokerStop:
			s.brokerStop(-1)
		case tkBrokerDone:
			s.brks[-1-t.who].done(t.p.(*brokerJob))
		case tkScripted:
			t.p.(*scripted).f(s)
		case tkAdmin:
			t.p.(*modeSwitch).run(s)
		default:
			s.clientTask(t)
		}
		s.q.release(t)
		if invariantsOn && s.q.dispatched%invariantsEvery == 0 {
			s.checkEngine()
		}
		if report && s.q.dispatched%ProgressEvery == 0 {
			if err := s.progress(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// progress calls RunOptions.Progress, if any; the first call carries the
// header.
func (s *sim) progress(first bool) error {
	if s.opts.Progress == nil {
		return nil
	}
	p := Progress{Virtual: s.q.now().Sub(s.start), Tasks: s.q.dispatched}
	if first {
		p.Header = s.headerLines()
	}
	if err := s.opts.Progress(p); err != nil {
		return fmt.Errorf("sim: stopped by the caller after %d tasks, %v virtual: %w", p.Tasks, p.Virtual, err)
	}
	return nil
}

// request is p, a request's payload, as a Request. The requests most
// tasks carry are told apart by their concrete type, one comparison each:
// asserting an interface to another interface goes through the runtime's
// cache of the dynamic types each site has seen (runtime.typeAssert),
// which at this site, the one every request reaching an engine passes,
// missed for 51 000 of the default scenario's 60 000 requests in one run
// and far fewer in another (it replaces its entries at random): 1 to 4 M
// instructions, varying from run to run.
func request(p payload) Request {
	switch r := p.(type) {
	case *popReq:
		return r
	case *ackReq:
		return r
	case *changeReq:
		return r
	case *receiveReq:
		return r
	}
	return p.(Request)
}

// clientTask is a task inside a consumer process. Tasks of an older
// incarnation are dropped; tasks that fall inside a pause wait for its
// end. A response reaching its client (tkNetResponse) is dispatched to
// atClient directly, which makes the same checks by its request.
func (s *sim) clientTask(t *task) {
	c := s.cons[t.who]
	switch t.kind {
	case tkCrash:
		s.crashTask(c)
		return
	case tkRestart:
		s.restartTask(c, t.epoch)
		return
	case tkPause:
		s.pause(c)
		return
	case tkSlow:
		s.slow(c)
		return
	}
	if t.epoch != c.epoch || !c.alive {
		return
	}
	if s.q.now() < c.pauseUntil {
		nt := s.q.at(c.pauseUntil, t.kind, t.who, t.epoch, t.p)
		if w, ok := t.p.(work); ok && t.kind == tkConsumeEnd {
			h := w.base()
			h.endTask, h.endSeq = nt, nt.seq
		}
		return
	}
	switch t.kind {
	case tkPoll:
		c.cl.poll(s, t.p)
	case tkConsumeEnd:
		s.consumeEnd(c, workOf(t.p))
	case tkTimeout:
		s.timeout(c, t.p.(Request))
	case tkClient:
		c.cl.timer(s, t.p)
	case tkResume:
		s.emit(model.Event{Kind: model.EvResume, Client: c.idx})
	default:
		panic("sim: unhandled task kind " + strconv.Itoa(int(t.kind)))
	}
}

// emit stamps a trace event with the current time and records it. The
// event is built in the tracer's scratch slot, so emitting allocates
// nothing; observers must copy what they keep. It is small enough to be
// inlined, so that an emit is one call (tracer.emitCur).
func (s *sim) emit(e model.Event) {
	s.tr.cur = e // see emitCur
	s.tr.emitCur(s.q.now())
}

// event clears the tracer's scratch slot for an event of kind k and
// returns it, for the client events of every message (receive, deliver,
// consume start and end, ack) to be written in place and traced by
// emitSlot: emit's 160-byte argument is built aside and copied into the
// slot. Nothing may be traced between the two calls.
func (s *sim) event(k model.EventKind) *model.Event {
	e := &s.tr.cur
	*e = model.Event{Kind: k}
	return e
}

// emitSlot traces the event written in place (event), as emit.
func (s *sim) emitSlot() { s.tr.emitCur(s.q.now()) }

// emitHeld traces an event of kind k about held message h: its client,
// message and lease, and why. It does not inline (cost 116): startSingle
// and consumeEnd, once a message each, call its two pieces themselves
// (callgrind: BenchmarkRunDefault 1.7 M instructions fewer).
func (s *sim) emitHeld(k model.EventKind, h *held, why model.Reason) {
	s.heldSlot(k, h, why)
	s.emitSlot()
}

// heldSlot is event for an event of kind k about held message h, with
// its client, message, lease and why written, for a caller to finish
// and trace with emitSlot.
func (s *sim) heldSlot(k model.EventKind, h *held, why model.Reason) *model.Event {
	e := s.event(k)
	e.Client, e.Msg, e.Lease, e.Reason = h.c.idx, h.msg.ID, h.lease, why
	return e
}

// serveNow serves a request that reaches the engine without the network
// (an offset query or commit, a send-back) and carries out what it did.
func (s *sim) serveNow(r Request) {
	s.eng.Serve(s.q.now(), r, &s.out)
	s.settle(&s.out)
}

// scripted runs a function at a virtual time (tests).
type scripted struct{ f func(*sim) }
