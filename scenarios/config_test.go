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
  - {name: billing, retryMaxTimes: 3, consumeMessageOrderly: true, requestMode: pop, popShareQueueNum: 1}
producers:
  - {topic: orders, arrivals: poisson(100/s), tags: "tags(A:1,B:2)", count: 2, queueSelect: random, properties: "properties(3:set(region=eu),1:set())"}
consumers:
  - kind: pop-push
    group: billing
    topic: orders
    expression: "A || B"
    expressionType: TAG
    count: 2
    threads: 4
    batch: 8
    invisibleTime: 30s
    pollTime: 10s
    processing: exp(5ms)
    outcomes: outcomes(reconsume_later=0.01)
    maxReconsumeTimes: 5
    popThresholdForQueue: 50
    suspendCurrentQueueTime: 2s
    clientRebalance: false
engine:
  enablePopBufferMerge: true
broker:
  count: 2
  cores: 4
  sendMessageThreadPoolNums: 4
  pullMessageThreadPoolNums: 24
  ackMessageThreadPoolNums: 3
  consumerManageThreadPoolNums: 32
  costs:
    put: const(100us)
    pop: exp(150us)
    ack: const(50us)
    change: const(60us)
    pull: const(80us)
    offset: const(20us)
    tick: const(200us)
    work: read_messages:10us,record_puts:12us
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
  brokerStop: {every: 5m}
  revivePutFailure: 1%
  reviveReadFailure: 1%
  clockSkew: 10ms
  lockBusy: 0.1%
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
		"Start":                    true, // virtual start instant: clock.Epoch
		"Engine.Settings":          true, // pop.Config: TestEngineKeys
		"Network.Loss.Ack":         true, // one request type is enough to show the section decodes
		"Network.Loss.Pull":        true,
		"Network.Loss.Change":      true,
		"Faults.DuplicateDelivery": true, // sqs-standard only: refused with this file's rocketmq engine (TestPeerEngineKinds)
		// Concurrent groups only, and this file's group is orderly:
		// TestListenerBatchKeys.
		"Consumers[0].Settings.ConsumeMessageBatchMaxSize": true,
		"Consumers[0].Settings.BatchAck":                   true,
		// This file's group starts in POP mode and is orderly, which a
		// switch refuses: TestSwitchToPopKeys.
		"Groups[0].SwitchToPop": true,
	}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if notExposed[path] {
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			walk(v.Elem(), path)
			return
		case reflect.Struct:
			if v.Type().PkgPath() == "popsim/workload" {
				break // a value with a text form, not a section
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
	if c.Seed != 7 || c.Network.Loss.Pop != (sim.LossPair{Request: 1000, Response: 1000}) {
		t.Errorf("seed %d, loss %+v", c.Seed, c.Network.Loss)
	}
}

// TestSimplePullKeys: the simple and pull consumers' own keys decode onto
// their settings.
func TestSimplePullKeys(t *testing.T) {
	text := strings.Replace(strings.Replace(minimal, "kind: pop-push", "kind: simple", 1), "    batch: 8", "    batch: 8\n    autoRenew: true\n    pollTime: 6s", 1)
	set, ok := mustLoad(t, text).Consumers[0].Settings.(*sim.SimpleSettings)
	if !ok || !set.AutoRenew || set.PollTime.Std().String() != "6s" || set.InvisibleTime.Std().String() != "30s" {
		t.Errorf("simple settings: %+v", set)
	}
	text = strings.Replace(strings.Replace(minimal, "kind: pop-push", "kind: pull", 1), "    invisibleTime: 30s", "    commitInterval: 1s\n    maxReconsumeTimes: 3", 1)
	pull, ok := mustLoad(t, text).Consumers[0].Settings.(*sim.PullSettings)
	if !ok || pull.CommitInterval.Std().String() != "1s" || pull.MaxReconsumeTimes != 3 {
		t.Errorf("pull settings: %+v", pull)
	}
}

// TestListenerBatchKeys: a pop-push consumer's listener batch and batch
// ack keys decode onto its settings.
func TestListenerBatchKeys(t *testing.T) {
	s := mustLoad(t, `name: x
description: listener batches acked in one request
topics: [{name: t, queues: 1}]
producers: [{topic: t, arrivals: backlog(10)}]
consumers:
  - {kind: pop-push, group: g, topic: t, consumeMessageBatchMaxSize: 8, batchAck: true}
`)
	c := s.Config(s.Seed)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	set := c.Consumers[0].Settings.(*sim.PopPushSettings)
	if set.ConsumeMessageBatchMaxSize != 8 || !set.BatchAck {
		t.Fatalf("settings %+v: want consumeMessageBatchMaxSize 8 and batchAck", set)
	}
}
