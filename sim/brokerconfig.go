package sim

import (
	"fmt"
	"slices"
	"strings"

	"popsim/clock"
	"popsim/workload"
)

// BrokerSpec is the broker's own limits (docs/calibration.md): its CPU
// cores, its request thread pools (RocketMQ's executors, by their
// BrokerConfig names) and what each request and each unit of store work
// costs. Cores 0, the default, is no cost model: broker work takes no
// time and nothing contends; the other keys must then be left out.
//
// With cores, a request that reaches the broker takes a thread of its
// pool (FIFO), a pop then its pop lock, then a core (FIFO across pools);
// the engine serves it when it gets the core, and its answer leaves when
// its service time is over. The service time is its kind's cost plus the
// cost of the store work the engine reports the call did.
type BrokerSpec struct {
	// Count is the number of brokers (1..64; 0 is 1): each holds every
	// topic with topics[].queues queues (RocketMQ creates a topic on each
	// broker of its cluster), producers and the Pull baseline spread over
	// all of them, each pop-push consumer pops each broker, each simple
	// consumer's receives go to the brokers in turn, and a broker restart
	// or stop hits one broker (route.go). Only the rocketmq engine has
	// several. With a cost model every broker has its own cores, pools and
	// locks, as configured here.
	Count int `yaml:"count"`
	Cores int // 0 (no cost model) or 1..1024
	// The thread pools. sendMessageExecutor: puts (default min(cores, 4));
	// pullMessageExecutor: pops, receives and pulls (16 + 2 × cores);
	// ackMessageExecutor: acks and changeInvisibleTime (3);
	// consumerManageExecutor: consumer offset queries and commits, group
	// heartbeats (32). Each 1..1024.
	SendThreads   int `yaml:"sendMessageThreadPoolNums"`
	PullThreads   int `yaml:"pullMessageThreadPoolNums"`
	AckThreads    int `yaml:"ackMessageThreadPoolNums"`
	ManageThreads int `yaml:"consumerManageThreadPoolNums"`
	Costs         BrokerCosts
}

// BrokerCosts is the service time of each request kind (a distribution,
// e.g. const(50us); zero: none), of each run of the broker's periodic
// work, and of each unit of the store work the engine reports (its
// engine_counters, e.g. read_messages:3us,record_puts:8us). The request
// kinds are engine-neutral: a Kafka ShareFetch and an SQS ReceiveMessage
// are pops, ShareAcknowledge and DeleteMessage acks, ChangeMessageVisibility
// a change. The store work per POP path is in the counters each path
// reports (the KV path's record_*; the checkpoint path's ck_puts,
// ack_puts, revive_reads).
type BrokerCosts struct {
	Put, Pop, Ack, Change, Pull, Offset workload.DistSpec
	Tick                                workload.DistSpec // each run of a periodic job
	Work                                WorkCosts
}

// WorkCosts is the cost of one unit of each kind of store work, by the
// engine's counter name; its text form is name:duration, comma-separated
// (read_messages:3us,record_puts:8us).
type WorkCosts []WorkCost

// WorkCost is the cost of one unit of the counter Name.
type WorkCost struct {
	Name string
	Per  clock.Duration
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (w *WorkCosts) UnmarshalText(b []byte) error {
	var out WorkCosts
	for item := range strings.SplitSeq(string(b), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, d, ok := strings.Cut(item, ":")
		if !ok || name == "" {
			return fmt.Errorf("%q: want counter:duration, comma-separated (read_messages:3us,record_puts:8us)", item)
		}
		per, err := clock.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return fmt.Errorf("%q: %v", item, err)
		}
		if per < 0 {
			return fmt.Errorf("%q: a negative cost", item)
		}
		name = strings.TrimSpace(name)
		if slices.ContainsFunc(out, func(c WorkCost) bool { return c.Name == name }) {
			return fmt.Errorf("%q: the counter %s is given twice", item, name)
		}
		out = append(out, WorkCost{Name: name, Per: per})
	}
	*w = out
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (w WorkCosts) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

func (w WorkCosts) String() string {
	parts := make([]string, len(w))
	for i, c := range w {
		t, _ := c.Per.MarshalText()
		parts[i] = c.Name + ":" + string(t)
	}
	return strings.Join(parts, ",")
}

// IsZero reports whether the section is left out (no cost model, nothing
// set): the effective configuration then omits it.
func (b BrokerSpec) IsZero() bool {
	return b.Count == 0 && b.Cores == 0 && b.SendThreads == 0 && b.PullThreads == 0 && b.AckThreads == 0 && b.ManageThreads == 0 && b.Costs.zero()
}

// IsZero reports whether no work cost is given.
func (w WorkCosts) IsZero() bool { return len(w) == 0 }

// brokers is the number of brokers (Count, 0 meaning 1).
func (b *BrokerSpec) brokers() int32 { return int32(max(b.Count, 1)) }

// on reports whether the broker has a cost model.
func (b *BrokerSpec) on() bool { return b.Cores > 0 }

// defaults fills the thread pools from the cores, as BrokerConfig sizes
// them from the processor count.
func (b *BrokerSpec) defaults() {
	if !b.on() {
		return
	}
	def(&b.SendThreads, min(b.Cores, 4))
	def(&b.PullThreads, 16+2*b.Cores)
	def(&b.AckThreads, 16) // 16 since RocketMQ 5.3.0 (apache/rocketmq#8337; 3 before)
	def(&b.ManageThreads, 32)
}

func (l *layout) checkBroker(v *validator) {
	b := &l.cfg.Broker
	if b.Count != 0 {
		v.intIn("broker.count", int64(b.Count), 1, 64)
		if b.Count > 1 && l.cfg.Engine.Kind != RocketMQ {
			v.add("broker.count", "1 for the "+string(l.cfg.Engine.Kind)+" engine", "%d brokers: only the rocketmq engine is simulated with several brokers", b.Count)
		}
	}
	if !b.on() {
		if b.Cores < 0 {
			v.intIn("broker.cores", int64(b.Cores), 0, 1024)
		}
		if b.SendThreads != 0 || b.PullThreads != 0 || b.AckThreads != 0 || b.ManageThreads != 0 || !b.Costs.zero() {
			v.add("broker", "cores 1..1024 with threads or costs", "threads or costs without cores: set broker.cores to turn the cost model on")
		}
		return
	}
	v.intIn("broker.cores", int64(b.Cores), 1, 1024)
	v.intIn("broker.sendMessageThreadPoolNums", int64(b.SendThreads), 1, 1024)
	v.intIn("broker.pullMessageThreadPoolNums", int64(b.PullThreads), 1, 1024)
	v.intIn("broker.ackMessageThreadPoolNums", int64(b.AckThreads), 1, 1024)
	v.intIn("broker.consumerManageThreadPoolNums", int64(b.ManageThreads), 1, 1024)
	for _, c := range b.Costs.Work {
		v.durIn("broker.costs.work."+c.Name, c.Per, 0, clock.Second, "")
	}
}

func (c *BrokerCosts) zero() bool {
	return c.Put.IsZero() && c.Pop.IsZero() && c.Ack.IsZero() && c.Change.IsZero() && c.Pull.IsZero() &&
		c.Offset.IsZero() && c.Tick.IsZero() && len(c.Work) == 0
}
