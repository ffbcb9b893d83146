package sim

// The at-least-once property over explicit fault schedules, drawn and
// shrunk by pgregory.net/rapid, on each of RocketMQ's POP paths: the KV
// path (TestPropAtLeastOnce) and the checkpoint path, RocketMQ's default
// (TestPropAtLeastOnceCheckpoint), with the same invariants. Each check
// draws, in this order:
//
//  1. the swarm mask: which fault families may appear in the schedule
//     (one boolean each, so shrinking turns whole families off);
//  2. a short explicit fault schedule (RunScheduled): crash consumer i at
//     t, pause or slow it for d, lose every pop/ack/change request or
//     response for d, renew the messages delivered within d at an edge
//     (same deadline, exactly at expiry, after revive), restart the
//     broker, fail every retry-topic write for d, skew a consumer's clock,
//     and on the checkpoint path fail every revive read for d (a family
//     the KV property does not draw, so that its fail files keep their
//     meaning);
//  3. the workload knobs: consumer kind and count, threads, batch,
//     invisible and poll time, a processing-time distribution and a
//     RECONSUME_LATER probability from small menus, max reconsume times,
//     20..300 messages as a backlog or a short Poisson burst, queues,
//     restart delay, the engine's buffer (KV: the cache; checkpoint: the
//     CK/ack merge buffer) and retry-topic version, and the simulator's
//     seed. On the checkpoint path a V2 retry topic goes with
//     retrieveMessageFromPopRetryTopicV1 off: with both on, each pop reads
//     one retry version at random (apache/rocketmq#7665), so a pop woken by
//     a V2 retry message may read V1 and park again, which the checker
//     rightly calls a missed wakeup.
//
// The run is the simulator's safety phase (20 s, faults) then its liveness
// phase (no faults, everything must drain within 30 min of virtual time);
// the property is the checker's verdict: no violation at all. A failure
// prints the shrunk schedule one step per line, the workload, the first
// violation of each invariant with its message history, and the command
// that replays it. popsim run cannot replay it: scenario files have no
// field for an explicit schedule.
//
// Budget: 300 checks per path by default (a few seconds on 2 cores);
// RAPID_CHECKS=20000 (make prop) for long runs. Unless -rapid.seed or
// RAPID_SEED chooses one, the seed is fixed so that `go test` is
// deterministic. Shrunk failures are saved under testdata/rapid/<test>/ and
// replayed by every later `go test`: commit them as regression cases.

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/internal/rapidfail"
	"popsim/pop"
	"popsim/sim/check"
)

// propFamily is one bit of the swarm mask, in draw order.
type propFamily uint8

const (
	pfCrash propFamily = iota
	pfPause
	pfSlow
	pfLosePop
	pfLoseAck
	pfLoseChange
	pfRenewSameDeadline
	pfRenewAtExpiry
	pfRenewAfterRevive
	pfBrokerRestart
	pfRevivePutFailure
	pfClockSkew
	pfReviveReadFailure // checkpoint path only
	numPropFamilies
)

// ckOnly are the families only the checkpoint property draws.
const ckOnly = familySet(1) << pfReviveReadFailure

var propFamilyNames = [numPropFamilies]string{
	"crash", "pause", "slow", "lose-pop", "lose-ack", "lose-change",
	"renew-same-deadline", "renew-at-expiry", "renew-after-revive",
	"broker-restart", "revive-put-failure", "clock-skew", "revive-read-failure",
}

type familySet uint16

func (m familySet) has(f propFamily) bool { return m&(1<<f) != 0 }

func families(fs ...propFamily) familySet {
	var m familySet
	for _, f := range fs {
		m |= 1 << f
	}
	return m
}

