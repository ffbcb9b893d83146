package scenarios

import (
	"popsim/clock"
	"popsim/pop"
)

// Spec is a decoded scenario file. The yaml tag is the key in the file and
// the range tag its allowed values. A key left out takes the default
// documented in doc.go (mostly the simulator's: a zero value here means
// "sim's default").
type Spec struct {
	Name        string `yaml:"name"`        // [a-z0-9-], the folder name of its runs
	Description string `yaml:"description"` // its first line is what `popsim list` prints
	Seed        uint64 `yaml:"seed"`        // the seed of `popsim run` without -seed (default 1)
	Seeds       Seeds  `yaml:"seeds"`       // the seeds of sweeps, plans and tests: 1..20 (default: seed)

	Duration       Duration `yaml:"duration" range:"1ms..720h"`           // safety phase: production and faults
	Warmup         Duration `yaml:"warmup" range:"1us..720h"`             // excluded from latency and throughput (default duration/10)
	Drain          Duration `yaml:"drain" range:"1s..720h"`               // liveness budget: faults off, everything must settle (default 10m)
	EventBudget    int64    `yaml:"eventBudget" range:"1..1000000000000"` // the run fails loudly past this many events (default 200M)
	SampleInterval Duration `yaml:"sampleInterval" range:"10ms..720h"`    // time-series resolution (default 1s)

	Topics    []Topic    `yaml:"topics"`
	Groups    []Group    `yaml:"groups"`
	Producers []Producer `yaml:"producers"`
	Consumers []Consumer `yaml:"consumers"`
	Engine    Engine     `yaml:"engine"`
	Network   Network    `yaml:"network"`
	Faults    Faults     `yaml:"faults"`
}

// Topic is a topic and its queue count (read = write queues).
type Topic struct {
	Name   string `yaml:"name"`
	Queues int32  `yaml:"queues" range:"1..1024"` // default 8 (RocketMQ's defaultTopicQueueNums)
}

func (t *Topic) setDefaults() { t.Queues = 8 }

// Group is a subscription group (SubscriptionGroupConfig).
type Group struct {
	Name          string `yaml:"name"`
	RetryMaxTimes int32  `yaml:"retryMaxTimes" range:"1..64"` // default 16; the proxy's maxAttempts is this + 1
}

// Producer is Count identical open-loop producers on one topic.
type Producer struct {
	Topic       string   `yaml:"topic"`
	Arrivals    Arrivals `yaml:"arrivals"`              // per producer: poisson(1000/s), const(..), onoff(..), ramp(..), backlog(N), limit(..)
	Tags        Tags     `yaml:"tags"`                  // tags(TagA:3,TagB:1); none by default
	Count       int      `yaml:"count" range:"1..1000"` // default 1
	QueueSelect string   `yaml:"queueSelect"`           // round-robin (default, RocketMQ's selector) or random
}

// Consumer kinds.
const (
	KindPopPush = "pop-push" // remoting push consumer in POP mode
	KindSimple  = "simple"   // gRPC SimpleConsumer through the proxy
	KindPull    = "pull"     // classic queue-owning consumer: rebalanced queues, offsets committed
)

// Consumer is Count identical consumer clients of one group on one topic.
type Consumer struct {
	Kind              string   `yaml:"kind"` // pop-push (default), simple or pull
	Group             string   `yaml:"group"`
	Topic             string   `yaml:"topic"`
	Expression        string   `yaml:"expression"`                             // subscription tag expression (default *)
	Count             int      `yaml:"count" range:"1..10000"`                 // client instances (default 1)
	Threads           int      `yaml:"threads" range:"1..1024"`                // consume threads per client (default 20)
	Batch             int32    `yaml:"batch" range:"1..32"`                    // popBatchNums / maxMsgNums / pull batch (default 32)
	InvisibleTime     Duration `yaml:"invisibleTime" range:"5s..12h"`          // pop-push 5s..300s, simple 10s..12h (default 60s)
	PollTime          Duration `yaml:"pollTime" range:"1s..60s"`               // long polling: pop-push/pull 1s..60s (15s), simple 5s..20s (20s)
	Processing        Dist     `yaml:"processing"`                             // processing time per message (default exp(10ms))
	Outcomes          Outcomes `yaml:"outcomes"`                               // listener outcomes (default all success)
	MaxReconsumeTimes int32    `yaml:"maxReconsumeTimes" range:"1..1000"`      // pop-push and pull (default 16)
	FlowControl       int      `yaml:"popThresholdForQueue" range:"1..100000"` // pop-push: waiting-ack count that delays the next pop (default 96)
	AutoRenew         bool     `yaml:"autoRenew"`                              // simple: the proxy renews leases while processing
	CommitInterval    Duration `yaml:"commitInterval" range:"100ms..60s"`      // pull: offset persistence period (default 5s)
}

func (c *Consumer) setDefaults() { c.Kind = KindPopPush }

// defaultSpec is the Spec before a file is decoded over it.
func defaultSpec() Spec {
	return Spec{
		Seed:     1,
		Duration: Duration(60 * clock.Second),
		Engine:   engineFrom(pop.DefaultConfig()),
	}
}
