package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
	"popsim/stats"
	"popsim/sweep"
)

// paramList is the repeatable -param flag.
type paramList []scenarios.Param

func (p *paramList) String() string { return fmt.Sprint(*p) }
func (p *paramList) Set(s string) error {
	q, err := scenarios.ParseParam(s)
	if err != nil {
		return err
	}
	for _, old := range *p {
		if old.Name == q.Name {
			return fmt.Errorf("-param %s given twice", q.Name)
		}
	}
	*p = append(*p, q)
	return nil
}

func (e *env) cmdSweep(args []string) int {
	fs := e.newFlags("sweep", "-scenario S -param consumers=100,200,500 [-param invisible=10s,60s] [-seeds 1..20] [-shard i/n] [-level L] [-parallel N] [-out DIR] [-overwrite] [-force]",
		"Runs every combination of the parameters' values for every seed, in parallel, and writes\n"+
			"one folder per run under DIR/runs, then a table and charts of the results (DIR/report.md,\n"+
			"DIR/sweep.json). Every metric comes with a confidence interval over the seeds (at -level; a point\n"+
			"needs 2 seeds for one). Every failing seed is listed with its replay command. With -shard i/n only\n"+
			"every n-th run from the i-th is done, so shards can run on different machines and be\n"+
			"combined with popsim merge. Progress goes to stderr: a bar on a terminal, else a line per\n"+
			"run. An earlier sweep in DIR is replaced; DIR is marked INCOMPLETE until the sweep is done.")
	var src sweep.Source
	force := registerSource(fs, &src)
	var params paramList
	fs.Var(&params, "param", "a swept parameter `name=v1,v2,...` (repeatable; the grid is their product):\n"+
		"any -set key, or one of these short names:\n  "+strings.Join(scenarios.Aliases(), "\n  "))
	seeds := fs.String("seeds", "", "seeds `LIST`, e.g. 1..20 or 1,5,9 (default: the scenario's seeds)")
	shardText := fs.String("shard", "0/1", "run only shard `i/n` of the (point x seed) list, 0 <= i < n")
	level := fs.Float64("level", report.DefaultLevel, "confidence `L` of the intervals over the seeds, 0 < L < 1")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "runs at a time, `N` >= 1")
	out := fs.String("out", "", "output `DIR` (default out/<scenario>-sweep, or ...-shard<i>of<n>)")
	overwrite := fs.Bool("overwrite", false, "write into -out even if it holds files popsim did not write there; they are left in place")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	shard, err := sweep.ParseShard(*shardText)
	if err != nil {
		return e.badInput("%v", err)
	}
	if err := sweep.CheckParallel(*parallel); err != nil {
		return e.badInput("%v", err)
	}
	if err := report.CheckLevel(*level); err != nil {
		return e.badInput("sweep: %v", err)
	}
	sw, err := sweep.Prepare(src, params, *seeds, shard)
	if err != nil {
		return e.badInput("%v", err)
	}
	sw.Manifest.Level = *level
	for i, s := range sw.Loaded {
		if err := checkEstimate(s, *parallel, *force); err != nil {
			return e.badInput("parameter point %s: %v", sweep.PointLabel(sw.Points[i]), err)
		}
	}
	dir := *out
	if dir == "" {
		dir = sw.DefaultDir()
	}
	output, err := sweep.OpenSweepDir(dir, *overwrite)
	if err != nil {
		return e.badInput("sweep: %v", err)
	}
	m := sw.Manifest
	fmt.Fprintf(e.stdout, "popsim sweep: scenario %s, %d parameter points x %d seeds = %d runs; shard %d/%d runs %d, %d at a time\n",
		m.Scenario, len(sw.Points), len(m.Seeds), m.Jobs, m.Shard, m.Shards, len(sw.Todo), *parallel)
	pr := e.newRunsProgress("sweep", len(sw.Todo))
	res, err := sw.Run(e.context(), output, *parallel, pr.finished)
	pr.done()
	if err != nil {
		return e.badInput("sweep: %v", err)
	}
	if res.Interrupted {
		if res.Done == 0 {
			return e.interrupted("no run had finished; nothing was left")
		}
		return e.interrupted(fmt.Sprintf("%d of %d runs finished; %s is marked %s (popsim report %s lists the missing runs)",
			res.Done, len(sw.Todo), dir, sweep.IncompleteFile, dir))
	}
	for _, je := range res.Errors {
		fmt.Fprintf(e.stderr, "popsim: sweep: %s seed %d: %v\n", sweep.PointLabel(je.Point), je.Job.Seed, je.Err)
	}
	if len(res.Errors) > 0 {
		return exitBadInput
	}
	return e.finishSweep(res.Report, dir)
}

// finishSweep prints the table and every failing seed of a written sweep
// and returns the exit code.
func (e *env) finishSweep(rs *report.Sweep, dir string) int {
	printSweepTable(e, rs)
	t := rs.Totals()
	fmt.Fprintf(e.stdout, "\n%d runs: %d passed, %d failed. Report: %s\n", t.Runs, t.Passed, t.Failed, filepath.Join(dir, report.ReportFile))
	if t.Failed == 0 {
		return exitOK
	}
	fmt.Fprintln(e.stdout, "\nfailing seeds (all of them):")
	for _, c := range rs.Cells() {
		for _, r := range c.Failing() {
			printFailingRun(e.stdout, c, r)
		}
	}
	return exitViolation
}

// printFailingRun prints a failing seed: the first violation of each
// invariant it broke and the command that replays it.
func printFailingRun(w io.Writer, c *report.SweepCell, r model.Summary) {
	fmt.Fprintf(w, "  seed %d, %s: %d violation(s)\n", r.Seed, report.ParamsKey(c.Params), len(r.Violations))
	seen := map[string]bool{}
	for _, v := range r.Violations {
		if !seen[v.Invariant] {
			seen[v.Invariant] = true
			fmt.Fprintf(w, "    %s: %s\n", v.Invariant, v.Detail)
		}
	}
	if len(r.Violations) > 0 {
		fmt.Fprintf(w, "    replay: %s\n", r.Violations[0].Replay)
	}
}

// printSweepTable prints every cell with each metric's interval over its
// seeds, and the line saying what the intervals are.
func printSweepTable(e *env, rs *report.Sweep) {
	ms := func(us float64) string { return stats.FormatNumber(us / 1000) }
	rows := [][]string{{"parameters", "seeds", "mean ms", "p50 ms", "p99 ms", "p99.9 ms", "dup %", "acks/s", "fail"}}
	for _, c := range rs.Cells() {
		st := c.Stats(rs.ConfidenceLevel())
		rows = append(rows, []string{report.ParamsKey(c.Params), strconv.Itoa(len(c.Runs)),
			report.FormatInterval(st.Mean.Interval, ms), report.FormatInterval(st.P50.Interval, ms),
			report.FormatInterval(st.P99.Interval, ms), report.FormatInterval(st.P999.Interval, ms),
			report.FormatInterval(st.DuplicatesPct.Interval, stats.FormatNumber), report.FormatInterval(st.ThroughputPerSec.Interval, stats.FormatNumber),
			strconv.Itoa(len(c.Failing()))})
	}
	fmt.Fprintln(e.stdout)
	writeTable(e.stdout, rows)
	fmt.Fprintf(e.stdout, "%s\n", rs.IntervalsLine())
}

// writeTable prints rows as left-aligned columns two spaces apart, the
// first row a header.
func writeTable(w io.Writer, rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
