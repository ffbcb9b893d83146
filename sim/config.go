package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/workload"
)

// ConsumerKind selects a consumer's client model.
type ConsumerKind string

// Consumer kinds.
const (
	// PopPush is the remoting push consumer in POP mode
	// (ConsumeMessagePopConcurrentlyService, spec section 5).
	PopPush ConsumerKind = "pop-push"
	// Simple is a gRPC simple consumer behind the proxy: explicit receive,
	// ack and renew, proxy-side DLQ and optional auto-renew.
	Simple ConsumerKind = "simple"
	// Pull is the classic clustering baseline: each queue owned by one
	// consumer, offsets committed by the client.
	Pull ConsumerKind = "pull"
)

// Config is one simulation: the engine, the workload, the network, the
// faults and the run's bounds. Zero values mean "the default" wherever a
// default is documented; Validate reports anything outside its range.
// Times are clock.Duration (microseconds).
type Config struct {
	Seed   uint64
	Engine pop.Config // broker configuration (pop.DefaultConfig when BrokerName is empty)

	Topics    []TopicSpec
	Groups    []GroupSpec // optional: groups used by consumers get pop.DefaultGroup otherwise
	Producers []ProducerSpec
	Consumers []ConsumerSpec
	Network   NetworkSpec
	Faults    FaultSpec
	// Swarm draws, per seed, which fault families are off and very
	// different weights for the rest (TigerBeetle's swarm testing).
	Swarm bool

	Duration       clock.Duration // safety phase: producers run and faults fire (default 60s)
	Warmup         clock.Duration // excluded from latency and throughput (default Duration/10)
	DrainBudget    clock.Duration // liveness phase: everything must drain within this (default 10m)
	EventBudget    int64          // dispatched events before the run fails (default 200,000,000)
	SampleInterval clock.Duration // time-series period (default 1s)
	Start          clock.Time     // virtual start (default clock.Epoch)
}

// TopicSpec is a topic and its queue count (read = write queues).
type TopicSpec struct {
	Name   string
	Queues int32 // 1..1024
}

// GroupSpec configures a subscription group.
type GroupSpec struct {
	Name          string
	RetryMaxTimes int32 // 1..64, 0 means the default 16; the proxy's maxAttempts is this + 1
}

// ProducerSpec is Count identical producers on one topic.
type ProducerSpec struct {
	Topic    string
	Arrivals string // workload.ParseArrivals, per producer, e.g. "poisson(1000/s)"
	Tags     string // workload.ParseTags, e.g. "tags(A:3,B:1)"; "" for no tag
	Count    int    // 1..1000, default 1
	// QueueSelect: "round-robin" (default, the producer's default
	// selector) or "random" (uniform per message: each queue then sees a
	// Poisson stream when the producer's is Poisson).
	QueueSelect string
}

// ConsumerSpec is Count identical consumers of one group on one topic.
type ConsumerSpec struct {
	Kind       ConsumerKind
	Group      string
	Topic      string
	Expression string // subscription tag expression, default "*"
	Count      int    // 1..10000, default 1
	// Threads is the consume thread pool per consumer (1..1024, default 20).
	// A delivered message waiting for a free thread stays leased.
	Threads int
	// Batch: popBatchNums (pop-push), maxMsgNums (simple), pull batch size
	// (pull); 1..32, default 32.
	Batch int32
	// InvisibleTime: popInvisibleTime, 5s..300s (pop-push, default 60s);
	// the receive's invisible duration, 10s..12h (simple, default 60s).
	// Unused by pull.
	InvisibleTime clock.Duration
	// PollTime: long polling, 1s..60s (pop-push and pull, default 15s);
	// 5s..20s (simple, default 20s).
	PollTime   clock.Duration
	Processing string // workload.ParseDist, default "exp(10ms)"
	Outcomes   string // workload.ParseOutcomes, default all success
	// MaxReconsumeTimes (pop-push and pull): 1..1000, default 16.
	MaxReconsumeTimes int32
	// FlowControl (pop-push): popThresholdForQueue, 1..100000, default 96.
	FlowControl int
	// AutoRenew (simple): the proxy renews leases of messages being
	// processed, 10 s ahead, on the 1,3,5,10,30,60 min schedule, for 3 h.
	AutoRenew bool
	// CommitInterval (pull): offset persistence period, 100ms..60s,
	// default 5s.
	CommitInterval clock.Duration
}

