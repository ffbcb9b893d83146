package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"

	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
)

// PlanFile describes a sweep folder: what was swept and which shard of it
// the folder holds. merge checks that shards belong to the same sweep.
const PlanFile = "popsim-sweep.json"

// RunsDir is the sub-folder of a sweep folder holding one folder per run.
const RunsDir = "runs"

// sweepPlan is PlanFile's content.
type sweepPlan struct {
	Scenario string            `json:"scenario"`
	Source   []string          `json:"source"` // the -scenario/-f and -set flags
	Params   []scenarios.Param `json:"params"`
	Seeds    []uint64          `json:"seeds"`
	Jobs     int               `json:"jobs"` // runs in the whole sweep, all shards
	Shard    int               `json:"shard"`
	Shards   int               `json:"shards"`
	X        string            `json:"x,omitempty"`
	Group    string            `json:"group,omitempty"`
}

// job is one (parameter point, seed) run of a sweep.
type job struct {
	index int // position in the whole sweep's job list
	point int // index of the parameter point
	seed  uint64
}

// jobs lists the sweep's runs in a fixed order (points, then seeds) and
// keeps those of shard i of n: index % n == i. Every shard gets a share of
// every parameter point, and the n shards partition the list exactly.
func jobs(points, seeds, shard, shards int) []job {
	var out []job
	for p := range points {
		for s := range seeds {
			k := p*seeds + s
			if k%shards == shard {
				out = append(out, job{index: k, point: p})
			}
		}
	}
	return out
}

// parseShard parses "i/n" with 0 <= i < n.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 1_000_000 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("-shard %q: want i/n with 0 <= i < n, e.g. 0/4 .. 3/4 (the shard index is 0-based)", s)
	}
	return i, n, nil
}

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

type sweepFlags struct {
	src      source
	params   paramList
	seeds    string
	shard    string
	parallel int
	out      string
}

func (f *sweepFlags) register(fs *flag.FlagSet) {
	f.src.register(fs)
	fs.Var(&f.params, "param", "a swept parameter `name=v1,v2,...` (repeatable; the grid is their product):\n"+
		"any -set key, or one of these short names:\n  "+strings.Join(scenarios.Aliases(), "\n  "))
	fs.StringVar(&f.seeds, "seeds", "", "seeds `LIST`, e.g. 1..20 or 1,5,9 (default: the scenario's seeds)")
	fs.StringVar(&f.shard, "shard", "0/1", "run only shard `i/n` of the (point x seed) list, 0 <= i < n")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at a time, `N` >= 1")
}

func (e *env) cmdSweep(args []string) int {
	fs := e.newFlags("sweep", "-scenario S -param consumers=100,200,500 [-param invisible=10s,60s] [-seeds 1..20] [-shard i/n] [-parallel N] -out DIR",
		"Runs every combination of the parameters' values for every seed, in parallel, and writes\n"+
			"one folder per run under DIR/runs, then a table and charts of the results (DIR/report.md,\n"+
			"DIR/sweep.json). Every failing seed is listed with its replay command. With -shard i/n only\n"+
			"every n-th run from the i-th is done, so shards can run on different machines and be\n"+
			"combined with popsim merge.")
	var f sweepFlags
	f.register(fs)
	fs.StringVar(&f.out, "out", "", "output `DIR` (default out/<scenario>-sweep, or ...-shard<i>of<n>)")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	sw, code := e.prepareSweep(&f)
	if sw == nil {
		return code
	}
	return sw.run(e)
}

// sweepRun is a prepared sweep: every point loaded and checked.
type sweepRun struct {
	plan     sweepPlan
	src      *source
	points   []scenarios.Point
	loaded   []*scenarios.Scenario
	todo     []job
	dir      string
	parallel int
}

