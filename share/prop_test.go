package share_test

// The rapid state machine: the same operations as the differential test
// (diff_test.go), drawn and shrunk by pgregory.net/rapid. Every action runs
// on the engine and the reference and their results must agree; after every
// action (the "" key) their observable state must agree and the engine's
// own invariants (Broker.CheckInvariants) must hold. A fresh pair of brokers
// and a fresh swarm configuration are drawn for every check.
//
// Budget: 200 checks of about 6 x 30 steps (-rapid.steps) by default, a
// few seconds. Long runs:
//
//	RAPID_CHECKS=20000 go test ./share -run TestStateMachine
//
// Unless -rapid.seed or RAPID_SEED chooses one, the seed is fixed so that
// `go test` is deterministic. Failures are shrunk and saved under
// testdata/rapid/TestStateMachine/, which every later `go test` replays:
// commit them as regression cases.

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"popsim/internal/rapidfail"
)

var rapidDefaults = []struct{ flag, env, value string }{
	{"rapid.seed", "RAPID_SEED", "20261201"},
	{"rapid.checks", "RAPID_CHECKS", "200"},
}

// rounds is how many Repeat rounds one check runs.
const rounds = 6

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
	rapid.Check(rapidfail.Strict(t), func(rt *rapid.T) {
		h, err := newHarness(chooser{t: rt})
		if err != nil {
			rt.Fatalf("harness: %v", err)
		}
		machine := map[string]func(*rapid.T){"": func(rt *rapid.T) {
			if d := diff(snap(h.ref), snap(h.eng)); d != "" {
				rt.Fatalf("state differs (-ref +engine) after %d ops:\n%s", len(h.ops), d)
			}
			if err := h.checkLeases(); err != nil {
				rt.Fatalf("after %d ops: %v", len(h.ops), err)
			}
			if err := h.eng.CheckInvariants(); err != nil {
				rt.Fatalf("after %d ops: %v", len(h.ops), err)
			}
		}}
		for _, a := range actions { // a is per iteration (Go 1.22)
			act := func(rt *rapid.T) {
				o := a.gen(chooser{t: rt}, h)
				h.ops = append(h.ops, o.String())
				if err := h.apply(o); err != nil {
					rt.Fatalf("%s: %v", o, err)
				}
			}
			// Repeat draws keys uniformly: weight an action by giving it
			// several keys (fetch, fetch_2, ...).
			for i := 1; i <= (a.weight+3)/4; i++ {
				machine[weightedKey(a.name, i)] = act
			}
		}
		for i := 0; i < rounds; i++ {
			rt.Repeat(machine)
		}
	})
}

func weightedKey(name string, i int) string {
	if i == 1 {
		return name
	}
	return name + "_" + strconv.Itoa(i)
}
