package sim

import (
	"fmt"
	"testing"

	"popsim/model"
	"popsim/pop"
)

// orderlyConfig is the default load, faults included, consumed orderly by
// one group of the given kind on the given POP path.
func orderlyConfig(seed uint64, kind ConsumerKind, kv bool) Config {
	cfg := shortDefault(seed)
	cfg.Groups = []GroupSpec{{Name: "billing", ConsumeMessageOrderly: true}}
	cfg.Consumers[0].Kind = kind
	// Orderly consumers parked on all queues are woken by the lock-free
	// timer's 100 ms ticks (an ack wakes only the queue's own key): a
	// queue serves about one batch per tick, so the load is lighter.
	cfg.Producers[0].Arrivals = arrivals("poisson(200/s)")
	if kind == Simple {
		simpleSettings(&cfg.Consumers[0]).Reentrant = true
	}
	c := pop.DefaultConfig()
	if kv {
		c = pop.KVConfig()
	}
	cfg.Engine.Settings = &c
	return cfg
}

// Orderly consumption under the default faults keeps the order invariants
// and at-least-once on both paths, with both POP clients.
func TestOrderlyUnderFaults(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple} {
		for _, kv := range []bool{true} { // the simulator drives the KV path only (the checkpoint path's integration is separate work)
			for seed := uint64(1); seed <= 2; seed++ {
				t.Run(fmt.Sprintf("%s/kv=%v/seed=%d", kind, kv, seed), func(t *testing.T) {
					r := runKeep(t, orderlyConfig(seed, kind, kv))
					noViolations(t, r)
					if len(only(r, model.EvLapse)) == 0 {
						t.Error("no lease lapsed in place: the run did not exercise FIFO redelivery")
					}
					t.Logf("acked %d, lapses %d", r.Summary.Acked, len(only(r, model.EvLapse)))
				})
			}
		}
	}
}
