package sim

import (
	"reflect"
	"testing"

	"popsim/clock"
	"popsim/pop"
)

// reuseConfigs are runs that store and release messages differently: the
// KV path (with simple consumers too, whose consumed chunks the broker
// releases and reuses within the run), the checkpoint path (its revive
// topic), and three brokers that restart.
func reuseConfigs() map[string]Config {
	kv := func(kind ConsumerKind) Config {
		cfg := DefaultConfig()
		cfg.Duration = 8 * clock.Second
		cfg.Consumers[0].Kind = kind
		pc := pop.DefaultConfig()
		pc.PopConsumerKVServiceEnable = true
		cfg.Engine = EngineSpec{Kind: RocketMQ, Settings: &pc}
		return cfg
	}
	ck := DefaultConfig()
	ck.Duration = 8 * clock.Second
	return map[string]Config{"kv": kv(PopPush), "kv-simple": kv(Simple), "checkpoint": ck, "cluster": clusterConfig(3, Simple, false)}
}

// Runs made one after another with one Reuse, in a mixed order, give the
// same summaries and traces as the same runs each made afresh: what a run
// takes from a Reuse carries nothing of the run that left it. The Reuse
// must hold log and history chunks after the first run, or the test would
// compare fresh runs with fresh runs.
func TestReuseChangesNoRun(t *testing.T) {
	cfgs := reuseConfigs()
	order := []string{"kv", "checkpoint", "kv-simple", "cluster", "kv-simple", "kv", "cluster", "checkpoint"}
	fresh := map[string]*Result{}
	for name, cfg := range cfgs {
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fresh[name] = r
	}
	var re Reuse
	for i, name := range order {
		r, err := Run(cfgs[name], RunOptions{Reuse: &re})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i == 0 && (re.logs.Len() == 0 || re.history.Len() == 0) {
			t.Fatalf("after a run the Reuse holds %d log chunks and %d history chunks, want some of each", re.logs.Len(), re.history.Len())
		}
		want := fresh[name]
		if r.Summary.TraceXXH3 != want.Summary.TraceXXH3 {
			t.Fatalf("run %d (%s) with a Reuse: trace %s, afresh %s", i, name, r.Summary.TraceXXH3, want.Summary.TraceXXH3)
		}
		if !reflect.DeepEqual(r.Summary, want.Summary) {
			t.Fatalf("run %d (%s) with a Reuse: the summary differs from the run made afresh", i, name)
		}
	}
}
