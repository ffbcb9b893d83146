package sim

import (
	"math"
	"testing"

	"popsim/clock"
)

// With faults off, batch 1, no network delay and a long invisible time, 8
// single-threaded simple consumers sharing a backlog behave like M/M/8,
// and 8 queue-owning Pull consumers fed at random like 8 M/M/1 queues
// (simulation.md: c = 8, lambda = 700/s, mu = 100/s gives W = 16.35 ms and
// 80 ms). The simulator must reproduce both within a few percent.
func TestQueueingTheory(t *testing.T) {
	if testing.Short() {
		t.Skip("two minutes of virtual time per model")
	}
	cases := []struct {
		kind     ConsumerKind
		settings ConsumerSettings
		want     float64 // mean response time, ms
	}{{Simple, &SimpleSettings{InvisibleTime: 12 * clock.Hour}, 16.35}, {Pull, nil, 80.0}}
	for _, tc := range cases {
		cfg := Config{
			Seed:      1,
			Topics:    []TopicSpec{{Name: "t", Queues: 8}},
			Producers: []ProducerSpec{{Topic: "t", Arrivals: arrivals("poisson(700/s)"), QueueSelect: QueueRandom}},
			Consumers: []ConsumerSpec{{Kind: tc.kind, Group: "g", Topic: "t", Count: 8, Threads: 1, Batch: 1, Processing: dist("exp(10ms)"), Settings: tc.settings}},
			Network:   NetworkSpec{RequestLatency: dist("const(0s)"), ResponseLatency: dist("const(0s)")},
			Duration:  120 * clock.Second,
		}
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := float64(r.Summary.EndToEnd.Mean) / 1000
		if math.Abs(got-tc.want)/tc.want > 0.05 {
			t.Errorf("%s: mean response %.2f ms over %d messages, want %.2f ms within 5%%", tc.kind, got, r.Summary.EndToEnd.Count, tc.want)
		}
		noViolations(t, r)
	}
}
