package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"popsim/clock"
	"popsim/filter"
	"popsim/pop"
	"popsim/workload"
)

// SHA256 is the hash of the configuration's canonical form (after
// defaults), recorded in the summary so that a seed is always replayed
// against the scenario it came from. Hash the configuration as given, not
// WithDefaults' result: the form keeps groups' retryMaxTimes as given.
//
// The canonical form is frozen: it is the JSON layout below, which is the
// one configurations had before they became typed, so a hash recorded in
// earlier results still names the same effective configuration (and an
// unchanged hash shows that a refactoring moved no effective value). A
// setting added later must enter the form only when it differs from its
// default, so that existing hashes keep their meaning.
func (c *Config) SHA256() string {
	k := c.WithDefaults().canonical()
	k.Groups = c.Groups // as given: the form never defaulted retryMaxTimes
	b, err := json.Marshal(k)
	if err != nil {
		panic("sim: config does not marshal: " + err.Error())
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// canonEngine is pop.Config with the keys added for orderly consumption
// present only when not the default, so that earlier configurations keep
// their hash: the outer fields shadow the embedded ones and encode where
// they did (EnableNotify... before Bugs, the new bug switches last).
type canonEngine struct {
	pop.Config
	EnableNotifyAfterPopOrderLockRelease *bool `json:",omitempty"` // nil when true (the default)
	Bugs                                 canonBugs
	// The 5.4.0 retry choice's keys, present only when not the default.
	PopFromRetryProbabilityForPriority int32  `json:",omitempty"`
	PriorityOrderAsc                   *bool  `json:",omitempty"` // nil when true (the default)
	RetryChoiceRelease                 string `json:",omitempty"`
	// Queue assignment's keys, present only when not the default.
	ServerLoadBalancerEnable  *bool                  `json:",omitempty"` // nil when true (the default)
	DefaultMessageRequestMode pop.MessageRequestMode `json:",omitempty"` // "" when PULL (the default)
	DefaultPopShareQueueNum   *int32                 `json:",omitempty"` // nil when -1 (the default)
}

type canonBugs struct {
	pop.Bugs
	FifoRetryLockBusy                bool `json:",omitempty"`
	LockFreeTimerFirstPending        bool `json:",omitempty"`
	SameMillisChangeInvisible        bool `json:",omitempty"`
	FifoChangeBelowCommitEmptyHandle bool `json:",omitempty"`
}

func canonEngineOf(c *pop.Config) canonEngine {
	e := canonEngine{Config: *c, Bugs: canonBugs{Bugs: c.Bugs, FifoRetryLockBusy: c.Bugs.FifoRetryLockBusy, LockFreeTimerFirstPending: c.Bugs.LockFreeTimerFirstPending,
		SameMillisChangeInvisible: c.Bugs.SameMillisChangeInvisible, FifoChangeBelowCommitEmptyHandle: c.Bugs.FifoChangeBelowCommitEmptyHandle}}
	if !c.EnableNotifyAfterPopOrderLockRelease {
		off := false
		e.EnableNotifyAfterPopOrderLockRelease = &off
	}
	e.PopFromRetryProbabilityForPriority, e.RetryChoiceRelease = c.PopFromRetryProbabilityForPriority, c.RetryChoiceRelease
	if !c.PriorityOrderAsc {
		off := false
		e.PriorityOrderAsc = &off
	}
	canonAssignment(&e, c)
	return e
}

// The canonical form's types. Field order and names are part of the hash.
type (
	canonConfig struct {
		Seed           uint64
		Engine         canonEngine
		Topics         []TopicSpec
		Groups         []GroupSpec
		Producers      []canonProducer
		Consumers      []canonConsumer
		Network        canonNetwork
		Faults         canonFaults
		Swarm          bool
		Duration       int64
		Warmup         int64
		DrainBudget    int64
		EventBudget    int64
		SampleInterval int64
		Start          int64
		// Another engine than rocketmq: its kind and its section (absent
		// for rocketmq, whose section is Engine).
		EngineKind     string         `json:",omitempty"`
		EngineSettings EngineSettings `json:",omitempty"`
		// The broker cost model, when on (absent without one).
		Broker *canonBroker `json:",omitempty"`
		// Brokers is broker.count when above 1 (absent with one broker).
		Brokers int32 `json:",omitempty"`
	}
	// canonBroker is BrokerSpec with its distributions as text.
	canonBroker struct {
		Cores, SendThreads, PullThreads, AckThreads, ManageThreads int
		Put, Pop, Ack, Change, Pull, Offset, Tick, Work            string
	}
	canonProducer struct {
		Topic, Arrivals, Tags string
		Count                 int
		QueueSelect           string
		// Added later: present only when set.
		Properties string `json:",omitempty"`
	}
	canonConsumer struct {
		Kind                     string
		Group, Topic, Expression string
		Count, Threads           int
		Batch                    int32
		InvisibleTime, PollTime  int64
		Processing, Outcomes     string
		MaxReconsumeTimes        int32
		FlowControl              int
		AutoRenew                bool
		CommitInterval           int64
		// The settings of a kind that came after the union form
		// (kafka-share, sqs); absent for the others.
		Settings ConsumerSettings `json:",omitempty"`
		// Added later: present only when not the default.
		SuspendCurrentQueueTime int64  `json:",omitempty"`
		Reentrant               bool   `json:",omitempty"`
		ConsumeBatch            int32  `json:",omitempty"` // consumeMessageBatchMaxSize when not 1
		BatchAck                bool   `json:",omitempty"`
		ClientRebalanceOff      bool   `json:",omitempty"` // clientRebalance false
		ExpressionType          string `json:",omitempty"` // when not TAG
	}
	canonNetwork struct {
		RequestLatency, ResponseLatency  string
		RequestTimeout, PollTimeoutSlack int64
	}
	canonFaults struct {
		SiteEnablePPM        int64
		CrashEvery           int64
		RestartDelay         string
		PauseEvery           int64
		PauseDuration        string
		SlowEvery            int64
		SlowDuration         string
		SlowFactor           int64
		Loss                 map[string]canonLoss
		RenewSameDeadlinePPM int64
		RenewAtExpiryPPM     int64
		RenewAfterRevivePPM  int64
		BrokerRestartEvery   int64
		RevivePutFailurePPM  int64
		ClockSkew            int64
		DuplicateDeliveryPPM int64 `json:",omitempty"`
		LockBusyPPM          int64 `json:",omitempty"` // added later: present only when on
		// Added later: only when set, so that earlier hashes keep their meaning.
		ReviveReadFailurePPM int64 `json:",omitempty"`
		BrokerStopEvery      int64 `json:",omitempty"`
	}
	canonLoss struct{ RequestPPM, ResponsePPM int64 }
)

// canonical is c (defaults applied) in the canonical form.
func (c Config) canonical() canonConfig {
	k := canonConfig{
		Seed: c.Seed, Topics: c.Topics, Groups: c.Groups,
		Network: canonNetwork{
			RequestLatency: c.Network.RequestLatency.String(), ResponseLatency: c.Network.ResponseLatency.String(),
			RequestTimeout: int64(c.Network.RequestTimeout), PollTimeoutSlack: int64(c.Network.PollTimeoutSlack),
		},
		Faults: c.Faults.canonical(&c.Network.Loss), Swarm: c.Faults.Swarm,
		Duration: int64(c.Duration), Warmup: int64(c.Warmup), DrainBudget: int64(c.Drain),
		EventBudget: c.EventBudget, SampleInterval: int64(c.SampleInterval), Start: int64(c.Start),
	}
	if cfg, ok := c.Engine.Settings.(*pop.Config); ok {
		k.Engine = canonEngineOf(cfg)
	} else {
		k.EngineKind, k.EngineSettings = string(c.Engine.Kind), c.Engine.Settings
	}
	if n := c.Broker.brokers(); n > 1 {
		k.Brokers = n
	}
	if b := &c.Broker; b.on() {
		d := func(x workload.DistSpec) string {
			if x.IsZero() {
				return ""
			}
			return x.String()
		}
		k.Broker = &canonBroker{Cores: b.Cores, SendThreads: b.SendThreads, PullThreads: b.PullThreads, AckThreads: b.AckThreads,
			ManageThreads: b.ManageThreads, Put: d(b.Costs.Put), Pop: d(b.Costs.Pop), Ack: d(b.Costs.Ack), Change: d(b.Costs.Change),
			Pull: d(b.Costs.Pull), Offset: d(b.Costs.Offset), Tick: d(b.Costs.Tick), Work: b.Costs.Work.String()}
	}
	for _, p := range c.Producers {
		tags := ""
		if p.Tags.Names()[0] != "" {
			tags = p.Tags.String()
		}
		props := ""
		if !p.Properties.IsZero() {
			props = p.Properties.String()
		}
		k.Producers = append(k.Producers, canonProducer{Topic: p.Topic, Arrivals: p.Arrivals.String(), Tags: tags, Count: p.Count, QueueSelect: p.QueueSelect, Properties: props})
	}
	for _, s := range c.Consumers {
		k.Consumers = append(k.Consumers, s.canonical())
	}
	return k
}

// canonical is the consumer in the old union form: a setting the kind
// does not have takes the value every kind used to default it to.
func (s *ConsumerSpec) canonical() canonConsumer {
	k := canonConsumer{
		Kind: string(s.Kind), Group: s.Group, Topic: s.Topic, Expression: s.Expression,
		Count: s.Count, Threads: s.Threads, Batch: s.Batch,
		Processing: s.Processing.String(), Outcomes: s.Outcomes.String(),
		InvisibleTime: int64(60 * 1_000_000), MaxReconsumeTimes: 16, FlowControl: 96, CommitInterval: 5_000_000,
	}
	if !s.Outcomes.CanFail() {
		k.Outcomes = "outcomes()"
	}
	if s.ExpressionType != filter.TypeTag {
		k.ExpressionType = s.ExpressionType
	}
	switch set := s.Settings.(type) {
	case *PopPushSettings:
		k.InvisibleTime, k.PollTime = int64(set.InvisibleTime), int64(set.PollTime)
		k.MaxReconsumeTimes, k.FlowControl = set.MaxReconsumeTimes, set.PopThresholdForQueue
		if set.SuspendCurrentQueueTime != clock.Second {
			k.SuspendCurrentQueueTime = int64(set.SuspendCurrentQueueTime)
		}
		if set.ConsumeMessageBatchMaxSize > 1 {
			k.ConsumeBatch = set.ConsumeMessageBatchMaxSize
		}
		k.BatchAck = set.BatchAck
		k.ClientRebalanceOff = !set.ClientRebalance.On()
	case *SimpleSettings:
		k.InvisibleTime, k.PollTime, k.AutoRenew = int64(set.InvisibleTime), int64(set.PollTime), set.AutoRenew
		k.Reentrant = set.Reentrant
	case *PullSettings:
		k.PollTime, k.MaxReconsumeTimes, k.CommitInterval = int64(set.PollTime), set.MaxReconsumeTimes, int64(set.CommitInterval)
	default:
		k.Settings = set
	}
	return k
}

func (f *FaultSpec) canonical(loss *LossSpec) canonFaults {
	k := canonFaults{
		SiteEnablePPM: int64(f.SiteEnable),
		CrashEvery:    int64(f.Crash.Every), RestartDelay: f.Crash.RestartDelay.String(),
		PauseEvery: int64(f.Pause.Every), PauseDuration: f.Pause.Duration.String(),
		SlowEvery: int64(f.Slow.Every), SlowDuration: f.Slow.Duration.String(), SlowFactor: f.Slow.Factor,
		RenewSameDeadlinePPM: int64(f.Renew.SameDeadline), RenewAtExpiryPPM: int64(f.Renew.AtExpiry),
		RenewAfterRevivePPM: int64(f.Renew.AfterRevive),
		BrokerRestartEvery:  int64(f.BrokerRestart.Every), RevivePutFailurePPM: int64(f.RevivePutFailure),
		ClockSkew: int64(f.ClockSkew), DuplicateDeliveryPPM: int64(f.DuplicateDelivery), LockBusyPPM: int64(f.LockBusy),
		ReviveReadFailurePPM: int64(f.ReviveReadFailure), BrokerStopEvery: int64(f.BrokerStop.Every),
	}
	for i, p := range loss.pairs() {
		if p.Request != 0 || p.Response != 0 {
			if k.Loss == nil {
				k.Loss = map[string]canonLoss{}
			}
			k.Loss[lossKinds[i]] = canonLoss{int64(p.Request), int64(p.Response)}
		}
	}
	return k
}

// canonAssignment puts the queue assignment keys that differ from their
// defaults in the canonical form.
func canonAssignment(e *canonEngine, c *pop.Config) {
	if !c.ServerLoadBalancerEnable {
		off := false
		e.ServerLoadBalancerEnable = &off
	}
	if c.DefaultMessageRequestMode != pop.RequestModePull {
		e.DefaultMessageRequestMode = c.DefaultMessageRequestMode
	}
	if c.DefaultPopShareQueueNum != -1 {
		n := c.DefaultPopShareQueueNum
		e.DefaultPopShareQueueNum = &n
	}
}
