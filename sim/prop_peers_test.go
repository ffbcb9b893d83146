package sim

// The at-least-once property on Kafka share groups and on SQS, as
// TestPropAtLeastOnce checks it on RocketMQ: rapid draws a swarm mask, a
// short explicit fault schedule (only the faults the engine has: SQS has
// no broker to restart and no store write to fail; only a standard queue
// delivers duplicates) and the workload, including the engine's own
// settings (Kafka's lock duration, delivery limit, in-flight window and
// the consumer's acknowledgement mode; SQS's visibility timeout, redrive
// policy, long or short polling), and the checker must find no violation.
// CI runs 100 checks per engine (RAPID_CHECKS raises it: make prop);
// failures shrink to a step or two and are saved under
// testdata/rapid/<test>/ like the RocketMQ property's.

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/internal/rapidfail"
	"popsim/share"
	"popsim/sim/check"
)

// peerKnobs is the engine-specific part of a peer check's workload.
type peerKnobs struct {
	engine EngineKind
	// Kafka
	lockMs, deliveryLimit, maxLocks, lingerMs int32
	mode, exceptionAck, acquire               string
	commitSync                                bool
	bugs                                      share.Bugs
	// SQS
	visibility, maxReceive, wait, retryVis int
	exception                              string
}

// peerCase is one drawn check on a peer engine.
type peerCase struct {
	propCase
	peer peerKnobs
}

// peerFamilies are the schedule families an engine has.
func peerFamilies(e EngineKind) familySet {
	all := families(pfCrash, pfPause, pfSlow, pfLosePop, pfLoseAck, pfLoseChange, pfRenewSameDeadline, pfRenewAtExpiry, pfRenewAfterRevive, pfClockSkew)
	if e == KafkaShare {
		all |= families(pfBrokerRestart, pfRevivePutFailure)
	}
	return all
}