func (e *env) prepareSweep(f *sweepFlags) (*sweepRun, int) {
	shard, shards, err := parseShard(f.shard)
	if err != nil {
		return nil, e.badInput("%v", err)
	}
	if err := checkParallel(f.parallel); err != nil {
		return nil, e.badInput("%v", err)
	}
	base, err := f.src.load()
	if err != nil {
		return nil, e.badInput("%v", err)
	}
	seeds, err := seedsOf(base, f.seeds)
	if err != nil {
		return nil, e.badInput("%v", err)
	}
	sw := &sweepRun{src: &f.src, points: scenarios.Grid(f.params), parallel: f.parallel}
	for _, p := range sw.points {
		s, err := f.src.load(p.Overrides()...)
		if err != nil {
			return nil, e.badInput("parameter point %s: %v", pointLabel(p), err)
		}
		if err := checkEstimate(s, f.parallel, f.src.force); err != nil {
			return nil, e.badInput("parameter point %s: %v", pointLabel(p), err)
		}
		sw.loaded = append(sw.loaded, s)
	}
	x, group := axes(f.params)
	sw.plan = sweepPlan{Scenario: base.Name, Source: f.src.args(), Params: f.params, Seeds: seeds,
		Jobs: len(sw.points) * len(seeds), Shard: shard, Shards: shards, X: x, Group: group}
	sw.todo = jobs(len(sw.points), len(seeds), shard, shards)
	for i := range sw.todo {
		sw.todo[i].seed = seeds[sw.todo[i].index%len(seeds)]
	}
	sw.dir = f.out
	if sw.dir == "" {
		sw.dir = filepath.Join("out", base.Name+"-sweep")
		if shards > 1 {
			sw.dir += fmt.Sprintf("-shard%dof%d", shard, shards)
		}
	}
	return sw, 0
}

// checkParallel bounds -parallel, the runs a sweep or plan does at a time.
func checkParallel(n int) error {
	if n < 1 || n > 4096 {
		return fmt.Errorf("-parallel %d out of range: want 1..4096", n)
	}
	return nil
}

// seedsOf is the -seeds list, or the scenario's own seeds when it is "".
func seedsOf(s *scenarios.Scenario, list string) ([]uint64, error) {
	if list == "" {
		return s.Seeds.List(), nil
	}
	seeds, err := scenarios.ParseSeeds(list)
	if err != nil {
		return nil, fmt.Errorf("-seeds: %v", err)
	}
	return seeds, nil
}

// paramLabel is the name a parameter has in summaries and reports: the
// kind parameter is the summary's consumer kind, which the report package
// already joins to every run's parameters as consumer_kind.
func paramLabel(name string) string {
	if name == "kind" {
		return report.ParamConsumerKind
	}
	return name
}

// labelled returns the point with its names as paramLabel gives them.
func labelled(p scenarios.Point) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[paramLabel(k)] = v
	}
	return out
}

// axes picks the chart's x parameter (the first whose values are all
// numbers or durations) and the line grouping (the first other one), by
// their labels.
func axes(params []scenarios.Param) (x, group string) {
	for _, p := range params {
		numeric := true
		for _, v := range p.Values {
			if _, err := report.ParamValue(v); err != nil {
				numeric = false
			}
		}
		if numeric && x == "" {
			x = paramLabel(p.Name)
		} else if group == "" {
			group = paramLabel(p.Name)
		}
	}
	return x, group
}

// pointLabel is "a=1 b=2" in parameter-name order, or "(no parameters)".
func pointLabel(p scenarios.Point) string {
	if len(p) == 0 {
		return "(no parameters)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, " ")
}

// runFolder names a run's folder: point index, parameters, seed.
func runFolder(pointIdx int, p scenarios.Point, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p%03d", pointIdx)
	for _, k := range slices.Sorted(maps.Keys(p)) {
		b.WriteString("_" + k + "-" + p[k])
	}
	fmt.Fprintf(&b, "_seed%d", seed)
	name := []byte(b.String())
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			name[i] = '_'
		}
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return string(name)
}

// result of one sweep job.
type jobResult struct {
	j   job
	o   *outcome
	err error // a write failure or a config error: exit 2
}

func (sw *sweepRun) run(e *env) int {
	if err := os.MkdirAll(filepath.Join(sw.dir, RunsDir), 0o755); err != nil {
		return e.badInput("sweep: %v", err)
	}
	if err := writeJSON(filepath.Join(sw.dir, PlanFile), sw.plan); err != nil {
		return e.badInput("sweep: %v", err)
	}
	fmt.Fprintf(e.stdout, "popsim sweep: scenario %s, %d parameter points x %d seeds = %d runs; shard %d/%d runs %d, %d at a time\n",
		sw.plan.Scenario, len(sw.points), len(sw.plan.Seeds), sw.plan.Jobs, sw.plan.Shard, sw.plan.Shards, len(sw.todo), sw.parallel)
	results := sw.execute(e)
	sweep := report.NewSweep(sw.plan.Scenario, sw.plan.X, sw.plan.Group)
	bad := 0
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(e.stderr, "popsim: sweep: %s seed %d: %v\n", pointLabel(sw.points[r.j.point]), r.j.seed, r.err)
			bad++
			continue
		}
		if err := sweep.Add(report.SweepPoint{Summary: r.o.sum, Hists: r.o.hists}); err != nil {
			return e.badInput("sweep: %v", err)
		}
	}
	if bad > 0 {
		return exitBadInput
	}
	return e.finishSweep(sweep, sw.dir)
}

