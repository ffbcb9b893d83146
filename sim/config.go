package sim

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/filter"
	"popsim/pop"
	"popsim/workload"
)

// Config is one simulation: the run's bounds, the topics, groups,
// producers and consumers, the engine, the network and the faults.
//
// It is also the scenario file format: package scenarios decodes YAML
// onto it, and a key is its field's Go name in lower camel case
// (consumers[0].batch is Consumers[0].Batch; a yaml tag only where a name
// is RocketMQ's and differs). Values are typed and parsed once: durations
// (clock.Duration), distributions (workload.DistSpec), arrival processes
// (workload.ArrivalsSpec), outcomes, tags and probabilities (PPM) each
// know their text form.
//
// Zero values mean "the default" wherever a default is documented;
// WithDefaults fills them in, and Validate reports every field outside its
// range by its key path. Times are clock.Duration (microseconds).
type Config struct {
	Seed           uint64         // the run's seed (a scenario file's: the seed of a run without -seed, default 1)
	Duration       clock.Duration // safety phase: producers run and faults fire (default 60s; 1ms..720h)
	Warmup         Warmup         // left out of the measurements: auto (default: MSER-5 finds it in the data) or a fixed duration less than duration
	Drain          clock.Duration // liveness phase: everything must settle within this, extended while retrying up to RetryChain (default 10m; 1s..720h)
	EventBudget    int64          // dispatched tasks (Summary.SimEvents) before the run fails (default 200,000,000)
	SampleInterval clock.Duration // time-series period (default 1s; 10ms..duration+drain)
	Start          clock.Time     `yaml:"-"` // virtual start (default clock.Epoch); not in files

	Topics    []TopicSpec
	Groups    []GroupSpec // optional; when given, every consumer's group must be one of them
	Producers []ProducerSpec
	Consumers []ConsumerSpec
	Engine    EngineSpec
	Broker    BrokerSpec // the broker's own limits; zero: broker work takes no time
	Network   NetworkSpec
	Faults    FaultSpec
}

// TopicSpec is a topic and its queue count (read = write queues).
type TopicSpec struct {
	Name   string
	Queues int32 // 1..1024, default 8 (RocketMQ's defaultTopicQueueNums)
}

// GroupSpec configures a subscription group (SubscriptionGroupConfig).
type GroupSpec struct {
	Name          string
	RetryMaxTimes int32 // 1..64, default 16; the proxy's maxAttempts is this + 1
	// ConsumeMessageOrderly (false): the group consumes orderly (FIFO):
	// its pop-push consumers pop with order=true and consume each queue in
	// order, and its simple consumers' proxy receives orderly.
	ConsumeMessageOrderly bool `json:",omitempty"`
	// RequestMode (rocketmq): pop or pull, the request mode an admin sets
	// for the group and its topic on the broker before the run
	// (SET_MESSAGE_REQUEST_MODE, mqadmin setConsumeMode) with
	// PopShareQueueNum; left out, none is set and the broker answers with
	// engine.defaultMessageRequestMode. It decides what a pop-push consumer
	// with clientRebalance false is assigned (assign.go).
	RequestMode      string `json:",omitempty"`
	PopShareQueueNum int32  `json:",omitempty"`
	// SwitchToPop (rocketmq): an admin switches the group, consuming in
	// PULL mode, to POP mode during the run (switch.go); its zero value
	// (no at) is no switch.
	SwitchToPop SwitchToPop `json:",omitzero"`
}

// SwitchToPop is an admin's live switch of a group from PULL to POP mode
// (docs/rocketmq/clients.md §4): at At (virtual time from the start, in
// the safety phase) SET_MESSAGE_REQUEST_MODE(POP, PopShareQueueNum) on
// every broker. The group's consumers (pop-push, clientRebalance false)
// see it at their next rebalance.
type SwitchToPop struct {
	At               clock.Duration
	PopShareQueueNum int32 `json:",omitempty"`
}

// set reports whether the spec schedules a switch.
func (w *SwitchToPop) set() bool { return *w != SwitchToPop{} }

// ProducerSpec is Count identical open-loop producers on one topic.
type ProducerSpec struct {
	Topic    string
	Arrivals workload.ArrivalsSpec // per producer, e.g. poisson(1000/s); required
	Tags     workload.Tags         // e.g. tags(A:3,B:1); zero: no tag
	Count    int                   // 1..1000, default 1
	// QueueSelect: "round-robin" (default, the producer's default
	// selector) or "random" (uniform per message: each queue then sees a
	// Poisson stream when the producer's is Poisson).
	QueueSelect string
	// Properties are the user properties each message gets, one weighted
	// set per message, e.g. properties(3:set(region=eu,price=12),1:set());
	// zero: none. SQL92 subscriptions filter on them.
	Properties workload.Properties
}