func drawPeerCase(rt *rapid.T, engines []EngineKind, bugs share.Bugs, always familySet) *peerCase {
	c := &peerCase{}
	c.peer.engine = rapid.SampledFrom(engines).Draw(rt, "engine.kind")
	allowed := peerFamilies(c.peer.engine)
	g := genOpts{always: always}
	c.mask = always
	for f := propFamily(0); f < numPropFamilies; f++ {
		if allowed.has(f) && !always.has(f) && rapid.Bool().Draw(rt, "swarm."+propFamilyNames[f]) {
			c.mask |= 1 << f
		}
	}
	steps := drawSchedule(rt, &g, c.mask)
	dup := c.peer.engine == SQSStandard && rapid.Bool().Draw(rt, "swarm.duplicate-delivery")
	k := &c.knobs
	k.consumers = rapid.IntRange(1, propConsumerCap).Draw(rt, "consumer.count")
	k.threads = rapid.IntRange(1, 8).Draw(rt, "consumer.threads")
	k.processing = rapid.SampledFrom(processingMenu).Draw(rt, "consumer.processing")
	k.reconsume = rapid.SampledFrom(reconsumeMenu).Draw(rt, "consumer.reconsume_later")
	k.messages = rapid.IntRange(20, 300).Draw(rt, "workload.messages")
	rate := rapid.SampledFrom(rateMenu).Draw(rt, "workload.arrivals")
	k.arrivals = fmt.Sprintf("backlog(%d)", k.messages)
	if rate != "backlog" {
		k.arrivals = fmt.Sprintf("limit(poisson(%s),count=%d)", rate, k.messages)
	}
	k.queues = int32(rapid.IntRange(1, 4).Draw(rt, "topic.queues"))
	k.restart = clock.Duration(rapid.IntRange(1, 10).Draw(rt, "fault.restart_delay_s")) * clock.Second
	p := &c.peer
	switch p.engine {
	case KafkaShare:
		k.batch = int32(rapid.SampledFrom([]int{1, 5, 50, 500}).Draw(rt, "consumer.max.poll.records"))
		p.lockMs = int32(rapid.IntRange(15, 60).Draw(rt, "engine.lock_s")) * 1000
		p.deliveryLimit = int32(rapid.IntRange(2, 10).Draw(rt, "engine.delivery.count.limit"))
		p.maxLocks = int32(rapid.SampledFrom([]int{100, 2000}).Draw(rt, "engine.partition.max.record.locks"))
		p.lingerMs = int32(rapid.SampledFrom([]int{0, 5, 50}).Draw(rt, "engine.linger.ms"))
		p.mode = rapid.SampledFrom([]string{"explicit", "implicit"}).Draw(rt, "consumer.acknowledgement.mode")
		p.exceptionAck = rapid.SampledFrom([]string{"release", "reject"}).Draw(rt, "consumer.exceptionAck")
		p.acquire = rapid.SampledFrom([]string{"batch_optimized", "record_limit"}).Draw(rt, "consumer.acquire.mode")
		p.commitSync = p.mode == "explicit" && rapid.Bool().Draw(rt, "consumer.commitSync")
		p.bugs = bugs
	default:
		k.batch = int32(rapid.IntRange(1, 10).Draw(rt, "consumer.MaxNumberOfMessages"))
		p.visibility = rapid.IntRange(1, 60).Draw(rt, "engine.VisibilityTimeout")
		p.maxReceive = rapid.SampledFrom([]int{0, 1, 3, 10}).Draw(rt, "engine.maxReceiveCount")
		p.wait = rapid.SampledFrom([]int{0, 1, 20}).Draw(rt, "consumer.WaitTimeSeconds")
		p.retryVis = rapid.SampledFrom([]int{0, 5}).Draw(rt, "consumer.retryVisibilityTimeout")
	}
	p.exception = rapid.SampledFrom([]string{"0", "0.05"}).Draw(rt, "consumer.exception")
	k.seed = rapid.Uint64Range(1, 1<<32).Draw(rt, "sim.seed")
	k.drain = propDrain
	for _, d := range steps {
		c.sched = append(c.sched, d.resolve(k.consumers))
	}
	if dup {
		at := rapid.IntRange(0, int(propDuration/(10*clock.Millisecond))-1).Draw(rt, "dup.at_10ms")
		dur := rapid.IntRange(1, 300).Draw(rt, "dup.for_100ms")
		c.sched = append(c.sched, ScheduledFault{At: clock.Duration(at) * 10 * clock.Millisecond, Kind: FaultDuplicateDelivery,
			For: min(clock.Duration(dur)*100*clock.Millisecond, propDuration)})
	}
	return c
}

func (c *peerCase) config() Config {
	k, p := &c.knobs, &c.peer
	cfg := Config{
		Seed:      k.seed,
		Topics:    []TopicSpec{{Name: "orders", Queues: k.queues}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: arrivals(k.arrivals)}},
		Consumers: []ConsumerSpec{{
			Group: "billing", Topic: "orders", Count: k.consumers, Threads: k.threads,
			Batch: k.batch, Processing: dist(k.processing),
			Outcomes: outcomes("outcomes(reconsume_later=" + k.reconsume + ",exception=" + p.exception + ")"),
		}},
		Faults:   FaultSpec{Crash: CrashSpec{RestartDelay: dist(fmt.Sprintf("const(%s)", k.restart.Std()))}},
		Duration: propDuration, Drain: k.drain, EventBudget: propEventBudget,
	}
	cfg.Drain = max(cfg.Drain, c.workDrain())
	switch p.engine {
	case KafkaShare:
		set := DefaultKafkaShareSettings()
		set.RecordLockDurationMs, set.DeliveryCountLimit, set.PartitionMaxRecordLocks, set.LingerMs, set.Bugs = p.lockMs, p.deliveryLimit, p.maxLocks, p.lingerMs, p.bugs
		cfg.Engine = EngineSpec{Kind: KafkaShare, Settings: set}
		cfg.Consumers[0].Settings = &KafkaShareConsumerSettings{AcknowledgementMode: p.mode, ExceptionAck: p.exceptionAck, AcquireMode: p.acquire, CommitSync: p.commitSync}
	default:
		std := DefaultSQSStandardSettings()
		std.VisibilityTimeout, std.RedrivePolicy.MaxReceiveCount = p.visibility, p.maxReceive
		if p.engine == SQSFIFO {
			f := DefaultSQSFIFOSettings()
			f.SQSStandardSettings = *std
			cfg.Engine = EngineSpec{Kind: SQSFIFO, Settings: f}
		} else {
			cfg.Engine = EngineSpec{Kind: SQSStandard, Settings: std}
		}
		set := DefaultSQSConsumerSettings()
		set.WaitTimeSeconds, set.RetryVisibilityTimeout = p.wait, p.retryVis
		cfg.Consumers[0].Settings = set
		cfg.EventBudget += shortPollBudget(p.wait, k.consumers, cfg.Drain)
	}
	return cfg
}

