package sim

import (
	"fmt"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
)

func TestAllocateAveragely(t *testing.T) {
	cases := []struct {
		queues int32
		n      int
		want   [][2]int32
	}{
		{4, 2, [][2]int32{{0, 2}, {2, 2}}},
		{5, 2, [][2]int32{{0, 3}, {3, 2}}},
		{2, 3, [][2]int32{{0, 1}, {1, 1}, {2, 0}}},
		{8, 3, [][2]int32{{0, 3}, {3, 3}, {6, 2}}},
	}
	for _, tc := range cases {
		for i, w := range tc.want {
			st, n := allocate(tc.queues, i, tc.n)
			if st != w[0] || n != w[1] {
				t.Errorf("allocate(%d queues, consumer %d of %d) = %d+%d, want %d+%d", tc.queues, i, tc.n, st, n, w[0], w[1])
			}
		}
	}
}

// A crashed pull consumer's queue goes to another consumer, which starts
// at the committed offset: work the crashed one did but had not committed
// is redelivered.
func TestPullRebalanceRedeliversUncommitted(t *testing.T) {
	cfg := tinyConfig(Pull)
	cfg.Topics[0].Queues = 2
	cfg.Producers[0].Arrivals = arrivals("backlog(20)")
	cfg.Consumers[0].Count = 2
	cfg.Consumers[0].Processing = dist("const(50ms)")
	crashAt := 2 * clock.Second
	r := runKeep(t, cfg, scriptStep{after: crashAt, f: func(s *sim) { s.crash(s.cons[0]) }})
	got := map[model.MsgID][]int32{}
	for _, e := range only(r, model.EvDeliver) {
		got[e.Msg] = append(got[e.Msg], e.Client)
	}
	var moved bool
	for _, e := range only(r, model.EvRebalance) {
		if e.Client == 1 && e.Queue == 0 && e.At == clock.Epoch.Add(crashAt) {
			moved = e.Offset == 0
		}
	}
	if !moved {
		t.Fatal("no rebalance gave queue 0 to consumer 1 at offset 0 when consumer 0 crashed")
	}
	redelivered := 0
	for _, clients := range got {
		if len(clients) == 2 && clients[0] == 0 && clients[1] == 1 {
			redelivered++
		}
	}
	if redelivered != 10 {
		t.Fatalf("%d of queue 0's 10 messages went to consumer 0 and then consumer 1: want all (nothing was committed)", redelivered)
	}
}

// Without faults the pull baseline consumes each message once and commits
// every queue to its end.
func TestPullFaultFree(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Faults = FaultSpec{}
	cfg.Network.Loss = LossSpec{}
	cfg.Duration = 10 * clock.Second
	cfg.Consumers[0].Kind = Pull
	cfg.Consumers[0].Outcomes = workload.Outcomes{} // failures are re-consumed locally: redeliveries
	s := runSim(t, cfg)
	if s.meter.outstanding() != 0 || s.meter.nRedelivered != 0 || s.meter.nAcked != s.meter.nProduced {
		t.Fatalf("produced %d, consumed %d, redelivered %d, outstanding %d", s.meter.nProduced, s.meter.nAcked, s.meter.nRedelivered, s.meter.outstanding())
	}
	if !s.drained {
		t.Fatal("the pull baseline did not drain")
	}
	for _, l := range s.commitLags() {
		if l.Lag != 0 {
			t.Fatalf("queue %d lags %d after draining", l.Queue, l.Lag)
		}
	}
}

// runSim runs cfg and returns the simulator, for tests that look inside.
func runSim(t *testing.T, cfg Config) *sim {
	t.Helper()
	s := newTestSim(t, cfg, RunOptions{})
	if err := s.loop(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The Pull consumer's DLQ boundary: with maxReconsumeTimes 2 a message
// that always fails is consumed 3 times (attempts 0, 1 and 2: the first
// delivery and two reconsumptions) and then sent to %DLQ%g with
// reconsumeTimes 3, never a fourth time and never after 2.
func TestPullDLQAttemptBoundary(t *testing.T) {
	cfg := tinyConfig(Pull)
	cfg.Consumers[0].Settings = &PullSettings{MaxReconsumeTimes: 2}
	cfg.Consumers[0].Outcomes = outcomes("outcomes(exception=1)")
	r := runKeep(t, cfg)
	var attempts []int32
	for _, e := range only(r, model.EvDeliver) {
		attempts = append(attempts, e.Attempt)
	}
	dlq := only(r, model.EvDLQ)
	if fmt.Sprint(attempts) != "[0 1 2]" || len(dlq) != 1 || dlq[0].Attempt != 3 || dlq[0].Topic != "%DLQ%g" {
		t.Fatalf("deliveries at attempts %v, DLQ sends %+v: want attempts [0 1 2] and one send at attempt 3 to %%DLQ%%g", attempts, dlq)
	}
}
