package sim

import (
	"math"
	"slices"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// clusterConfig is allFaultFamilies' run of one consumer kind on three
// brokers of 4 queues each (12 queues in the cluster's numbering).
func clusterConfig(seed uint64, kind ConsumerKind, orderly bool) Config {
	cfg := allFaultFamilies(seed)
	cfg.Broker.Count = 3
	cfg.Topics[0].Queues = 4
	cfg.Consumers[0].Kind = kind
	if orderly {
		cfg.Groups = []GroupSpec{{Name: cfg.Consumers[0].Group, ConsumeMessageOrderly: true}}
	}
	return cfg
}

// Every consumer kind runs on three brokers under every fault family with
// no violation; messages are produced to and delivered from every queue of
// every broker; lease ids stay dense (the checker's lease window would
// report a gap); each fault restart hits one broker.
func TestSeveralBrokersRunClean(t *testing.T) {
	for _, tc := range []struct {
		kind    ConsumerKind
		orderly bool
	}{{PopPush, false}, {Simple, false}, {Pull, false}, {PopPush, true}} {
		name := string(tc.kind)
		if tc.orderly {
			name += "-orderly"
		}
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				r, err := Run(clusterConfig(seed, tc.kind, tc.orderly), RunOptions{KeepEvents: true})
				if err != nil {
					t.Fatal(err)
				}
				noViolations(t, r)
				produced, delivered := map[int32]int{}, map[int32]int{}
				var restarts int
				for _, e := range r.Events {
					switch {
					case e.Kind == model.EvProduce:
						produced[e.Queue]++
					case e.Kind == model.EvDeliver && e.Topic == "orders":
						delivered[e.Queue]++
					case e.Kind == model.EvBrokerRestart:
						restarts++
					}
				}
				for q := int32(0); q < 12; q++ {
					if produced[q] == 0 || delivered[q] == 0 {
						t.Errorf("seed %d: queue %d: %d produced, %d delivered; want every queue of the 3 brokers used", seed, q, produced[q], delivered[q])
					}
				}
				if len(produced) != 12 {
					t.Errorf("seed %d: produced to queues %v, want 0..11", seed, produced)
				}
				if restarts == 0 && r.Summary.Coverage["broker-restart"] > 0 {
					t.Errorf("seed %d: broker restarts covered but none traced", seed)
				}
			}
		})
	}
}

