package sim

import (
	"errors"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
)

// tinyConfig is one topic with one queue, one consumer with one thread,
// a fixed 1 ms network and no faults.
func tinyConfig(kind ConsumerKind) Config {
	return Config{
		Seed:      1,
		Topics:    []TopicSpec{{Name: "t", Queues: 1}},
		Producers: []ProducerSpec{{Topic: "t", Arrivals: arrivals("backlog(1)")}},
		Consumers: []ConsumerSpec{{Kind: kind, Group: "g", Topic: "t", Threads: 1, Processing: dist("const(5ms)")}},
		Network:   NetworkSpec{RequestLatency: dist("const(1ms)"), ResponseLatency: dist("const(1ms)")},
		Duration:  5 * clock.Second, Drain: 5 * clock.Minute,
	}
}

// sharedTopic is tinyConfig with two queues, a backlog of n messages
// tagged by tagSpec, and the given consumers (several groups on topic t).
func sharedTopic(n int, tagSpec string, consumers ...ConsumerSpec) Config {
	cfg := tinyConfig(PopPush)
	cfg.Topics[0].Queues = 2
	cfg.Producers[0].Arrivals = arrivals("backlog(" + itoa(int64(n)) + ")")
	cfg.Producers[0].Tags = tags(tagSpec)
	cfg.Consumers = consumers
	return cfg
}

// Typed configuration values from their text forms.
func dist(s string) workload.DistSpec         { return workload.MustDist(s) }
func arrivals(s string) workload.ArrivalsSpec { return workload.MustArrivals(s) }

func outcomes(s string) workload.Outcomes {
	var o workload.Outcomes
	if err := o.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return o
}

func tags(s string) workload.Tags {
	var t workload.Tags
	if err := t.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return t
}

func properties(s string) workload.Properties {
	var p workload.Properties
	if err := p.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return p
}

// pushSettings and simpleSettings return a consumer's own settings of
// that kind, creating them when it has none.
func pushSettings(c *ConsumerSpec) *PopPushSettings {
	if c.Settings == nil {
		c.Settings = &PopPushSettings{}
	}
	return c.Settings.(*PopPushSettings)
}

func simpleSettings(c *ConsumerSpec) *SimpleSettings {
	if c.Settings == nil {
		c.Settings = &SimpleSettings{}
	}
	return c.Settings.(*SimpleSettings)
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

// validationCase is one edit of a valid configuration and the error text
// Validate must then give ("" for still valid).
type validationCase struct {
	name string
	edit func(*Config)
	want string
}

// checkValidation applies each case to a fresh base configuration and
// checks Validate's verdict: valid, or a *ConfigError containing want.
func checkValidation(t *testing.T, base func() Config, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.edit(&cfg)
			err := cfg.Validate()
			var ce *ConfigError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("%v: want valid", err)
			case tc.want != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("%v: want %q", err, tc.want)
			}
		})
	}
}
