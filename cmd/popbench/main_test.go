package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func runMain(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = realMain(args, &o, &e)
	return code, o.String(), e.String()
}

func TestCommandDispatch(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no command"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"help"}, 0, ""},
		{[]string{"run", "-count", "0"}, 2, "-count 0: want 1..1000"},
		{[]string{"run", "-benchtime", "fast"}, 2, `-benchtime "fast"`},
		{[]string{"run", "-benchtime", "0x"}, 2, `-benchtime "0x"`},
		{[]string{"run", "-benchtime", "-1s"}, 2, `-benchtime "-1s"`},
		{[]string{"run", "-sizes", "1k,lots"}, 2, `size "lots"`},
		{[]string{"run", "-run", "("}, 2, "-run"},
		{[]string{"run", "-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"run", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"run", "-run", "NoSuchCase", "-out", "unused"}, 2, "matches no case"},
		{[]string{"compare", "only-one"}, 2, "compare needs two files"},
		{[]string{"compare", "-threshold", "ns/msg", "a", "b"}, 2, "want METRIC=LIMIT"},
		{[]string{"compare", "-threshold", "ns/msg=-3%", "a", "b"}, 2, "not a non-negative number"},
		{[]string{"compare", "-alpha", "2", "a", "b"}, 2, "-alpha 2"},
		{[]string{"compare", "missing-old.txt", "missing-new.txt"}, 2, "missing-old.txt"},
		{[]string{"smoke", "-sizes", "0"}, 2, `size "0"`},
		{[]string{"smoke", "-budgets", "/nonexistent/budgets.json"}, 2, "-budgets"},
		{[]string{"run", "-h"}, 0, "-benchtime"},
		{[]string{"soak", "extra"}, 2, "soak takes no arguments"},
		{[]string{"soak", "-sample", "0s"}, 2, "-sample 0s"},
		{[]string{"soak", "-scenario", "no-such-scenario"}, 2, "no-such-scenario"},
		{[]string{"soak", "-duration", "soon"}, 2, "soon"},
	} {
		code, _, stderr := runMain(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("popbench %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func TestParseRunFlagsDefaults(t *testing.T) {
	c, err := parseRunFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// The default output is a scratch folder: only make bench (-out
	// results/bench) overwrites the committed figures.
	if c.count != 10 || c.benchtime != "1s" || c.out != "out/bench" || fmt.Sprint(c.sizes) != "[1000 100000 1000000]" {
		t.Errorf("defaults: %+v", c)
	}
}

// writeBench writes a benchmark-format file with one line per value.
func writeBench(t *testing.T, name string, nsPerMsg []float64, allocs float64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: popsim/internal/bench\n")
	for _, v := range nsPerMsg {
		fmt.Fprintf(&b, "BenchmarkPopAck32/inflight=100k/cache=off-2 \t 1000\t %g ns/op\t %g ns/msg\t %g allocs/msg\t 4 allocs/op\n", v*32, v, allocs)
	}
	b.WriteString("PASS\n")
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var base = []float64{300, 302, 298, 305, 301, 299, 303, 300}

func scaled(f float64) []float64 {
	out := make([]float64, len(base))
	for i, v := range base {
		out[i] = v * f
	}
	return out
}

func TestCompareWorseFails(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.125)
	worse := writeBench(t, "new.txt", scaled(1.5), 0.125)
	code, out, stderr := runMain("compare", old, worse)
	if code != 1 || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "FAIL") {
		t.Fatalf("exit %d, want 1 with a REGRESSION row\n%s%s", code, out, stderr)
	}
}

func TestCompareEqualPasses(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.125)
	same := writeBench(t, "new.txt", base, 0.125)
	if code, out, stderr := runMain("compare", old, same); code != 0 || strings.Contains(out, "REGRESSION") {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, stderr)
	}
}

func TestCompareWithinThresholdPasses(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.125)
	slower := writeBench(t, "new.txt", scaled(1.05), 0.125)
	code, out, _ := runMain("compare", "-threshold", "ns/msg=10%", old, slower)
	if code != 0 || !strings.Contains(out, "worse") {
		t.Fatalf("a significant 5%% slowdown under a 10%% threshold: exit %d, want 0 and verdict worse\n%s", code, out)
	}
	if code, out, _ := runMain("compare", "-threshold", "ns/msg=2%", old, slower); code != 1 {
		t.Fatalf("the same slowdown over a 2%% threshold: exit %d, want 1\n%s", code, out)
	}
}

