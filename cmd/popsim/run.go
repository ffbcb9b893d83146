package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
	"popsim/stats"
	"popsim/sweep"
)

func (e *env) cmdRun(args []string) int {
	fs := e.newFlags("run", "[-scenario NAME | -f FILE] [-seed N] [-out DIR] [-overwrite] [-force] [-trace FILE] [-set key=value ...]",
		"Runs one scenario for one seed: prints its header (seed, config hash, fault sites), progress\n"+
			"on stderr when it takes a while, and a summary, and writes summary.json, the .hgrm files,\n"+
			"histograms.hlog, charts and report.md to the output folder. The folder is checked before the\n"+
			"run: it must be writable and new, empty or an earlier run's folder.")
	var src sweep.Source
	force := registerSource(fs, &src)
	var seed seedFlag
	fs.Var(&seed, "seed", "the run's seed `N` (default: the scenario's seed)")
	out := fs.String("out", "", "output `DIR` (default out/<scenario>-seed<N>)")
	overwrite := fs.Bool("overwrite", false, "write into -out even if it holds files popsim did not write there (a sweep, other files); they are left in place")
	tracePath := fs.String("trace", "", "write the full event trace to `FILE` (one line per event)")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	s, err := src.Load()
	if err != nil {
		return e.badInput("%v", err)
	}
	if err := checkEstimate(s, 1, *force); err != nil {
		return e.badInput("%v", err)
	}
	if !seed.set {
		seed.v = s.Seed
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("out", fmt.Sprintf("%s-seed%d", s.Name, seed.v))
	}
	output, err := sweep.OpenRunDir(dir, *overwrite, *tracePath)
	if err != nil {
		return e.badInput("run: %v", err)
	}
	o, code := e.runOnce(&src, s, seed.v, *tracePath, nil)
	if o == nil {
		output.Abandon()
		return code
	}
	e.printRun(o)
	if err := sweep.WriteRun(dir, o); err != nil {
		return e.badInput("the run finished but its report could not be written: %v", err)
	}
	fmt.Fprintf(e.stdout, "\nwrote %s (report.md, summary.json, end_to_end.hgrm, service_time.hgrm, the parts' .hgrm, histograms.hlog, charts)\n", dir)
	return e.verdict(o)
}

// runOnce runs one seed, printing its header first and its progress on
// stderr, writing the trace to tracePath (when given) and to extra (when
// not nil). It returns nil and the exit code when the run could not start
// (2), did not finish (1) or was interrupted (130, the trace removed).
func (e *env) runOnce(src *sweep.Source, s *scenarios.Scenario, seed uint64, tracePath string, extra io.Writer) (*sweep.Outcome, int) {
	replay := src.ReplayCommand(seed)
	fmt.Fprintf(e.stdout, "popsim: scenario %s (%s), seed %d\n", s.Name, s.Source, seed)
	tf, w, err := openTrace(tracePath, extra)
	if err != nil {
		return nil, e.badInput("-trace: %v", err)
	}
	if tf != nil {
		defer tf.Abort()
	}
	pr := e.newRunProgress(s.Duration)
	o, err := sweep.Execute(e.context(), s, seed, nil, replay, sweep.RunOptions{Trace: w, Progress: pr.update})
	pr.done()
	if err == nil && tf != nil {
		err = tf.Commit()
	}
	if err != nil {
		return nil, e.runFailed(err, replay)
	}
	if tracePath != "" {
		fmt.Fprintf(e.stdout, "trace: %s\n", tracePath)
	}
	return o, 0
}

