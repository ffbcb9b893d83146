package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"popsim/report"
)

func (e *env) cmdMerge(args []string) int {
	fs := e.newFlags("merge", "-out DIR SHARD_DIR...",
		"Combines the folders of a sharded sweep (popsim sweep -shard i/n) into one sweep folder:\n"+
			"the run folders are copied, the histograms of each parameter point are merged exactly\n"+
			"(HdrHistogram merge, from each run's histograms.hlog), and one report is written.\n"+
			"Every shard 0..n-1 of the same sweep must be given exactly once.")
	out := fs.String("out", "", "output `DIR` for the merged sweep (required)")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if *out == "" || fs.NArg() == 0 {
		return e.badInput("merge: want -out DIR and at least one shard folder")
	}
	plan, err := checkShards(fs.Args())
	if err != nil {
		return e.badInput("merge: %v", err)
	}
	sweep := report.NewSweep(plan.Scenario, plan.X, plan.Group)
	for _, dir := range fs.Args() {
		if err := copyRuns(dir, *out, sweep); err != nil {
			return e.badInput("merge: %v", err)
		}
	}
	if t := sweep.Totals(); t.Runs != plan.Jobs {
		return e.badInput("merge: the shards hold %d runs, the sweep has %d: a shard folder is incomplete", t.Runs, plan.Jobs)
	}
	plan.Shard, plan.Shards = 0, 1
	if err := writeJSON(filepath.Join(*out, PlanFile), plan); err != nil {
		return e.badInput("merge: %v", err)
	}
	fmt.Fprintf(e.stdout, "popsim merge: %d shard folders of sweep %s into %s\n", fs.NArg(), plan.Scenario, *out)
	return e.finishSweep(sweep, *out)
}

// readPlan reads a sweep folder's PlanFile.
func readPlan(dir string) (sweepPlan, error) {
	var p sweepPlan
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		return p, fmt.Errorf("%s is not a popsim sweep folder: %w", dir, err)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	if p.Shards < 1 || p.Shard < 0 || p.Shard >= p.Shards {
		return p, fmt.Errorf("%s: shard %d/%d is not valid", filepath.Join(dir, PlanFile), p.Shard, p.Shards)
	}
	return p, nil
}

// checkShards requires the folders to be the shards 0..n-1 of one sweep,
// each exactly once, and returns the sweep's plan.
func checkShards(dirs []string) (sweepPlan, error) {
	var first sweepPlan
	seen := map[int]string{}
	for i, dir := range dirs {
		p, err := readPlan(dir)
		if err != nil {
			return first, err
		}
		if i == 0 {
			first = p
		}
		a, b := p, first
		a.Shard, b.Shard = 0, 0
		if !reflect.DeepEqual(a, b) {
			return first, fmt.Errorf("%s is a shard of another sweep than %s (scenario, -set flags, parameters, seeds or shard count differ)", dir, dirs[0])
		}
		if prev, dup := seen[p.Shard]; dup {
			return first, fmt.Errorf("shard %d/%d given twice: %s and %s", p.Shard, p.Shards, prev, dir)
		}
		seen[p.Shard] = dir
	}
	var missing []int
	for i := range first.Shards {
		if _, ok := seen[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return first, fmt.Errorf("shards %v of %d are missing: give every shard folder", missing, first.Shards)
	}
	return first, nil
}

// runDirs lists the run folders of a sweep folder, sorted.
func runDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if err != nil {
		return nil, fmt.Errorf("%s has no %s folder: %w", dir, RunsDir, err)
	}
	var out []string
	for _, en := range entries {
		p := filepath.Join(dir, RunsDir, en.Name())
		if en.IsDir() && isRunDir(p) {
			out = append(out, en.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// addRuns reads every run folder of the sweep folder dir into sweep and
// returns their names.
func addRuns(dir string, sweep *report.Sweep) ([]string, error) {
	names, err := runDirs(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		src := filepath.Join(dir, RunsDir, name)
		run, err := report.ReadRun(src)
		if err != nil {
			return nil, err
		}
		if err := sweep.Add(report.SweepPoint{Summary: run.Summary, Hists: run.Hists}); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	}
	return names, nil
}

// copyRuns reads every run of a shard into sweep and copies its folder
// byte for byte into out/runs.
func copyRuns(shard, out string, sweep *report.Sweep) error {
	names, err := addRuns(shard, sweep)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := copyDir(filepath.Join(shard, RunsDir, name), filepath.Join(out, RunsDir, name)); err != nil {
			return err
		}
	}
	return nil
}

// copyDir copies the regular files of src into dst, atomically each.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if !en.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, en.Name()))
		if err != nil {
			return err
		}
		if err := report.WriteFileAtomic(filepath.Join(dst, en.Name()), data); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) cmdReport(args []string) int {
	fs := e.newFlags("report", "DIR",
		"Re-renders report.md and the charts of a run folder (from summary.json and histograms.hlog)\n"+
			"or of a sweep folder (from its runs), e.g. after upgrading popsim.")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.badInput("report: want exactly one folder, a run's or a sweep's")
	}
	dir := fs.Arg(0)
	if isRunDir(dir) {
		run, err := report.ReadRun(dir)
		if err != nil {
			return e.badInput("report: %v", err)
		}
		if err := report.WriteRun(dir, run.Summary, run.Hists); err != nil {
			return e.badInput("report: %v", err)
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", filepath.Join(dir, report.ReportFile))
		if len(run.Summary.Violations) > 0 {
			return exitViolation
		}
		return exitOK
	}
	plan, err := readPlan(dir)
	if err != nil {
		return e.badInput("report: %s is neither a run folder (summary.json) nor a sweep folder (%s)", dir, PlanFile)
	}
	sweep := report.NewSweep(plan.Scenario, plan.X, plan.Group)
	if _, err := addRuns(dir, sweep); err != nil {
		return e.badInput("report: %v", err)
	}
	return e.finishSweep(sweep, dir)
}

// isRunDir reports whether dir holds a run's summary.json.
func isRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, report.SummaryFile))
	return err == nil && st.Mode().IsRegular()
}