// Queue selectors of a producer.
const (
	QueueRoundRobin = "round-robin"
	QueueRandom     = "random"
)

// ConsumerSpec is Count identical consumers of one group on one topic:
// the settings every kind has, and the kind's own in Settings.
type ConsumerSpec struct {
	// Kind: pop-push, simple or pull (rocketmq), kafka-share, sqs; left
	// out, the engine's own kind (pop-push for rocketmq).
	Kind       ConsumerKind
	Group      string
	Topic      string
	Expression string // the subscription expression, default "*"
	// ExpressionType is the expression's language: TAG (the default) or
	// SQL92 (a condition over the message's properties, RocketMQ's
	// subset; rocketmq only, and for pop-push and pull consumers only
	// with the broker's enablePropertyFilter).
	ExpressionType string
	Count          int // 1..10000, default 1
	// Threads is the consume thread pool per consumer (1..1024, default 20).
	// A delivered message waiting for a free thread stays leased.
	Threads int
	// Batch: popBatchNums (pop-push), maxMsgNums (simple), pull batch size
	// (pull), 1..32, default 32; max.poll.records (kafka-share), 1..10000,
	// default 500; MaxNumberOfMessages (sqs), 1..10, default 10.
	Batch      int32
	Processing workload.DistSpec // processing time per message, default exp(10ms)
	Outcomes   workload.Outcomes // listener outcomes, zero: all succeed

	// Settings are the kind's own (*PopPushSettings, *SimpleSettings or
	// *PullSettings); nil means the kind's defaults. In a file they sit
	// flat beside the keys above, and a key of another kind is an error.
	Settings ConsumerSettings `yaml:",inline"`
}

// ConsumerKind selects a consumer's client model.
type ConsumerKind string

// Consumer kinds.
const (
	// PopPush is the remoting push consumer in POP mode
	// (ConsumeMessagePopConcurrentlyService, docs/rocketmq/clients.md §2–3).
	PopPush ConsumerKind = "pop-push"
	// Simple is a gRPC simple consumer behind the proxy: explicit receive,
	// ack and renew, proxy-side DLQ and optional auto-renew.
	Simple ConsumerKind = "simple"
	// Pull is the classic clustering baseline: each queue owned by one
	// consumer, offsets committed by the client.
	Pull ConsumerKind = "pull"
	// KafkaShareConsumer is a KafkaShareConsumer of a share group
	// (kafkashare.go).
	KafkaShareConsumer ConsumerKind = "kafka-share"
	// SQSConsumer is an SQS consumer: ReceiveMessage, DeleteMessage,
	// ChangeMessageVisibility (sqsclient.go).
	SQSConsumer ConsumerKind = "sqs"
)

// ConsumerSettings are one consumer kind's own settings.
type ConsumerSettings interface {
	// Kind is the consumer kind the settings belong to.
	Kind() ConsumerKind
	// withDefaults returns a copy with every zero field defaulted.
	withDefaults() ConsumerSettings
	// check reports fields outside their range; path is the consumer's.
	check(v *validator, path string)
	// batch is the kind's default and largest batch (ConsumerSpec.Batch).
	batch() (def, hi int32)
}

// consumerKinds registers the consumer kinds, the default first: a kind
// is its name and a constructor of its (zero) settings.
var consumerKinds = []struct {
	kind ConsumerKind
	new  func() ConsumerSettings
}{
	{PopPush, func() ConsumerSettings { return &PopPushSettings{} }},
	{Simple, func() ConsumerSettings { return &SimpleSettings{} }},
	{Pull, func() ConsumerSettings { return &PullSettings{} }},
	{KafkaShareConsumer, func() ConsumerSettings { return &KafkaShareConsumerSettings{} }},
	{SQSConsumer, newSQSConsumerSettings},
}

// newSettings returns kind's zero settings, or nil for an unknown kind.
func (k ConsumerKind) newSettings() ConsumerSettings {
	for _, r := range consumerKinds {
		if r.kind == k {
			return r.new()
		}
	}
	return nil
}

// Kinds lists the consumer kinds, the default first (Variant).
func (s *ConsumerSpec) Kinds() []string {
	out := make([]string, len(consumerKinds))
	for i, r := range consumerKinds {
		out[i] = string(r.kind)
	}
	return out
}

// Choose sets the consumer's kind ("" for pop-push) with fresh settings
// and returns them (Variant).
func (s *ConsumerSpec) Choose(kind string) (any, error) {
	k := ConsumerKind(kind)
	if k == "" {
		k = PopPush
	}
	set := k.newSettings()
	if set == nil {
		return nil, fmt.Errorf("%q: want %s", kind, orList(s.Kinds()))
	}
	s.Kind, s.Settings = k, set
	return set, nil
}

