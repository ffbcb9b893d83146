package sim

import (
	"strings"
	"testing"

	"popsim/clock"
	"popsim/pop"
	"popsim/workload"
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
		{"batch", func(c *Config) { c.Consumers[0].Batch = 33 }, "consumers[0].batch: 33 out of range: want 1..32"},
		{"push invisible", func(c *Config) { pushSettings(&c.Consumers[0]).InvisibleTime = 2 * clock.Second }, "consumers[0].invisibleTime: 2s out of range: want 5s..5m0s for pop-push"},
		{"simple invisible", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].Settings = Simple, &SimpleSettings{InvisibleTime: 5 * clock.Second}
		}, "consumers[0].invisibleTime: 5s out of range: want 10s..12h0m0s for simple"},
		{"simple poll", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].Settings = Simple, &SimpleSettings{PollTime: 30 * clock.Second}
		}, "consumers[0].pollTime: 30s out of range: want 5s..20s"},
		{"kind", func(c *Config) { c.Consumers[0].Kind = "push" }, `consumers[0].kind: "push": want pop-push, simple, pull, kafka-share or sqs`},
		{"settings of another kind", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].Settings = Pull, &SimpleSettings{}
		}, "consumers[0]: the settings are simple's but the kind is pull"},
		{"topic", func(c *Config) { c.Producers[0].Topic = "nope" }, `producers[0].topic: topic "nope" is not defined: want one of orders`},
		{"arrivals", func(c *Config) { c.Producers[0].Arrivals = workload.ArrivalsSpec{} }, "producers[0].arrivals: missing"},
		{"queues", func(c *Config) { c.Topics[0].Queues = 2000 }, "topics[0].queues: 2000 out of range: want 1..1024"},
		{"loss ppm", func(c *Config) { c.Network.Loss.Ack.Request = 600_000 }, `network.loss.ack.request: 60% out of range: want 0..0.5`},
		{"warmup", func(c *Config) { c.Warmup = FixedWarmup(2 * c.Duration) }, "warmup: 2m0s out of range: want auto, or a duration less than duration (1m0s)"},
		{"two groups off rocketmq", func(c *Config) {
			c.Engine.Kind, c.Engine.Settings = SQSStandard, nil
			c.Consumers[0].Kind, c.Consumers[0].Settings = "", nil
			c.Faults = FaultSpec{}
			c.Consumers = append(c.Consumers, ConsumerSpec{Group: "other", Topic: "orders"})
		}, `consumers[1].group: topic "orders" is consumed by groups "billing" and "other": want one group per topic on the sqs-standard engine`},
		{"unconsumed", func(c *Config) {
			c.Topics = append(c.Topics, TopicSpec{Name: "lonely", Queues: 1})
			c.Producers = append(c.Producers, ProducerSpec{Topic: "lonely", Arrivals: arrivals("const(1/s)")})
		}, `producers[1].topic: "lonely" has no consumer group`},
		{"engine", func(c *Config) {
			e := pop.DefaultConfig()
			e.PopPollingSize = -1
			c.Engine.Settings = &e
		}, "engine.popPollingSize: -1 out of range: want 0..1073741824"},
		{"engine kind", func(c *Config) { c.Engine.Kind = "kafka" }, `engine.kind: "kafka": want rocketmq`},
		{"undefined group", func(c *Config) { c.Groups = []GroupSpec{{Name: "audit"}} }, `consumers[0].group: group "billing" is not defined`},
		{"filter without a broker filter", func(c *Config) {
			c.Engine.Kind, c.Engine.Settings = SQSStandard, nil
			c.Consumers[0].Kind, c.Consumers[0].Settings = "", nil
			c.Faults = FaultSpec{}
			c.Producers[0].Tags = tags("tags(A:1,B:1)")
			c.Consumers[0].Expression = "A"
		}, `consumers[0].expression: "A" does not accept tag "B"`},
		{"filter per group", func(c *Config) {
			c.Consumers = append(c.Consumers, c.Consumers[0])
			c.Consumers[1].Expression = "A"
		}, `consumers[1].expression: group "billing" subscribes with one expression`},
		{"expression type", func(c *Config) { c.Consumers[0].ExpressionType = "sql92" }, `consumers[0].expressionType: "sql92": want TAG or SQL92`},
		{"sql92 syntax", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].Settings = Simple, nil
			c.Consumers[0].ExpressionType, c.Consumers[0].Expression = "SQL92", "a LIKE '%x'"
		}, "consumers[0].expression: filter: SQL92 expression"},
		{"sql92 without the property filter", func(c *Config) {
			c.Consumers[0].ExpressionType, c.Consumers[0].Expression = "SQL92", "region = 'eu'"
		}, `consumers[0].expressionType: SQL92 while the broker's enablePropertyFilter is false: RocketMQ answers SYSTEM_ERROR (The broker does not support consumer to filter message by SQL92) to the push consumer's CHECK_CLIENT_CONFIG when it starts, so it never starts: want engine.enablePropertyFilter: true, or simple consumers`},
		{"sql92 pull without the property filter", func(c *Config) {
			c.Consumers[0].Kind, c.Consumers[0].Settings = Pull, nil
			c.Consumers[0].ExpressionType, c.Consumers[0].Expression = "SQL92", "region = 'eu'"
		}, `SQL92 while the broker's enablePropertyFilter is false: RocketMQ answers SYSTEM_ERROR (The broker does not support consumer to filter message by SQL92) to every pull`},
		{"sql92 off rocketmq", func(c *Config) {
			c.Engine.Kind, c.Engine.Settings = SQSStandard, nil
			c.Consumers[0].Kind, c.Consumers[0].Settings = "", nil
			c.Faults = FaultSpec{}
			c.Consumers[0].ExpressionType, c.Consumers[0].Expression = "SQL92", "region = 'eu'"
		}, "consumers[0].expressionType: SQL92 subscriptions are RocketMQ's: want TAG on the sqs-standard engine"},
		{"listener batch", func(c *Config) { pushSettings(&c.Consumers[0]).ConsumeMessageBatchMaxSize = 1025 }, "consumers[0].consumeMessageBatchMaxSize: 1025 out of range: want 1..1024"},
		{"listener batch orderly", func(c *Config) {
			c.Groups = []GroupSpec{{Name: "billing", ConsumeMessageOrderly: true}}
			pushSettings(&c.Consumers[0]).ConsumeMessageBatchMaxSize = 4
		}, `consumers[0].consumeMessageBatchMaxSize: group "billing" consumes orderly`},
		{"batch ack orderly", func(c *Config) {
			c.Groups = []GroupSpec{{Name: "billing", ConsumeMessageOrderly: true}}
			pushSettings(&c.Consumers[0]).BatchAck = true
		}, `consumers[0].batchAck: group "billing" consumes orderly`},
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
	cfg.Producers[0].Arrivals = arrivals("backlog(50)")
	cfg.Producers[0].Tags = tags("tags(A:3,B:1)")
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