// NetworkSpec is the client-broker network.
type NetworkSpec struct {
	RequestLatency  string // workload.ParseDist, default "uniform(200us,2ms)"
	ResponseLatency string // workload.ParseDist, default "uniform(200us,2ms)"
	// RequestTimeout is how long a client waits for a renewal's answer
	// (100ms..60s, default 3s). Acks and RECONSUME_LATER renewals are fire
	// and forget, as upstream's ackAsync (3 s timeout, failures only
	// logged): their timeout changes nothing, so none is scheduled.
	RequestTimeout clock.Duration
	// PollTimeoutSlack is added to a long-polling request's poll time for
	// the client's timeout (RocketMQ adds 10 s); 0..60s, default 10s.
	PollTimeoutSlack clock.Duration
}

// FaultSpec configures the fault families. A zero field turns its site
// off. Rates are mean intervals (an exponential clock per consumer or for
// the broker) or probabilities in parts per million.
type FaultSpec struct {
	// SiteEnablePPM is the two-level activation: per run, each configured
	// site is enabled with this probability (0 means 1,000,000: all on).
	SiteEnablePPM int64

	CrashEvery   clock.Duration // mean time between crashes of one consumer
	RestartDelay string         // workload.ParseDist, default "uniform(1s,5s)"

	PauseEvery    clock.Duration // mean time between GC pauses of one consumer
	PauseDuration string         // workload.ParseDist, default "uniform(50ms,2s)"

	SlowEvery    clock.Duration // mean time between slow episodes of one consumer
	SlowDuration string         // workload.ParseDist, default "uniform(1s,10s)"
	SlowFactor   int64          // processing-time multiplier, 2..1000, default 10

	// Loss per request type: the request lost before the broker, or the
	// response lost after it.
	Loss map[string]LossSpec // keys: pop, ack, change, pull

	// Renewals at chosen moments, per delivered message of a pop-push or
	// simple consumer: a renewal that keeps the same deadline, one that
	// reaches the broker exactly at expiry, and a late one with an old
	// handle after the message was revived.
	RenewSameDeadlinePPM int64
	RenewAtExpiryPPM     int64
	RenewAfterRevivePPM  int64

	BrokerRestartEvery  clock.Duration // mean time between broker restarts
	RevivePutFailurePPM int64          // retry-topic writes that fail (pop.Faults.RetryWritePPM)
	ClockSkew           clock.Duration // each consumer's clock is off by up to ±this (0..1h)
}

// LossSpec is the loss probability of a request type, in ppm (0..500000).
type LossSpec struct {
	RequestPPM, ResponsePPM int64
}

// Queue selectors of a producer.
const (
	QueueRoundRobin = "round-robin"
	QueueRandom     = "random"
)

// Request types with loss faults.
var lossKinds = [...]string{"pop", "ack", "change", "pull"}

