package pop_test

// The rapid state machine: the same operations as the differential test
// (diff_test.go), drawn and shrunk by pgregory.net/rapid. Every action runs
// on the engine and the reference and their results must agree; after every
// action (the "" key) their observable state must agree and the engine's
// own invariants (Broker.CheckInvariants) must hold. A fresh pair of brokers
// and a fresh configuration are drawn for every check.
//
// Budget: 300 checks of about 8 x 30 steps (-rapid.steps) by default, a
// few seconds. Long runs:
//
//	RAPID_CHECKS=20000 go test ./pop -run TestStateMachine
//
// Unless -rapid.seed or RAPID_SEED chooses one, the seed is fixed so that
// `go test` is deterministic; pass a seed to explore elsewhere. Failures
// are shrunk and saved under testdata/rapid/TestStateMachine/, which every
// later `go test` replays: commit them as regression cases.

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"popsim/internal/rapidfail"
	"popsim/pop"
)

// Defaults when the user chose none (flag or RAPID_* variable): a fixed
// seed, so that `go test` is deterministic, and a few hundred checks.
var rapidDefaults = []struct{ flag, env, value string }{
	{"rapid.seed", "RAPID_SEED", "20261130"},
	{"rapid.checks", "RAPID_CHECKS", "300"},
}

// rounds is how many Repeat rounds one check runs (about rounds x
// -rapid.steps actions): POP bugs need pops, time and revives to line up.
const rounds = 8

func pinRapidDefaults(t *testing.T) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, d := range rapidDefaults {
		if _, env := os.LookupEnv(d.env); set[d.flag] || env {
			continue
		}
		if err := flag.Set(d.flag, d.value); err != nil {
			t.Fatalf("setting -%s: %v", d.flag, err)
		}
	}
}

func TestStateMachine(t *testing.T) {
	pinRapidDefaults(t)
	rapid.Check(rapidfail.Strict(t), func(rt *rapid.T) { runMachine(rt, genConfig, actions) })
}

// TestStateMachineFIFO is the state machine over the orderly mix
// (fifoActions): FIFO pops with re-entrant attemptIds, their acks and
// renewals, the orderly timers, restarts and lock contention.
func TestStateMachineFIFO(t *testing.T) {
	pinRapidDefaults(t)
	rapid.Check(rapidfail.Strict(t), func(rt *rapid.T) { runMachine(rt, genFifoConfig, fifoActions) })
}

// runMachine draws a configuration and runs rounds of the actions on a
// fresh engine and reference.
func runMachine(rt *rapid.T, gen func(chooser, bool, bool) pop.Config, acts []struct {
	name   string
	weight int
	gen    func(chooser, *harness) op
	ready  func(*harness) bool
}) {
	{
		c := chooser{t: rt}
		merge := rapid.Bool().Draw(rt, "cfg.enablePopBufferMerge")
		kv := rapid.Bool().Draw(rt, "cfg.popConsumerKVServiceEnable")
		h, err := newHarness(gen(c, merge, kv))
		if err != nil {
			rt.Fatalf("harness: %v", err)
		}
		machine := map[string]func(*rapid.T){"": func(rt *rapid.T) { checkState(rt, h) }}
		for _, a := range acts { // a is per iteration (Go 1.22)
			act := func(rt *rapid.T) {
				if a.ready != nil && !a.ready(h) {
					rt.Skip("nothing to " + a.name)
				}
				o := a.gen(chooser{t: rt}, h)
				h.ops = append(h.ops, o.String())
				if err := h.apply(o); err != nil {
					rt.Fatalf("%s: %v", o, err)
				}
			}
			// Repeat draws keys uniformly: weight an action by giving it
			// several keys (pop, pop_2, ...).
			for i := 1; i <= (a.weight+1)/2; i++ {
				machine[weightedKey(a.name, i)] = act
			}
		}
		for i := 0; i < rounds; i++ {
			rt.Repeat(machine)
		}
	}
}

// checkState is the "" key: the engine and the reference agree, and the
// engine's invariants hold.
func checkState(rt *rapid.T, h *harness) {
	if d := diff(snap(h.ref), snap(h.eng)); d != "" {
		rt.Fatalf("state differs (-ref +engine) after %d ops:\n%s", len(h.ops), d)
	}
	if err := h.eng.CheckInvariants(); err != nil {
		rt.Fatalf("after %d ops: %v", len(h.ops), err)
	}
}

func weightedKey(name string, i int) string {
	if i == 1 {
		return name
	}
	return name + "_" + strconv.Itoa(i)
}
