package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"popsim/clock"
	"popsim/pop"
	"popsim/sim/check"
)

// A saved trace checked offline gives the run's own verdict: the same
// ledger, duplicates and violations (liveness ones included, from the
// trace's last phase and commit events).
func TestCheckTraceMatchesRun(t *testing.T) {
	commitLag := shortDefault(3)
	commitLag.Engine.Settings = &pop.Config{}
	*commitLag.Engine.Settings.(*pop.Config) = pop.KVConfig()
	commitLag.Engine.Settings.(*pop.Config).Bugs.CommitOffsetLag = true
	undrained := tinyConfig(PopPush)
	undrained.Producers[0].Arrivals = arrivals("poisson(200/s)")
	undrained.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=0.3)")
	undrained.Drain = 20 * clock.Second
	pull := shortDefault(5)
	pull.Consumers[0].Kind, pull.Consumers[0].Settings = Pull, nil
	pull.Consumers[0].Outcomes = outcomes("outcomes(exception=0.2)")
	simple := shortDefault(6)
	simple.Consumers[0].Kind, simple.Consumers[0].Settings = Simple, &SimpleSettings{AutoRenew: true}
	simple.Groups = []GroupSpec{{Name: "billing", RetryMaxTimes: 1}}
	simple.Consumers[0].Outcomes = outcomes("outcomes(exception=0.3)")
	faults := allFaultFamilies(7)
	faults.Faults.Swarm = true
	for name, cfg := range map[string]Config{"faults": faults, "commit-lag": commitLag, "undrained": undrained, "pull": pull, "simple-dlq": simple} {
		t.Run(name, func(t *testing.T) {
			var text bytes.Buffer
			res, err := Run(cfg, RunOptions{TraceWriter: &text, Replay: "replay " + name})
			if err != nil {
				t.Fatal(err)
			}
			rep, n, err := CheckTrace(&text, check.Options{Seed: cfg.Seed, Replay: "replay " + name})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if n != res.TraceEvents() {
				t.Errorf("checked %d events of %d", n, res.TraceEvents())
			}
			got := []any{rep.Produced, rep.Acked, rep.DLQ, rep.Dropped, rep.Lost, rep.Deliveries, rep.Duplicates, rep.DuplicatesByCause, rep.DroppedByPolicy, rep.Violations}
			want := []any{s.Produced, s.Acked, s.DLQ, s.Dropped, s.Lost, s.Deliveries, s.Duplicates, s.DuplicatesByCause, s.DroppedByPolicy, s.Violations}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("offline verdict differs from the run's (-run +offline):\n%s", d)
			}
			t.Logf("%d events: produced %d, duplicates %d, %d violations", n, s.Produced, s.Duplicates, len(s.Violations))
			for _, v := range s.Violations {
				t.Logf("  %s: %s", v.Invariant, v.Detail)
			}
		})
	}
}

// The runs above must include the liveness verdicts the trace has to carry.
func TestCheckTraceSeesLiveness(t *testing.T) {
	cfg := shortDefault(3)
	eng := pop.KVConfig()
	eng.Bugs.CommitOffsetLag = true
	eng.EnablePopBufferMerge = true // a retry queue's last stage leaves its cached minimum committed
	cfg.Engine.Settings = &eng
	cfg.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=0.1)")
	cfg.Groups = []GroupSpec{{Name: "billing", RetryMaxTimes: 1}}
	var text bytes.Buffer
	if _, err := Run(cfg, RunOptions{TraceWriter: &text}); err != nil {
		t.Fatal(err)
	}
	saved := text.String()
	rep, _, err := CheckTrace(&text, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) == 0 || rep.Violations[0].Invariant != check.InvCommitLag {
		t.Fatalf("violations %v, want commit-offset-lag from the trace's commit events", rep.Violations)
	}
	cut := strings.Replace(saved, " phase c=-1 r=done", " phase c=-1 r=undrained", 1)
	if rep, _, _ = CheckTrace(strings.NewReader(cut), check.Options{}); len(rep.Violations) == 0 || rep.Violations[0].Invariant != check.InvNoDrain {
		t.Fatalf("an undrained end: violations %v, want no-drain first", rep.Violations)
	}
}

func TestCheckTraceNamesTheBadLine(t *testing.T) {
	trace := "0 0.000000 phase c=-1 r=safety\n1 0.000000 subscribe c=0 g=g t=t\n2 0.5 produce c=0 m=1 t=t q=0 o=0\n"
	_, _, err := CheckTrace(strings.NewReader(trace), check.Options{})
	var te *TraceError
	if !errors.As(err, &te) || te.Line != 3 || !strings.Contains(err.Error(), "six decimals") {
		t.Fatalf("error %v, want line 3 and what is wrong with it", err)
	}
	if _, _, err := CheckTrace(strings.NewReader(""), check.Options{}); !errors.As(err, &te) {
		t.Fatalf("an empty trace: %v", err)
	}
}