// PopPushSettings are a pop-push consumer's own settings
// (DefaultMQPushConsumer in POP mode).
type PopPushSettings struct {
	InvisibleTime        clock.Duration // popInvisibleTime, 5s..300s (default 60s)
	PollTime             clock.Duration // long polling, 1s..60s (default 15s)
	MaxReconsumeTimes    int32          // 1..1000 (default 16)
	PopThresholdForQueue int            // waiting-ack messages before the next pop waits 50 ms, 1..100000 (default 96)
	// SuspendCurrentQueueTime is suspendCurrentQueueTimeMillis: in an
	// orderly group, a failed message and the rest of its queue's batch
	// are renewed for this long (SUSPEND_CURRENT_QUEUE_A_MOMENT), after
	// which the broker hands them out again in order; 10ms..30s (default
	// 1s). Concurrent groups do not use it.
	SuspendCurrentQueueTime clock.Duration
	// ConsumeMessageBatchMaxSize is the listener's batch
	// (consumeMessageBatchMaxSize): a pop's messages are handed to the
	// listener in batches of at most this many, each batch one call on one
	// consume thread that processes its messages one after another; 1..1024
	// (default 1). Concurrent groups only. The listener acks the success
	// prefix: the messages before the first failure (its ackIndex); the
	// rest of the batch is retried.
	ConsumeMessageBatchMaxSize int32
	// BatchAck (false): ack a listener batch's success prefix with one
	// BATCH_ACK_MESSAGE request (200151), as the rocketmq-rust push
	// consumer does (ack_batch_async); false acks each message with its own
	// ACK_MESSAGE (200051), as the Java client's ackAsync does. Neither
	// client has a switch for it: this chooses which client is modelled.
	BatchAck bool
	// ClientRebalance (true): the consumer pops every queue (an all-queue
	// pop), as a broker in POP mode with its default popShareQueueNum
	// assigns. False is setClientRebalance(false): the consumer asks the
	// broker for its queues (QUERY_ASSIGNMENT) at start, every 20 s and
	// when the group's membership changes, and pops each assigned queue
	// (assign.go), and pulls each queue assigned in PULL mode (switch.go).
	// Orderly groups keep client rebalance, as upstream.
	ClientRebalance DefaultOn
}

// SimpleSettings are a simple consumer's own settings (SimpleConsumer
// and the proxy).
type SimpleSettings struct {
	InvisibleTime clock.Duration // the receive's invisible duration, 10s..12h (default 60s)
	PollTime      clock.Duration // long polling, 5s..20s (default 20s)
	// AutoRenew: the proxy renews leases of messages being processed, 10 s
	// ahead, on the 1,3,5,10,30,60 min schedule, for 3 h.
	AutoRenew bool
	// Reentrant (false): send an attempt_id with every receive and reuse it
	// for the receive after one that timed out (DEADLINE_EXCEEDED), as the
	// gRPC PushConsumer's receive loop does, so that an orderly retry
	// re-enters its batch; a new one after any answer. The SimpleConsumer
	// itself sends none.
	Reentrant bool
}

// PullSettings are a pull consumer's own settings
// (DefaultLitePullConsumer-style queue owner).
type PullSettings struct {
	PollTime          clock.Duration // long polling, 1s..60s (default 15s)
	MaxReconsumeTimes int32          // 1..1000 (default 16)
	CommitInterval    clock.Duration // offset persistence period, 100ms..60s (default 5s)
}

func (*PopPushSettings) batch() (int32, int32) { return pop.MaxPopBatch, pop.MaxPopBatch }
func (*SimpleSettings) batch() (int32, int32)  { return pop.MaxPopBatch, pop.MaxPopBatch }
func (*PullSettings) batch() (int32, int32)    { return pop.MaxPopBatch, pop.MaxPopBatch }

func (*PopPushSettings) Kind() ConsumerKind { return PopPush }
func (*SimpleSettings) Kind() ConsumerKind  { return Simple }
func (*PullSettings) Kind() ConsumerKind    { return Pull }

func (p *PopPushSettings) withDefaults() ConsumerSettings {
	d := *p
	def(&d.InvisibleTime, 60*clock.Second)
	def(&d.PollTime, 15*clock.Second)
	def(&d.MaxReconsumeTimes, 16)
	def(&d.PopThresholdForQueue, 96)
	def(&d.SuspendCurrentQueueTime, clock.Second)
	def(&d.ConsumeMessageBatchMaxSize, 1)
	def(&d.ClientRebalance, defaultOnTrue)
	return &d
}