// workDrain is a liveness budget that covers the consumers' own work: every
// message delivered as often as the engine allows (Kafka's
// group.share.delivery.count.limit, SQS's maxReceiveCount), each delivery
// processed for the processing time's mean by one of the consumers'
// threads, twice over. A slow consumer with a large batch keeps processing
// records whose locks lapsed, so a drawn case can need more than propDrain
// to settle every message; its at-least-once verdict must not hang on the
// fixed budget (rapid seed 2 at 9,246 checks: one thread, batch 500, a
// tenth of messages taking exp(10s), 2,000 deliveries past the 30-minute
// budget). SQS without a redrive policy has no bound there: propDrain
// stays, except for FIFO's serial waits (fifoDrain).
func (c *peerCase) workDrain() clock.Duration {
	k, p := &c.knobs, &c.peer
	limit := int64(p.maxReceive)
	if p.engine == KafkaShare {
		limit = int64(p.deliveryLimit)
	}
	var d clock.Duration
	if p.engine == SQSFIFO {
		d = c.fifoDrain()
	}
	if limit <= 0 {
		return d
	}
	work := clock.Duration(int64(k.messages)*limit) * dist(k.processing).Mean()
	return max(d, 2*work/clock.Duration(k.consumers*k.threads))
}

// fifoDrain covers an SQS FIFO queue's serial waits: a message group lends
// its next message only once the one in flight is deleted, so every failed
// attempt holds the whole group for its wait (an exception: the visibility
// timeout; RECONSUME_LATER: retryVisibilityTimeout), however many
// consumers poll, and each fault step can hold it for its window and one
// visibility timeout more. With f = reconsume_later + exception, a message
// takes 1/(1-f) attempts on average, each processed for the mean, and its
// failed attempts wait (exception × visibility + reconsume_later × retry
// visibility)/(1-f) in all. The bound puts every message in one group and
// doubles the sum (rapid seed 2 at 2,734 checks: one group of 297
// messages, f = 0.35, visibility 52 s; it settles at T+2,015 s, past the
// 30-minute budget). Without a redrive policy there is no hard bound; this
// is the expectation's margin.
func (c *peerCase) fifoDrain() clock.Duration {
	k, p := &c.knobs, &c.peer
	later, exc := menuFloat(k.reconsume), menuFloat(p.exception)
	vis := float64(clock.Duration(p.visibility) * clock.Second)
	retry := float64(clock.Duration(p.retryVis) * clock.Second)
	mean := float64(dist(k.processing).Mean())
	total := clock.Duration(k.messages) * clock.Duration((mean+exc*vis+later*retry)/(1-later-exc))
	for _, f := range c.sched {
		total += f.For + clock.Duration(vis)
	}
	return 2 * total
}

// menuFloat parses a probability from the test's own menus.
func menuFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic("sim: a property menu holds a bad probability " + strconv.Quote(s))
	}
	return v
}

