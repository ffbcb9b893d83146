package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"popsim/report"
	"popsim/stats"
	"popsim/sweep"
)

func (e *env) cmdPlan(args []string) int {
	fs := e.newFlags("plan", "[-scenario S | -f FILE] -target 'p99<=2s,dup<=0.1%' -search consumers=1..500 [-seeds LIST] [-max-seeds N] [-level L] [-parallel N] [-out DIR] [-overwrite]",
		"Answers the capacity question directly: the smallest value of the searched parameter (fewest\n"+
			"consumers, smallest invisible time, ...) whose runs meet every clause of the target, with its\n"+
			"uncertainty. At each value it tried, it runs seeds until a t interval over the per-seed values\n"+
			"(each seed's p99, duplicate share, ...) is clearly on one side of the target, or -max-seeds runs\n"+
			"out (then the value is undecided); each look uses a stricter level so that all of them together\n"+
			"keep -level. It assumes the target, once met, stays met for larger values: it gallops up from lo\n"+
			"and bisects (steered by the estimates where a value is undecided), then tries every value between\n"+
			"the largest that clearly misses and the smallest that clearly meets. Runs that break an invariant\n"+
			"never meet a target. Prints every evaluated value with its decision and interval, then the answer,\n"+
			"e.g. \"consumers=9, but 8 is not excluded at 95%\", and writes a plan folder whose report leads with\n"+
			"the question and the answer. Exit 0 when a value clearly meets the target (even if a smaller one\n"+
			"is not excluded), 1 when none does: every value clearly misses, the budget ran out first\n"+
			"(\"undecided\"), or a run broke an invariant.")
	var src sweep.Source
	registerSource(fs, &src)
	target := fs.String("target", "", "the `TARGET`: comma-separated metric<=value clauses; metrics mean, p50, p90, p99, p99.9, max (end to end), dup, throughput")
	search := fs.String("search", "", "the searched parameter `name=lo..hi` (a sweep parameter name or -set key)")
	seedList := fs.String("seeds", "", "the seeds `LIST` every value starts with, continued by the seeds after the largest (default: the scenario's seeds; at least 3 are started with)")
	maxSeeds := fs.Int("max-seeds", sweep.DefaultMaxSeeds, "at most `N` seeds per value; a value still undecided then is reported as such")
	level := fs.Float64("level", report.DefaultLevel, "overall confidence `L` of the decisions and intervals, 0 < L < 1")
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
	if *maxSeeds < 1 {
		return e.badInput("plan: -max-seeds %d: want at least 1", *maxSeeds)
	}
	if err := report.CheckLevel(*level); err != nil {
		return e.badInput("plan: %v", err)
	}
	p, err := sweep.NewPlan(sweep.PlanSpec{Source: src, Target: t, Space: space, Seeds: *seedList, MaxSeeds: *maxSeeds, Level: *level, Parallel: *parallel})
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
	fmt.Fprintf(e.stdout, "each look at a value decides at %s, so that up to %d looks per value on %s stay within %s overall\n",
		levelPct(p.PerLook()), p.Looks(), plural(len(p.Target()), "condition"), levelPct(p.Level()))
	pr := e.newRunsProgress("plan", 0)
	p.OnRun = pr.finished
	p.OnEval = func(ev sweep.Eval) { e.printEval(p, space, ev) }
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
	fmt.Fprintf(e.stdout, "answer: %s\n", p.AnswerText(r))
	if a := r.Answer; a.Found && a.Safe != a.Est {
		fmt.Fprintf(e.stdout, "provision %s=%s to be sure: the smallest value that clearly meets the target\n", space.Name, space.Format(int64(a.Safe)))
	}
	switch {
	case r.Failed:
		fmt.Fprintln(e.stdout, "FAIL: some runs broke an invariant (see the failing seeds above)")
		return exitViolation
	case !r.Found():
		return exitViolation
	}
	return exitOK
}

// printEval prints one evaluated value as it is decided, and its failing
// seeds.
func (e *env) printEval(p *sweep.Plan, space sweep.Space, ev sweep.Eval) {
	for _, s := range ev.Failing {
		v := s.Violations[0]
		fmt.Fprintf(e.stdout, "  FAIL seed %d %s=%s: %s: %s\n    replay: %s\n", s.Seed, space.Name, space.Format(ev.Value), v.Invariant, v.Detail, v.Replay)
	}
	evd := p.Evidence(ev)
	var parts []string
	for _, c := range evd.Conditions {
		parts = append(parts, c.Condition+": "+conditionText(c))
	}
	fmt.Fprintf(e.stdout, "  %s=%s  %s after %s, %s: %s\n", space.Name, space.Format(ev.Value), ev.Verdict,
		plural(len(ev.Seeds), "seed"), plural(ev.Looks, "look"), strings.Join(parts, "; "))
}

// conditionText is "60.21 [58.10, 62.32] ms" or "60.21 ms (1 seed: no
// interval)".
func conditionText(c report.ConditionEvidence) string {
	iv := c.Interval
	if iv.OK {
		return stats.FormatNumber(iv.Est) + " [" + stats.FormatNumber(iv.Lo) + ", " + stats.FormatNumber(iv.Hi) + "] " + c.Unit
	}
	return report.FormatInterval(iv, func(x float64) string { return stats.FormatNumber(x) + " " + c.Unit })
}

// printEvidence prints every evaluated value in increasing order with its
// decision on each condition.
func (e *env) printEvidence(p *sweep.Plan, space sweep.Space, r sweep.PlanResult) {
	w := e.stdout
	fmt.Fprintf(w, "\nevidence (t intervals over each value's seeds at %s per look; %s overall):\n", levelPct(p.PerLook()), levelPct(p.Level()))
	head := []string{space.Name, "seeds", "verdict"}
	for _, c := range p.Target() {
		unit, _ := c.Display()
		head = append(head, c.Text+" ("+unit+")")
	}
	rows := [][]string{append(head, "viol", "")}
	for _, ev := range r.Evals {
		evd := p.Evidence(ev)
		row := []string{evd.Value, fmt.Sprint(evd.Seeds), evd.Verdict}
		for _, c := range evd.Conditions {
			row = append(row, report.FormatInterval(c.Interval, stats.FormatNumber))
		}
		mark := ""
		switch a := r.Answer; {
		case a.Found && float64(ev.Value) == a.Est:
			mark = "<- answer"
		case a.Found && float64(ev.Value) == a.Safe:
			mark = "<- clearly meets"
		}
		rows = append(rows, append(row, fmt.Sprint(evd.Violations), mark))
	}
	writeTable(w, rows)
}

// levelPct renders 0.95 as "95%" and 0.99286 as "99.29%".
func levelPct(level float64) string { return strconv.FormatFloat(level*100, 'g', 4, 64) + "%" }

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