func (p *SimpleSettings) withDefaults() ConsumerSettings {
	d := *p
	def(&d.InvisibleTime, 60*clock.Second)
	def(&d.PollTime, 20*clock.Second)
	return &d
}

func (p *PullSettings) withDefaults() ConsumerSettings {
	d := *p
	def(&d.PollTime, 15*clock.Second)
	def(&d.MaxReconsumeTimes, 16)
	def(&d.CommitInterval, 5*clock.Second)
	return &d
}

func (p *PopPushSettings) check(v *validator, path string) {
	v.durIn(path+".invisibleTime", p.InvisibleTime, 5*clock.Second, 300*clock.Second, " for pop-push")
	v.durIn(path+".pollTime", p.PollTime, clock.Second, 60*clock.Second, " for pop-push")
	v.intIn(path+".maxReconsumeTimes", int64(p.MaxReconsumeTimes), 1, 1000)
	v.intIn(path+".popThresholdForQueue", int64(p.PopThresholdForQueue), 1, 100000)
	v.durIn(path+".suspendCurrentQueueTime", p.SuspendCurrentQueueTime, 10*clock.Millisecond, 30*clock.Second, "")
	v.intIn(path+".consumeMessageBatchMaxSize", int64(p.ConsumeMessageBatchMaxSize), 1, 1024)
}

func (p *SimpleSettings) check(v *validator, path string) {
	v.durIn(path+".invisibleTime", p.InvisibleTime, 10*clock.Second, 12*clock.Hour, " for simple")
	v.durIn(path+".pollTime", p.PollTime, 5*clock.Second, 20*clock.Second, " for simple")
}

func (p *PullSettings) check(v *validator, path string) {
	v.durIn(path+".pollTime", p.PollTime, clock.Second, 60*clock.Second, " for pull")
	v.intIn(path+".maxReconsumeTimes", int64(p.MaxReconsumeTimes), 1, 1000)
	v.durIn(path+".commitInterval", p.CommitInterval, 100*clock.Millisecond, 60*clock.Second, "")
}

// EngineSpec is the engine serving the run: its kind and that kind's own
// section of settings.
type EngineSpec struct {
	Kind EngineKind // rocketmq (default), kafka-share, sqs-standard or sqs-fifo
	// Settings are the kind's section (*pop.Config for rocketmq,
	// *KafkaShareSettings, *SQSStandardSettings, *SQSFIFOSettings); nil
	// means its defaults. In a file its keys sit flat beside kind, and a
	// key the kind does not have is an error naming the kind.
	Settings EngineSettings `yaml:",inline"`
}

// EngineKind names an engine.
type EngineKind string

// The engine kinds.
const (
	// RocketMQ is RocketMQ 5's POP broker (package pop), configured with
	// pop.Config under broker.conf's names. Its defaults are RocketMQ's
	// (pop.DefaultConfig): the checkpoint path; popConsumerKVServiceEnable:
	// true selects the KV path.
	RocketMQ EngineKind = "rocketmq"
	// KafkaShare is a Kafka broker with share groups (package share),
	// configured under Kafka's config keys (KafkaShareSettings).
	KafkaShare EngineKind = "kafka-share"
	// SQSStandard and SQSFIFO are Amazon SQS standard and FIFO queues
	// (package sqs), configured under SQS's queue attribute names
	// (SQSStandardSettings, SQSFIFOSettings).
	SQSStandard EngineKind = "sqs-standard"
	SQSFIFO     EngineKind = "sqs-fifo"
)

// EngineSettings are one engine kind's section: its keys, its defaults
// (the registration's constructor) and its validation.
type EngineSettings interface {
	Validate() error
}

// engineKind is one engine's registration: its section with the kind's
// defaults, how its validation errors map to keys, the consumer kinds its
// clients are (the first is the default), the fault sites it has no
// equivalent for, and its adapter's constructor (the Engine the simulator
// drives).
type engineKind struct {
	kind      EngineKind
	defaults  func() EngineSettings
	check     func(s EngineSettings, v *validator)
	consumers []ConsumerKind
	faults    func(kind EngineKind, f *FaultSpec, v *validator)
	open      func(s *sim, settings EngineSettings) (Engine, error)
	// coverage are the engine's own coverage keys (paths its adapter and
	// clients count), beside the common ones.
	coverage []string
	// ordered: its groups consume each queue in order (subscribe
	// r=ordered in the trace).
	ordered bool
	// unscheduled are the scheduled faults it has no equivalent for.
	unscheduled []FaultKind
}