func TestCompareAllocsAbsoluteZero(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.125)
	more := writeBench(t, "new.txt", base, 0.15625)
	if code, out, _ := runMain("compare", "-threshold", "allocs/msg=0", old, more); code != 1 || !strings.Contains(out, "allocs/msg") {
		t.Fatalf("one more allocation per batch: exit %d, want 1\n%s", code, out)
	}
}

func TestCompareThroughputHigherIsBetter(t *testing.T) {
	r := compareMetric("X", "msgs/s", base, scaled(2), thresholds{"msgs/s": {relative: true, limit: 0.1}}, 0.05)
	if r.verdict != "better" {
		t.Fatalf("doubled throughput: verdict %q, want better", r.verdict)
	}
}

func TestCompareMalformed(t *testing.T) {
	good := writeBench(t, "old.txt", base, 0.125)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("goos: linux\nBenchmarkX-2 100 fast ns/op\n"), 0o644)
	code, _, stderr := runMain("compare", good, bad)
	if code != 2 || !strings.Contains(stderr, "bad.txt:2: malformed benchmark line") {
		t.Fatalf("exit %d, stderr %q; want 2 naming bad.txt:2", code, stderr)
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("PASS\n"), 0o644)
	if code, _, stderr := runMain("compare", good, empty); code != 2 || !strings.Contains(stderr, "no benchmark results") {
		t.Fatalf("empty file: exit %d, stderr %q", code, stderr)
	}
	brokenJSON := filepath.Join(dir, "broken.json")
	os.WriteFile(brokenJSON, []byte(`{"cases": [`), 0o644)
	if code, _, stderr := runMain("compare", good, brokenJSON); code != 2 || !strings.Contains(stderr, "not a popbench JSON report") {
		t.Fatalf("broken JSON: exit %d, stderr %q", code, stderr)
	}
}

func TestCompareReadsJSON(t *testing.T) {
	rep := report{Cases: []caseReport{{Name: "PopAck32/inflight=100k/cache=off"}}}
	for _, v := range scaled(1.5) {
		rep.Cases[0].Runs = append(rep.Cases[0].Runs, run{Name: "PopAck32/inflight=100k/cache=off", Iters: 1000, Metrics: map[string]float64{"ns/msg": v}})
	}
	js, _ := json.Marshal(rep)
	p := filepath.Join(t.TempDir(), "new.json")
	os.WriteFile(p, js, 0o644)
	if code, out, stderr := runMain("compare", writeBench(t, "old.txt", base, 0.125), p); code != 1 {
		t.Fatalf("JSON new side 50%% slower: exit %d\n%s%s", code, out, stderr)
	}
}

func TestFormatParseRoundTrip(t *testing.T) {
	r := run{Name: "Revive/inflight=1k/cache=off/write=copy", Iters: 12, Metrics: map[string]float64{"ns/op": 123456.7, "ns/msg": 30.1, "allocs/msg": 0.0015625, "B/op": 10, "allocs/op": 2}}
	got, err := parseBenchLine(formatRun(r, 2))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != r.Name || got.Iters != r.Iters || len(got.Metrics) != len(r.Metrics) {
		t.Fatalf("round trip: %+v, want %+v", got, r)
	}
	for u, v := range r.Metrics {
		if math.Abs(got.Metrics[u]-v) > 1e-6*math.Abs(v) {
			t.Errorf("%s: %v, want %v", u, got.Metrics[u], v)
		}
	}
}

func TestMannWhitney(t *testing.T) {
	a, b := []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}
	if p := mannWhitney(a, b); math.Abs(p-2.0/252) > 1e-12 {
		t.Errorf("fully separated 5+5: p = %v, want 2/252", p)
	}
	if p := mannWhitney(a, a); p != 1 {
		t.Errorf("identical samples: p = %v, want 1", p)
	}
	// interleaved: U = 12 of 25, the centre of the distribution
	if p := mannWhitney([]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}); p < 0.5 {
		t.Errorf("interleaved samples: p = %v, want large", p)
	}
	// ties: normal approximation; separated groups are still significant
	if p := mannWhitney([]float64{1, 1, 1, 1, 1, 1}, []float64{2, 2, 2, 2, 2, 2}); p >= 0.05 {
		t.Errorf("separated tied samples: p = %v, want < 0.05", p)
	}
}