func (m familySet) String() string {
	var on []string
	for f := propFamily(0); f < numPropFamilies; f++ {
		if m.has(f) {
			on = append(on, propFamilyNames[f])
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

// Property dimensions.
const (
	propDuration    = 20 * clock.Second // safety phase
	propDrain       = 30 * clock.Minute // liveness budget (virtual)
	propMaxSteps    = 12                // schedule length
	propConsumerCap = 8                 // consumers 1..8; a step targets slot % consumers
	propEventBudget = 5_000_000
)

// genOpts biases the generator (the bug-hunting tests); the zero value is
// the unbiased property.
type genOpts struct {
	bugs         pop.Bugs
	always       familySet      // families with exactly one step in every schedule (not drawn)
	maxReconsume int            // upper bound of max reconsume times (default 4)
	kinds        []ConsumerKind // menu (default pop-push, simple)
	cache        *bool          // force the engine's EnablePopBufferMerge
	retryV2      *bool          // force EnableRetryTopicV2
	reconsume    []string       // RECONSUME_LATER probability menu
	processing   []string       // processing-time menu
	maxMessages  int            // default 300
	drain        clock.Duration // default propDrain
	maxSteps     int            // drawn schedule steps beyond the always ones (default propMaxSteps)
	// orderly: the group consumes orderly (FIFO); drawn only then (so
	// that the other properties draw as before): the simple consumer's
	// attempt_id re-entrancy (forced by reentrant) and the pop lock's
	// contention (lockBusy menu, ppm).
	orderly   bool
	reentrant *bool
	lockBusy  []PPM
	// pollSlack (0: the default 10 s) is the network's PollTimeoutSlack:
	// how long after its poll time a client gives a receive up and retries.
	pollSlack  clock.Duration
	checkpoint bool // RocketMQ's checkpoint path (default: KV)
	// latency (empty: the default uniform(200us,2ms)) is the network's
	// one-way latency both ways.
	latency string
	// brokers: the cluster has 2 or 3 brokers (drawn only then), and each
	// restart step names the broker it hits.
	brokers bool
	// wide: every step of these families opens at 0 for the whole safety
	// phase (nothing drawn for it). longPause: every pause starts between
	// 0.5 and 2.5 s and lasts 15 to 17.4 s, so that it ends inside the
	// safety phase, where renewal faults are still injected. maxThreads,
	// maxInvisible (0: 8 and 60 s) bound the consumer's threads and
	// invisible time. (TestPropFindsFifoChangeBelowCommitEmptyHandle says
	// why.)
	wide         familySet
	longPause    bool
	maxThreads   int
	maxInvisible clock.Duration
}

// drawnStep is a schedule step as drawn: times in 10 ms and 100 ms units,
// the target as a slot taken modulo the consumer count.
type drawnStep struct {
	fam  propFamily
	at   int // 10 ms units
	slot int
	dur  int // 100 ms units
	resp bool
	skew int // 100 ms units
	// broker: a restart's broker, taken modulo the broker count (drawn
	// only with several brokers).
	broker int
}

// GoString is what rapid prints for the drawn schedule; the consumer a
// step names there is its slot (the printed counterexample resolves it).
func (d drawnStep) GoString() string {
	s := d.resolve(propConsumerCap).String()
	switch d.fam {
	case pfCrash, pfPause, pfSlow, pfClockSkew:
		s += " (slot " + itoa(int64(d.slot)) + " mod consumer.count)"
	}
	return s
}

func (d drawnStep) resolve(consumers int) ScheduledFault {
	f := ScheduledFault{At: clock.Duration(d.at) * 10 * clock.Millisecond}
	dur := min(clock.Duration(d.dur)*100*clock.Millisecond, propDuration)
	target := int32(d.slot % consumers)
	switch d.fam {
	case pfCrash:
		f.Kind, f.Consumer = FaultCrash, target
	case pfPause:
		f.Kind, f.Consumer, f.For = FaultPause, target, dur
	case pfSlow:
		f.Kind, f.Consumer, f.For = FaultSlow, target, dur
	case pfLosePop, pfLoseAck, pfLoseChange:
		f.Kind, f.For, f.Response = FaultLoss, dur, d.resp
		f.Loss = [...]string{pfLosePop: "pop", pfLoseAck: "ack", pfLoseChange: "change"}[d.fam]
	case pfRenewSameDeadline:
		f.Kind, f.For = FaultRenewSameDeadline, dur
	case pfRenewAtExpiry:
		f.Kind, f.For = FaultRenewAtExpiry, dur
	case pfRenewAfterRevive:
		f.Kind, f.For = FaultRenewAfterRevive, dur
	case pfBrokerRestart:
		f.Kind = FaultBrokerRestart
	case pfRevivePutFailure:
		f.Kind, f.For = FaultRevivePutFailure, dur
	case pfReviveReadFailure:
		f.Kind, f.For = FaultReviveReadFailure, dur
	case pfClockSkew:
		f.Kind, f.Consumer, f.Skew = FaultClockSkew, target, clock.Duration(d.skew)*100*clock.Millisecond
	}
	return f
}

// drawMask draws one bit per family; the families the generator always
// turns on are not drawn.
func drawMask(rt *rapid.T, g *genOpts) familySet {
	m := g.always
	for f := propFamily(0); f < numPropFamilies; f++ {
		if !g.checkpoint && ckOnly.has(f) {
			continue
		}
		if !g.always.has(f) && rapid.Bool().Draw(rt, "swarm."+propFamilyNames[f]) {
			m |= 1 << f
		}
	}
	return m
}

func stepGen(mask familySet, g *genOpts) *rapid.Generator[drawnStep] {
	var fams []propFamily
	for f := propFamily(0); f < numPropFamilies; f++ {
		if mask.has(f) {
			fams = append(fams, f)
		}
	}
	return rapid.Custom(func(rt *rapid.T) drawnStep {
		return drawStep(rt, rapid.SampledFrom(fams).Draw(rt, "step.family"), g)
	})
}

// drawStep draws the fields the family's step uses.
func drawStep(rt *rapid.T, fam propFamily, g *genOpts) drawnStep {
	d := drawnStep{fam: fam}
	if g.brokers && fam == pfBrokerRestart {
		d.broker = rapid.IntRange(0, 2).Draw(rt, "step.broker_slot")
	}
	switch {
	case g.wide.has(fam):
		d.dur = int(propDuration / (100 * clock.Millisecond))
		return d
	case g.longPause && fam == pfPause:
		d.at = rapid.IntRange(50, 249).Draw(rt, "step.at_10ms")
		d.slot = rapid.IntRange(0, propConsumerCap-1).Draw(rt, "step.consumer_slot")
		d.dur = rapid.IntRange(150, 174).Draw(rt, "step.for_100ms")
		return d
	}
	d.at = rapid.IntRange(0, int(propDuration/(10*clock.Millisecond))-1).Draw(rt, "step.at_10ms")
	switch d.fam {
	case pfCrash, pfPause, pfSlow, pfClockSkew:
		d.slot = rapid.IntRange(0, propConsumerCap-1).Draw(rt, "step.consumer_slot")
	}
	switch d.fam {
	case pfCrash, pfBrokerRestart:
	case pfClockSkew:
		d.skew = rapid.IntRange(-50, 50).Draw(rt, "step.skew_100ms")
	default:
		d.dur = rapid.IntRange(1, 300).Draw(rt, "step.for_100ms")
	}
	switch d.fam {
	case pfLosePop, pfLoseAck, pfLoseChange:
		d.resp = rapid.Bool().Draw(rt, "step.lose_responses")
	}
	return d
}

// drawSchedule draws exactly one step of each family the generator always
// turns on (a bug's trigger), then up to maxSteps (propMaxSteps) steps of the other
// families on.
func drawSchedule(rt *rapid.T, g *genOpts, mask familySet) []drawnStep {
	var steps []drawnStep
	for f := propFamily(0); f < numPropFamilies; f++ {
		if g.always.has(f) {
			steps = append(steps, drawStep(rt, f, g))
		}
	}
	if mask &^= g.always; mask == 0 {
		return steps
	}
	return append(steps, rapid.SliceOfN(stepGen(mask, g), 0, cmp.Or(g.maxSteps, propMaxSteps)).Draw(rt, "schedule")...)
}

// propKnobs is the workload of one check.
type propKnobs struct {
	brokers      int // 0: one
	kind         ConsumerKind
	consumers    int
	threads      int
	batch        int32
	invisible    clock.Duration
	poll         clock.Duration
	processing   string
	reconsume    string
	maxReconsume int32
	messages     int
	arrivals     string
	queues       int32
	restart      clock.Duration
	cache        bool
	retryV2      bool
	autoRenew    bool
	seed         uint64
	drain        clock.Duration
	orderly      bool
	reentrant    bool
	lockBusy     PPM
	pollSlack    clock.Duration
	checkpoint   bool
	latency      string
}

var (
	processingMenu = []string{"const(5ms)", "exp(20ms)", "uniform(1ms,200ms)", "lognormal(median=50ms,p99=2s)", "mix(0.9:const(5ms),0.1:exp(10s))"}
	reconsumeMenu  = []string{"0", "0.01", "0.1", "0.3"}
	rateMenu       = []string{"backlog", "50/s", "200/s", "1000/s"}
)

func drawKnobs(rt *rapid.T, g *genOpts) propKnobs {
	k := propKnobs{checkpoint: g.checkpoint}
	kinds := g.kinds
	if kinds == nil {
		kinds = []ConsumerKind{PopPush, Simple}
	}
	k.kind = rapid.SampledFrom(kinds).Draw(rt, "consumer.kind")
	k.consumers = rapid.IntRange(1, propConsumerCap).Draw(rt, "consumer.count")
	k.threads = rapid.IntRange(1, cmp.Or(g.maxThreads, 8)).Draw(rt, "consumer.threads")
	k.batch = int32(rapid.IntRange(1, pop.MaxPopBatch).Draw(rt, "consumer.batch"))
	lo := 5
	if k.kind == Simple {
		lo = 10
	}
	hi := max(lo, int(cmp.Or(g.maxInvisible, 60*clock.Second)/clock.Second))
	k.invisible = clock.Duration(rapid.IntRange(lo, hi).Draw(rt, "consumer.invisible_s")) * clock.Second
	k.poll = clock.Duration(rapid.IntRange(5, 15).Draw(rt, "consumer.poll_s")) * clock.Second
	procs := g.processing
	if procs == nil {
		procs = processingMenu
	}
	k.processing = rapid.SampledFrom(procs).Draw(rt, "consumer.processing")
	menu := g.reconsume
	if menu == nil {
		menu = reconsumeMenu
	}
	k.reconsume = rapid.SampledFrom(menu).Draw(rt, "consumer.reconsume_later")
	k.maxReconsume = int32(rapid.IntRange(1, cmp.Or(g.maxReconsume, 4)).Draw(rt, "consumer.max_reconsume"))
	if k.kind == Simple {
		k.autoRenew = rapid.Bool().Draw(rt, "consumer.auto_renew")
	}
	maxMsgs := g.maxMessages
	if maxMsgs == 0 {
		maxMsgs = 300
	}
	k.messages = rapid.IntRange(20, maxMsgs).Draw(rt, "workload.messages")
	rate := rapid.SampledFrom(rateMenu).Draw(rt, "workload.arrivals")
	k.arrivals = fmt.Sprintf("backlog(%d)", k.messages)
	if rate != "backlog" {
		k.arrivals = fmt.Sprintf("limit(poisson(%s),count=%d)", rate, k.messages)
	}
	k.queues = int32(rapid.IntRange(1, 4).Draw(rt, "topic.queues"))
	k.restart = clock.Duration(rapid.IntRange(1, 10).Draw(rt, "fault.restart_delay_s")) * clock.Second
	k.cache = drawOr(rt, g.cache, "engine.enablePopBufferMerge")
	k.retryV2 = drawOr(rt, g.retryV2, "engine.enableRetryTopicV2")
	k.seed = rapid.Uint64Range(1, 1<<32).Draw(rt, "sim.seed")
	if g.brokers {
		k.brokers = rapid.IntRange(2, 3).Draw(rt, "cluster.brokers")
	}
	k.drain = propDrain
	if g.drain > 0 {
		k.drain = g.drain
	}
	k.pollSlack, k.latency = g.pollSlack, g.latency
	if g.orderly {
		k.orderly = true
		if k.kind == Simple {
			k.reentrant = drawOr(rt, g.reentrant, "consumer.reentrant")
		}
		menu := g.lockBusy
		if menu == nil {
			menu = lockBusyMenu
		}
		k.lockBusy = rapid.SampledFrom(menu).Draw(rt, "fault.lock_busy_ppm")
	}
	return k
}

var lockBusyMenu = []PPM{0, 10_000, 100_000}

func drawOr(rt *rapid.T, forced *bool, label string) bool {
	if forced != nil {
		return *forced
	}
	return rapid.Bool().Draw(rt, label)
}

func (k *propKnobs) config(bugs pop.Bugs) Config {
	eng := pop.KVConfig()
	if k.checkpoint {
		eng = pop.DefaultConfig()
		eng.RetrieveMessageFromPopRetryTopicV1 = !k.retryV2 // one retry version (see the top of the file)
	}
	eng.EnablePopBufferMerge, eng.EnableRetryTopicV2, eng.Bugs = k.cache, k.retryV2, bugs
	net := NetworkSpec{PollTimeoutSlack: k.pollSlack}
	if k.latency != "" {
		net.RequestLatency, net.ResponseLatency = dist(k.latency), dist(k.latency)
	}
	return Config{
		Seed: k.seed, Engine: EngineSpec{Settings: &eng},
		Topics:    []TopicSpec{{Name: "orders", Queues: k.queues}},
		Groups:    []GroupSpec{{Name: "billing", RetryMaxTimes: k.maxReconsume, ConsumeMessageOrderly: k.orderly}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: arrivals(k.arrivals)}},
		Consumers: []ConsumerSpec{{
			Kind: k.kind, Group: "billing", Topic: "orders", Count: k.consumers, Threads: k.threads,
			Batch: k.batch, Processing: dist(k.processing),
			Outcomes: outcomes("outcomes(reconsume_later=" + k.reconsume + ")"), Settings: k.settings(),
		}},
		Faults:   FaultSpec{Crash: CrashSpec{RestartDelay: dist(fmt.Sprintf("const(%s)", k.restart.Std()))}, LockBusy: k.lockBusy},
		Network:  net,
		Duration: propDuration, Drain: k.drain, EventBudget: propEventBudget,
		Broker: BrokerSpec{Count: k.brokers},
	}
}

// settings are the kind's own settings from the knobs.
func (k *propKnobs) settings() ConsumerSettings {
	switch k.kind {
	case Simple:
		return &SimpleSettings{InvisibleTime: k.invisible, PollTime: k.poll, AutoRenew: k.autoRenew, Reentrant: k.reentrant}
	case Pull:
		return &PullSettings{PollTime: k.poll, MaxReconsumeTimes: k.maxReconsume}
	}
	return &PopPushSettings{InvisibleTime: k.invisible, PollTime: k.poll, MaxReconsumeTimes: k.maxReconsume}
}

func (k *propKnobs) String() string {
	s := fmt.Sprintf("%d %s consumer(s) x %d thread(s), batch %d, invisible %v, poll %v, processing %s, reconsume_later %s, max reconsume %d",
		k.consumers, k.kind, k.threads, k.batch, k.invisible.Std(), k.poll.Std(), k.processing, k.reconsume, k.maxReconsume)
	if k.autoRenew {
		s += ", auto-renew"
	}
	if k.orderly {
		s += fmt.Sprintf(", orderly (reentrant %v, lock busy %d ppm)", k.reentrant, k.lockBusy)
	}
	if k.pollSlack != 0 {
		s += fmt.Sprintf(", poll timeout slack %v", k.pollSlack.Std())
	}
	if k.latency != "" {
		s += ", network latency " + k.latency
	}
	path := "kv"
	if k.checkpoint {
		path = "checkpoint"
	}
	if k.brokers > 1 {
		s += fmt.Sprintf("; %d brokers", k.brokers)
	}
	return s + fmt.Sprintf("; %s on %d queue(s); restart delay %v; engine path=%s buffer=%v retryV2=%v; sim seed %d",
		k.arrivals, k.queues, k.restart.Std(), path, k.cache, k.retryV2, k.seed)
}

// propCase is one drawn check.
type propCase struct {
	mask  familySet
	sched Schedule
	knobs propKnobs
	bugs  pop.Bugs
}

func drawCase(rt *rapid.T, g *genOpts) *propCase {
	c := &propCase{bugs: g.bugs}
	c.mask = drawMask(rt, g)
	steps := drawSchedule(rt, g, c.mask)
	c.knobs = drawKnobs(rt, g)
	for _, d := range steps {
		f := d.resolve(c.knobs.consumers)
		if f.Kind == FaultBrokerRestart && c.knobs.brokers > 1 {
			f.Broker = int32(d.broker % c.knobs.brokers)
		}
		c.sched = append(c.sched, f)
	}
	return c
}

func (c *propCase) run(replay string) (*Result, error) {
	return RunScheduled(c.knobs.config(c.bugs), c.sched, RunOptions{Replay: replay})
}

// describe is the readable counterexample: schedule, workload, bugs.
func (c *propCase) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "swarm mask: %s\n", c.mask)
	fmt.Fprintf(&b, "schedule (%d steps):\n", len(c.sched))
	for _, l := range c.sched.Lines() {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "workload: %s\n", c.knobs.String())
	if c.bugs != (pop.Bugs{}) {
		fmt.Fprintf(&b, "engine bugs on: %+v\n", c.bugs)
	}
	return b.String()
}

