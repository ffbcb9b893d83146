package main

import (
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"

	"popsim/clock"
	"popsim/sim"
	"popsim/sweep"
)

// Progress of a single run: nothing for the first runQuiet of wall time
// (short runs stay quiet), then a line on stderr every runEveryTerm on a
// terminal (rewritten in place) or every runEveryLog otherwise.
const (
	runQuiet     = 2 * time.Second
	runEveryTerm = 250 * time.Millisecond
	runEveryLog  = 5 * time.Second
)

// runProgress prints a run's header when it starts and its progress on
// stderr while it runs: virtual time, events, and an ETA from the wall
// time the safety phase has taken so far (the liveness phase that follows
// has no known length, so it shows as "draining").
type runProgress struct {
	e             *env
	safety        clock.Duration // the scenario's duration: the safety phase
	start, last   time.Time
	printed, term bool
}

func (e *env) newRunProgress(safety clock.Duration) *runProgress {
	now := e.clock()
	return &runProgress{e: e, safety: safety, start: now, last: now, term: e.stderrIsTerminal}
}

// update is the run's sim.RunOptions.Progress (through sweep.RunOptions).
func (p *runProgress) update(pr sim.Progress) {
	for _, l := range pr.Header {
		fmt.Fprintf(p.e.stdout, "  %s\n", l)
	}
	now := p.e.clock()
	every := runEveryLog
	if p.term {
		every = runEveryTerm
	}
	if pr.Header != nil || now.Sub(p.start) < runQuiet || now.Sub(p.last) < every {
		return
	}
	p.last, p.printed = now, true
	line := progressLine(pr, p.safety, now.Sub(p.start))
	if p.term {
		fmt.Fprintf(p.e.stderr, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.e.stderr, line)
	}
}

// done clears a progress line left on a terminal.
func (p *runProgress) done() {
	if p.printed && p.term {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}

// progressLine is "run: 12.0 s of 30 s virtual (40%), 1.2M events, 3 s wall, ETA 5 s".
func progressLine(pr sim.Progress, safety clock.Duration, wall time.Duration) string {
	head := fmt.Sprintf("run: %s virtual, %s events, %s wall", secs(pr.Virtual.Seconds()), count(pr.Tasks), secs(wall.Seconds()))
	if pr.Virtual >= safety || pr.Virtual <= 0 {
		return head + ", draining (liveness phase: faults off, until everything settles)"
	}
	f := float64(pr.Virtual) / float64(safety)
	eta := time.Duration(float64(wall) * (1 - f) / f)
	return fmt.Sprintf("%s; safety phase %.0f%% of %s, ETA %s (then draining)", head, 100*f, secs(safety.Seconds()), secs(eta.Seconds()))
}

func secs(s float64) string {
	switch {
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	case s < 600:
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f min", s/60)
}

func count(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprint(n)
	case n < 10_000_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// runsProgress shows a sweep's or plan's progress on stderr: a bar on a
// terminal, else one line per finished run (so logs of CI jobs and
// nohup'd shards show it too).
type runsProgress struct {
	e     *env
	bar   *progressbar.ProgressBar
	start time.Time
}

// newRunsProgress starts a display; total is 0 when unknown (plans).
func (e *env) newRunsProgress(what string, total int) *runsProgress {
	p := &runsProgress{e: e, start: e.clock()}
	if e.stderrIsTerminal {
		n := total
		if n == 0 {
			n = -1 // a spinner
		}
		p.bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(total > 0),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// finished is a sweep.Sweep.Run or sweep.Plan progress callback; calls
// come one at a time.
func (p *runsProgress) finished(f sweep.Finished) {
	if p.bar != nil {
		p.bar.Add(1)
		return
	}
	verdict := "PASS"
	switch {
	case f.Err != nil:
		verdict = "ERROR: " + f.Err.Error()
	case len(f.Outcome.Summary.Violations) > 0:
		verdict = fmt.Sprintf("FAIL (%d violations)", len(f.Outcome.Summary.Violations))
	}
	of, eta := "", ""
	if f.Total > 0 {
		of = fmt.Sprintf("/%d", f.Total)
		wall := p.e.clock().Sub(p.start)
		eta = fmt.Sprintf(", ETA %s", secs((time.Duration(float64(wall) * float64(f.Total-f.Done) / float64(f.Done))).Seconds()))
	}
	fmt.Fprintf(p.e.stderr, "[%d%s] %s seed %d: %s, %s wall%s\n", f.Done, of, sweep.PointLabel(f.Point), f.Job.Seed, verdict, secs(f.Wall.Seconds()), eta)
}

// done removes the bar.
func (p *runsProgress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