func TestSummarize(t *testing.T) {
	xs := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	s := summarize(xs, 0.95)
	if s.Center != 5.5 || s.Lo != 2 || s.Hi != 9 || s.Confidence < 0.95 {
		t.Errorf("n=10: %+v, want median 5.5 in [2, 9]", s)
	}
	// five values cannot bound the median at 95 % on both sides: benchmath
	// widens the interval to infinity on the side it cannot cover
	if s := summarize(xs[:5], 0.95); !(math.IsInf(s.Lo, -1) || math.IsInf(s.Hi, 1)) || s.Center != 8 {
		t.Errorf("n=5 has no finite 95%% interval: %+v", s)
	}
}

func TestJudge(t *testing.T) {
	b := budgets{Max: map[string]float64{"A allocs/msg": 0.1, "B allocs/msg": 0, "C allocs/msg": 1}}
	ms := []measurement{{"A allocs/msg", 0.1, true}, {"B allocs/msg", 0, true}, {"A ns/msg", 1e9, false}}
	var out bytes.Buffer
	if code := judge(&out, b, ms); code != 0 || !strings.Contains(out.String(), "not measured in this run") {
		t.Fatalf("within budget: exit %d\n%s", code, out.String())
	}
	ms = append(ms, measurement{"C allocs/msg", 1.5, true})
	out.Reset()
	if code := judge(&out, b, ms); code != 1 || !strings.Contains(out.String(), "OVER BUDGET") {
		t.Fatalf("over budget: exit %d\n%s", code, out.String())
	}
	floor := budgets{Max: b.Max, Min: map[string]float64{"SimRun/default proc-cpu-events/s": 1000}}
	ms = []measurement{{"SimRun/default proc-cpu-events/s", 1000, true}}
	out.Reset()
	if code := judge(&out, floor, ms); code != 0 || !strings.Contains(out.String(), ">= 1000") {
		t.Fatalf("at its floor: exit %d\n%s", code, out.String())
	}
	ms[0].value = 999
	out.Reset()
	if code := judge(&out, floor, ms); code != 1 || !strings.Contains(out.String(), "UNDER FLOOR") {
		t.Fatalf("under its floor: exit %d\n%s", code, out.String())
	}
}

func TestBudgetsFile(t *testing.T) {
	if _, err := parseBudgets("built-in", defaultBudgets); err != nil {
		t.Fatalf("the committed budgets.json: %v", err)
	}
	if _, err := parseBudgets("x", []byte(`{"max": {"no-unit": 1}}`)); err == nil || !strings.Contains(err.Error(), "want") {
		t.Fatalf("a key without a unit: %v", err)
	}
	if _, err := parseBudgets("x", []byte(`{"max": {}}`)); err == nil {
		t.Fatal("empty budgets accepted")
	}
	// a floor on a figure smoke gates by its largest value checks nothing
	if _, err := parseBudgets("x", []byte(`{"max": {"SimRun/default lost": 0}, "min": {"SimRun/default lost": 1}}`)); err == nil || !strings.Contains(err.Error(), "under \"min\"") {
		t.Fatalf("a floor on a max-gated figure: %v", err)
	}
}

// TestRunWritesOutputs is a tiny real run (one iteration of one floor case).
func TestRunWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runMain("run", "-count", "1", "-benchtime", "1x", "-sizes", "1k", "-run", "^FloorPopAck32/", "-latency-every", "1", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, f := range []string{"bench.txt", "bench.json", "latency/FloorPopAck32_inflight-1k.hgrm"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	if !strings.Contains(out, "FloorPopAck32") {
		t.Errorf("table lacks the case:\n%s", out)
	}
	runs, err := readRuns(filepath.Join(dir, "bench.json"))
	if err != nil || len(runs) != 1 || runs[0].Metrics["ns/msg"] <= 0 {
		t.Fatalf("bench.json: %v %+v", err, runs)
	}
	if txt, err := readRuns(filepath.Join(dir, "bench.txt")); err != nil || len(txt) != 1 {
		t.Fatalf("bench.txt: %v %+v", err, txt)
	}
}

// Differences below the resolution (amortized counts over another N) do
// not fail even an absolute-zero threshold.
func TestCompareResolution(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.12500)
	tiny := writeBench(t, "new.txt", base, 0.12502)
	if code, out, _ := runMain("compare", "-threshold", "allocs/msg=0", old, tiny); code != 0 {
		t.Fatalf("a 0.016%% change failed the gate: exit %d\n%s", code, out)
	}
}

