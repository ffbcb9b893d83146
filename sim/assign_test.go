package sim

import (
	"slices"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// assignedConfig is n push consumers with broker-assigned queues
// (clientRebalance false) on q queues, the group in POP mode with
// popShareQueueNum share, a fixed 1 ms network and no faults.
func assignedConfig(n int, q int32, share int32) Config {
	cfg := tinyConfig(PopPush)
	cfg.Topics[0].Queues = q
	cfg.Groups = []GroupSpec{{Name: "g", RequestMode: "pop", PopShareQueueNum: share}}
	cfg.Producers[0].Arrivals = arrivals("poisson(200/s)")
	cfg.Consumers[0].Count, cfg.Consumers[0].Threads = n, 2
	pushSettings(&cfg.Consumers[0]).ClientRebalance = defaultOnFalse
	cfg.Duration, cfg.Drain = 5*clock.Second, 5*clock.Minute
	return cfg
}

// queuesOf lists, per client, the queues its rebalance events gave it
// (less those dropped, and none after a crash) up to the given time.
func queuesOf(r *Result, n int, until clock.Time) [][]int32 {
	out := make([][]int32, n)
	for _, e := range only(r, model.EvRebalance, model.EvCrash) {
		if e.At > until {
			break
		}
		if e.Kind == model.EvCrash {
			out[e.Client] = nil
			continue
		}
		if e.Reason == model.RDropped {
			out[e.Client] = slices.DeleteFunc(out[e.Client], func(q int32) bool { return q == e.Queue })
			continue
		}
		out[e.Client] = append(out[e.Client], e.Queue)
	}
	for _, qs := range out {
		slices.Sort(qs)
	}
	return out
}

// A consumer that takes its queues from the broker asks 1 s after it
// starts and pops each assigned queue from 500 ms later: with 4 clients
// on 4 queues and popShareQueueNum 1, client i pops queues i and i+1
// (mod 4) with queue-specific pops, and nothing else.
func TestAssignedConsumersPopTheirQueues(t *testing.T) {
	r := runKeep(t, assignedConfig(4, 4, 1))
	if v := r.Summary.Violations; len(v) > 0 {
		t.Fatalf("%d violations, first %s: %s", len(v), v[0].Invariant, v[0].Detail)
	}
	if r.Summary.Acked != r.Summary.Produced || r.Summary.Produced == 0 {
		t.Fatalf("produced %d, acked %d", r.Summary.Produced, r.Summary.Acked)
	}
	want := [][]int32{{0, 1}, {1, 2}, {2, 3}, {0, 3}}
	start := clock.Epoch
	got := queuesOf(r, 4, start.Add(30*clock.Second))
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("assignments %v, want %v", got, want)
	}
	for _, e := range only(r, model.EvRebalance) {
		if e.At != start.Add(clock.Second) && e.At != start.Add(21*clock.Second) && e.At != start.Add(41*clock.Second) {
			t.Fatalf("%v: want rebalances at 1 s and every 20 s after", &e)
		}
	}
	for _, e := range only(r, model.EvReceive) {
		if e.At < start.Add(1500*clock.Millisecond) || !slices.Contains(want[e.Client], e.Queue) {
			t.Fatalf("%v: want pops of the client's queues %v from 1.5 s on", &e, want[e.Client])
		}
	}
}

// The default (clientRebalance true) pops every queue with one all-queue
// pop from the start, whatever the group's mode.
func TestClientRebalanceDefaultPopsEveryQueue(t *testing.T) {
	cfg := assignedConfig(2, 4, 1)
	pushSettings(&cfg.Consumers[0]).ClientRebalance = 0
	r := runKeep(t, cfg)
	if n := len(only(r, model.EvRebalance)); n != 0 {
		t.Fatalf("%d rebalance events, want none", n)
	}
	recv := only(r, model.EvReceive)
	if recv[0].At != clock.Epoch || slices.ContainsFunc(recv, func(e model.Event) bool { return e.Queue != -1 }) {
		t.Fatalf("first receive %v: want all-queue pops from the start", &recv[0])
	}
}