// DefaultConfig is a representative small workload that runs in about a
// second of wall time: one topic of 4 queues, one group of 8 POP push
// consumers with 4 threads each, 1000 msg/s Poisson for 60 s of virtual
// time, 1% RECONSUME_LATER and 0.1% exceptions, and light faults.
func DefaultConfig() Config {
	return Config{
		Seed:      1,
		Engine:    pop.DefaultConfig(),
		Topics:    []TopicSpec{{Name: "orders", Queues: 4}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: "poisson(1000/s)", Count: 1}},
		Consumers: []ConsumerSpec{{
			Kind: PopPush, Group: "billing", Topic: "orders", Count: 8, Threads: 4,
			Processing: "exp(10ms)", Outcomes: "outcomes(reconsume_later=0.01,exception=0.001)",
		}},
		Faults: FaultSpec{
			CrashEvery: 5 * clock.Minute, PauseEvery: 2 * clock.Minute, SlowEvery: 5 * clock.Minute,
			Loss: map[string]LossSpec{
				"pop": {RequestPPM: 20, ResponsePPM: 20}, "ack": {RequestPPM: 1000, ResponsePPM: 1000},
				"change": {RequestPPM: 1000, ResponsePPM: 1000},
			},
			RenewSameDeadlinePPM: 500, RenewAtExpiryPPM: 200, RenewAfterRevivePPM: 200,
			RevivePutFailurePPM: 10_000, ClockSkew: 100 * clock.Millisecond,
		},
		Duration: 60 * clock.Second,
	}
}

// withDefaults returns c with every zero field that has a documented
// default filled in.
func (c Config) withDefaults() Config {
	if c.Engine.BrokerName == "" {
		c.Engine = pop.DefaultConfig()
	}
	def(&c.Duration, 60*clock.Second)
	def(&c.Warmup, c.Duration/10)
	def(&c.DrainBudget, 10*clock.Minute)
	def(&c.EventBudget, 200_000_000)
	def(&c.SampleInterval, clock.Second)
	def(&c.Start, clock.Epoch)
	c.Producers = append([]ProducerSpec(nil), c.Producers...)
	for i := range c.Producers {
		def(&c.Producers[i].Count, 1)
		def(&c.Producers[i].QueueSelect, QueueRoundRobin)
	}
	c.Consumers = append([]ConsumerSpec(nil), c.Consumers...)
	for i := range c.Consumers {
		c.Consumers[i].defaults()
	}
	c.Network.defaults()
	c.Faults.defaults()
	return c
}

func (s *ConsumerSpec) defaults() {
	def(&s.Count, 1)
	def(&s.Threads, 20)
	def(&s.Batch, pop.MaxPopBatch)
	def(&s.Expression, "*")
	def(&s.Processing, "exp(10ms)")
	def(&s.Outcomes, "outcomes()")
	def(&s.MaxReconsumeTimes, 16)
	def(&s.FlowControl, 96)
	def(&s.CommitInterval, 5*clock.Second)
	switch s.Kind {
	case Simple:
		def(&s.InvisibleTime, 60*clock.Second)
		def(&s.PollTime, 20*clock.Second)
	default:
		def(&s.InvisibleTime, 60*clock.Second)
		def(&s.PollTime, 15*clock.Second)
	}
}

func (n *NetworkSpec) defaults() {
	def(&n.RequestLatency, "uniform(200us,2ms)")
	def(&n.ResponseLatency, "uniform(200us,2ms)")
	def(&n.RequestTimeout, 3*clock.Second)
	def(&n.PollTimeoutSlack, 10*clock.Second)
}

func (f *FaultSpec) defaults() {
	def(&f.SiteEnablePPM, 1_000_000)
	def(&f.RestartDelay, "uniform(1s,5s)")
	def(&f.PauseDuration, "uniform(50ms,2s)")
	def(&f.SlowDuration, "uniform(1s,10s)")
	def(&f.SlowFactor, 10)
}