// engineKinds registers the engines, the default first. A new engine is
// one entry here (and its adapter file, engine_<kind>.go).
var engineKinds = []engineKind{
	{RocketMQ, func() EngineSettings { c := pop.DefaultConfig(); return &c }, checkRocketMQ, []ConsumerKind{PopPush, Simple, Pull}, checkRocketMQFaults, openRocketMQ, []string{"broker-stop"}, false, []FaultKind{FaultDuplicateDelivery}},
	{KafkaShare, defaultKafkaShareSettings, checkKafkaShare, []ConsumerKind{KafkaShareConsumer}, checkKafkaShareFaults, openKafkaShare, kafkaCoverage, false, []FaultKind{FaultDuplicateDelivery, FaultReviveReadFailure, FaultBrokerStop}},
	{SQSStandard, defaultSQSStandardSettings, checkSQS, []ConsumerKind{SQSConsumer}, checkSQSFaults, openSQS, sqsCoverage, false, sqsUnscheduled},
	{SQSFIFO, defaultSQSFIFOSettings, checkSQS, []ConsumerKind{SQSConsumer}, checkSQSFIFOFaults, openSQS, sqsCoverage, true, append(sqsUnscheduled, FaultDuplicateDelivery)},
}

// engineOf is kind's registration, nil for an unknown kind.
func engineOf(kind EngineKind) *engineKind {
	for i := range engineKinds {
		if engineKinds[i].kind == kind {
			return &engineKinds[i]
		}
	}
	return nil
}

// EngineConsumerKind is the consumer kind an engine's scenarios use when
// their consumers name none ("" for an unknown engine kind); the sweep
// parameter engine= sets it with the engine.
func EngineConsumerKind(engine string) string {
	k := EngineKind(engine)
	if k == "" {
		k = RocketMQ
	}
	if r := engineOf(k); r != nil {
		return string(r.consumers[0])
	}
	return ""
}

// checkRocketMQ reports pop.Config's validation under engine.<key>.
func checkRocketMQ(s EngineSettings, v *validator) {
	err := s.Validate()
	if err == nil {
		return
	}
	if ce, ok := err.(*pop.ConfigError); ok {
		v.add("engine."+ce.Key, ce.Want, "%s", ce.Msg)
		return
	}
	v.add("engine", "", "%v", err)
}

// checkRocketMQFaults: RocketMQ has every fault site but SQS's duplicate
// deliveries.
func checkRocketMQFaults(kind EngineKind, f *FaultSpec, v *validator) {
	refuseFault(v, "faults.duplicateDelivery", f.DuplicateDelivery != 0, kind, "only sqs-standard queues deliver duplicates of their own accord")
}

// refuseBrokerStop: the graceful stop is modelled for RocketMQ only.
func refuseBrokerStop(v *validator, f *FaultSpec, kind EngineKind) {
	refuseFault(v, "faults.brokerStop.every", f.BrokerStop.Every != 0, kind, "the graceful broker stop is modelled for rocketmq only (brokerRestart is the crash)")
}

// refuseFault reports a fault site an engine has no equivalent for.
func refuseFault(v *validator, path string, set bool, kind EngineKind, why string) {
	if set {
		v.add(path, "", "the %s engine has no such fault: %s", kind, why)
	}
}

// Kinds lists the engine kinds, the default first (Variant).
func (e *EngineSpec) Kinds() []string {
	out := make([]string, len(engineKinds))
	for i, r := range engineKinds {
		out[i] = string(r.kind)
	}
	return out
}

// Choose sets the engine kind ("" for rocketmq) with the kind's default
// settings and returns them (Variant).
func (e *EngineSpec) Choose(kind string) (any, error) {
	k := EngineKind(kind)
	if k == "" {
		k = RocketMQ
	}
	if r := engineOf(k); r != nil {
		e.Kind, e.Settings = k, r.defaults()
		return e.Settings, nil
	}
	return nil, fmt.Errorf("%q: want %s", kind, orList(e.Kinds()))
}

// RocketMQ returns the rocketmq engine's configuration (its defaults when
// no settings are given). It panics for another kind.
func (e EngineSpec) RocketMQ() pop.Config {
	if e.Kind != "" && e.Kind != RocketMQ {
		panic("sim: EngineSpec.RocketMQ on a " + string(e.Kind) + " engine")
	}
	if e.Settings == nil {
		return pop.DefaultConfig()
	}
	return *e.Settings.(*pop.Config)
}