// verdict summarises a run's violations: counts per invariant and the
// first violation of each, with its message history (at most 12 lines).
func verdict(r *Result) string {
	s := &r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "produced %d acked %d dlq %d dropped %d lost %d deliveries %d duplicates %d %v\n",
		s.Produced, s.Acked, s.DLQ, s.Dropped, s.Lost, s.Deliveries, s.Duplicates, s.DuplicatesByCause)
	shown := map[string]bool{}
	for _, inv := range invariantsOf(r) {
		for _, v := range s.Violations {
			if v.Invariant != inv || shown[inv] {
				continue
			}
			shown[inv] = true
			fmt.Fprintf(&b, "violation %s (x%d) at event #%d %s: %s\n", inv, countInv(r, inv), v.EventIndex, v.Msg, v.Detail)
			for i, h := range v.History {
				if i == 12 {
					fmt.Fprintf(&b, "    ... %d more\n", len(v.History)-i)
					break
				}
				fmt.Fprintf(&b, "    %s\n", h)
			}
		}
	}
	return b.String()
}

// invariantsOf lists the violated invariants, sorted.
func invariantsOf(r *Result) []string {
	set := map[string]bool{}
	for _, v := range r.Summary.Violations {
		set[v.Invariant] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func countInv(r *Result, inv string) int {
	n := 0
	for _, v := range r.Summary.Violations {
		if v.Invariant == inv {
			n++
		}
	}
	return n
}

// failOn fails the check naming the first violation's invariant. Each
// invariant fails on its own line: rapid keeps a shrink only when the
// failure's traceback is unchanged, so the shrunk case breaks the same
// invariant as the one found.
func failOn(rt *rapid.T, inv, msg string) {
	switch inv {
	case check.InvLost:
		rt.Fatal(msg)
	case check.InvUnexplained:
		rt.Fatal(msg)
	case check.InvConcurrentLease:
		rt.Fatal(msg)
	case check.InvPresentedTopic:
		rt.Fatal(msg)
	case check.InvDeliveryLocation:
		rt.Fatal(msg)
	case check.InvAckLocation:
		rt.Fatal(msg)
	case check.InvAckIgnored:
		rt.Fatal(msg)
	case check.InvRenewIgnored:
		rt.Fatal(msg)
	case check.InvMissedWakeup:
		rt.Fatal(msg)
	case check.InvNoDrain:
		rt.Fatal(msg)
	case check.InvCommitLag:
		rt.Fatal(msg)
	default:
		rt.Fatal(msg)
	}
}

// propStats accumulates what the checks exercised.
type propStats struct {
	checks, steps, maxSteps, messages int
	events                            int64
	cov                               map[string]int // checks in which a coverage key fired
}

func (st *propStats) add(c *propCase, r *Result) {
	st.checks++
	st.steps += len(c.sched)
	st.maxSteps = max(st.maxSteps, len(c.sched))
	st.messages += int(r.Summary.Produced)
	st.events += r.Summary.SimEvents
	if st.cov == nil {
		st.cov = map[string]int{}
	}
	for k, v := range r.Summary.Coverage { // counting only
		if v > 0 {
			st.cov[k]++
		}
	}
}

func (st *propStats) String() string {
	if st.checks == 0 {
		return "no runs"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs (checks and shrink attempts): %.1f schedule steps per run (max %d), %.0f messages, %d sim events per run; fault paths hit (runs):",
		st.checks, float64(st.steps)/float64(st.checks), st.maxSteps, float64(st.messages)/float64(st.checks), st.events/int64(st.checks))
	for _, k := range append(append(append([]string(nil), coverageKeys...), kafkaCoverage...), sqsCoverage...) {
		if st.cov[k] > 0 {
			fmt.Fprintf(&b, " %s=%d", k, st.cov[k])
		}
	}
	return b.String()
}

// propReplay is the command that replays test's fail files.
func propReplay(test string) string {
	return "go test ./sim -run '^" + test + "$' -v (replays the fail files under sim/testdata/rapid/" + test + "/)"
}

// atLeastOnce is the property: the drawn case runs and the checker finds
// no violation. last receives every case with its result.
func atLeastOnce(g genOpts, stats *propStats, last **propCase, replay string) func(*rapid.T) {
	return func(rt *rapid.T) {
		c := drawCase(rt, &g)
		*last = c
		r, err := c.run(replay)
		if err != nil {
			rt.Fatalf("the run failed: %v\n%s", err, c.describe())
		}
		stats.add(c, r)
		if v := r.Summary.Violations; len(v) > 0 {
			failOn(rt, v[0].Invariant, fmt.Sprintf("at-least-once violated: %d violation(s) of %s\n%s%s",
				len(v), strings.Join(invariantsOf(r), ", "), c.describe(), verdict(r)))
		}
	}
}

// Defaults when the user chose none (flag or RAPID_* variable): a fixed
// seed, so that `go test` is deterministic, and the CI budget.
var propRapidDefaults = []struct{ flag, env, value string }{
	{"rapid.seed", "RAPID_SEED", "20261130"},
	{"rapid.checks", "RAPID_CHECKS", "300"},
}

func pinPropDefaults(t *testing.T) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, d := range propRapidDefaults {
		if _, env := os.LookupEnv(d.env); set[d.flag] || env {
			continue
		}
		if err := flag.Set(d.flag, d.value); err != nil {
			t.Fatalf("setting -%s: %v", d.flag, err)
		}
	}
}

// TestPropAtLeastOnce is the property on the KV path
// (popConsumerKVServiceEnable=true).
func TestPropAtLeastOnce(t *testing.T) { propAtLeastOnce(t, genOpts{}) }

// TestPropAtLeastOnceCheckpoint is the property on the checkpoint path,
// RocketMQ's default.
func TestPropAtLeastOnceCheckpoint(t *testing.T) { propAtLeastOnce(t, genOpts{checkpoint: true}) }

func propAtLeastOnce(t *testing.T, g genOpts) {
	pinPropDefaults(t)
	var stats propStats
	var last *propCase
	rt := &replayTB{T: t}
	t.Cleanup(func() {
		t.Log(stats.String())
		if t.Failed() && last != nil {
			t.Logf("shrunk counterexample:\n%sreplay: %s", last.describe(), rt.command())
		}
	})
	rapid.Check(rapidfail.Strict(rt), atLeastOnce(g, &stats, &last, propReplay(t.Name())))
}

// TestPropAtLeastOnceBrokers is the property on a cluster of two or three
// brokers (KV path): routing by queue and by receipt handle, one pop loop
// per broker, and restarts of one broker at a time.
func TestPropAtLeastOnceBrokers(t *testing.T) { propAtLeastOnce(t, genOpts{brokers: true}) }

// TestPropAtLeastOnceOrderly is the property for an orderly (FIFO) group:
// the same fault schedules and workloads, orderly pops and consumption,
// the order invariants on top of at-least-once.
func TestPropAtLeastOnceOrderly(t *testing.T) {
	// A failure blocks its queue (up to a renewed lease, 60 s with the
	// proxy's auto-renew) and everything behind it: the workload is kept
	// small enough for the liveness budget to drain the slowest cases.
	propAtLeastOnce(t, genOpts{orderly: true, maxMessages: 100, reconsume: []string{"0", "0.01", "0.1"}})
}

// TestPropAtLeastOnceOrderlyCheckpoint is the orderly property on the
// checkpoint path, RocketMQ's default: its order state, blocking and
// in-place redelivery under the checkpoint path's fault families too.
func TestPropAtLeastOnceOrderlyCheckpoint(t *testing.T) {
	propAtLeastOnce(t, genOpts{checkpoint: true, orderly: true, maxMessages: 100, reconsume: []string{"0", "0.01", "0.1"}})
}

// replayTB is the test's *testing.T for rapid, keeping the fail file or
// seed rapid names when it reports a failure.
type replayTB struct {
	*testing.T
	failfile, seed string
}

var (
	failfileRe = regexp.MustCompile(`-rapid\.failfile="([^"]+)"`)
	seedRe     = regexp.MustCompile(`-rapid\.seed=([0-9]+)`)
)

func (r *replayTB) Errorf(format string, args ...any) {
	r.T.Helper()
	msg := fmt.Sprintf(format, args...)
	if m := failfileRe.FindStringSubmatch(msg); m != nil {
		r.failfile = m[1]
	}
	if m := seedRe.FindStringSubmatch(msg); m != nil {
		r.seed = m[1]
	}
	r.T.Error(msg)
}

// command is the go test command that replays the failure (fail file
// paths are relative to the package directory, where go test runs).
func (r *replayTB) command() string {
	cmd := fmt.Sprintf("go test ./sim -run '^%s$' -v", r.Name())
	switch {
	case r.failfile != "":
		return cmd + " -rapid.failfile=" + r.failfile
	case r.seed != "":
		return cmd + " -rapid.seed=" + r.seed
	}
	return cmd + " (rapid named no fail file or seed above)"
}
