package sim

import (
	"testing"

	"popsim/clock"
	"popsim/pop"
)

// runReuse runs cfg to its end with the push consumers' reuse of answered
// pops and finished held messages on or off, and returns the trace hash,
// the violations and how many pops and held messages were recycled.
func runReuse(t *testing.T, cfg Config, reuse bool) (trace string, violations, pops, helds int) {
	t.Helper()
	defer func(old bool) { reuseRequests = old }(reuseRequests)
	reuseRequests = reuse
	s := newTestSim(t, cfg, RunOptions{})
	if err := s.loop(); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.cons {
		if p, ok := c.cl.(*pushConsumer); ok {
			pops += p.recycledPops
			helds += p.recycledHeld
		}
	}
	r, err := s.result()
	if err != nil {
		t.Fatal(err)
	}
	return r.Summary.TraceXXH3, len(r.Summary.Violations), pops, helds
}

// TestPushReuseKeepsTraces: a push consumer reuses a pop once its answer
// is taken, a batch ack once it is served and a held message once it is
// done with it. Reusing either
// while something still refers to it (a parked or late answer, a timeout,
// a renewal, a crash's leftovers) would change what that reference sees,
// so every run must trace the same with reuse on and off (the simple
// consumer's held messages too, which share the push consumer's free
// list: freeHeld), over every
// fault family (crashes, pauses past the pop timeout, losses both ways,
// broker restarts, injected renewals) and the push consumer's shapes:
// listener batches with batch acks, orderly groups, broker-assigned
// queues over two brokers, a broker cost model. With the invariants build
// tag recycled pops and held messages are poisoned instead of reused, so
// any later use of one panics.
func TestPushReuseKeepsTraces(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"faults", func(*Config) {}},
		{"faults swarm", func(c *Config) { c.Faults.Swarm = true }},
		{"batches", func(c *Config) {
			c.Consumers[0].Batch = 8
			set := pushSettings(&c.Consumers[0])
			set.ConsumeMessageBatchMaxSize, set.BatchAck = 3, true
		}},
		{"orderly", func(c *Config) {
			c.Groups = []GroupSpec{{Name: c.Consumers[0].Group, ConsumeMessageOrderly: true}}
		}},
		{"assigned two brokers", func(c *Config) {
			c.Groups = []GroupSpec{{Name: c.Consumers[0].Group, RequestMode: "pop", PopShareQueueNum: 1}}
			pushSettings(&c.Consumers[0]).ClientRebalance = defaultOnFalse
			c.Broker.Count = 2
		}},
		{"late answers", func(c *Config) {
			// Pops time out 1.1 s after they are sent; many answers come
			// later (late-response), after the client gave up on them. The
			// checker's verdicts (this shape breaks some rules) must match
			// too.
			pushSettings(&c.Consumers[0]).PollTime = clock.Second
			c.Network.PollTimeoutSlack = 100 * clock.Millisecond
			c.Network.ResponseLatency = dist("uniform(0s,2s)")
		}},
		{"simple consumers beside", func(c *Config) {
			// Held messages go to one free list for every POP client
			// (the simulator's freeHeld): a push consumer's and the
			// simple consumers' deliveries reuse each other's.
			c.Consumers = append(c.Consumers, ConsumerSpec{Kind: Simple, Group: "simple", Topic: c.Consumers[0].Topic, Count: 3, Threads: 2, Batch: 4, Processing: dist("exp(5ms)"), Outcomes: outcomes("outcomes(reconsume_later=0.1)")})
		}},
		{"broker costs", func(c *Config) {
			c.Broker = BrokerSpec{Cores: 2, Costs: BrokerCosts{Put: dist("exp(200us)"), Pop: dist("exp(300us)"), Ack: dist("const(100us)")}}
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := allFaultFamilies(uint64(i + 1))
			cfg.Duration = 10 * clock.Second
			tc.edit(&cfg)
			on, von, pops, helds := runReuse(t, cfg, true)
			off, voff, _, _ := runReuse(t, cfg, false)
			if on != off || von != voff {
				t.Fatalf("reuse on: trace %s, %d violations; off: trace %s, %d violations", on, von, off, voff)
			}
			if pops == 0 {
				t.Fatal("no pop was recycled")
			}
			if helds == 0 && tc.name != "orderly" {
				t.Fatal("no held message was recycled")
			}
		})
	}
}

// TestPushFillRequestIsFresh: sendPop fills a recycled pop's request by
// its queue and born time only when the same incarnation built it; it
// must then equal a request built whole, and one left
// by an earlier incarnation (a crash renames the client) or a new pop's
// must be rebuilt; its common part must be its own (reqBase). Checked
// on the pops out at the end of a run with crashes that recycled pops,
// and on requests made up to take each branch.
func TestPushFillRequestIsFresh(t *testing.T) {
	cfg := allFaultFamilies(1)
	cfg.Duration = 10 * clock.Second
	s := newTestSim(t, cfg, RunOptions{})
	if err := s.loop(); err != nil {
		t.Fatal(err)
	}
	out, recycled := 0, 0
	for _, c := range s.cons {
		p, ok := c.cl.(*pushConsumer)
		if !ok {
			continue
		}
		recycled += p.recycledPops
		for _, l := range p.loops {
			if r := l.out; r != nil {
				want := p.popRequest(s, l.mq.QueueID)
				want.BornTime = r.req.BornTime
				if r.req != want {
					t.Fatalf("consumer %d: sent %+v, built %+v", c.idx, r.req, want)
				}
				// a recycled pop keeps its common part: sendPop writes it whole
				b := &r.reqBase
				if b.c != c || b.epoch != c.epoch || b.loss != lossPop || !b.reply || b.broker != l.broker || b.done {
					t.Fatalf("consumer %d: a pop out with %+v", c.idx, *b)
				}
				out++
			}
		}
		stale := p.popRequest(s, 5)
		stale.BornTime -= clock.Time(clock.Second)
		old := stale
		old.ClientID += "-old"
		for _, q := range []int32{-1, 3} {
			l := *p.loops[0] // a loop of queue q
			l.mq.QueueID = q
			for _, req := range []pop.PopRequest{{}, stale, old} {
				p.freePops = append(p.freePops, &popReq{req: req}) // the pop sendPop reuses
				if r, want := p.sendPop(s, &l), p.popRequest(s, q); r.req != want {
					t.Fatalf("consumer %d, queue %d: sent %+v, built %+v", c.idx, q, r.req, want)
				}
			}
		}
	}
	if out == 0 || recycled == 0 {
		t.Fatalf("%d pops out, %d recycled: nothing checked", out, recycled)
	}
}
