package sim

import (
	"math"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/pop"
)

// brokerConfig is one producer at rate and 4 fast pop-push consumers, no
// network delay and no faults: the broker is the only place a put waits.
func brokerConfig(rate string, b BrokerSpec) Config {
	return Config{
		Seed:      1,
		Duration:  40 * clock.Second,
		Topics:    []TopicSpec{{Name: "t", Queues: 4}},
		Producers: []ProducerSpec{{Topic: "t", Arrivals: arrivals(rate)}},
		Consumers: []ConsumerSpec{{Group: "g", Topic: "t", Count: 4, Threads: 8, Processing: dist("const(1ms)")}},
		Network:   NetworkSpec{RequestLatency: dist("const(0s)"), ResponseLatency: dist("const(0s)")},
		Broker:    b,
	}
}

// Puts on one core with one send thread, and no other request costing
// anything, are an M/G/1 queue: Poisson arrivals (the producer's), the
// put's cost as service. Its mean wait is Pollaczek-Khinchine's
// λE[S²]/(2(1-ρ)): at λ = 1000/s and S = 500 µs (ρ = 0.5), 250 µs when S is
// constant (M/D/1) and 500 µs when it is exponential (M/M/1).
func TestBrokerPutsAreMG1(t *testing.T) {
	for _, tc := range []struct {
		cost string
		want float64 // mean wait, µs
	}{{"const(500us)", 250}, {"exp(500us)", 500}} {
		cfg := brokerConfig("poisson(1000/s)", BrokerSpec{Cores: 1, SendThreads: 1, Costs: BrokerCosts{Put: dist(tc.cost)}})
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		noViolations(t, r)
		u := r.Summary.Broker
		if u == nil || len(u.Pools) == 0 || u.Pools[poolSend].Requests < 30_000 {
			t.Fatalf("%s: broker usage %+v, want the send pool's ~40 000 puts", tc.cost, u)
		}
		p := u.Pools[poolSend]
		if got := float64(p.QueueDelay.Mean); math.Abs(got-tc.want)/tc.want > 0.1 {
			t.Errorf("%s: mean put wait %.0f µs over %d puts, want %.0f µs within 10%%", tc.cost, got, p.Requests, tc.want)
		}
		if math.Abs(u.Utilization-0.5) > 0.02 || math.Abs(p.Utilization-0.5) > 0.02 {
			t.Errorf("%s: cores busy %.3f, send threads busy %.3f, want 0.5 (λS)", tc.cost, u.Utilization, p.Utilization)
		}
		if at := r.Summary.Breakdown.Part("at_broker"); at.Count == 0 || at.Mean < int64(tc.want*0.8) {
			t.Errorf("%s: the breakdown's at-broker part %+v, want at least the put's wait", tc.cost, at.Latency)
		}
	}
}