// NetworkSpec is the client-broker network.
type NetworkSpec struct {
	RequestLatency  workload.DistSpec // one-way, client to broker (default uniform(200us,2ms))
	ResponseLatency workload.DistSpec // one-way, broker to client (default uniform(200us,2ms))
	// RequestTimeout is how long a client waits for a renewal's answer
	// (100ms..60s, default 3s). Acks and RECONSUME_LATER renewals are fire
	// and forget, as upstream's ackAsync (3 s timeout, failures only
	// logged): their timeout changes nothing, so none is scheduled.
	RequestTimeout clock.Duration
	// PollTimeoutSlack is added to a long-polling request's poll time for
	// the client's timeout (RocketMQ adds 10 s); 0..60s, default 10s.
	PollTimeoutSlack clock.Duration
	Loss             LossSpec // per request type
}

// LossSpec is the loss of each request type.
type LossSpec struct {
	Pop    LossPair
	Ack    LossPair
	Change LossPair // changeInvisibleTime
	Pull   LossPair
}

// LossPair: the request lost before the broker, or its response lost
// after the broker acted on it; each 0..0.5.
type LossPair struct {
	Request, Response PPM
}

// Request types with loss faults, in LossSpec's order.
var lossKinds = [...]string{"pop", "ack", "change", "pull"}

// pairs returns the pairs in lossKinds' order.
func (l *LossSpec) pairs() [len(lossKinds)]LossPair {
	return [...]LossPair{l.Pop, l.Ack, l.Change, l.Pull}
}

// FaultSpec configures the fault families of the safety phase. Each is
// configured by how often it strikes (a mean interval of an exponential
// clock, per consumer or for the broker) or by a probability; a zero
// field turns its site off.
type FaultSpec struct {
	// Swarm draws, per seed, which fault families are off and very
	// different weights for the rest (TigerBeetle's swarm testing).
	Swarm bool
	// SiteEnable is the two-level activation: per run, each configured
	// site is enabled with this probability (0 means 1: all on).
	SiteEnable    PPM
	Crash         CrashSpec
	Pause         PauseSpec
	Slow          SlowSpec
	Renew         RenewSpec
	BrokerRestart BrokerRestartSpec
	// RevivePutFailure: the engine's writes that bring messages back fail:
	// RocketMQ's retry-topic writes during revive; kafka-share's share-group
	// state writes (the share coordinator's persister fault).
	RevivePutFailure PPM
	// ClockSkew: each consumer's clock is off by up to ± this (0..1h).
	ClockSkew clock.Duration
	// DuplicateDelivery (sqs-standard only): the probability that a
	// receive also returns a copy of a message in flight, as a standard
	// queue occasionally does (the engine's DuplicateSeq fault).
	DuplicateDelivery PPM
	// LockBusy: the broker's pop lock (KV: group@topic; FS: one queue's)
	// is held by a concurrent request when a pop tries it, with this
	// probability (lock contention: the pop fails fast and long-polls).
	LockBusy PPM
	// ReviveReadFailure: revive's reads of the message to bring back that
	// fail (RocketMQ's checkpoint path: EscapeBridge.getMessageAsync
	// completing exceptionally; the KV path reads no message to revive).
	ReviveReadFailure PPM
	// BrokerStop: a graceful stop and start of the broker (RocketMQ
	// only): parked pops are answered before it goes away and the commit
	// offsets are persisted; BrokerRestart is the crash.
	BrokerStop BrokerStopSpec
}

// CrashSpec: a consumer loses its local state and buffered work.
type CrashSpec struct {
	Every        clock.Duration    // mean time between crashes of one consumer (100ms..24h)
	RestartDelay workload.DistSpec // default uniform(1s,5s)
}

// PauseSpec: a stop-the-world pause (GC) of one consumer.
type PauseSpec struct {
	Every    clock.Duration    // 100ms..24h
	Duration workload.DistSpec // default uniform(50ms,2s)
}

// SlowSpec: an episode during which a consumer's processing is Factor
// times slower.
type SlowSpec struct {
	Every    clock.Duration    // 100ms..24h
	Duration workload.DistSpec // default uniform(1s,10s)
	Factor   int64             // 2..1000, default 10
}

// RenewSpec: renewals (changeInvisibleTime) injected at chosen moments, a
// probability per delivered message of a pop-push or simple consumer.
type RenewSpec struct {
	SameDeadline PPM // a renewal that keeps the same deadline (apache/rocketmq#10276)
	AtExpiry     PPM // a renewal reaching the broker exactly at expiry
	AfterRevive  PPM // a late renewal with an old handle after the message was revived
}

// BrokerRestartSpec: the broker crashes and restarts: it loses its
// volatile state (cache, polling); parked requests are never answered.
type BrokerRestartSpec struct {
	Every clock.Duration // mean time between broker restarts (100ms..24h)
}