// A restart of broker-b loses the leases of broker-b's queues only
// (queues 4..7 of the topic, its retry topic's queue 1), and the other
// brokers' consumers carry on.
func TestBrokerRestartHitsOneBroker(t *testing.T) {
	cfg := clusterConfig(1, PopPush, false)
	cfg.Faults = FaultSpec{}
	cfg.Network.Loss = LossSpec{}
	cfg.Consumers[0].Processing = dist("const(2s)") // leases in flight at the restart
	pc := pop.DefaultConfig()
	pc.EnablePopBufferMerge = true // the restart loses the cache's records: their leases
	cfg.Engine.Settings = &pc
	sc := Schedule{{At: 5 * clock.Second, Kind: FaultBrokerRestart, Broker: 1}}
	r, err := RunScheduled(cfg, sc, RunOptions{KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, r)
	if !strings.Contains(strings.Join(r.Header, "\n"), "restart broker broker-b") {
		t.Errorf("header %q does not name broker-b's restart", r.Header)
	}
	where := map[model.LeaseID]model.Event{}
	lost := 0
	for _, e := range r.Events {
		switch {
		case e.Kind == model.EvLease:
			where[e.Lease] = e
		case e.Kind == model.EvLeaseLost && e.Reason == model.RRestart:
			lost++
			l := where[e.Lease]
			if l.Topic == "orders" && (l.Queue < 4 || l.Queue > 7) {
				t.Errorf("restart of broker-b lost lease %d of queue %d, which is not broker-b's (4..7)", e.Lease, l.Queue)
			}
		}
	}
	if lost == 0 {
		t.Fatal("the restart lost no lease: nothing was in flight on broker-b; the test proves nothing")
	}
	sc[0].Broker = 3
	if _, err := RunScheduled(cfg, sc, RunOptions{}); err == nil || !strings.Contains(err.Error(), "want 0..2") {
		t.Errorf("a restart of broker 3 of 3: err %v, want one naming 0..2", err)
	}
}

// Each broker has its own cost model: one core per broker at a load one
// broker's core cannot carry alone is shared by two, each about half as
// busy, and the summary adds them up.
func TestSeveralBrokersCostModel(t *testing.T) {
	spec := BrokerSpec{Cores: 1, SendThreads: 1, Costs: BrokerCosts{Put: dist("const(500us)")}}
	one := brokerConfig("poisson(1000/s)", spec)
	r1, err := Run(one, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec.Count = 2
	two := brokerConfig("poisson(1000/s)", spec)
	r2, err := Run(two, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, r1)
	noViolations(t, r2)
	u1, u2 := r1.Summary.Broker, r2.Summary.Broker
	if len(u2.Brokers) != 2 || u2.Cores != 2 || len(u1.Brokers) != 0 {
		t.Fatalf("usage: one broker %+v, two %+v; want two per-broker entries and 2 cores", u1, u2)
	}
	for i, b := range u2.Brokers {
		if math.Abs(b.Utilization-0.25) > 0.03 {
			t.Errorf("broker %d: busy %.3f, want about 0.25 (half of one broker's 0.5)", i, b.Utilization)
		}
	}
	if math.Abs(u1.Utilization-0.5) > 0.03 || math.Abs(u2.Utilization-0.25) > 0.03 {
		t.Errorf("cluster busy: one broker %.3f, two %.3f; want 0.5 and 0.25", u1.Utilization, u2.Utilization)
	}
	if w1, w2 := u1.Pools[poolSend].QueueDelay.Mean, u2.Pools[poolSend].QueueDelay.Mean; w2 >= w1 {
		t.Errorf("mean put wait: one broker %d µs, two %d µs; want less with two", w1, w2)
	}
}

// One broker, given as broker.count 1, is the run it always was, byte for
// byte.
func TestOneBrokerCountIsTheDefault(t *testing.T) {
	cfg := allFaultFamilies(3)
	r0, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Broker.Count = 1
	r1, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r0.Summary.TraceXXH3 != r1.Summary.TraceXXH3 {
		t.Errorf("trace %s with broker.count 1, %s without", r1.Summary.TraceXXH3, r0.Summary.TraceXXH3)
	}
}

func TestBrokerCountValidation(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Broker.Count = 65 }, "broker.count"},
		{func(c *Config) { c.Broker.Count = -1 }, "broker.count"},
		{func(c *Config) {
			c.Broker.Count = 2
			c.Engine.Kind = SQSStandard
		}, "only the rocketmq engine"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		if _, err := cfg.WithDefaults().layout(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want one naming %q", err, tc.want)
		}
	}
}

// Broker-assigned queues over two brokers: the route's queues are
// allocated as one list (broker-a's, then broker-b's), so with 4 clients
// on 2 brokers × 2 queues and popShareQueueNum 1, client i pops queues i
// and i+1 (mod 4) of the cluster's numbering, each pop going to the
// broker that holds the queue.
func TestAssignedQueuesOverTwoBrokers(t *testing.T) {
	cfg := assignedConfig(4, 2, 1)
	cfg.Broker.Count = 2
	r := runKeep(t, cfg)
	noViolations(t, r)
	if r.Summary.Acked != r.Summary.Produced || r.Summary.Produced == 0 {
		t.Fatalf("produced %d, acked %d", r.Summary.Produced, r.Summary.Acked)
	}
	want := [][]int32{{0, 1}, {1, 2}, {2, 3}, {0, 3}}
	if got := queuesOf(r, 4, clock.Epoch.Add(30*clock.Second)); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("assignments %v, want %v", got, want)
	}
	popped := map[int32]bool{}
	for _, e := range only(r, model.EvLease) {
		if e.Topic == "t" {
			popped[e.Queue] = true
		}
	}
	for q := int32(0); q < 4; q++ {
		if !popped[q] {
			t.Errorf("no lease on queue %d: want every queue of both brokers popped", q)
		}
	}
}