// shortPollTasksPerSecond bounds the sim tasks one short-polling SQS
// consumer dispatches per virtual second while it finds nothing: it asks
// again as soon as an empty answer comes back, as an SDK receive loop does
// (about 915 with the default network; TestShortPollBudget measures it).
const shortPollTasksPerSecond = 1500

// shortPollBudget is the event budget a peer case adds for short polling
// (WaitTimeSeconds 0): its consumers may spin for the whole run, drain
// included, which a FIFO group blocked behind long visibility timeouts
// makes long (a 6-consumer case settled at T+926s after 5.07 million tasks,
// past propEventBudget). Long polls park and need nothing more.
func shortPollBudget(wait, consumers int, drain clock.Duration) int64 {
	if wait != 0 {
		return 0
	}
	return int64(consumers) * int64((propDuration+drain)/clock.Second) * shortPollTasksPerSecond
}

// TestShortPollBudget: a short-polling consumer's empty receives stay
// within shortPollTasksPerSecond, with room to spare. Two consumers poll
// for a minute while the only message waits out its visibility timeout.
func TestShortPollBudget(t *testing.T) {
	for _, eng := range []EngineKind{SQSStandard, SQSFIFO} {
		c := &peerCase{}
		c.peer = peerKnobs{engine: eng, visibility: 60, maxReceive: 1, exception: "1"}
		k := &c.knobs
		k.consumers, k.threads, k.batch, k.processing, k.reconsume = 2, 1, 1, "const(5ms)", "0"
		k.messages, k.arrivals, k.queues, k.restart, k.seed, k.drain = 1, "backlog(1)", 1, 10*clock.Second, 7, propDrain
		r, err := c.run("")
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.SimSeconds < 60 {
			t.Fatalf("%s: the run settled at T+%.1fs, before the visibility timeout: nothing was measured", eng, r.Summary.SimSeconds)
		}
		rate := float64(r.Summary.SimEvents) / r.Summary.SimSeconds / float64(k.consumers)
		if rate > shortPollTasksPerSecond/1.25 {
			t.Errorf("%s: a short-polling consumer dispatches %.0f tasks a second; shortPollTasksPerSecond (%d) leaves too little room", eng, rate, shortPollTasksPerSecond)
		}
	}
}

func (c *peerCase) run(replay string) (*Result, error) {
	return RunScheduled(c.config(), c.sched, RunOptions{Replay: replay})
}

func (c *peerCase) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engine %s: %+v\n", c.peer.engine, c.peer)
	fmt.Fprintf(&b, "swarm mask: %s\n", c.mask)
	fmt.Fprintf(&b, "schedule (%d steps):\n", len(c.sched))
	for _, l := range c.sched.Lines() {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	k := &c.knobs
	fmt.Fprintf(&b, "workload: %d consumer(s) x %d thread(s), batch %d, processing %s, reconsume_later %s, exception %s; %s on %d queue(s); restart delay %v; sim seed %d\n",
		k.consumers, k.threads, k.batch, k.processing, k.reconsume, c.peer.exception, k.arrivals, k.queues, k.restart.Std(), k.seed)
	return b.String()
}

// peerAtLeastOnce is the property on the given engines.
func peerAtLeastOnce(t *testing.T, engines []EngineKind, stats *propStats, last **peerCase) func(*rapid.T) {
	replay := fmt.Sprintf("go test ./sim -run '^%s$' -v (replays the fail files under sim/testdata/rapid/%s/)", t.Name(), t.Name())
	return func(rt *rapid.T) {
		c := drawPeerCase(rt, engines, share.Bugs{}, 0)
		*last = c
		r, err := c.run(replay)
		if err != nil {
			rt.Fatalf("the run failed: %v\n%s", err, c.describe())
		}
		stats.add(&c.propCase, r)
		if v := r.Summary.Violations; len(v) > 0 {
			failOn(rt, v[0].Invariant, fmt.Sprintf("at-least-once violated: %d violation(s) of %s\n%s%s",
				len(v), strings.Join(invariantsOf(r), ", "), c.describe(), verdict(r)))
		}
	}
}

