package sim

import (
	"reflect"
	"slices"
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
// must hold something of each kind after the first two runs (the
// checkpoint path's slabs come from the second), or the test would
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
		if n := reuseLens(&re); i == 1 && slices.Contains(n[:], 0) {
			t.Fatalf("after a KV and a checkpoint run the Reuse holds %v log chunks, history chunks, counts, record blocks, window chunks and the checkpoint path's slabs: want some of each", n)
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

// reuseLens is how many of each kind of buffer r holds.
func reuseLens(r *Reuse) [6]int {
	m := &r.meter
	return [6]int{r.logs.Len(), r.history.Len(), len(m.counts), len(m.obs), len(m.msgs), r.logs.Slabs()}
}

// A Reuse given the same run again and again holds as much after each as
// after the first: every run takes back what the last one left.
func TestReuseHoldsNoMore(t *testing.T) {
	for name, cfg := range reuseConfigs() {
		var re Reuse
		var first [6]int
		for i := range 3 {
			if _, err := Run(cfg, RunOptions{Reuse: &re}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if n := reuseLens(&re); i == 0 {
				first = n
			} else if n != first {
				t.Fatalf("%s: the Reuse holds %v after run %d, %v after the first", name, n, i+1, first)
			}
		}
	}
}
