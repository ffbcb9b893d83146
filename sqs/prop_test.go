package sqs_test

// The rapid state machine: the same operations as the differential test
// (diff_test.go), drawn and shrunk by pgregory.net/rapid. Every action runs
// on the engine and the reference and their results must agree; after
// every action (the "" key) their observable state must agree and the
// engine's own invariants (Service.CheckInvariants) must hold. A fresh pair
// of services and a fresh world are drawn for every check.
//
// Budget: 300 checks of about 4 x 30 steps (-rapid.steps) by default, a
// few seconds. Long runs:
//
//	RAPID_CHECKS=20000 go test ./sqs -run TestStateMachine
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
)

var rapidDefaults = []struct{ flag, env, value string }{
	{"rapid.seed", "RAPID_SEED", "20261201"},
	{"rapid.checks", "RAPID_CHECKS", "300"},
}

// rounds is how many Repeat rounds one check runs: leases need receives,
// time and deadlines to line up.
const rounds = 4

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
		h, err := newHarness(genWorld(chooser{t: rt}))
		if err != nil {
			rt.Fatalf("harness: %v", err)
		}
		machine := map[string]func(*rapid.T){"": func(rt *rapid.T) {
			if err := h.check(); err != nil {
				rt.Fatalf("after %d ops: %v", len(h.ops), err)
			}
		}}
		for _, a := range actions {
			act := func(rt *rapid.T) {
				if a.ready != nil && !a.ready(h) {
					rt.Skip("nothing to " + a.name)
				}
				o := a.gen(chooser{t: rt}, h)
				if err := h.apply(o); err != nil {
					rt.Fatalf("%s: %v", o, err)
				}
			}
			// Repeat draws keys uniformly: weight an action by giving it
			// several keys (send, send_2, ...).
			for i := 1; i <= (a.weight+1)/2; i++ {
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
