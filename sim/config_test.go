package sim

import (
	"strings"
	"testing"

	"popsim/clock"
)

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"batch", func(c *Config) { c.Consumers[0].Batch = 33 }, "Consumers[0].Batch = 33 out of range: want 1..32"},
		{"push invisible", func(c *Config) { c.Consumers[0].InvisibleTime = 2 * clock.Second }, "Consumers[0].InvisibleTime = 2s out of range: want 5s..5m0s for pop-push"},
		{"simple invisible", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].InvisibleTime = Simple, 5*clock.Second
		}, "Consumers[0].InvisibleTime = 5s out of range: want 10s..12h0m0s for simple"},
		{"simple poll", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].PollTime = Simple, 30*clock.Second
		}, "Consumers[0].PollTime = 30s out of range: want 5s..20s"},
		{"kind", func(c *Config) { c.Consumers[0].Kind = "push" }, `Consumers[0].Kind = "push": want pop-push, simple or pull`},
		{"topic", func(c *Config) { c.Producers[0].Topic = "nope" }, `Producers[0].Topic = "nope" is not in Topics`},
		{"arrivals", func(c *Config) { c.Producers[0].Arrivals = "sometimes" }, "Producers[0].Arrivals"},
		{"processing", func(c *Config) { c.Consumers[0].Processing = "fast" }, "Consumers[0].Processing"},
		{"queues", func(c *Config) { c.Topics[0].Queues = 2000 }, "Topics[0].Queues = 2000 out of range: want 1..1024"},
		{"loss kind", func(c *Config) { c.Faults.Loss = map[string]LossSpec{"push": {}} }, `Faults.Loss["push"]: unknown request type`},
		{"loss ppm", func(c *Config) { c.Faults.Loss = map[string]LossSpec{"ack": {RequestPPM: 600_000}} }, `Faults.Loss["ack"].RequestPPM = 600000 out of range: want 0..500000`},
		{"warmup", func(c *Config) { c.Warmup = 2 * c.Duration }, "Warmup = 2m0s out of range: want 0s..1m0s"},
		{"two groups", func(c *Config) {
			c.Consumers = append(c.Consumers, ConsumerSpec{Kind: PopPush, Group: "other", Topic: "orders"})
		}, `topic "orders" is consumed by groups "billing" and "other"`},
		{"unconsumed", func(c *Config) {
			c.Topics = append(c.Topics, TopicSpec{Name: "lonely", Queues: 1})
			c.Producers = append(c.Producers, ProducerSpec{Topic: "lonely", Arrivals: "const(1/s)"})
		}, `Producers[1].Topic = "lonely" has no consumer group`},
		{"engine", func(c *Config) { c.Engine.PopPollingSize = -1 }, "popPollingSize"},
		{"filter", func(c *Config) {
			c.Producers[0].Tags = "tags(A:1,B:1)"
			c.Consumers[0].Expression = "A"
		}, `Consumers[0].Expression = "A" does not accept tag "B"`},
		{"filter untagged", func(c *Config) { c.Consumers[0].Expression = "A || B" }, `does not accept tag ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.edit(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if _, rerr := Run(cfg, RunOptions{}); rerr == nil {
				t.Fatal("Run accepted a config Validate rejects")
			}
		})
	}
}

func TestConfigHashCoversDefaults(t *testing.T) {
	a, b := DefaultConfig(), DefaultConfig()
	b.Consumers[0].Batch = 32 // the default, written out
	if a.SHA256() != b.SHA256() {
		t.Fatal("a default written out changed the config hash")
	}
	b.Consumers[0].Batch = 16
	if a.SHA256() == b.SHA256() {
		t.Fatal("changing the batch size did not change the config hash")
	}
}

// A subscription that names every produced tag consumes everything.
func TestTaggedSubscription(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = "backlog(50)"
	cfg.Producers[0].Tags = "tags(A:3,B:1)"
	cfg.Consumers[0].Expression = "A || B"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r := runKeep(t, cfg)
	if r.Summary.Acked != 50 || r.Summary.Produced != 50 {
		t.Fatalf("produced %d acked %d", r.Summary.Produced, r.Summary.Acked)
	}
	noViolations(t, r)
}