// A broker with costs is deterministic, draws its service times from its
// own stream (the producers' draws do not move: every message is still
// produced), and a run without one has no broker section and no
// at-broker part.
func TestBrokerCostsDeterministicAndOptional(t *testing.T) {
	b := BrokerSpec{Cores: 2, Costs: BrokerCosts{Put: dist("exp(200us)"), Pop: dist("exp(300us)"), Ack: dist("const(100us)"),
		Work: WorkCosts{{Name: "read_messages", Per: 20 * clock.Microsecond}, {Name: "record_puts", Per: 30 * clock.Microsecond}}}}
	on := brokerConfig("poisson(500/s)", b)
	on.Duration = 10 * clock.Second
	r1, err := Run(on, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Run(on, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Summary.TraceXXH3 != r2.Summary.TraceXXH3 {
		t.Fatal("the same seed with broker costs gave two traces")
	}
	noViolations(t, r1)
	off := on
	off.Broker = BrokerSpec{}
	r0, err := Run(off, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r0.Summary.Produced != r1.Summary.Produced {
		t.Errorf("produced %d without costs, %d with: the costs moved the producers' draws", r0.Summary.Produced, r1.Summary.Produced)
	}
	if r0.Summary.Broker != nil || r0.Summary.Breakdown.Part("at_broker").Count != 0 || len(r0.Summary.Breakdown.Parts) != 5 {
		t.Errorf("a run without a cost model has broker %+v and parts %d", r0.Summary.Broker, len(r0.Summary.Breakdown.Parts))
	}
	if on.SHA256() == off.SHA256() {
		t.Error("the broker section does not enter the config hash")
	}
	u := r1.Summary.Broker
	if u == nil || u.Pools[poolPull].Requests == 0 || u.Pools[poolAck].Requests == 0 || u.Pools[poolPull].Service.Mean < 250 {
		t.Fatalf("broker usage %+v: want pops (300 µs and their reads) and acks served", u)
	}
}

func TestBrokerSpecValidation(t *testing.T) {
	bad := []struct {
		b    BrokerSpec
		want string
	}{
		{BrokerSpec{AckThreads: 3}, "without cores"},
		{BrokerSpec{Costs: BrokerCosts{Put: dist("const(1ms)")}}, "without cores"},
		{BrokerSpec{Cores: 2000}, "broker.cores"},
		{BrokerSpec{Cores: 2, AckThreads: 5000}, "broker.ackMessageThreadPoolNums"},
	}
	for _, tc := range bad {
		cfg := brokerConfig("poisson(10/s)", tc.b)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.b, err, tc.want)
		}
	}
	var w WorkCosts
	for _, text := range []string{"read_messages", "a:1ms,a:2ms", "a:-1ms", "a:soon"} {
		if err := w.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("work costs %q accepted", text)
		}
	}
	if err := w.UnmarshalText([]byte("read_messages:3us, record_puts:8us")); err != nil || w.String() != "read_messages:3us,record_puts:8us" {
		t.Errorf("work costs read back as %q (%v)", w.String(), err)
	}
}

func TestBrokerWorkCostsNameCounters(t *testing.T) {
	cfg := brokerConfig("poisson(10/s)", BrokerSpec{Cores: 1, Costs: BrokerCosts{Work: WorkCosts{{Name: "disk_seeks", Per: clock.Microsecond}}}})
	cfg.Duration = clock.Second
	if _, err := Run(cfg, RunOptions{}); err == nil || !strings.Contains(err.Error(), `"disk_seeks" is not a counter`) || !strings.Contains(err.Error(), "read_messages") {
		t.Errorf("an unknown work counter: error %v, want one naming it and the counters there are", err)
	}
}

// The KV path's pops take one lock per group@topic, held for their whole
// service: with pops slower than the gaps between them, pops wait for it.
// The checkpoint path locks a queue only while reading it, which an
// all-queue pop does not hold for its service: no pop waits.
func TestBrokerPopLockPerPath(t *testing.T) {
	for _, kv := range []bool{true, false} {
		cfg := brokerConfig("poisson(2000/s)", BrokerSpec{Cores: 8, Costs: BrokerCosts{Pop: dist("const(1ms)")}})
		cfg.Duration = 3 * clock.Second
		pc := pop.DefaultConfig()
		pc.PopConsumerKVServiceEnable = kv
		cfg.Engine = EngineSpec{Kind: RocketMQ, Settings: &pc}
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		noViolations(t, r)
		waits := r.Summary.Broker.LockWaits
		if kv && (waits == 0 || r.Summary.Broker.LockWait.Mean == 0) {
			t.Errorf("KV path: %d pops waited for the group@topic lock, want some", waits)
		}
		if !kv && waits != 0 {
			t.Errorf("checkpoint path: %d pops waited for a lock, want none", waits)
		}
	}
}

// An overloaded broker (puts arrive twice as fast as it stores them) still
// stores and delivers every message the producers sent, as without the
// cost model: the drain waits out the queued puts (retrying counts work at
// the broker).
func TestBrokerDrainWaitsForQueuedPuts(t *testing.T) {
	cfg := brokerConfig("poisson(2000/s)", BrokerSpec{Cores: 1, SendThreads: 1, Costs: BrokerCosts{Put: dist("const(1ms)")}})
	cfg.Duration = 2 * clock.Second
	on, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, on)
	cfg.Broker = BrokerSpec{}
	off, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if on.Summary.Produced != off.Summary.Produced || on.Summary.Acked != on.Summary.Produced {
		t.Errorf("overloaded broker: %d produced, %d acked; without costs %d produced", on.Summary.Produced, on.Summary.Acked, off.Summary.Produced)
	}
}