// BrokerStopSpec: the broker is stopped gracefully and started again:
// its long-polling service wakes every parked pop, answered at once
// (messages, or POLLING_TIMEOUT), the commit offsets are persisted, then
// it restarts as a crash does (cache, buffer, held pulls lost).
type BrokerStopSpec struct {
	Every clock.Duration // mean time between broker stops (100ms..24h)
}

// PPM is a probability in parts per million. Its text form is a decimal
// (0.001) or a percentage (0.1%) with at most six significant decimals;
// it prints as a percentage.
type PPM int64

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *PPM) UnmarshalText(b []byte) error {
	v, err := parsePPM(string(b))
	if err != nil {
		return err
	}
	*p = PPM(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler: a percentage.
func (p PPM) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// String is the percentage: 1000 ppm is "0.1%".
func (p PPM) String() string {
	return strconv.FormatFloat(float64(p)/1e4, 'f', -1, 64) + "%"
}

// decimal is the probability as a decimal: 500000 ppm is "0.5".
func (p PPM) decimal() string { return strconv.FormatFloat(float64(p)/1e6, 'f', -1, 64) }

// parsePPM accepts 0..1 with up to six decimals, or 0%..100% with up to
// four.
func parsePPM(s string) (int64, error) {
	want := fmt.Errorf("%q: want a probability from 0 to 1 (at most 6 decimals, e.g. 0.001) or a percentage (0.1%%)", s)
	num, scale := s, int64(1_000_000)
	if strings.HasSuffix(s, "%") {
		num, scale = strings.TrimSuffix(s, "%"), 10_000
	}
	whole, frac, _ := strings.Cut(num, ".")
	if whole == "" || len(whole) > 3 || !digits(whole) || !digits(frac) || len(frac) > 6 {
		return 0, want
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
	}
	den := int64(1)
	for range len(frac) {
		den *= 10
	}
	if (f*scale)%den != 0 {
		return 0, want
	}
	v := w*scale + f*scale/den
	if v > 1_000_000 {
		return 0, fmt.Errorf("%q out of range: want 0..1 (0%%..100%%)", s)
	}
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Variant is a configuration section whose kind chooses the type of its
// other settings: ConsumerSpec (the client kind) and EngineSpec (the
// engine). A decoder calls Choose with the section's kind key ("" when
// absent) and decodes the remaining keys onto the returned settings, or
// onto the section's own fields; Kinds names every kind, so that a key of
// another kind can be reported as such.
type Variant interface {
	Kinds() []string
	Choose(kind string) (settings any, err error)
}

// SettingsKeys returns the keys each kind of a Variant section of type t
// has of its own, by kind in Kinds order: what a decoder needs to say
// "only pop-push and simple consumers have invisibleTime".
func SettingsKeys(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	probe := reflect.New(t).Interface().(Variant)
	for _, k := range probe.Kinds() {
		set, err := reflect.New(t).Interface().(Variant).Choose(k)
		if err != nil {
			panic("sim: a registered kind is not accepted: " + err.Error())
		}
		out[k] = FieldKeys(reflect.TypeOf(set).Elem())
	}
	return out
}

// FieldKeys lists the keys of a configuration struct type in field order:
// the yaml tag, or the Go name in lower camel case; "-" fields are left
// out and ",inline" struct fields contribute their own keys.
func FieldKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, inline, skip := FieldKey(f)
		switch {
		case skip:
		case inline:
			if f.Type.Kind() == reflect.Struct {
				out = append(out, FieldKeys(f.Type)...)
			}
		default:
			out = append(out, key)
		}
	}
	return out
}

// FieldKey is a struct field's configuration key: its yaml tag name, or
// its Go name in lower camel case. inline is true for ",inline" fields,
// skip for unexported and "-" fields.
func FieldKey(f reflect.StructField) (key string, inline, skip bool) {
	if !f.IsExported() {
		return "", false, true
	}
	name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return "", false, true
	}
	if opts == "inline" {
		return "", true, false
	}
	if name == "" {
		name = lowerCamel(f.Name)
	}
	return name, false, false
}

