package main

import (
	"fmt"
	"runtime"

	"popsim/report"
	"popsim/sweep"
)

func (e *env) cmdPlan(args []string) int {
	fs := e.newFlags("plan", "[-scenario S | -f FILE] -target 'p99<=2s,dup<=0.1%' -search consumers=1..500 [-seeds LIST] [-parallel N] [-out DIR] [-overwrite]",
		"Answers the capacity question directly: the smallest value of the searched parameter (fewest\n"+
			"consumers, smallest invisible time, ...) whose runs meet the target on every clause, over all\n"+
			"the seeds together (latency percentiles from the seeds' merged histograms). It assumes the target,\n"+
			"once met, stays met for larger values, gallops up from lo and then bisects. Runs that break an\n"+
			"invariant never meet a target. Prints the evidence table and writes a plan folder: its report\n"+
			"leads with the question and the answer, and its charts draw the target.")
	var src sweep.Source
	registerSource(fs, &src)
	target := fs.String("target", "", "the `TARGET`: comma-separated metric<=value clauses; metrics mean, p50, p90, p99, p99.9, max (end to end), dup, throughput")
	search := fs.String("search", "", "the searched parameter `name=lo..hi` (a sweep parameter name or -set key)")
	seedList := fs.String("seeds", "", "seeds `LIST` per evaluated value (default: the scenario's seeds)")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "runs at a time, `N` >= 1")
	out := fs.String("out", "", "output `DIR` (default out/<scenario>-plan)")
	overwrite := fs.Bool("overwrite", false, "write into -out even if it holds files popsim did not write there; they are left in place")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	if *target == "" || *search == "" {
		return e.badInput("plan: -target and -search are required, e.g. -target 'p99<=2s,dup<=0.1%%' -search consumers=1..500")
	}
	t, err := sweep.ParseTarget(*target)
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	space, err := sweep.ParseSpace(*search)
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	p, err := sweep.NewPlan(sweep.PlanSpec{Source: src, Target: t, Space: space, Seeds: *seedList, Parallel: *parallel})
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	dir := *out
	if dir == "" {
		dir = p.DefaultDir()
	}
	output, err := sweep.OpenSweepDir(dir, *overwrite)
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	return e.runPlan(p, space, output)
}

func (e *env) runPlan(p *sweep.Plan, space sweep.Space, output *sweep.Output) int {
	fmt.Fprintf(e.stdout, "popsim plan: %s\n", p.Question())
	pr := e.newRunsProgress("plan", 0)
	p.OnRun = pr.finished
	p.OnEval = func(ev sweep.Eval) { e.printEval(space, ev) }
	r, err := p.Run(e.context(), output)
	pr.done()
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	if r.Interrupted {
		if len(r.Evals) == 0 {
			return e.interrupted("no value had been evaluated; nothing was left")
		}
		return e.interrupted(fmt.Sprintf("after %d evaluated values; %s is marked %s", len(r.Evals), output.Dir, sweep.IncompleteFile))
	}
	e.printEvidence(p, space, r)
	fmt.Fprintf(e.stdout, "report and charts: %s/%s\n", output.Dir, report.ReportFile)
	switch {
	case r.Failed:
		fmt.Fprintln(e.stdout, "FAIL: some runs broke an invariant (see the failing seeds above)")
		return exitViolation
	case !r.Found:
		fmt.Fprintf(e.stdout, "no %s up to %s meets the target\n", space.Name, space.Format(space.Hi))
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "answer: %s\n", p.AnswerText(r))
	return exitOK
}

// printEval prints one evaluated value as it is found, and its failing
// seeds.
func (e *env) printEval(space sweep.Space, ev sweep.Eval) {
	m := ev.Metrics
	for _, s := range ev.Failing {
		v := s.Violations[0]
		fmt.Fprintf(e.stdout, "  FAIL seed %d %s=%s: %s: %s\n    replay: %s\n", s.Seed, space.Name, space.Format(ev.Value), v.Invariant, v.Detail, v.Replay)
	}
	fmt.Fprintf(e.stdout, "  %s=%-10s p99 %9.2f ms  dup %7.3f%%  %9.1f acks/s  violations %d  %s\n", space.Name, space.Format(ev.Value),
		float64(report.LatencyOf(m.EndToEnd).P99)/1000, m.DupPct, m.Throughput, m.Violations, verdictWord(ev.Meets))
}

func verdictWord(ok bool) string {
	if ok {
		return "meets"
	}
	return "misses"
}

// printEvidence prints every evaluated value in increasing order.
func (e *env) printEvidence(p *sweep.Plan, space sweep.Space, r sweep.PlanResult) {
	w := e.stdout
	fmt.Fprintf(w, "\nevidence (%d seeds per value; latency in ms from the merged end-to-end histogram):\n", len(p.Seeds()))
	fmt.Fprintf(w, "%12s %9s %9s %9s %9s %9s %12s %5s  %s\n", space.Name, "mean", "p50", "p99", "p99.9", "dup %", "acks/s", "viol", "target")
	for _, ev := range r.Evals {
		m := ev.Metrics
		l := report.LatencyOf(m.EndToEnd)
		mark := ""
		if r.Found && ev.Value == r.Answer {
			mark = "  <- answer"
		}
		fmt.Fprintf(w, "%12s %9.2f %9.2f %9.2f %9.2f %9.3f %12.1f %5d  %s%s\n", space.Format(ev.Value),
			float64(l.Mean)/1000, float64(l.P50)/1000, float64(l.P99)/1000, float64(l.P999)/1000, m.DupPct, m.Throughput, m.Violations, verdictWord(ev.Meets), mark)
	}
}