// openTrace returns the writer a run's trace goes to: the file at path,
// written atomically (nil when path is ""), and extra (when not nil).
func openTrace(path string, extra io.Writer) (*report.AtomicFile, io.Writer, error) {
	if path == "" {
		return nil, extra, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	tf, err := report.CreateAtomic(path)
	if err != nil {
		return nil, nil, err
	}
	if extra == nil {
		return tf, tf, nil
	}
	return tf, io.MultiWriter(tf, extra), nil
}

// runFailed reports a run that could not start (bad input, exit 2), did
// not finish (a bound was hit, exit 1) or was interrupted (exit 130).
func (e *env) runFailed(err error, replay string) int {
	var re *sweep.RunError
	switch {
	case sweep.Interrupted(err):
		return e.interrupted("the run was stopped; nothing was written")
	case errors.As(err, &re):
		fmt.Fprintf(e.stderr, "popsim: the run failed: %v\n  replay: %s\n", err, replay)
		return exitViolation
	}
	return e.badInput("%v", err)
}

// verdict prints each violation with its replay command and returns the
// exit code.
func (e *env) verdict(o *sweep.Outcome) int {
	vs := o.Summary.Violations
	if len(vs) == 0 {
		fmt.Fprintln(e.stdout, "PASS: every invariant held")
		return exitOK
	}
	fmt.Fprintf(e.stdout, "FAIL: %d violation(s)\n", len(vs))
	for i, v := range vs {
		fmt.Fprintf(e.stdout, "  %s at event %d", v.Invariant, v.EventIndex)
		if v.Msg != "" {
			fmt.Fprintf(e.stdout, " (message %s)", v.Msg)
		}
		fmt.Fprintf(e.stdout, ": %s\n", v.Detail)
		// Violations of one run share their replay command: print it
		// after the last of a run of equal ones.
		if i == len(vs)-1 || vs[i+1].Replay != v.Replay {
			fmt.Fprintf(e.stdout, "    replay: %s\n", v.Replay)
		}
	}
	fmt.Fprintf(e.stdout, "seed %d, config_sha256 %s, %s\n", o.Summary.Seed, o.Summary.ConfigSHA256, buildStamp())
	fmt.Fprintln(e.stdout, "A seed replays exactly only with the same build and scenario; after a code change it may not.")
	return exitViolation
}

// printRun prints a readable summary of a run (its header was printed
// before it started).
func (e *env) printRun(o *sweep.Outcome) {
	w, s := e.stdout, o.Summary
	fmt.Fprintf(w, "\n%-22s %d produced, %d acked, %d to DLQ, %d dropped by policy, %d lost\n", "messages", s.Produced, s.Acked, s.DLQ, s.Dropped, s.Lost)
	fmt.Fprintf(w, "%-22s %d deliveries, %d duplicates (%.3f%% of produced)%s\n", "deliveries", s.Deliveries, s.Duplicates, pct(s.Duplicates, s.Produced), counts(s.DuplicatesByCause))
	if len(s.DroppedByPolicy) > 0 {
		fmt.Fprintf(w, "%-22s%s\n", "dropped by policy", counts(s.DroppedByPolicy))
	}
	printNotDone(w, s.AckedNotDone, s.Produced)
	fmt.Fprintf(w, "%-22s %s\n", "end to end (ms)", latencyLine(s.EndToEnd))
	within := s.Intervals.Level > 0
	if within {
		fmt.Fprintf(w, "%-22s %s\n", "", intervalsLine(s.Intervals.EndToEnd))
	}
	fmt.Fprintf(w, "%-22s %s\n", "service time (ms)", latencyLine(s.ServiceTime))
	if within {
		fmt.Fprintf(w, "%-22s %s\n", "", intervalsLine(s.Intervals.ServiceTime))
	}
	for _, g := range s.Groups {
		fmt.Fprintf(w, "%-22s %s on %s: %d produced, %d acked, %d to DLQ, %d dropped, %d lost; end to end (ms) %s\n", "group",
			g.Group, g.Topic, g.Produced, g.Acked, g.DLQ, g.Dropped, g.Lost, latencyLine(g.EndToEnd))
	}
	fmt.Fprintf(w, "%-22s %.1f acks/s after warm-up%s\n", "throughput", s.ThroughputPerSec, ivSuffix(s.Intervals.ThroughputPerSec))
	if h := s.HeadOfLine; h != nil {
		fmt.Fprintf(w, "%-22s %s\n", "head-of-line blocking", report.HeadOfLineLine(*h))
	}
	if within {
		iv := s.Intervals.DuplicatesPct
		fmt.Fprintf(w, "%-22s %s%%%s of the messages stored after the warm-up\n", "duplicates within run", stats.FormatNumber(iv.Est), ivSuffix(iv))
		fmt.Fprintf(w, "%-22s %s\n", "warm-up", s.Warmup)
		printBreakdown(w, s)
		for _, n := range s.Notes {
			fmt.Fprintf(w, "%-22s %s\n", "note", n)
		}
	}
	printBroker(w, s.Broker)
	fmt.Fprintf(w, "%-22s %d events, %.1f s virtual, %.2f s wall\n", "simulation", s.SimEvents, s.SimSeconds, s.WallSeconds)
	if len(s.Coverage) > 0 {
		fmt.Fprintf(w, "%-22s%s\n", "faults exercised", counts(s.Coverage))
	}
}

// printNotDone prints the messages acked and then not done (the
// application's commit failed after the ack), when there are any: the
// application's side of at-least-once, never a violation.
func printNotDone(w io.Writer, notDone, produced int64) {
	if notDone > 0 {
		fmt.Fprintf(w, "%-22s %d (%.3f%% of produced): the application's commit failed after the ack; no retry comes, "+
			"the application owns them (not a violation)\n", "acked, not done", notDone, pct(notDone, produced))
	}
}

// intervalsLine renders a latency's within-run intervals in ms: "95%
// within run: mean 16.41 [16.10, 16.72] batch means, p50 ... (no
// interval: not enough data), ...".
func intervalsLine(l model.LatencyIntervals) string {
	ms := func(us float64) string { return stats.FormatNumber(us / 1000) }
	part := func(name string, iv model.Interval) string {
		if iv.OK {
			return fmt.Sprintf("%s %s [%s, %s] %s", name, ms(iv.Est), ms(iv.Lo), ms(iv.Hi), iv.Method)
		}
		return fmt.Sprintf("%s %s (no interval: %s)", name, ms(iv.Est), shortReason(iv.Note))
	}
	return fmt.Sprintf("%s within run: %s, %s, %s, %s; max: none", levelPct(l.Mean.Level), part("mean", l.Mean), part("p50", l.P50), part("p90", l.P90), part("p99", l.P99))
}

// ivSuffix renders an interval after its estimate: " [986.7, 1006] 95%
// batch ratio", or why there is none.
func ivSuffix(iv model.Interval) string {
	switch {
	case iv.OK:
		return fmt.Sprintf(" [%s, %s] %s %s", stats.FormatNumber(iv.Lo), stats.FormatNumber(iv.Hi), levelPct(iv.Level), iv.Method)
	case iv.Level > 0:
		return " (no interval: " + shortReason(iv.Note) + ")"
	}
	return ""
}

// shortReason is the first clause of an interval's note: why there is
// none, without the batch counts.
func shortReason(note string) string {
	for _, sep := range []string{":", " (", " at "} {
		if i := strings.Index(note, sep); i > 0 {
			note = note[:i]
		}
	}
	return note
}

// printBreakdown prints where the time went: each part's mean (and its
// share of the mean end-to-end latency) and its p99.
func printBreakdown(w io.Writer, s model.Summary) {
	if len(s.Breakdown.Parts) == 0 || s.EndToEnd.Count == 0 {
		return
	}
	var mean, p99 []string
	for _, p := range s.Breakdown.Parts {
		name := strings.ReplaceAll(p.Name, "_", " ")
		mean = append(mean, fmt.Sprintf("%s %.2f (%.1f%%)", name, float64(p.Mean)/1000, pct(p.Mean, s.EndToEnd.Mean)))
		p99 = append(p99, fmt.Sprintf("%s %.2f", name, float64(p.P99)/1000))
	}
	fmt.Fprintf(w, "%-22s mean %s\n", "where the time goes", strings.Join(mean, ", "))
	fmt.Fprintf(w, "%-22s p99  %s\n", "  (ms, parts add up)", strings.Join(p99, ", "))
	if n := s.Breakdown.Unattributed; n > 0 {
		fmt.Fprintf(w, "%-22s %d measured messages in no part\n", "", n)
	}
}

// printBroker prints the broker's utilisation and queueing, when the run
// had a broker cost model: the cores, then each pool that served requests.
func printBroker(w io.Writer, u *model.BrokerUsage) {
	if u == nil {
		return
	}
	fmt.Fprintf(w, "%-22s %d cores %.1f%% busy (periodic work %.1f%%); wait at the broker mean %.2f p99 %.2f ms over %d requests\n", "broker",
		u.Cores, 100*u.Utilization, 100*u.Background, float64(u.QueueDelay.Mean)/1000, float64(u.QueueDelay.P99)/1000, u.QueueDelay.Count)
	for _, p := range u.Pools {
		if p.Requests == 0 {
			continue
		}
		fmt.Fprintf(w, "%-22s %s: %d threads %.1f%% busy, %d requests, wait mean %.2f p99 %.2f ms, service mean %.2f ms\n", "",
			p.Name, p.Threads, 100*p.Utilization, p.Requests, float64(p.QueueDelay.Mean)/1000, float64(p.QueueDelay.P99)/1000, float64(p.Service.Mean)/1000)
	}
	if u.LockWaits > 0 {
		fmt.Fprintf(w, "%-22s %d pops waited for their pop lock: mean %.2f p99 %.2f ms\n", "", u.LockWaits, float64(u.LockWait.Mean)/1000, float64(u.LockWait.P99)/1000)
	}
	for i := range u.Brokers {
		x := &u.Brokers[i]
		fmt.Fprintf(w, "%-22s broker %d of %d: %d cores %.1f%% busy; wait at the broker mean %.2f p99 %.2f ms over %d requests\n", "",
			i+1, len(u.Brokers), x.Cores, 100*x.Utilization, float64(x.QueueDelay.Mean)/1000, float64(x.QueueDelay.P99)/1000, x.QueueDelay.Count)
	}
}

func latencyLine(l model.Latency) string {
	if l.Count == 0 {
		return "no samples"
	}
	ms := func(us int64) string { return fmt.Sprintf("%.2f", float64(us)/1000) }
	return fmt.Sprintf("mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (%d samples)",
		ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), l.Count)
}

// counts renders a map as " k=v k=v" in key order, zero entries omitted.
func counts(m map[string]int64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			fmt.Fprintf(&b, " %s=%d", k, m[k])
		}
	}
	return b.String()
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