// lowerCamel lowers the leading capitals of a Go name, keeping the last
// of a run that starts a word: Batch is batch, TTL is ttl, RPSLimit is
// rpsLimit.
func lowerCamel(s string) string {
	b := []byte(s)
	for i := 0; i < len(b) && b[i] >= 'A' && b[i] <= 'Z'; i++ {
		if i > 0 && i+1 < len(b) && b[i+1] >= 'a' && b[i+1] <= 'z' {
			break
		}
		b[i] += 'a' - 'A'
	}
	return string(b)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// DefaultConfig is a representative small workload that runs in about a
// second of wall time: one topic of 4 queues, one group of 8 POP push
// consumers with 4 threads each, 1000 msg/s Poisson for 60 s of virtual
// time, 1% RECONSUME_LATER and 0.1% exceptions, and light faults.
func DefaultConfig() Config {
	outcomes, err := workload.NewOutcomes(10_000, 1_000)
	if err != nil {
		panic("sim: default outcomes: " + err.Error())
	}
	return Config{
		Seed:      1,
		Topics:    []TopicSpec{{Name: "orders", Queues: 4}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: workload.MustArrivals("poisson(1000/s)"), Count: 1}},
		Consumers: []ConsumerSpec{{
			Kind: PopPush, Group: "billing", Topic: "orders", Count: 8, Threads: 4,
			Processing: workload.MustDist("exp(10ms)"), Outcomes: outcomes,
		}},
		Network: NetworkSpec{Loss: LossSpec{
			Pop: LossPair{20, 20}, Ack: LossPair{1000, 1000}, Change: LossPair{1000, 1000},
		}},
		Faults: FaultSpec{
			Crash: CrashSpec{Every: 5 * clock.Minute}, Pause: PauseSpec{Every: 2 * clock.Minute}, Slow: SlowSpec{Every: 5 * clock.Minute},
			Renew:            RenewSpec{SameDeadline: 500, AtExpiry: 200, AfterRevive: 200},
			RevivePutFailure: 10_000, ClockSkew: 100 * clock.Millisecond,
		},
		Duration: 60 * clock.Second,
	}
}

// WithDefaults returns c with every zero field that has a documented
// default filled in. Settings of a kind that does not exist are left as
// they are (Validate reports the kind).
func (c Config) WithDefaults() Config {
	def(&c.Duration, 60*clock.Second)
	def(&c.Drain, 10*clock.Minute)
	def(&c.EventBudget, 200_000_000)
	def(&c.SampleInterval, clock.Second)
	def(&c.Start, clock.Epoch)
	c.Topics = append([]TopicSpec(nil), c.Topics...)
	for i := range c.Topics {
		def(&c.Topics[i].Queues, 8)
	}
	c.Groups = append([]GroupSpec(nil), c.Groups...)
	for i := range c.Groups {
		def(&c.Groups[i].RetryMaxTimes, 16)
	}
	c.Producers = append([]ProducerSpec(nil), c.Producers...)
	for i := range c.Producers {
		def(&c.Producers[i].Count, 1)
		def(&c.Producers[i].QueueSelect, QueueRoundRobin)
	}
	c.Engine.defaults()
	c.Consumers = append([]ConsumerSpec(nil), c.Consumers...)
	for i := range c.Consumers {
		c.Consumers[i].defaults(c.Engine.Kind)
	}
	c.Broker.defaults()
	c.Network.defaults()
	c.Faults.defaults()
	return c
}

// defaults fills the consumer's zero fields; a consumer that names no
// kind (and has no settings) is of the engine's own kind.
func (s *ConsumerSpec) defaults(engine EngineKind) {
	if s.Kind == "" && s.Settings != nil {
		s.Kind = s.Settings.Kind()
	}
	def(&s.Kind, ConsumerKind(EngineConsumerKind(string(engine))))
	def(&s.Kind, PopPush)
	def(&s.Count, 1)
	def(&s.Threads, 20)
	def(&s.Expression, "*")
	def(&s.ExpressionType, filter.TypeTag)
	defDist(&s.Processing, "exp(10ms)")
	if s.Settings == nil {
		s.Settings = s.Kind.newSettings()
	}
	b := int32(pop.MaxPopBatch)
	if s.Settings != nil {
		s.Settings = s.Settings.withDefaults()
		b, _ = s.Settings.batch()
	}
	def(&s.Batch, b)
}

func (e *EngineSpec) defaults() {
	def(&e.Kind, RocketMQ)
	if e.Settings != nil {
		return
	}
	if r := engineOf(e.Kind); r != nil {
		e.Settings = r.defaults()
	}
}

func (n *NetworkSpec) defaults() {
	defDist(&n.RequestLatency, "uniform(200us,2ms)")
	defDist(&n.ResponseLatency, "uniform(200us,2ms)")
	def(&n.RequestTimeout, 3*clock.Second)
	def(&n.PollTimeoutSlack, 10*clock.Second)
}

func (f *FaultSpec) defaults() {
	def(&f.SiteEnable, 1_000_000)
	defDist(&f.Crash.RestartDelay, "uniform(1s,5s)")
	defDist(&f.Pause.Duration, "uniform(50ms,2s)")
	defDist(&f.Slow.Duration, "uniform(1s,10s)")
	def(&f.Slow.Factor, 10)
}

func def[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

func defDist(p *workload.DistSpec, text string) {
	if p.IsZero() {
		*p = workload.MustDist(text)
	}
}