func TestParsePPM(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1_000_000, "0.001": 1000, "0.1%": 1000, "100%": 1_000_000, "0.000001": 1, "0.0001%": 1} {
		if got, err := parsePPM(in); err != nil || got != want {
			t.Errorf("parsePPM(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1.1", "101%", "-0.1", "0.0000001", "0.00001%", "1e-3", ".5", "abc"} {
		if _, err := parsePPM(bad); err == nil {
			t.Errorf("parsePPM(%q) accepted it", bad)
		}
	}
	for ppm, want := range map[PPM]string{0: "0%", 1: "0.0001%", 1000: "0.1%", 500_000: "50%", 1_000_000: "100%"} {
		if got := ppm.String(); got != want {
			t.Errorf("PPM(%d) = %q, want %q", int64(ppm), got, want)
		}
		if back, err := parsePPM(want); err != nil || back != int64(ppm) {
			t.Errorf("parsePPM(%q) = %d, %v: the text form does not round-trip", want, back, err)
		}
	}
}

// A huge count is reported, not laid out.
func TestValidateHugeCount(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Consumers[0].Count = 1 << 62
	cfg.Producers[0].Count = 1 << 62
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "consumers[0].count: 4611686018427387904 out of range") || !strings.Contains(err.Error(), "producers[0].count") {
		t.Fatalf("err = %v", err)
	}
}