// A -threshold on a metric neither file reports would check nothing: bad
// input (it was accepted and the comparison passed).
func TestCompareRefusesUnknownThresholdMetric(t *testing.T) {
	old := writeBench(t, "old.txt", base, 0.125)
	code, out, stderr := runMain("compare", "-threshold", "bogus=10%", old, old)
	if code != 2 || !strings.Contains(stderr, `no benchmark in both files reports "bogus"`) || !strings.Contains(stderr, "allocs/msg, allocs/op, ns/msg, ns/op") {
		t.Fatalf("exit %d, stderr %q, stdout %q; want 2 naming the metric and the ones there are", code, stderr, out)
	}
	if code, _, stderr := runMain("compare", "-threshold", "ns/msg=10%", old, old); code != 0 {
		t.Fatalf("a known metric: exit %d, %s", code, stderr)
	}
}

// The floor's allocs/msg reads 0 in some runs and 1e-7 in others (one
// allocation amortised over millions of iterations): not a regression,
// even under allocs/msg=0. One more allocation per 32-message batch is.
func TestCompareIgnoresAmortisedAllocNoise(t *testing.T) {
	zero := writeBench(t, "old.txt", base, 0)
	noise := writeBench(t, "new.txt", base, 1e-7)
	if code, out, _ := runMain("compare", "-threshold", "allocs/msg=0", zero, noise); code != 0 || strings.Contains(out, "REGRESSION") {
		t.Fatalf("0 -> 1e-7 allocs/msg: exit %d, want 0\n%s", code, out)
	}
	more := writeBench(t, "more.txt", base, 1.0/32)
	if code, out, _ := runMain("compare", "-threshold", "allocs/msg=0", zero, more); code != 1 {
		t.Fatalf("0 -> 1/32 allocs/msg: exit %d, want 1\n%s", code, out)
	}
}

// A budget for a benchmark smoke does not measure would never be checked:
// refused (it printed "ok").
func TestBudgetForNoSuchBenchmark(t *testing.T) {
	for _, key := range []string{"NoSuchBench/inflight=1k allocs/msg", "PopAck32/inflight=1k/cache=maybe allocs/msg", "PopAck32/inflight=1k/cache=off ns/msg", "SimRun/default wall_seconds", "SimRun/hot-topic-500x500 lost", "SimRun/default-scenario wall_seconds"} {
		p := filepath.Join(t.TempDir(), "budgets.json")
		os.WriteFile(p, []byte(`{"max": {"`+key+`": 1}}`), 0o644)
		code, _, stderr := runMain("smoke", "-budgets", p)
		if code != 2 || !strings.Contains(stderr, "would check nothing") {
			t.Errorf("budget %q: exit %d, stderr %q; want 2", key, code, stderr)
		}
	}
	for _, key := range []string{"PopAck32.pop/inflight=10k/cache=on allocs/msg", "Revive/inflight=1M/cache=off/write=copy allocs/msg", "SimRun/default lost", "SimRun/default-scenario allocs/event"} {
		if !gatedKey(key) {
			t.Errorf("%q is gated by smoke but refused", key)
		}
	}
	for _, key := range []string{"SimRun/default proc-cpu-events/s", "SimRun/default-scenario proc-cpu-events/s"} {
		if !floorKey(key) {
			t.Errorf("%q is floored by smoke but refused", key)
		}
	}
}

// An unwritable -out fails before the benchmarks run (it failed after
// all of them, with exit 1).
func TestRunChecksOutBeforeBenchmarks(t *testing.T) {
	code, out, stderr := runMain("run", "-count", "1", "-benchtime", "1x", "-sizes", "1k", "-run", "^FloorPopAck32/", "-out", "/proc/popbench-x")
	if code != 2 || !strings.Contains(stderr, "-out") || strings.Contains(stderr, "FloorPopAck32") || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 before any benchmark", code, out, stderr)
	}
}

