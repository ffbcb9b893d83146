package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"popsim/report"
	"popsim/scenarios"
	"popsim/sweep"
)

const tiny = "testdata/tiny.yaml"

// popsim runs the command in-process and returns its exit code and output.
func popsim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	code := e.main(args)
	return code, out.String(), errb.String()
}

func wantCode(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	code, out, errs := popsim(t, args...)
	if code != want {
		t.Fatalf("popsim %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

func TestRunWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.txt")
	out, _ := wantCode(t, exitOK, "run", "-f", tiny, "-seed", "3", "-out", dir, "-trace", trace)
	for _, want := range []string{"scenario tiny", "seed 3", "PASS", "end to end (ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"summary.json", "end_to_end.hgrm", "service_time.hgrm", "histograms.hlog", "report.md", "latency.png", "latency.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	run, err := report.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Scenario != "tiny" || run.Summary.Seed != 3 || run.Summary.WallSeconds <= 0 || run.Summary.Produced == 0 {
		t.Errorf("summary.json: scenario %q seed %d wall %g produced %d", run.Summary.Scenario, run.Summary.Seed, run.Summary.WallSeconds, run.Summary.Produced)
	}
	data, err := os.ReadFile(trace)
	if err != nil || int64(bytes.Count(data, []byte("\n"))) != run.Summary.SimEvents && len(data) == 0 {
		t.Errorf("trace file: %d bytes, %v", len(data), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// bug turns on an upstream defect that the checker catches, with message
// histories (presented-topic: retry messages shown under their %RETRY%
// name).
var bug = []string{"-set", "engine.bugs.retryTopicReencoding=true"}

func TestRunViolationExitsOne(t *testing.T) {
	args := append([]string{"run", "-f", tiny, "-out", t.TempDir()}, bug...)
	out, _ := wantCode(t, exitViolation, args...)
	want := "replay: go run ./cmd/popsim replay -f testdata/tiny.yaml -set engine.bugs.retryTopicReencoding=true -seed 1"
	if !strings.Contains(out, "FAIL:") || !strings.Contains(out, want) {
		t.Errorf("output lacks FAIL and %q:\n%s", want, out)
	}
}

func TestReplay(t *testing.T) {
	args := append([]string{"replay", "-f", tiny, "-seed", "1", "-around", "30", "-context", "2"}, bug...)
	out, _ := wantCode(t, exitViolation, args...)
	for _, want := range []string{"violation 1:", "history of message", "trace around event 30:", "> 30 "} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out[strings.Index(out, "trace around"):], "\n"); n < 6 {
		t.Errorf("-around 30 -context 2 printed %d lines", n)
	}
	wantCode(t, exitBadInput, "replay", "-f", tiny)
}

// check judges a saved trace offline with the run's verdict; a malformed
// trace is bad input naming the line.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.txt"), filepath.Join(dir, "bad.txt")
	wantCode(t, exitOK, "run", "-f", tiny, "-seed", "3", "-out", filepath.Join(dir, "good"), "-trace", good)
	out, _ := wantCode(t, exitOK, "check", good)
	if !strings.Contains(out, "popsim: checked "+good) || !strings.Contains(out, "PASS: every invariant held") {
		t.Errorf("check of a passing run's trace:\n%s", out)
	}
	args := append([]string{"run", "-f", tiny, "-out", filepath.Join(dir, "bad"), "-trace", bad}, bug...)
	runOut, _ := wantCode(t, exitViolation, args...)
	out, _ = wantCode(t, exitViolation, "check", "-v", bad)
	n := strings.Count(runOut, "presented-topic at event")
	if n == 0 || strings.Count(out, "presented-topic at event") != n || !strings.Contains(out, " produce c=0 m=") {
		t.Errorf("check found %d presented-topic violations (with histories?), the run %d:\n%s", strings.Count(out, "presented-topic at event"), n, out)
	}
	malformed := filepath.Join(dir, "malformed.txt")
	os.WriteFile(malformed, []byte("0 0.000000 phase c=-1 r=safety\n1 0.000000 produce c=0 m=1 t=t q=zero o=0\n"), 0o644)
	_, errs := wantCode(t, exitBadInput, "check", malformed)
	if !strings.Contains(errs, malformed+":2:") || !strings.Contains(errs, "q=zero") {
		t.Errorf("a malformed trace: %s", errs)
	}
	wantCode(t, exitBadInput, "check")
	wantCode(t, exitBadInput, "check", filepath.Join(dir, "no-such-trace"))
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "bad.yaml")
	os.WriteFile(malformed, []byte("name: bad\nduration: 2 s\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"run", "-nosuchflag"}, "flag provided but not defined"},
		{[]string{"run", "-scenario", "nope"}, `no built-in scenario "nope"`},
		{[]string{"run", "-f", malformed}, malformed + ":2: duration"},
		{[]string{"run", "-f", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"run", "-f", tiny, "-set", "consumers[0].batch=99"}, "consumers[0].batch: 99 out of range: want 1..32"},
		{[]string{"run", "-set", "novalue"}, "want key=value"},
		{[]string{"run", "-seed", "minus1"}, "want a whole number"},
		{[]string{"run", "-scenario", "default", "-f", tiny}, "give one or the other"},
		{[]string{"run", "extra"}, `unexpected argument "extra"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"show", "nope"}, `no built-in scenario "nope"`},
		{[]string{"show"}, "want exactly one scenario name"},
		{[]string{"sweep", "-f", tiny, "-param", "consumers"}, "want name=value1,value2"},
		{[]string{"sweep", "-f", tiny, "-param", "consumers=1,x"}, `parameter point consumers=x: testdata/tiny.yaml (-set): consumers[0].count: "x": want a whole number`},
		{[]string{"sweep", "-f", tiny, "-param", "nosuch=1"}, "unknown field"},
		{[]string{"sweep", "-f", tiny, "-shard", "4/4"}, "want i/n with 0 <= i < n"},
		{[]string{"sweep", "-f", tiny, "-shard", "x"}, "want i/n"},
		{[]string{"sweep", "-f", tiny, "-seeds", "3..1"}, "-seeds"},
		{[]string{"sweep", "-f", tiny, "-parallel", "0"}, "-parallel 0 out of range"},
		{[]string{"merge", "-out", dir}, "want -out DIR and at least one shard folder"},
		{[]string{"merge", "-out", dir, dir}, "not a popsim sweep folder"},
		{[]string{"report", dir}, "neither a run folder"},
		{[]string{"plan", "-f", tiny}, "-target and -search are required"},
		{[]string{"plan", "-f", tiny, "-target", "p99<=fast", "-search", "consumers=1..4"}, "want a duration"},
		{[]string{"plan", "-f", tiny, "-target", "p99<=1s", "-search", "consumers=4..1"}, "want 0 <= lo < hi"},
		{[]string{"plan", "-f", tiny, "-target", "latency<=1s", "-search", "consumers=1..4"}, `unknown metric "latency"`},
		{[]string{"plan", "-f", tiny, "-target", "p99<=1s", "-search", "consumers=1..4", "-max-seeds", "0"}, "-max-seeds 0: want at least 1"},
		{[]string{"plan", "-f", tiny, "-target", "p99<=1s", "-search", "consumers=1..4", "-seeds", "1..5", "-max-seeds", "3"}, "-max-seeds 3: want 5 (the seeds listed) to 100000"},
		{[]string{"plan", "-f", tiny, "-target", "p99<=1s", "-search", "consumers=1..4", "-level", "0"}, "-level 0 out of range"},
	} {
		code, out, errs := popsim(t, c.args...)
		if code != exitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("popsim %s: exit %d, stderr %q; want exit 2 and %q (stdout %q)", strings.Join(c.args, " "), code, errs, c.want, out)
		}
	}
}

func TestHelpListShowVersion(t *testing.T) {
	for _, cmd := range []string{"run", "replay", "list", "show", "sweep", "merge", "plan", "report", "version"} {
		out, _ := wantCode(t, exitOK, cmd, "-h")
		if !strings.Contains(out, "usage: popsim "+cmd) {
			t.Errorf("%s -h:\n%s", cmd, out)
		}
	}
	out, _ := wantCode(t, exitOK, "list")
	for _, name := range scenarios.Names() {
		if !strings.Contains(out, "\n"+name+" ") && !strings.HasPrefix(out, name+" ") {
			t.Errorf("list lacks %s:\n%s", name, out)
		}
	}
	out, _ = wantCode(t, exitOK, "show", "default")
	if text, _ := scenarios.BuiltinText("default"); out != string(text) {
		t.Error("show default does not print the embedded file")
	}
	out, _ = wantCode(t, exitOK, "version")
	if !strings.Contains(out, "go1.") || !strings.Contains(out, "commit") {
		t.Errorf("version: %s", out)
	}
	out, _ = wantCode(t, exitOK, "help")
	if !strings.Contains(out, "sweep") {
		t.Errorf("help: %s", out)
	}
}

// TestSweepShardsMerge: two shards merged give the same sweep as one
// unsharded sweep, down to the merged histograms.
func TestSweepShardsMerge(t *testing.T) {
	root := t.TempDir()
	sweepArgs := []string{"sweep", "-f", tiny, "-param", "consumers=1,2", "-param", "kind=pop-push,simple", "-seeds", "1..2", "-parallel", "3"}
	whole := filepath.Join(root, "whole")
	out, _ := wantCode(t, exitOK, append(sweepArgs, "-out", whole)...)
	if !strings.Contains(out, "8 runs: 8 passed, 0 failed") {
		t.Errorf("sweep output:\n%s", out)
	}
	shards := []string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}
	for i, dir := range shards {
		wantCode(t, exitOK, append(sweepArgs, "-shard", []string{"0/2", "1/2"}[i], "-out", dir)...)
	}
	merged := filepath.Join(root, "merged")
	wantCode(t, exitBadInput, "merge", "-out", merged, shards[0])
	wantCode(t, exitBadInput, "merge", "-out", merged, shards[0], shards[0])
	wantCode(t, exitOK, "merge", "-out", merged, shards[0], shards[1])

	a, b := readFile(t, whole, report.SweepFile), readFile(t, merged, report.SweepFile)
	if a != b {
		t.Errorf("sweep.json differs between the whole sweep and the merged shards:\n%s\n%s", a, b)
	}
	runs, _ := sweep.RunDirs(whole)
	mruns, _ := sweep.RunDirs(merged)
	if len(runs) != 8 || strings.Join(runs, " ") != strings.Join(mruns, " ") {
		t.Fatalf("run folders: %v vs %v", runs, mruns)
	}
	for _, r := range runs {
		x, y := readFile(t, whole, sweep.RunsDir, r, report.HlogFile), readFile(t, merged, sweep.RunsDir, r, report.HlogFile)
		if x != y {
			t.Errorf("%s: histograms.hlog differs", r)
		}
	}
	// The merged histograms of every parameter point are equal.
	ca, cb := sweepCells(t, whole), sweepCells(t, merged)
	if len(ca) != 4 || len(ca) != len(cb) {
		t.Fatalf("%d cells vs %d", len(ca), len(cb))
	}
	for i := range ca {
		for _, name := range []string{report.HistEndToEnd, report.HistServiceTime} {
			x, y := ca[i].Hists[name], cb[i].Hists[name]
			if x == nil || y == nil || x.TotalCount() == 0 || !x.Equals(y) {
				t.Errorf("cell %s: merged %s histograms differ", report.ParamsKey(ca[i].Params), name)
			}
		}
	}
	// report re-renders the merged sweep identically.
	wantCode(t, exitOK, "report", merged)
	if c := readFile(t, merged, report.SweepFile); c != b {
		t.Error("popsim report changed sweep.json")
	}
	// Every metric has its interval over the two seeds, in the table and
	// in sweep.json, with the level stated.
	for _, want := range []string{"p99 ms", " [", "Intervals: 95 % confidence over 2 seeds per row"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(b, `"method": "t over replications"`) || !strings.Contains(b, `"per_seed": [`) || !strings.Contains(b, `"level": 0.95`) {
		t.Errorf("sweep.json has no intervals:\n%s", b)
	}
	// -level carries through merge and report.
	out, _ = wantCode(t, exitOK, "merge", "-level", "0.8", "-out", merged, shards[0], shards[1])
	if !strings.Contains(out, "Intervals: 80 % confidence") {
		t.Errorf("merge -level 0.8:\n%s", out)
	}
	out, _ = wantCode(t, exitOK, "report", merged)
	if !strings.Contains(out, "Intervals: 80 % confidence") || !strings.Contains(readFile(t, merged, report.ReportFile), "Intervals: 80 % confidence") {
		t.Errorf("report of a merge at 0.8:\n%s", out)
	}
	wantCode(t, exitBadInput, "merge", "-level", "95", "-out", merged, shards[0], shards[1])
	wantCode(t, exitBadInput, append(sweepArgs, "-level", "1", "-out", filepath.Join(root, "bad"))...)
}

// sweepCells rebuilds a sweep folder's cells from its run folders.
func sweepCells(t *testing.T, dir string) []*report.SweepCell {
	t.Helper()
	names, err := sweep.RunDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	sw := report.NewSweep("x", "", "")
	for _, n := range names {
		run, err := report.ReadRun(filepath.Join(dir, sweep.RunsDir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Add(report.SweepPoint{Summary: run.Summary, Hists: run.Hists}); err != nil {
			t.Fatal(err)
		}
	}
	return sw.Cells()
}

func readFile(t *testing.T, parts ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSweepListsEveryFailingSeed(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"sweep", "-f", tiny, "-seeds", "1..3", "-out", dir}, bug...)
	out, _ := wantCode(t, exitViolation, args...)
	for _, seed := range []string{"seed 1,", "seed 2,", "seed 3,"} {
		if !strings.Contains(out, seed) {
			t.Errorf("failing %s not listed:\n%s", seed, out)
		}
	}
	var doc struct {
		Totals report.SweepTotals `json:"totals"`
	}
	if err := json.Unmarshal([]byte(readFile(t, dir, report.SweepFile)), &doc); err != nil || doc.Totals.Failed != 3 {
		t.Errorf("sweep.json totals %+v, %v", doc.Totals, err)
	}
}

func TestReportRerendersRun(t *testing.T) {
	dir := t.TempDir()
	wantCode(t, exitOK, "run", "-f", tiny, "-out", dir)
	os.Remove(filepath.Join(dir, report.ReportFile))
	wantCode(t, exitOK, "report", dir)
	if _, err := os.Stat(filepath.Join(dir, report.ReportFile)); err != nil {
		t.Error(err)
	}
}

func TestPlanFindsFewestConsumers(t *testing.T) {
	dir := t.TempDir()
	// One thread per consumer at 10 ms per message serves 100 msg/s; the
	// tiny scenario's 200 msg/s saturates 2 consumers (p99 some 250 ms in
	// its 2 s runs), 3 give about 90 ms and 4 about 70 ms. The p99 of a
	// 2 s run scatters widely from seed to seed: 12 seeds cannot tell
	// whether 3 meet p99 <= 100 ms, and the answer says so.
	out, _ := wantCode(t, exitOK, "plan", "-f", tiny, "-set", "consumers[0].threads=1", "-set", "consumers[0].processing=exp(10ms)",
		"-set", "consumers[0].outcomes=outcomes()", "-set", "network.loss={}",
		"-target", "p99<=100ms", "-search", "consumers=1..16", "-seeds", "1..2", "-max-seeds", "12", "-out", dir)
	answer := "consumers=3, but 4 is not excluded at 95%"
	for _, want := range []string{
		"popsim plan: the smallest consumers in 1..16 meeting p99<=100ms (and no violations), at 95% confidence from 3 to 12 seeds per value\n",
		"each look at a value decides at 98.75%, so that up to 4 looks per value on 1 condition stay within 95% overall\n",
		"  consumers=2  not met after 9 seeds, 2 looks: p99<=100ms: 257.5 [144.7, 370.4] ms\n",
		"  consumers=3  undecided after 12 seeds, 2 looks: p99<=100ms: 92.31 [65.98, 118.6] ms\n",
		"evidence (t intervals over each value's seeds at 98.75% per look; 95% overall):\n",
		"3          12     undecided  92.31 [65.98, 118.6]  0     <- answer\n",
		"4          12     met        69.28 [53.47, 85.09]  0     <- clearly meets\n",
		"\nanswer: " + answer + "\nprovision consumers=4 to be sure: the smallest value that clearly meets the target\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"plan.json", report.SweepFile, report.ReportFile, "sweep-p99-e2e.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// The report leads with the question and the answer (it was titled
	// "popsim sweep" and stated neither), then the decisions; the chart
	// draws the target.
	md := readFile(t, dir, report.ReportFile)
	want := "# popsim plan: tiny\n\n**Question:** the smallest consumers in 1..16 meeting p99<=100ms (and no violations), at 95% confidence from 3 to 12 seeds per value\n\n**Answer:** " + answer + "\n"
	if !strings.HasPrefix(md, want) || !strings.Contains(md, "## Decisions") {
		t.Errorf("plan report.md does not start with\n%s\ngot:\n%s", want, md[:min(len(md), 400)])
	}
	if svg := readFile(t, dir, "sweep-p99-e2e.svg"); !strings.Contains(svg, "target p99&lt;=100ms") {
		t.Error("the p99 chart does not draw the target")
	}
	// report re-renders the plan folder with its question, answer and
	// decisions.
	os.Remove(filepath.Join(dir, report.ReportFile))
	wantCode(t, exitOK, "report", dir)
	if again := readFile(t, dir, report.ReportFile); again != md {
		t.Errorf("popsim report changed the plan's report.md:\n%s", again[:min(len(again), 400)])
	}
	// A budget too small to tell is reported as undecided, exit 1.
	out, _ = wantCode(t, exitViolation, "plan", "-f", tiny, "-target", "p99<=100ms", "-search", "consumers=1..2", "-seeds", "1", "-max-seeds", "1", "-out", t.TempDir())
	if !strings.Contains(out, "\nanswer: undecided: ") {
		t.Errorf("a plan with one seed per value:\n%s", out)
	}
}

// A run that hits its event budget fails with exit 1 and its replay
// command; in a sweep it is a failing seed like any other.
func TestEventBudgetIsAFailure(t *testing.T) {
	_, errs := wantCode(t, exitViolation, "run", "-f", tiny, "-set", "eventBudget=100", "-out", t.TempDir())
	if !strings.Contains(errs, "event budget") || !strings.Contains(errs, "replay: go run ./cmd/popsim replay") {
		t.Errorf("stderr: %s", errs)
	}
	dir := t.TempDir()
	out, _ := wantCode(t, exitViolation, "sweep", "-f", tiny, "-set", "eventBudget=100", "-seeds", "5", "-out", dir)
	if !strings.Contains(out, "run-failed") || !strings.Contains(out, "seed 5,") {
		t.Errorf("sweep output:\n%s", out)
	}
}

// The two inputs of issue 16 pass validation but would run out of
// memory: run and sweep refuse them with the estimate.
func TestRefusesRunsOverMemory(t *testing.T) {
	if _, ok := availableMemory(); !ok {
		t.Skip("no /proc/meminfo: no memory bound on this machine")
	}
	for _, set := range [][]string{
		{"-set", "producers[0].arrivals=backlog(1000000000)"},
		{"-set", "producers[0].arrivals=poisson(1000000000/s)", "-set", "duration=720h"},
	} {
		for _, cmd := range []string{"run", "sweep"} {
			args := append([]string{cmd, "-f", tiny, "-out", t.TempDir()}, set...)
			if cmd == "sweep" {
				args = append(args, "-param", "consumers=1,2")
			}
			_, errs := wantCode(t, exitBadInput, args...)
			for _, want := range []string{"refusing to run: estimated", "messages", "of memory", "-force"} {
				if !strings.Contains(errs, want) {
					t.Errorf("popsim %s: stderr lacks %q:\n%s", strings.Join(args, " "), want, errs)
				}
			}
		}
	}
}
