package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// tinyConfig is one topic with one queue, one consumer with one thread,
// a fixed 1 ms network and no faults.
func tinyConfig(kind ConsumerKind) Config {
	return Config{
		Seed:      1,
		Topics:    []TopicSpec{{Name: "t", Queues: 1}},
		Producers: []ProducerSpec{{Topic: "t", Arrivals: "backlog(1)"}},
		Consumers: []ConsumerSpec{{Kind: kind, Group: "g", Topic: "t", Threads: 1, Processing: "const(5ms)"}},
		Network:   NetworkSpec{RequestLatency: "const(1ms)", ResponseLatency: "const(1ms)"},
		Duration:  5 * clock.Second, DrainBudget: 5 * clock.Minute,
	}
}

func runKeep(t *testing.T, cfg Config, script ...scriptStep) *Result {
	t.Helper()
	r, err := Run(cfg, RunOptions{KeepEvents: true, script: script})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// only returns the events of the given kinds, in trace order.
func only(r *Result, kinds ...model.EventKind) []model.Event {
	var out []model.Event
	for _, e := range r.Events {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func noViolations(t *testing.T, r *Result) {
	t.Helper()
	for i, v := range r.Summary.Violations {
		if i == 5 {
			t.Errorf("... %d violations in all", len(r.Summary.Violations))
			break
		}
		t.Errorf("violation %s at event %d: %s", v.Invariant, v.EventIndex, v.Detail)
		for _, h := range v.History {
			t.Logf("    %s", h)
		}
	}
}

func ms(e model.Event) int64 { return e.At.Millis() }