// A crash changes the membership: the broker notifies the others, who
// rebalance at once; the queues a client loses are dropped, and what it
// had popped from them and not yet consumed is let go (expired-local
// r=dropped) and comes back after the invisible time. The restarted
// client rebalances 1 s after it starts. Nothing is lost.
func TestAssignedRebalanceOnCrash(t *testing.T) {
	cfg := assignedConfig(4, 4, 1)
	cfg.Consumers[0].Threads, cfg.Consumers[0].Processing = 1, dist("const(50ms)")
	cfg.Faults.Crash.RestartDelay = dist("const(2s)")
	crashAt := 3 * clock.Second
	r := runKeep(t, cfg, scriptStep{after: crashAt, f: func(s *sim) { s.crash(s.cons[3]) }})
	if v := r.Summary.Violations; len(v) > 0 {
		t.Fatalf("%d violations, first %s: %s", len(v), v[0].Invariant, v[0].Detail)
	}
	if r.Summary.Acked != r.Summary.Produced {
		t.Fatalf("produced %d, acked %d", r.Summary.Produced, r.Summary.Acked)
	}
	at := clock.Epoch.Add(crashAt)
	// Without client 3 (c0, c1, c2 on 4 queues, AVG 0-1 | 2 | 3): c0
	// pops 0-2, c1 2-3, c2 3 and 0-1.
	if got, want := queuesOf(r, 4, at), [][]int32{{0, 1, 2}, {2, 3}, {0, 1, 3}, nil}; !slices.EqualFunc(got[:3], want[:3], slices.Equal) {
		t.Fatalf("after the crash: %v, want %v", got[:3], want[:3])
	}
	// Back with a new client id (c3-2 sorts where c3-0 did): the first
	// assignment again, the restarted client's 1 s after its start.
	restart := at.Add(2 * clock.Second)
	if got, want := queuesOf(r, 4, restart.Add(clock.Second)), [][]int32{{0, 1}, {1, 2}, {2, 3}, {0, 3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after the restart: %v, want %v", got, want)
	}
	var dropped int
	for _, e := range only(r, model.EvExpiredLocal) {
		if e.Reason == model.RDropped {
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatal("no message let go for a dropped queue: want some (slow consumers with buffered messages lose queues)")
	}
}

// The group's request mode and popShareQueueNum are checked; a consumer
// that takes its queues from the broker may be in either mode (PULL: it
// pulls them, switch.go).
func TestRequestModeValidation(t *testing.T) {
	checkValidation(t, func() Config { return assignedConfig(2, 4, 1) }, []validationCase{
		{"pop", func(*Config) {}, ""},
		{"upper case", func(c *Config) { c.Groups[0].RequestMode = "POP" }, ""},
		{"unknown mode", func(c *Config) { c.Groups[0].RequestMode = "push" }, `groups[0].requestMode: "push": want pop or pull`},
		{"share without pop", func(c *Config) { c.Groups[0].RequestMode = "" },
			"groups[0].popShareQueueNum: 1 without requestMode pop: want requestMode: pop beside it"},
		{"pull mode", func(c *Config) { c.Groups[0].RequestMode, c.Groups[0].PopShareQueueNum = "pull", 0 }, ""},
		{"no mode, broker default PULL", func(c *Config) { c.Groups = nil }, ""},
		{"no mode, broker default POP", func(c *Config) {
			c.Groups = nil
			e := c.Engine.RocketMQ()
			e.DefaultMessageRequestMode = "POP"
			c.Engine.Settings = &e
		}, ""},
		{"bad broker default", func(c *Config) {
			e := c.Engine.RocketMQ()
			e.DefaultMessageRequestMode = "pop"
			c.Engine.Settings = &e
		}, `engine.defaultMessageRequestMode: "pop": want PULL or POP`},
		{"orderly keeps client rebalance", func(c *Config) {
			c.Groups[0].RequestMode, c.Groups[0].PopShareQueueNum, c.Groups[0].ConsumeMessageOrderly = "", 0, true
		}, ""},
	})
}

// clientRebalance false changes the configuration's hash; true, given or
// not, does not (earlier hashes keep their meaning).
func TestClientRebalanceHash(t *testing.T) {
	a := assignedConfig(2, 4, 1)
	b := assignedConfig(2, 4, 1)
	pushSettings(&b.Consumers[0]).ClientRebalance = defaultOnTrue
	c := assignedConfig(2, 4, 1)
	pushSettings(&c.Consumers[0]).ClientRebalance = 0
	if a.SHA256() == b.SHA256() || b.SHA256() != c.SHA256() {
		t.Fatal("want false to change the hash and true to equal the default")
	}
}

// A queue-specific pop that finds its queue empty parks on that queue, and
// the trace says which: the checker's missed-wakeup judges an arrival on
// that queue only (a parked all-queue pop is traced with queue -1).
func TestQueueSpecificPopsParkOnTheirQueue(t *testing.T) {
	r := runKeep(t, assignedConfig(4, 4, 1))
	noViolations(t, r)
	want := [][]int32{{0, 1}, {1, 2}, {2, 3}, {0, 3}}
	parked := 0
	for _, e := range only(r, model.EvParked) {
		if e.Queue < 0 || !slices.Contains(want[e.Client], e.Queue) {
			t.Fatalf("%v: want a park on one of the client's queues %v", &e, want[e.Client])
		}
		parked++
	}
	if parked == 0 {
		t.Fatal("no pop parked: the test proves nothing")
	}
}
