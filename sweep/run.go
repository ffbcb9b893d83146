package sweep

import (
	"context"
	"errors"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
	"popsim/sim"
)

// Outcome is one finished simulation run.
type Outcome struct {
	Summary model.Summary                      // WallSeconds and Params filled in
	Hists   map[string]*hdrhistogram.Histogram // report.HistEndToEnd, report.HistServiceTime, the latency parts (model.Parts)
	Header  []string                           // the run's derived parameters (seed, config hash, fault sites)
}

// RunError is a run that started but did not finish: it hit its event
// budget or time limit. Commands report it as a failed run (exit 1), not
// as bad input.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Interrupted reports whether err comes from a cancelled context: the run
// (or sweep) was stopped, typically by Ctrl-C.
func Interrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// RunOptions are a single run's optional outputs.
type RunOptions struct {
	Trace io.Writer // the text trace, one line per event
	// Progress, when set, is told where the run stands before its first
	// event (with the header) and every sim.ProgressEvery events.
	Progress func(sim.Progress)
	// Reuse, when set, is the simulator's (sim.RunOptions.Reuse): a
	// worker that makes runs one after another passes each the same one.
	Reuse *sim.Reuse
}

// Execute runs scenario s for seed. params label the run in its summary;
// replay is copied into every violation. The run stops soon after ctx is
// cancelled (the simulator polls it every sim.ProgressEvery events) with
// an error for which Interrupted is true. An invalid configuration is an
// ordinary error; hitting the event budget or time limit is a *RunError.
func Execute(ctx context.Context, s *scenarios.Scenario, seed uint64, params map[string]string, replay string, opts RunOptions) (*Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	hook := func(p sim.Progress) error {
		if opts.Progress != nil {
			opts.Progress(p)
		}
		return ctx.Err()
	}
	res, err := sim.Run(s.Config(seed), sim.RunOptions{TraceWriter: opts.Trace, Scenario: s.Name, Replay: replay, Progress: hook, Reuse: opts.Reuse})
	if err != nil {
		if errors.Is(err, sim.ErrEventBudget) || errors.Is(err, sim.ErrTimeLimit) {
			return nil, &RunError{err}
		}
		return nil, err
	}
	sum := res.Summary
	sum.WallSeconds = time.Since(start).Seconds()
	sum.Params = params
	hists := map[string]*hdrhistogram.Histogram{report.HistEndToEnd: res.EndToEnd, report.HistServiceTime: res.ServiceTime}
	for name, h := range res.Parts {
		hists[name] = h
	}
	if res.ReviveLag.TotalCount() > 0 {
		hists[report.HistReviveLag] = res.ReviveLag
	}
	return &Outcome{Summary: sum, Header: res.Header, Hists: hists}, nil
}

// RunSeed runs one seed of s (src with overrides applied) without a trace,
// for sweeps and plans, with reuse (nil: none; RunOptions.Reuse): a run
// that hits a bound is not an error but a failed run (FailedRun), listed
// like any other failing seed.
func RunSeed(ctx context.Context, src *Source, s *scenarios.Scenario, seed uint64, params map[string]string, reuse *sim.Reuse, overrides ...scenarios.Override) (*Outcome, error) {
	replay := src.ReplayCommand(seed, overrides...)
	o, err := Execute(ctx, s, seed, params, replay, RunOptions{Reuse: reuse})
	var re *RunError
	if errors.As(err, &re) {
		return FailedRun(s.Name, seed, params, replay, re), nil
	}
	return o, err
}

// InvariantRunFailed names the violation that stands for a run that did
// not finish.
const InvariantRunFailed = "run-failed"

// FailedRun is the outcome of a run that did not finish: no histograms and
// one run-failed violation carrying the error and the replay command.
func FailedRun(name string, seed uint64, params map[string]string, replay string, err error) *Outcome {
	v := model.Violation{Invariant: InvariantRunFailed, Seed: seed, EventIndex: -1, Detail: err.Error(), Replay: replay}
	return &Outcome{Summary: model.Summary{Scenario: name, Seed: seed, Params: params, Violations: []model.Violation{v}}}
}