// execute runs the shard's jobs on sw.parallel goroutines (each run is
// deterministic on its own) and returns the results in job order.
func (sw *sweepRun) execute(e *env) []jobResult {
	var bar *progressbar.ProgressBar
	if e.stderrIsTerminal {
		bar = progressbar.NewOptions(len(sw.todo), progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription("sweep"), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
	}
	results := make([]jobResult, len(sw.todo))
	forEach(len(sw.todo), sw.parallel, func(i int) {
		results[i] = sw.one(sw.todo[i])
		if bar != nil {
			bar.Add(1) // ProgressBar locks itself
		}
	})
	if bar != nil {
		bar.Finish()
	}
	return results
}

// forEach calls f(0) .. f(n-1) on at most parallel goroutines and returns
// when every call has.
func forEach(n, parallel int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// one runs and writes one job. A run that hits a bound becomes a failed
// run with a "run-failed" violation, so that it is listed like any other
// failing seed.
func (sw *sweepRun) one(j job) jobResult {
	p := sw.points[j.point]
	s := sw.loaded[j.point]
	o, err := runSeed(sw.src, s, j.seed, labelled(p), p.Overrides()...)
	if err != nil {
		return jobResult{j: j, err: err}
	}
	dir := filepath.Join(sw.dir, RunsDir, runFolder(j.point, p, j.seed))
	if err := report.WriteRun(dir, o.sum, o.hists); err != nil {
		return jobResult{j: j, err: err}
	}
	return jobResult{j: j, o: o}
}

// runSeed runs one seed of s (src with overrides applied) without a
// trace. A run that hits a bound is not an error but a failed run.
func runSeed(src *source, s *scenarios.Scenario, seed uint64, params map[string]string, overrides ...scenarios.Override) (*outcome, error) {
	replay := replayCommand(src, seed, overrides...)
	o, err := execute(s, seed, params, replay, nil)
	if re, ok := err.(*runError); ok {
		return failedRun(s.Name, seed, params, replay, re), nil
	}
	return o, err
}

// failedRun is the outcome of a run that did not finish.
func failedRun(name string, seed uint64, params map[string]string, replay string, err error) *outcome {
	v := model.Violation{Invariant: "run-failed", Seed: seed, EventIndex: -1, Detail: err.Error(), Replay: replay}
	return &outcome{sum: model.Summary{Scenario: name, Seed: seed, Params: params, Violations: []model.Violation{v}}}
}

// finishSweep writes the sweep report, prints the table and every failing
// seed, and returns the exit code.
func (e *env) finishSweep(sweep *report.Sweep, dir string) int {
	if err := report.WriteSweep(dir, sweep); err != nil {
		return e.badInput("sweep: writing the report: %v", err)
	}
	printSweepTable(e, sweep)
	t := sweep.Totals()
	fmt.Fprintf(e.stdout, "\n%d runs: %d passed, %d failed. Report: %s\n", t.Runs, t.Passed, t.Failed, filepath.Join(dir, report.ReportFile))
	if t.Failed == 0 {
		return exitOK
	}
	fmt.Fprintln(e.stdout, "\nfailing seeds (all of them):")
	for _, c := range sweep.Cells() {
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

func printSweepTable(e *env, sweep *report.Sweep) {
	w := e.stdout
	fmt.Fprintf(w, "\n%-40s %6s %10s %10s %10s %8s %12s %5s\n", "parameters", "seeds", "p50 ms", "p99 ms", "p99.9 ms", "dup %", "acks/s", "fail")
	for _, c := range sweep.Cells() {
		lat, _ := c.EndToEnd()
		fmt.Fprintf(w, "%-40s %6d %10.2f %10.2f %10.2f %8.3f %12.1f %5d\n", report.ParamsKey(c.Params), len(c.Runs),
			float64(lat.P50)/1000, float64(lat.P99)/1000, float64(lat.P999)/1000, c.DuplicatesPct(), c.Throughput(), len(c.Failing()))
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return report.WriteFileAtomic(path, append(b, '\n'))
}
