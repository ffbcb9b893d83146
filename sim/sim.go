package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/sim/check"
	"popsim/workload"
)

// RunOptions are the caller's choices that do not change the run itself.
type RunOptions struct {
	TraceWriter io.Writer // optional: the text trace, one canonical line per event
	KeepEvents  bool      // keep every trace event in Result.Events (short runs only)
	Scenario    string    // recorded in the summary
	Replay      string    // the command that replays this run, copied into violations
	// Progress, when set, is called before the first event and then every
	// ProgressEvery events. It is how the caller watches a long run and
	// stops it (the simulator reads no signals): a non-nil error ends the
	// run at once and Run returns it wrapped. It must not touch the run.
	Progress func(Progress) error

	// capture is used by SelfCheck: checkpoint hashes and a window of lines.
	capture *capture
	// script runs functions at chosen virtual times (scripted tests).
	script []scriptStep
}

type scriptStep struct {
	after clock.Duration // from the start
	f     func(*sim)
}

type capture struct {
	every        int64
	lo, hi       int64
	checkpoints  [][32]byte
	lines        []string
	traceSHA256  string
	dispatchedEv int64
}

// ProgressEvery is how many events pass between RunOptions.Progress calls.
const ProgressEvery = 1 << 16

// Progress is where a run stands: virtual time since its start and events
// dispatched. Header (the run's derived parameters, as Result.Plan) is set
// in the first call only, before the first event.
type Progress struct {
	Virtual clock.Duration
	Events  int64
	Header  []string
}

// Result is everything a run produced. Summary.WallSeconds is left 0: the
// caller measures wall time (the simulator never reads the wall clock).
type Result struct {
	Summary model.Summary
	// EndToEnd is produce (intended time) to successful ack, ServiceTime
	// delivery to ack, both in microseconds (1us..1h, 3 significant
	// figures), warm-up excluded.
	EndToEnd, ServiceTime *hdrhistogram.Histogram
	Events                []model.Event // when RunOptions.KeepEvents
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
	b      *pop.Broker
	tr     *tracer
	chk    *check.Checker
	faults *faultSites
	cov    coverage
	led    *ledger

	netRng          *rand.Rand
	reqLat, respLat workload.Dist

	prods  []*producer
	cons   []*consumer
	groups []*group
	byName map[string]*group // lookup only

	freeAcks  []*call          // served ack calls, for reuse (newCall)
	freePuts  []*putReq        // finished putReqs, for reuse (newPutReq)
	polls     map[uint64]*call // suspended pop requests by poll id
	pullHolds map[uint64]*call // pull requests the broker holds, by hold id
	topicIdx  map[string]int32 // lookup only

	start, warmEnd, safetyEnd, drainEnd clock.Time
	live, stopped, drained              bool
	pollArmed, holdArmed                bool
	pollAt, holdAt                      clock.Time
	faultSeed                           uint64 // the broker's fault seed (revive put failures)
}

// group is a consumer group and the topic it consumes.
type group struct {
	name    string
	topic   string
	kind    ConsumerKind
	cfg     pop.GroupConfig
	queues  int32
	members []*consumer
	detail  string // "topic=<topic>"
}

// presented is EvDeliver's Detail: the topic the client was shown.
func (g *group) presented(topic string) string {
	if topic == g.topic {
		return g.detail
	}
	return "topic=" + topic
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
	return s.result()
}

func newSim(c *layout, opts RunOptions) (*sim, error) {
	cfg := &c.cfg
	s := &sim{
		c: c, cfg: cfg, opts: opts, cov: newCoverage(),
		byName: map[string]*group{}, polls: map[uint64]*call{}, pullHolds: map[uint64]*call{}, topicIdx: map[string]int32{},
		netRng: newStream(cfg.Seed, streamNetwork), reqLat: cfg.Network.RequestLatency.Dist, respLat: cfg.Network.ResponseLatency.Dist,
	}
	s.start = cfg.Start
	s.warmEnd, s.safetyEnd = s.start.Add(cfg.Warmup), s.start.Add(cfg.Duration)
	s.drainEnd = s.safetyEnd.Add(cfg.Drain)
	s.q = newScheduler(s.start, newStream(cfg.Seed, streamTie), cfg.EventBudget, s.drainEnd)
	s.faults = drawFaultSites(cfg.Seed, cfg)
	s.led = newLedger(s.warmEnd, s.safetyEnd)
	s.chk = check.New(check.Options{Seed: cfg.Seed, Replay: opts.Replay})
	s.tr = newTracer(opts.TraceWriter, opts.KeepEvents, s.chk.Observe)
	if cp := opts.capture; cp != nil {
		s.tr.ckEvery, s.tr.capLo, s.tr.capHi = cp.every, cp.lo, cp.hi
	}
	if err := s.setupBroker(); err != nil {
		return nil, err
	}
	s.setupClients()
	s.schedulePeriodic()
	for i := range opts.script {
		st := &opts.script[i]
		s.q.after(st.after, evScripted, -1, 0, &scripted{f: st.f})
	}
	return s, nil
}

func (s *sim) setupBroker() error {
	b, err := pop.New(s.cfg.Engine.RocketMQ())
	if err != nil {
		return err
	}
	s.b = b
	for i, t := range s.cfg.Topics {
		if err := b.CreateTopic(pop.TopicConfig{Name: t.Name, ReadQueueNums: t.Queues, WriteQueueNums: t.Queues}); err != nil {
			return err
		}
		s.topicIdx[t.Name] = int32(i)
	}
	for _, name := range s.c.groupList {
		if err := b.CreateGroup(s.c.groups[name]); err != nil {
			return err
		}
	}
	s.faultSeed = s.faults.rng[famPutFailure].Uint64()
	s.syncPutFaults()
	return nil
}