// peerProp runs the property with the CI budget unless one was chosen.
func peerProp(t *testing.T, engines ...EngineKind) {
	chosen := flagOrEnvSet("rapid.checks", "RAPID_CHECKS")
	pinPropDefaults(t)
	if !chosen {
		withRapidFlags(t, "rapid.checks", "100")
	}
	var stats propStats
	var last *peerCase
	rt := &replayTB{T: t}
	t.Cleanup(func() {
		t.Log(stats.String())
		if t.Failed() && last != nil {
			t.Logf("shrunk counterexample:\n%sreplay: %s", last.describe(), rt.command())
		}
	})
	rapid.Check(rapidfail.Strict(rt), peerAtLeastOnce(t, engines, &stats, &last))
}

// flagOrEnvSet reports whether the user chose a rapid setting.
func flagOrEnvSet(name, env string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, ok := os.LookupEnv(env)
	return set || ok
}

func TestPropKafkaShare(t *testing.T) { peerProp(t, KafkaShare) }

func TestPropSQS(t *testing.T) { peerProp(t, SQSStandard, SQSFIFO) }

// KAFKA-17541 (Kafka 4.1): releasing a closed share session's records
// decremented their delivery count; the trigger is a consumer that crashes
// holding records. The hunt works as huntBug does for pop.Bugs: rapid must
// find it, the delivery-count invariant must catch it, the shrunk case has
// at most two schedule steps and passes with the switch off.
func TestPropFindsDecrementDeliveryCountOnSessionRelease(t *testing.T) {
	checks := 100
	if testing.Short() {
		checks *= 5
	}
	withRapidFlags(t, "rapid.checks", fmt.Sprint(checks), "rapid.seed", "1",
		"rapid.nofailfile", "true", "rapid.shrinktime", "10m")
	bugs := share.Bugs{DecrementDeliveryCountOnSessionRelease: true}
	var (
		last    *peerCase
		lastRes *Result
		runErr  error
	)
	runs := caseRuns{}
	prop := func(rt *rapid.T) {
		c := drawPeerCase(rt, []EngineKind{KafkaShare}, bugs, families(pfCrash))
		r, err := runs.get(c.key()+fmt.Sprintf(" %#v", c.peer), func() (*Result, error) {
			return c.run("go test ./sim -run '^" + t.Name() + "$' -v")
		})
		last, lastRes, runErr = c, r, err
		if err != nil {
			rt.Fatalf("the run failed: %v", err)
		}
		if countInv(r, check.InvDeliveryCount) > 0 {
			rt.Fatalf("%s violated", check.InvDeliveryCount)
		}
	}
	rec := &recordingTB{name: t.Name()}
	rapid.Check(rec, prop)
	t.Logf("%d distinct cases simulated (caseRuns)", len(runs))
	switch {
	case !rec.failed:
		t.Fatalf("rapid did not find the bug in %d checks", checks)
	case runErr != nil:
		t.Fatalf("a run failed instead: %v\n%s", runErr, last.describe())
	case countInv(lastRes, check.InvDeliveryCount) == 0:
		t.Fatalf("the shrunk case does not violate %s:\n%s%s", check.InvDeliveryCount, last.describe(), verdict(lastRes))
	}
	t.Logf("%s; caught by %s (all violated: %s); shrunk counterexample:\n%s", foundAfter(rec.out), check.InvDeliveryCount, strings.Join(invariantsOf(lastRes), ", "), last.describe())
	if len(last.sched) > 2 {
		t.Errorf("the shrunk schedule has %d steps, want at most 2", len(last.sched))
	}
	fixed := *last
	fixed.peer.bugs = share.Bugs{}
	r, err := fixed.run("")
	if err != nil {
		t.Fatalf("the shrunk case with the switch off: %v", err)
	}
	if len(r.Summary.Violations) > 0 {
		t.Errorf("the shrunk case fails with the switch off too (%s):\n%s", strings.Join(invariantsOf(r), ", "), verdict(r))
	}
}