func def[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Validate reports the first field outside its allowed range, naming the
// field and the range. Zero values are checked after defaults are applied.
func (c *Config) Validate() error {
	d := c.withDefaults()
	_, err := d.compile()
	return err
}

// SHA256 is the hash of the configuration's canonical JSON form (after
// defaults), recorded in the summary so that a seed is always replayed
// against the scenario it came from.
func (c *Config) SHA256() string {
	d := c.withDefaults()
	b, err := json.Marshal(&d)
	if err != nil {
		panic("sim: config does not marshal: " + err.Error())
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// rangeErr formats a range violation.
func rangeErr(field string, v, lo, hi any) error {
	return fmt.Errorf("sim: %s = %v out of range: want %v..%v", field, v, lo, hi)
}

func checkDur(field string, v, lo, hi clock.Duration) error {
	if v < lo || v > hi {
		return rangeErr(field, v.Std(), lo.Std(), hi.Std())
	}
	return nil
}

func checkInt(field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return rangeErr(field, v, lo, hi)
	}
	return nil
}

// compiled is a validated configuration with its text specs parsed.
type compiled struct {
	cfg       Config
	topics    map[string]*TopicSpec
	groups    map[string]pop.GroupConfig
	groupList []string // in first-use order
	consumers []consumerPlan
	producers []producerPlan
	reqLat    workload.Dist
	respLat   workload.Dist
	restart   workload.Dist
	pause     workload.Dist
	slow      workload.Dist
}

type consumerPlan struct {
	spec     *ConsumerSpec
	proc     workload.Dist
	outcomes workload.Outcomes
}

type producerPlan struct {
	spec *ProducerSpec
	tags workload.Tags
}

// compile validates c (defaults applied) and parses its text specs.
func (c Config) compile() (*compiled, error) {
	p := &compiled{cfg: c, topics: map[string]*TopicSpec{}, groups: map[string]pop.GroupConfig{}}
	steps := []func() error{
		func() error { return c.Engine.Validate() },
		p.checkRun, p.checkTopics, p.checkGroups, p.checkProducers, p.checkConsumers,
		p.checkNetwork, p.checkFaults, p.checkConsumedTopics,
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *compiled) checkRun() error {
	c := &p.cfg
	if err := checkDur("Duration", c.Duration, clock.Millisecond, 30*24*clock.Hour); err != nil {
		return err
	}
	if err := checkDur("Warmup", c.Warmup, 0, c.Duration); err != nil {
		return err
	}
	if err := checkDur("DrainBudget", c.DrainBudget, clock.Second, 30*24*clock.Hour); err != nil {
		return err
	}
	if err := checkInt("EventBudget", c.EventBudget, 1, 1e12); err != nil {
		return err
	}
	if err := checkDur("SampleInterval", c.SampleInterval, 10*clock.Millisecond, c.Duration+c.DrainBudget); err != nil {
		return err
	}
	if c.Start < 0 {
		return fmt.Errorf("sim: Start = %d: want a non-negative time", c.Start)
	}
	return nil
}

func (p *compiled) checkTopics() error {
	if len(p.cfg.Topics) == 0 {
		return fmt.Errorf("sim: Topics is empty: want at least one topic")
	}
	for i := range p.cfg.Topics {
		t := &p.cfg.Topics[i]
		f := fmt.Sprintf("Topics[%d]", i)
		if err := model.ValidateName(f+".Name", t.Name); err != nil {
			return err
		}
		if model.IsRetryTopic(t.Name) || model.IsDLQTopic(t.Name) {
			return fmt.Errorf("sim: %s.Name = %q: retry and DLQ topics are created by the engine and the proxy", f, t.Name)
		}
		if p.topics[t.Name] != nil {
			return fmt.Errorf("sim: %s.Name = %q is a duplicate", f, t.Name)
		}
		if err := checkInt(f+".Queues", int64(t.Queues), 1, 1024); err != nil {
			return err
		}
		p.topics[t.Name] = t
	}
	return nil
}

func (p *compiled) checkGroups() error {
	for i, g := range p.cfg.Groups {
		f := fmt.Sprintf("Groups[%d]", i)
		if err := model.ValidateName(f+".Name", g.Name); err != nil {
			return err
		}
		if _, dup := p.groups[g.Name]; dup {
			return fmt.Errorf("sim: %s.Name = %q is a duplicate", f, g.Name)
		}
		if g.RetryMaxTimes == 0 {
			g.RetryMaxTimes = 16
		}
		if err := checkInt(f+".RetryMaxTimes", int64(g.RetryMaxTimes), 1, 64); err != nil {
			return err
		}
		gc := pop.DefaultGroup(g.Name)
		gc.RetryMaxTimes = g.RetryMaxTimes
		p.groups[g.Name] = gc
	}
	return nil
}

func (p *compiled) checkProducers() error {
	for i := range p.cfg.Producers {
		s := &p.cfg.Producers[i]
		f := fmt.Sprintf("Producers[%d]", i)
		if p.topics[s.Topic] == nil {
			return fmt.Errorf("sim: %s.Topic = %q is not in Topics", f, s.Topic)
		}
		if _, err := workload.ParseArrivals(s.Arrivals); err != nil {
			return fmt.Errorf("sim: %s.Arrivals: %w", f, err)
		}
		var tags workload.Tags
		if s.Tags != "" {
			t, err := workload.ParseTags(s.Tags)
			if err != nil {
				return fmt.Errorf("sim: %s.Tags: %w", f, err)
			}
			tags = t
		}
		if err := checkInt(f+".Count", int64(s.Count), 1, 1000); err != nil {
			return err
		}
		if s.QueueSelect != QueueRoundRobin && s.QueueSelect != QueueRandom {
			return fmt.Errorf("sim: %s.QueueSelect = %q: want %s or %s", f, s.QueueSelect, QueueRoundRobin, QueueRandom)
		}
		for range s.Count {
			p.producers = append(p.producers, producerPlan{spec: s, tags: tags})
		}
	}
	return nil
}

func (p *compiled) checkConsumers() error {
	if len(p.cfg.Consumers) == 0 {
		return fmt.Errorf("sim: Consumers is empty: want at least one consumer")
	}
	kindOf := map[string]ConsumerKind{}
	topicOf := map[string]string{}
	for i := range p.cfg.Consumers {
		s := &p.cfg.Consumers[i]
		f := fmt.Sprintf("Consumers[%d]", i)
		if err := p.checkConsumer(f, s); err != nil {
			return err
		}
		if k, ok := kindOf[s.Group]; ok && (k != s.Kind || topicOf[s.Group] != s.Topic) {
			return fmt.Errorf("sim: %s: group %q already has %s consumers of topic %q: a group has one kind and one topic", f, s.Group, k, topicOf[s.Group])
		}
		if _, ok := kindOf[s.Group]; !ok {
			p.groupList = append(p.groupList, s.Group)
		}
		kindOf[s.Group], topicOf[s.Group] = s.Kind, s.Topic
		if _, ok := p.groups[s.Group]; !ok {
			p.groups[s.Group] = pop.DefaultGroup(s.Group)
		}
		cp, err := consumerPlanOf(f, s)
		if err != nil {
			return err
		}
		for range s.Count {
			p.consumers = append(p.consumers, cp)
		}
	}
	return nil
}

func (p *compiled) checkConsumer(f string, s *ConsumerSpec) error {
	if s.Kind != PopPush && s.Kind != Simple && s.Kind != Pull {
		return fmt.Errorf("sim: %s.Kind = %q: want %s, %s or %s", f, s.Kind, PopPush, Simple, Pull)
	}
	if err := model.ValidateName(f+".Group", s.Group); err != nil {
		return err
	}
	if p.topics[s.Topic] == nil {
		return fmt.Errorf("sim: %s.Topic = %q is not in Topics", f, s.Topic)
	}
	ints := []struct {
		name   string
		v      int64
		lo, hi int64
	}{
		{".Count", int64(s.Count), 1, 10000}, {".Threads", int64(s.Threads), 1, 1024},
		{".Batch", int64(s.Batch), 1, pop.MaxPopBatch}, {".MaxReconsumeTimes", int64(s.MaxReconsumeTimes), 1, 1000},
		{".FlowControl", int64(s.FlowControl), 1, 100000},
	}
	for _, k := range ints {
		if err := checkInt(f+k.name, k.v, k.lo, k.hi); err != nil {
			return err
		}
	}
	return checkConsumerTimes(f, s)
}

func checkConsumerTimes(f string, s *ConsumerSpec) error {
	inv, poll := [2]clock.Duration{5 * clock.Second, 300 * clock.Second}, [2]clock.Duration{clock.Second, 60 * clock.Second}
	if s.Kind == Simple {
		inv, poll = [2]clock.Duration{10 * clock.Second, 12 * clock.Hour}, [2]clock.Duration{5 * clock.Second, 20 * clock.Second}
	}
	if s.Kind != Pull {
		if err := checkDur(f+".InvisibleTime", s.InvisibleTime, inv[0], inv[1]); err != nil {
			return fmt.Errorf("%w for %s", err, s.Kind)
		}
	}
	if err := checkDur(f+".PollTime", s.PollTime, poll[0], poll[1]); err != nil {
		return fmt.Errorf("%w for %s", err, s.Kind)
	}
	return checkDur(f+".CommitInterval", s.CommitInterval, 100*clock.Millisecond, time60s)
}

const time60s = 60 * clock.Second

func consumerPlanOf(f string, s *ConsumerSpec) (consumerPlan, error) {
	proc, err := workload.ParseDist(s.Processing)
	if err != nil {
		return consumerPlan{}, fmt.Errorf("sim: %s.Processing: %w", f, err)
	}
	out, err := workload.ParseOutcomes(s.Outcomes)
	if err != nil {
		return consumerPlan{}, fmt.Errorf("sim: %s.Outcomes: %w", f, err)
	}
	return consumerPlan{spec: s, proc: proc, outcomes: out}, nil
}

// checkConsumedTopics requires every produced topic to have exactly one
// consuming group: the checker's ledger is keyed by UNIQ_KEY, so two groups
// on one topic would look like duplicates, and an unconsumed topic never
// drains.
func (p *compiled) checkConsumedTopics() error {
	groupOf := map[string]string{}
	for _, cp := range p.consumers {
		s := cp.spec
		if g, ok := groupOf[s.Topic]; ok && g != s.Group {
			return fmt.Errorf("sim: topic %q is consumed by groups %q and %q: want one group per topic (the trace ledger is keyed by UNIQ_KEY)", s.Topic, g, s.Group)
		}
		groupOf[s.Topic] = s.Group
	}
	for i, pr := range p.cfg.Producers {
		if _, ok := groupOf[pr.Topic]; !ok {
			return fmt.Errorf("sim: Producers[%d].Topic = %q has no consumer group: its messages could never drain", i, pr.Topic)
		}
	}
	return p.checkExpressions()
}

// checkExpressions requires each consumer's subscription to accept every
// tag its topic's producers send: a filtered-out message is never
// delivered, so the ledger could not settle it.
func (p *compiled) checkExpressions() error {
	for i := range p.cfg.Consumers {
		s := &p.cfg.Consumers[i]
		accept := map[string]bool{}
		for _, t := range strings.Split(s.Expression, "||") {
			accept[strings.TrimSpace(t)] = true
		}
		if accept["*"] || accept[""] && len(accept) == 1 {
			continue
		}
		for _, pp := range p.producers {
			if pp.spec.Topic != s.Topic {
				continue
			}
			for _, tag := range tagNames(pp.tags) {
				if !accept[tag] {
					return fmt.Errorf("sim: Consumers[%d].Expression = %q does not accept tag %q that producers of %s send: filtered messages never settle; subscribe to every produced tag or use *", i, s.Expression, tag, s.Topic)
				}
			}
		}
	}
	return nil
}

// tagNames lists the tags a producer may send ("" for an untagged
// message), from Tags' canonical form "tags(A:3,B:1)".
func tagNames(t workload.Tags) []string {
	body := strings.TrimSuffix(strings.TrimPrefix(t.String(), "tags("), ")")
	if body == "" {
		return []string{""}
	}
	var out []string
	for _, kv := range strings.Split(body, ",") {
		name, _, _ := strings.Cut(kv, ":")
		out = append(out, name)
	}
	return out
}

// namedDist is a config field holding a distribution and where its parse goes.
type namedDist struct {
	name string
	src  string
	dst  *workload.Dist
}

// parseDists parses each field in order, stopping at the first error.
func parseDists(ds []namedDist) error {
	for _, d := range ds {
		v, err := workload.ParseDist(d.src)
		if err != nil {
			return fmt.Errorf("sim: %s: %w", d.name, err)
		}
		*d.dst = v
	}
	return nil
}

func (p *compiled) checkNetwork() error {
	n := &p.cfg.Network
	if err := parseDists([]namedDist{{"Network.RequestLatency", n.RequestLatency, &p.reqLat}, {"Network.ResponseLatency", n.ResponseLatency, &p.respLat}}); err != nil {
		return err
	}
	for _, k := range []struct {
		name string
		v    clock.Duration
		lo   clock.Duration
	}{{"Network.RequestTimeout", n.RequestTimeout, 100 * clock.Millisecond}, {"Network.PollTimeoutSlack", n.PollTimeoutSlack, 0}} {
		if err := checkDur(k.name, k.v, k.lo, time60s); err != nil {
			return err
		}
	}
	return nil
}

func (p *compiled) checkFaults() error {
	f := &p.cfg.Faults
	if err := parseDists([]namedDist{{"Faults.RestartDelay", f.RestartDelay, &p.restart}, {"Faults.PauseDuration", f.PauseDuration, &p.pause}, {"Faults.SlowDuration", f.SlowDuration, &p.slow}}); err != nil {
		return err
	}
	durs := []struct {
		name string
		v    clock.Duration
	}{{"CrashEvery", f.CrashEvery}, {"PauseEvery", f.PauseEvery}, {"SlowEvery", f.SlowEvery}, {"BrokerRestartEvery", f.BrokerRestartEvery}}
	for _, d := range durs {
		if d.v != 0 {
			if err := checkDur("Faults."+d.name, d.v, 100*clock.Millisecond, 24*clock.Hour); err != nil {
				return err
			}
		}
	}
	if err := checkDur("Faults.ClockSkew", f.ClockSkew, 0, clock.Hour); err != nil {
		return err
	}
	return p.checkFaultPPMs()
}

func (p *compiled) checkFaultPPMs() error {
	f := &p.cfg.Faults
	ppms := []struct {
		name string
		v    int64
		hi   int64
	}{
		{"SiteEnablePPM", f.SiteEnablePPM, 1_000_000}, {"SlowFactor", f.SlowFactor, 1000},
		{"RenewSameDeadlinePPM", f.RenewSameDeadlinePPM, 1_000_000}, {"RenewAtExpiryPPM", f.RenewAtExpiryPPM, 1_000_000},
		{"RenewAfterRevivePPM", f.RenewAfterRevivePPM, 1_000_000}, {"RevivePutFailurePPM", f.RevivePutFailurePPM, 1_000_000},
	}
	for _, k := range ppms {
		if err := checkInt("Faults."+k.name, k.v, 0, k.hi); err != nil {
			return err
		}
	}
	if f.SlowFactor < 2 {
		return rangeErr("Faults.SlowFactor", f.SlowFactor, 2, 1000)
	}
	keys := make([]string, 0, len(f.Loss))
	for k := range f.Loss { // collected, then sorted: order does not matter
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := f.Loss[k]
		if !knownLoss(k) {
			return fmt.Errorf("sim: Faults.Loss[%q]: unknown request type: want pop, ack, change or pull", k)
		}
		if err := checkInt(fmt.Sprintf("Faults.Loss[%q].RequestPPM", k), l.RequestPPM, 0, 500_000); err != nil {
			return err
		}
		if err := checkInt(fmt.Sprintf("Faults.Loss[%q].ResponsePPM", k), l.ResponsePPM, 0, 500_000); err != nil {
			return err
		}
	}
	return nil
}

func knownLoss(k string) bool {
	for _, x := range lossKinds {
		if x == k {
			return true
		}
	}
	return false
}