func (s *sim) setupClients() {
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Detail: "safety"})
	for i, ps := range s.c.producers {
		s.prods = append(s.prods, s.newProducer(int32(i), ps))
	}
	for _, name := range s.c.groupList {
		g := &group{name: name, cfg: s.c.groups[name]}
		s.groups = append(s.groups, g)
		s.byName[name] = g
	}
	for i, cs := range s.c.consumers {
		c := s.newConsumer(int32(i), cs)
		s.cons = append(s.cons, c)
	}
	for _, p := range s.prods {
		s.scheduleArrival(p)
	}
	for _, c := range s.cons {
		s.scheduleFaultClocks(c)
		s.startConsumer(c)
	}
	for _, g := range s.groups {
		if g.kind == Pull {
			s.rebalance(g)
		}
	}
}

// schedulePeriodic arms the engine's cadence, the sampler, the phase
// change and the end of the drain budget.
func (s *sim) schedulePeriodic() {
	s.q.after(pop.ReviveIdleInterval*clock.Millisecond, evRevive, -1, 0, nil)
	if s.cfg.Engine.RocketMQ().EnablePopBufferMerge {
		s.q.after(pop.CacheCleanupInterval*clock.Millisecond, evCacheCleanup, -1, 0, nil)
	}
	s.q.after(s.cfg.SampleInterval, evSample, -1, 0, nil)
	if s.faults.broker.on {
		s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.broker.every), evBrokerRestart, -1, 0, nil)
	}
	s.q.at(s.safetyEnd, evLiveness, -1, 0, nil)
	s.q.at(s.drainEnd, evStop, -1, 0, nil)
}

// loop is the simulator: dispatch events in order until the run stops.
func (s *sim) loop() error {
	if err := s.progress(true); err != nil {
		return err
	}
	for !s.stopped {
		e, err := s.q.next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		s.dispatch(e)
		s.q.release(e)
		if s.q.dispatched%ProgressEvery == 0 {
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
	p := Progress{Virtual: s.q.now().Sub(s.start), Events: s.q.dispatched}
	if first {
		p.Header = s.headerLines()
	}
	if err := s.opts.Progress(p); err != nil {
		return fmt.Errorf("sim: stopped by the caller after %d events, %v virtual: %w", p.Events, p.Virtual, err)
	}
	return nil
}

// dispatch is the one switch every event goes through.
func (s *sim) dispatch(e *event) {
	switch e.kind {
	case evStop:
		s.stopped = true
	case evLiveness:
		s.startLiveness()
	case evDrainCheck:
		s.drainCheck()
	case evSample:
		s.sample()
	case evProduce:
		s.produce(s.prods[e.who])
	case evPut:
		s.put(e.p.(*putReq))
	case evRevive:
		s.revive()
	case evCacheCleanup:
		s.cacheCleanup()
	case evPollTick:
		s.pollTick(e.at)
	case evNetRequest:
		s.atBroker(e.p.(*call))
	case evHoldCheck:
		s.holdCheck(e.at)
	case evBrokerRestart:
		s.brokerRestart()
	case evScripted:
		e.p.(*scripted).f(s)
	default:
		s.clientEvent(e)
	}
}

// clientEvent handles events that happen inside a consumer process. Events
// of an older incarnation are dropped; events that fall inside a pause wait
// for its end.
func (s *sim) clientEvent(e *event) {
	c := s.cons[e.who]
	switch e.kind {
	case evCrash:
		s.crashEvent(c)
		return
	case evRestart:
		s.restartEvent(c, e.epoch)
		return
	case evPause:
		s.pause(c)
		return
	case evSlow:
		s.slow(c)
		return
	case evNetResponse:
		s.atClient(e)
		return
	}
	if e.epoch != c.epoch || !c.alive {
		return
	}
	if s.q.now() < c.pauseUntil {
		ne := s.q.at(c.pauseUntil, e.kind, e.who, e.epoch, e.p)
		if h, ok := e.p.(*held); ok && e.kind == evConsumeEnd {
			h.endEv, h.endSeq = ne, ne.seq
		}
		return
	}
	s.clientAction(c, e)
}

func (s *sim) clientAction(c *consumer, e *event) {
	switch e.kind {
	case evPoll:
		s.poll(c, e.p)
	case evConsumeEnd:
		s.consumeEnd(c, e.p.(*held))
	case evTimeout:
		s.timeout(c, e.p.(*call))
	case evRenew:
		s.renew(c, e.p.(*held))
	case evFaultRenew:
		s.faultRenew(c, e.p.(*renewFault))
	case evLocalRetry:
		s.localRetry(c, e.p.(*held))
	case evCommit:
		s.commitTick(c)
	case evResume:
		s.emit(model.Event{Kind: model.EvResume, Client: c.idx})
	default:
		panic("sim: unhandled event kind " + strconv.Itoa(int(e.kind)))
	}
}

// emit stamps a trace event with the current time and records it. The
// event is built in the tracer's scratch slot, so emitting allocates
// nothing; observers must copy what they keep.
func (s *sim) emit(e model.Event) {
	s.tr.cur = e
	s.tr.cur.At = s.q.now()
	s.tr.emit(&s.tr.cur)
}

// scripted runs a function at a virtual time (tests).
type scripted struct{ f func(*sim) }
