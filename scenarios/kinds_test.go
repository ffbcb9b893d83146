package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// A key of another consumer or engine kind is an error naming the kinds
// that have it; several field errors are all reported, each at its line.
func TestKindKeysAndErrorLists(t *testing.T) {
	for _, c := range []struct {
		name, text string
		overrides  []Override
		want       string
	}{
		{"pull invisible", strings.Replace(minimal, "kind: pop-push", "kind: pull", 1), nil,
			"x.yaml:17: consumers[0].invisibleTime: only pop-push and simple consumers have invisibleTime: this one is pull"},
		{"kind override", minimal, []Override{{"consumers[0].kind", "pull"}},
			"x.yaml:17: consumers[0].invisibleTime: only pop-push and simple consumers have invisibleTime: this one is pull"},
		{"unknown consumer key", strings.Replace(minimal, "    batch: 8", "    bulk: 8", 1), nil,
			"x.yaml:16: consumers[0].bulk: unknown field; want one of kind, group, topic, expression, expressionType, count, threads, batch, processing, outcomes, invisibleTime, pollTime, maxReconsumeTimes, popThresholdForQueue, suspendCurrentQueueTime, consumeMessageBatchMaxSize, batchAck, clientRebalance (the keys of a pop-push consumer)"},
		{"engine kind", minimal + "engine:\n  kind: kafka\n", nil, `x.yaml:20: engine.kind: "kafka": want rocketmq`},
		{"engine key", minimal + "engine:\n  shareGroup: g\n", nil, "x.yaml:20: engine.shareGroup: unknown field; want one of kind, brokerName"},
		{"engine range", minimal + "engine:\n  popPollingSize: -1\n", nil, "x.yaml:20: engine.popPollingSize: -1 out of range: want 0..1073741824"},
		{"millis", minimal + "engine:\n  popCkStayBufferTime: 1.5ms\n", nil, `x.yaml:20: engine.popCkStayBufferTime: "1.5ms": want whole milliseconds`},
		{"two errors", strings.Replace(strings.Replace(minimal, "batch: 8", "batch: 40", 1), "count: 2", "count: 20000", 1), nil,
			"x.yaml:15: consumers[0].count: 20000 out of range: want 1..10000\nx.yaml:16: consumers[0].batch: 40 out of range: want 1..32"},
		{"undefined group", strings.Replace(minimal, "group: billing", "group: audit", 1), nil,
			`x.yaml:13: consumers[0].group: group "audit" is not defined: want one of billing (the groups defined under groups)`},
	} {
		_, err := Load("x.yaml", []byte(c.text), c.overrides...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s...", c.name, err, c.want)
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T holds no *FieldError", c.name, err)
		}
	}
	// Without groups:, a consumer's group takes RocketMQ's defaults.
	noGroups := strings.Replace(minimal, "groups:\n  - name: billing\n", "", 1)
	if _, err := Load("x.yaml", []byte(noGroups)); err != nil {
		t.Errorf("a scenario without groups: %v", err)
	}
}
