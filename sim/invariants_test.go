//go:build invariants

package sim

import (
	"errors"
	"strings"
	"testing"

	"popsim/clock"
)

// failingEngine is an engine whose structural self-check fails.
type failingEngine struct{ Engine }

func (failingEngine) CheckInvariants() error { return errors.New("broken on purpose") }

// Under the invariants tag the loop runs the engine's self-check every
// invariantsEvery tasks and stops the run at the first broken rule.
func TestEngineInvariantsAreChecked(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = arrivals("poisson(500/s)")
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "engine invariant broken") || !strings.Contains(msg, "broken on purpose") {
			t.Fatalf("recovered %q, want the engine's broken invariant", msg)
		}
	}()
	_, err := Run(cfg, RunOptions{script: []scriptStep{{after: clock.Second, f: func(s *sim) { s.eng = failingEngine{s.eng} }}}})
	t.Fatalf("the run ended (%v) without checking the engine's invariants", err)
}