// TestSoakRecordsARun: a short soak writes its figures, the overrides it
// ran with, and a run that produced, acked and broke nothing.
func TestSoakRecordsARun(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runMain("soak", "-duration", "300ms", "-rate", "2000/s", "-out", dir, "-name", "short")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "virtual s in") || !strings.Contains(stdout, "short.json") {
		t.Errorf("stdout %q", stdout)
	}
	r := readSoak(t, filepath.Join(dir, "short.json"))
	if r.Shards != 1 || r.ShardRuns != nil {
		t.Errorf("shards %d, shard runs %v; want 1 and none recorded", r.Shards, r.ShardRuns)
	}
	want := []string{"duration=300ms", "eventBudget=10000000000", "producers[0].arrivals=poisson(2000/s)"}
	if fmt.Sprint(r.Overrides) != fmt.Sprint(want) {
		t.Errorf("overrides %q, want %q", r.Overrides, want)
	}
	if r.Scenario != "hot-topic-500x500" || r.VirtualSeconds < 0.3 || r.Produced == 0 || r.Acked != r.Produced || r.Violations != 0 ||
		r.Events == 0 || r.PeakHeapBytes == 0 || r.Samples < 2 {
		t.Errorf("implausible record: %+v", r)
	}
}

// TestHigherIsBetter: throughputs and the simulator's speed ratio improve
// upwards; times, allocations and bytes downwards.
func TestHigherIsBetter(t *testing.T) {
	for unit, want := range map[string]bool{"msgs/s": true, "events/s": true, "proc-cpu-events/s": true, "virtual-s/wall-s": true,
		"ns/msg": false, "cpu-ns/event": false, "allocs/msg": false, "B/op": false} {
		if got := higherIsBetter(unit); got != want {
			t.Errorf("higherIsBetter(%q) = %v, want %v", unit, got, want)
		}
	}
}

// TestSoakMemprofileSamples: main turns allocation sampling off, and only
// soak -memprofile turns it back on, so that its heap profile holds the
// run's allocations rather than none.
func TestSoakMemprofileSamples(t *testing.T) {
	old := runtime.MemProfileRate
	defer func() { runtime.MemProfileRate = old }()
	dir := t.TempDir()
	for _, withProfile := range []bool{false, true} {
		runtime.MemProfileRate = 0 // as main leaves it
		args := []string{"soak", "-duration", "300ms", "-rate", "2000/s", "-out", dir, "-name", "prof"}
		prof := filepath.Join(dir, "heap.pprof")
		if withProfile {
			args = append(args, "-memprofile", prof)
		}
		if code, _, stderr := runMain(args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if on := runtime.MemProfileRate != 0; on != withProfile {
			t.Errorf("-memprofile given %v: sampling on %v after the soak", withProfile, on)
		}
		if _, err := os.Stat(prof); withProfile && err != nil {
			t.Errorf("no heap profile written: %v", err)
		}
	}
}

// TestSoakCPUProfile: soak -cpuprofile writes a profile go tool pprof
// reads, and an unwritable path is bad usage, reported before the run.
func TestSoakCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	code, _, stderr := runMain("soak", "-duration", "300ms", "-rate", "2000/s", "-out", dir, "-name", "cpu", "-cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Fatalf("no CPU profile written: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".cpu.pprof.tmp-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run pprof with")
	}
	if out, err := exec.Command(goTool, "tool", "pprof", "-raw", prof).CombinedOutput(); err != nil || !strings.Contains(string(out), "samples/count") {
		t.Errorf("go tool pprof cannot read the profile: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "no", "such", "dir", "cpu.pprof")
	code, _, stderr = runMain("soak", "-duration", "300ms", "-out", dir, "-cpuprofile", bad)
	if code != 2 || !strings.Contains(stderr, "-cpuprofile") || !strings.Contains(stderr, "no such file") {
		t.Errorf("unwritable -cpuprofile: exit %d, stderr %q; want 2 naming the flag and the cause", code, stderr)
	}
}
