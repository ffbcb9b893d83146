package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"popsim/sim"
)

// full sets every key of the format to a value other than its zero value.
const full = `name: full
description: every key set
seed: 7
seeds: 1..3
duration: 20s
warmup: 2s
drain: 1m
eventBudget: 1000000
sampleInterval: 500ms
topics:
  - {name: orders, queues: 4}
groups:
  - {name: billing, retryMaxTimes: 3}
producers:
  - {topic: orders, arrivals: poisson(100/s), tags: "tags(A:1,B:2)", count: 2, queueSelect: random}
consumers:
  - kind: pop-push
    group: billing
    topic: orders
    expression: "A || B"
    count: 2
    threads: 4
    batch: 8
    invisibleTime: 30s
    pollTime: 10s
    processing: exp(5ms)
    outcomes: outcomes(reconsume_later=0.01)
    maxReconsumeTimes: 5
    popThresholdForQueue: 50
    autoRenew: false
    commitInterval: 1s
engine:
  enablePopBufferMerge: true
network:
  requestLatency: const(1ms)
  responseLatency: const(2ms)
  requestTimeout: 2s
  pollTimeoutSlack: 5s
  loss:
    pop: {request: 0.1%, response: 0.1%}
faults:
  swarm: true
  siteEnable: 0.5
  crash: {every: 1m, restartDelay: const(1s)}
  pause: {every: 1m, duration: const(100ms)}
  slow: {every: 1m, duration: const(1s), factor: 3}
  renew: {sameDeadline: 0.1%, atExpiry: 0.1%, afterRevive: 0.1%}
  brokerRestart: {every: 5m}
  revivePutFailure: 1%
  clockSkew: 10ms
`

// TestConfigSetsEveryField: a file that sets every key leaves no field of
// sim.Config zero (except those the format deliberately does not expose),
// so a field the simulator adds shows up here until the format covers it.
func TestConfigSetsEveryField(t *testing.T) {
	s := mustLoad(t, full)
	c := s.Config(s.Seed)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	notExposed := map[string]bool{
		"Start":                  true, // virtual start instant: clock.Epoch
		"Consumers[0].AutoRenew": true, // false is the value set here (pop-push cannot auto-renew)
		"Engine.Bugs":            true, // pop.Config is covered by TestEngineMirrorsPopConfig
		"Engine.RetrieveMessageFromPopRetryTopicV1": true,
	}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if notExposed[path] {
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			if path == "Engine" {
				return // pop.Config: TestEngineMirrorsPopConfig
			}
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), strings.TrimPrefix(path+"."+v.Type().Field(i).Name, "."))
			}
			return
		case reflect.Slice:
			if v.Len() == 0 {
				t.Errorf("sim.Config.%s is empty", path)
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path+"["+string(rune('0'+i))+"]")
			}
			return
		}
		if v.IsZero() {
			t.Errorf("sim.Config.%s is zero: the scenario format does not set it", path)
		}
	}
	walk(reflect.ValueOf(c), "")
	if c.Seed != 7 || c.Faults.Loss["pop"] != (sim.LossSpec{RequestPPM: 1000, ResponsePPM: 1000}) {
		t.Errorf("seed %d, loss %+v", c.Seed, c.Faults.Loss)
	}
}

func TestYAMLPath(t *testing.T) {
	for in, want := range map[string]string{
		"Consumers[3].FlowControl":        "consumers[3].popThresholdForQueue",
		"Consumers[0].InvisibleTime":      "consumers[0].invisibleTime",
		"Faults.Loss[\"ack\"].RequestPPM": "network.loss.ack.request",
		"Faults.CrashEvery":               "faults.crash.every",
		"DrainBudget":                     "drain",
		"Network.RequestLatency":          "network.requestLatency",
	} {
		if got := yamlPath(in); got != want {
			t.Errorf("yamlPath(%q) = %q, want %q", in, got, want)
		}
	}
}
