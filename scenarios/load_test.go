package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/pop"
	"popsim/sim"
)

const minimal = `name: tiny
duration: 2s
topics:
  - name: orders
    queues: 4
groups:
  - name: billing
producers:
  - topic: orders
    arrivals: poisson(100/s)
consumers:
  - kind: pop-push
    group: billing
    topic: orders
    count: 2
    batch: 8
    invisibleTime: 30s
    processing: exp(5ms)
`

func mustLoad(t *testing.T, text string, overrides ...Override) *Scenario {
	t.Helper()
	s, err := Load("x.yaml", []byte(text), overrides...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func TestLoadMinimal(t *testing.T) {
	s := mustLoad(t, minimal)
	if s.Name != "tiny" || s.Duration != 2*clock.Second || len(s.Topics) != 1 || s.Topics[0].Queues != 4 {
		t.Errorf("header or topics wrong: %+v", s.Spec)
	}
	c := s.Consumers[0]
	set, ok := c.Settings.(*sim.PopPushSettings)
	if c.Kind != sim.PopPush || c.Count != 2 || c.Batch != 8 || c.Threads != 0 || !ok || set.InvisibleTime != 30*clock.Second || c.Processing.String() != "exp(5ms)" {
		t.Errorf("consumer wrong: %+v", c)
	}
	if got := s.Engine.RocketMQ(); !reflect.DeepEqual(got, pop.DefaultConfig()) || got.UsesKV() {
		t.Errorf("engine defaults differ from pop.DefaultConfig (RocketMQ's, the checkpoint path):\n%+v\n%+v", got, pop.DefaultConfig())
	}
	if got := s.Seeds.List(); len(got) != 1 || got[0] != 1 {
		t.Errorf("seeds default to [seed]: got %v", got)
	}
}

// TestEngineKeys: every pop.Config field (and Bugs field) is reachable
// from the file under its broker.conf key.
func TestEngineKeys(t *testing.T) {
	want := pop.KVConfig()
	want.BrokerName, want.ClusterName = "b", "c"
	want.ReviveScanTime = 4321
	want.Readable, want.EnablePopBufferMerge = false, true
	want.PopCkStayBufferTime, want.PopConsumerLockTimeout = 1234, 5678
	want.Bugs = pop.Bugs{SameDeadlineChangeInvisible: true, CacheCleanupIgnoresReviveFailure: true, V1RetryNoPollWake: true, CommitOffsetLag: true, RetryTopicReencoding: true}
	text := minimal + `engine:
  kind: rocketmq
  popConsumerKVServiceEnable: true
  reviveScanTime: 4321
  brokerName: b
  brokerClusterName: c
  readable: false
  enablePopBufferMerge: true
  popCkStayBufferTime: 1234
  popConsumerLockTimeout: 5678
  bugs: {sameDeadlineChangeInvisible: true, cacheCleanupIgnoresReviveFailure: true, v1RetryNoPollWake: true, commitOffsetLag: true, retryTopicReencoding: true}
`
	if got := mustLoad(t, text).Engine.RocketMQ(); !reflect.DeepEqual(got, want) {
		t.Errorf("engine section:\n%+v\nwant\n%+v", got, want)
	}
	keys := sim.FieldKeys(reflect.TypeFor[pop.Config]())
	if len(keys) != reflect.TypeFor[pop.Config]().NumField() || keys[1] != "brokerClusterName" {
		t.Errorf("pop.Config keys: %v", keys)
	}
}

func TestLoadEngineAndOverrides(t *testing.T) {
	s := mustLoad(t, minimal+"engine:\n  enablePopBufferMerge: true\n  popCkStayBufferTime: 5s\n  popReviveMaxAttemptTimes: 3\n  bugs:\n    commitOffsetLag: true\n",
		Override{"engine.bugs.sameDeadlineChangeInvisible", "true"},
		Override{"consumers[*].count", "7"},
		Override{"duration", "3s"},
		Override{"engine.popConsumerLockTimeout", "1000"})
	e := s.Engine.RocketMQ()
	if !e.EnablePopBufferMerge || e.PopCkStayBufferTime != 5000 || e.PopReviveMaxAttemptTimes != 3 || !e.Bugs.CommitOffsetLag || !e.Bugs.SameDeadlineChangeInvisible || e.PopConsumerLockTimeout != 1000 {
		t.Errorf("engine: %+v", e)
	}
	if s.Consumers[0].Count != 7 || s.Duration != 3*clock.Second {
		t.Errorf("overrides not applied: count %d duration %v", s.Consumers[0].Count, s.Duration)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name, text string
		overrides  []Override
		want       string
	}{
		{"unknown key", strings.Replace(minimal, "    batch: 8", "    bacth: 8", 1), nil, `x.yaml:16: consumers[0].bacth: unknown field (did you mean "batch"?)`},
		{"batch range", strings.Replace(minimal, "batch: 8", "batch: 40", 1), nil, "x.yaml:16: consumers[0].batch: 40 out of range: want 1..32"},
		{"bad duration", strings.Replace(minimal, "duration: 2s", "duration: 2 seconds", 1), nil, `x.yaml:2: duration: invalid duration "2 seconds"`},
		{"negative duration", strings.Replace(minimal, "duration: 2s", "duration: -2s", 1), nil, `x.yaml:2: duration: "-2s": want a duration of zero or more`},
		{"bad rate", strings.Replace(minimal, "poisson(100/s)", "poisson(100/fortnight)", 1), nil, "x.yaml:10: producers[0].arrivals: workload: poisson rate"},
		{"system property", strings.Replace(minimal, "    arrivals: poisson(100/s)", "    arrivals: poisson(100/s)\n    properties: properties(set(KEYS=k1))", 1), nil,
			"x.yaml:11: producers[0].properties: workload: properties set 1: property name KEYS is used by RocketMQ itself: want a user property"},
		{"sql92 push without the property filter", strings.Replace(minimal, "    count: 2", "    expressionType: SQL92\n    expression: region = 'eu'\n    count: 2", 1), nil,
			"x.yaml:15: consumers[0].expressionType: SQL92 while the broker's enablePropertyFilter is false: RocketMQ answers SYSTEM_ERROR"},
		{"bad dist", strings.Replace(minimal, "exp(5ms)", "gauss(5ms)", 1), nil, `x.yaml:18: consumers[0].processing: workload: dist kind "gauss" unknown`},
		{"bad bool", minimal + "engine:\n  enablePopBufferMerge: yes\n", nil, `x.yaml:20: engine.enablePopBufferMerge: "yes": want true or false`},
		{"bad int", strings.Replace(minimal, "count: 2", "count: two", 1), nil, `x.yaml:15: consumers[0].count: "two": want a whole number`},
		{"duplicate key", minimal + "name: again\n", nil, "x.yaml:19: name: key given twice"},
		{"unknown topic", strings.Replace(minimal, "  - topic: orders", "  - topic: order", 1), nil, `x.yaml:9: producers[0].topic: topic "order" is not defined: want one of orders`},
		{"unknown group", strings.Replace(minimal, "group: billing", "group: bill", 1), nil, `x.yaml:13: consumers[0].group: group "bill" is not defined`},
		{"kind", strings.Replace(minimal, "kind: pop-push", "kind: push", 1), nil, `x.yaml:12: consumers[0].kind: "push": want pop-push, simple, pull, kafka-share or sqs`},
		{"warmup", minimal + "warmup: 5s\n", nil, "x.yaml:19: warmup: 5s out of range: want auto, or a duration less than duration (2s)"},
		{"engine validate", minimal + "engine:\n  brokerName: \"a b\"\n", nil, "x.yaml:20: engine.brokerName"},
		{"auto renew", minimal + "    autoRenew: true\n", nil, "x.yaml:19: consumers[0].autoRenew: only simple consumers"},
		{"list not map", strings.Replace(minimal, "topics:\n  - name: orders\n    queues: 4", "topics: orders", 1), nil, `x.yaml:3: topics: want a list`},
		{"empty", "", nil, "x.yaml: the file is empty"},
		{"two docs", minimal + "---\nname: b\n", nil, "x.yaml:19: a second YAML document"},
		{"not yaml", "name: [\n", nil, "x.yaml:1: not valid YAML"},
		{"scalar root", "hello\n", nil, "x.yaml:1: want a mapping of scenario fields"},
		{"missing name", strings.Replace(minimal, "name: tiny\n", "", 1), nil, "x.yaml: name: missing"},
		{"bad name", strings.Replace(minimal, "name: tiny", "name: Tiny_1", 1), nil, `x.yaml:1: name: "Tiny_1": want 1 to 63 lowercase`},
		{"override range", minimal, []Override{{"consumers[0].batch", "99"}}, "x.yaml (-set): consumers[0].batch: 99 out of range: want 1..32"},
		{"override index", minimal, []Override{{"consumers[3].batch", "9"}}, "x.yaml (-set): -set consumers[3].batch=9: consumers has 1 entries: index 3 out of range"},
		{"override unknown", minimal, []Override{{"engine.enablePopBufferMerj", "true"}}, `x.yaml (-set): engine.enablePopBufferMerj: unknown field (did you mean "enablePopBufferMerge"?)`},
		{"null value", strings.Replace(minimal, "batch: 8", "batch:", 1), nil, "x.yaml:16: consumers[0].batch: want a value, got nothing (null)"},
		{"probability", minimal + "faults:\n  revivePutFailure: 1.5\n", nil, `x.yaml:20: faults.revivePutFailure: "1.5" out of range`},
		{"sim range", strings.Replace(minimal, "invisibleTime: 30s", "invisibleTime: 400s", 1), nil, "x.yaml:17: consumers[0].invisibleTime: 6m40s out of range: want 5s..5m0s for pop-push"},
		{"sim unconsumed", strings.Replace(strings.Replace(minimal, "groups:", "  - name: audit\ngroups:", 1), "consumers:", "  - {topic: audit, arrivals: poisson(1/s)}\nconsumers:", 1), nil, `x.yaml:12: producers[1].topic: "audit" has no consumer group`},
		{"queue select", strings.Replace(minimal, "arrivals: poisson(100/s)", "arrivals: poisson(100/s)\n    queueSelect: hash", 1), nil, `x.yaml:11: producers[0].queueSelect: "hash": want round-robin or random`},
		{"loss", minimal + "network:\n  loss:\n    ack: {request: 60%}\n", nil, "x.yaml:21: network.loss.ack.request: 60% out of range: want 0..0.5"},
		{"seeds", minimal + "seeds: 5..1\n", nil, `x.yaml:19: seeds: seeds "5..1"`},
	} {
		_, err := Load("x.yaml", []byte(c.text), c.overrides...)
		if err == nil {
			t.Errorf("%s: no error, want %q", c.name, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %s\nwant %s...", c.name, err, c.want)
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *FieldError", c.name, err)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(minimal, "batch: 8", "batch: 33", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+":16: consumers[0].batch: 33 out of range: want 1..32") {
		t.Errorf("LoadFile error = %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestParseOverride(t *testing.T) {
	for _, bad := range []string{"", "=1", "novalue", "a[=1", "a[x]=1", "a[1]b=2", "[0]=1"} {
		if _, err := ParseOverride(bad); err == nil {
			t.Errorf("ParseOverride(%q) accepted it", bad)
		}
	}
	o, err := ParseOverride(" consumers[*].invisibleTime = 10s ")
	if err != nil || o.Path != "consumers[*].invisibleTime" || o.Value != "10s" {
		t.Errorf("ParseOverride = %+v, %v", o, err)
	}
}

func TestParseSeeds(t *testing.T) {
	got, err := ParseSeeds("1..3,7, 9..10")
	if err != nil || !reflect.DeepEqual(got, []uint64{1, 2, 3, 7, 9, 10}) {
		t.Errorf("ParseSeeds = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "3..1", "1,1", "1..2000000", "-1", "18446744073709551615..0"} {
		if _, err := ParseSeeds(bad); err == nil {
			t.Errorf("ParseSeeds(%q) accepted it", bad)
		}
	}
	if got, _ := ParseSeeds("18446744073709551615"); len(got) != 1 {
		t.Errorf("max seed: %v", got)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(minimal), "consumers[0].count=3")
	f.Add([]byte("name: [\n"), "")
	f.Add([]byte("a: &x [*x]\n"), "a=1")
	f.Add([]byte(minimal+"engine: {bugs: {commitOffsetLag: true}}\n"), "engine.bugs=1")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var overrides []Override
		if o, err := ParseOverride(set); err == nil {
			overrides = append(overrides, o)
		}
		s, err := Load("fuzz.yaml", data, overrides...)
		if err == nil && s.Name == "" {
			t.Fatal("loaded a scenario without a name")
		}
	})
}

// engine.version applies the release's profile before the section's other
// keys, wherever it stands; they and -set overrides win over it.
func TestLoadEngineVersion(t *testing.T) {
	s := mustLoad(t, minimal+"engine:\n  bugs: {retryTopicReencoding: false}\n  version: 5.3.2\n",
		Override{"engine.bugs.sameDeadlineChangeInvisible", "false"})
	e := s.Engine.RocketMQ()
	want := pop.DefaultConfig() // the checkpoint path, RocketMQ's default
	if err := want.ApplyVersion("5.3.2"); err != nil {
		t.Fatal(err)
	}
	want.Bugs.RetryTopicReencoding, want.Bugs.SameDeadlineChangeInvisible = false, false
	if e != want {
		t.Errorf("engine:\n got %+v\nwant %+v", e, want)
	}
	s = mustLoad(t, minimal, Override{"engine.version", "5.4.0"})
	if e := s.Engine.RocketMQ(); e.Version != "5.4.0" || !e.Bugs.CommitOffsetLag || e.Bugs.V1RetryNoPollWake {
		t.Errorf("-set engine.version=5.4.0: %+v", e)
	}
	for text, msg := range map[string]string{
		"engine: {version: 5.3.9}\n":                                   "x.yaml:19: engine.version: unknown RocketMQ version \"5.3.9\": want one of 5.1.4, 5.2.0, 5.3.0, 5.3.1, 5.3.2, 5.3.3, 5.4.0, 5.5.0",
		"engine: {version: 5.3.1, popConsumerKVServiceEnable: true}\n": "engine.version: 5.3.1 has no KV path",
	} {
		_, err := Load("x.yaml", []byte(minimal+text))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", text, err, msg)
		}
	}
}

// TestLoadSQL92: producer properties and a SQL92 subscription decode, and
// the broker's enablePropertyFilter lets a pop-push consumer use it.
func TestLoadSQL92(t *testing.T) {
	text := strings.Replace(minimal, "    arrivals: poisson(100/s)", "    arrivals: poisson(100/s)\n    properties: properties(3:set(region=eu,price=12),set())", 1)
	text = strings.Replace(text, "    count: 2", "    expressionType: SQL92\n    expression: region = 'eu' AND price > 10\n    count: 2", 1)
	text += "engine:\n  enablePropertyFilter: true\n"
	c := mustLoad(t, text).Config(1)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p, s := c.Producers[0].Properties.String(), c.Consumers[0]; p != "properties(3:set(price=12,region=eu),1:set())" ||
		s.ExpressionType != "SQL92" || s.Expression != "region = 'eu' AND price > 10" {
		t.Errorf("properties %s, subscription %s %q", p, s.ExpressionType, s.Expression)
	}
}
