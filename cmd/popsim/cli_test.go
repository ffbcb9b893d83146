package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"popsim/report"
	"popsim/sweep"
)

// stopAfter is a context cancelled by its n-th Err call: the command's
// stand-in for Ctrl-C at a chosen point. sweep.Execute checks Err before a
// run, and the simulator polls it before the first event and every
// sim.ProgressEvery events.
type stopAfter struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int64
}

func newStopAfter(n int64) *stopAfter {
	ctx, cancel := context.WithCancel(context.Background())
	c := &stopAfter{Context: ctx, cancel: cancel}
	c.n.Store(n)
	return c
}

func (c *stopAfter) Err() error {
	if c.n.Add(-1) <= 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// popsimEnv runs the command in-process with a configured env.
func popsimEnv(e *env, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	e.stdout, e.stderr = &out, &errb
	code := e.main(args)
	return code, out.String(), errb.String()
}

// busy makes the tiny scenario long enough (over 100k events) for the
// simulator to poll its context and report progress mid-run.
var busy = []string{"-set", "producers[0].arrivals=poisson(8000/s)"}

func walk(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// Ctrl-C during a run stops it, removes the half-written trace and leaves
// no output folder (it used to leave a hidden partial trace, and a folder
// that looked complete when the interrupt hit during writing).
func TestInterruptedRunLeavesNothing(t *testing.T) {
	root := t.TempDir()
	out, trace := filepath.Join(root, "run"), filepath.Join(root, "trace.txt")
	args := append([]string{"run", "-f", tiny, "-out", out, "-trace", trace}, busy...)
	code, stdout, stderr := popsimEnv(&env{ctx: newStopAfter(3)}, args...)
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout, stderr)
	}
	if left := walk(t, root); len(left) != 0 {
		t.Errorf("an interrupted run left %v", left)
	}
}

// An interrupted sweep leaves its finished runs in a folder marked
// INCOMPLETE; report says the sweep is incomplete, names the missing runs
// and exits 1 (it used to report the finished seeds as a complete sweep),
// and merge refuses it.
func TestInterruptedSweepIsIncomplete(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s")
	args := []string{"sweep", "-f", tiny, "-param", "consumers=1,2", "-seeds", "1..2", "-parallel", "1", "-out", dir}
	// Two context checks per tiny run: the fifth stops the third run.
	code, stdout, stderr := popsimEnv(&env{ctx: newStopAfter(5)}, args...)
	if code != exitInterrupted || !strings.Contains(stderr, "2 of 4 runs finished") || !strings.Contains(stderr, "marked INCOMPLETE") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := walk(t, dir); !slices.Contains(got, sweep.IncompleteFile) || slices.Contains(got, report.SweepFile) {
		t.Errorf("interrupted sweep folder: %v", got)
	}
	out, _ := wantCode(t, exitViolation, "report", dir)
	for _, want := range []string{"INCOMPLETE: 2 run(s)", "seed 1, consumers=2 (runs/p001_consumers-2_seed1)", "seed 2, consumers=2 (runs/p001_consumers-2_seed2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report of an interrupted sweep lacks %q:\n%s", want, out)
		}
	}
	if md := readFile(t, dir, report.ReportFile); !strings.Contains(md, "**INCOMPLETE: 2 run(s) missing**") {
		t.Errorf("report.md does not say the sweep is incomplete:\n%s", md)
	}
	_, errs := wantCode(t, exitBadInput, "merge", "-out", filepath.Join(root, "m"), dir)
	if !strings.Contains(errs, "is incomplete") || !strings.Contains(errs, "p001_consumers-2_seed1") {
		t.Errorf("merge of an incomplete shard: %s", errs)
	}

	// A run folder left marked (the process was killed while writing it)
	// is not reported as a run.
	run := filepath.Join(dir, sweep.RunsDir, "p000_consumers-1_seed1")
	os.WriteFile(filepath.Join(run, sweep.IncompleteFile), []byte("killed\n"), 0o644)
	if _, errs := wantCode(t, exitViolation, "report", run); !strings.Contains(errs, "is incomplete") {
		t.Errorf("report of a run folder marked incomplete: %s", errs)
	}
}

// merge -out s0 s0 s1 would overwrite its own input: refused, s0 intact.
func TestMergeRefusesItsInput(t *testing.T) {
	root := t.TempDir()
	s := []string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}
	for i, d := range s {
		wantCode(t, exitOK, "sweep", "-f", tiny, "-seeds", "1..2", "-shard", []string{"0/2", "1/2"}[i], "-out", d)
	}
	before := walk(t, s[0])
	_, errs := wantCode(t, exitBadInput, "merge", "-out", s[0], s[0], s[1])
	if !strings.Contains(errs, "would overwrite the shard folder") {
		t.Errorf("stderr: %s", errs)
	}
	if after := walk(t, s[0]); !slices.Equal(before, after) {
		t.Errorf("the refused merge changed %s: %v -> %v", s[0], before, after)
	}
	// A merge that fails on a corrupt shard leaves nothing behind.
	hlog := filepath.Join(s[1], sweep.RunsDir, "p000_seed2", report.HlogFile)
	if err := os.WriteFile(hlog, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCode(t, exitBadInput, "merge", "-out", filepath.Join(root, "m"), s[0], s[1])
	if got := walk(t, root); slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "m") || strings.HasPrefix(p, ".m") }) {
		t.Errorf("a failed merge left files: %v", got)
	}
}

// run refuses a folder holding a sweep or other files unless -overwrite,
// accepts its own earlier run folder, and checks that the folder is
// writable before simulating.
func TestRunOutputFolder(t *testing.T) {
	root := t.TempDir()
	sw := filepath.Join(root, "sweep")
	wantCode(t, exitOK, "sweep", "-f", tiny, "-seeds", "1", "-out", sw)
	out, errs := wantCode(t, exitBadInput, "run", "-f", tiny, "-out", sw)
	if !strings.Contains(errs, "holds files popsim did not write there") || !strings.Contains(errs, "-overwrite") || strings.Contains(out, "scenario tiny") {
		t.Errorf("run into a sweep folder:\nstdout:\n%s\nstderr:\n%s", out, errs)
	}
	wantCode(t, exitOK, "run", "-f", tiny, "-out", sw, "-overwrite")
	if !sweep.IsRunDir(sw) {
		t.Error("-overwrite did not write the run")
	}
	run := filepath.Join(root, "run")
	wantCode(t, exitOK, "run", "-f", tiny, "-out", run)
	wantCode(t, exitOK, "run", "-f", tiny, "-out", run, "-seed", "2")

	out, errs = wantCode(t, exitBadInput, "run", "-f", tiny, "-out", "/proc/popsim-x")
	if strings.Contains(out, "scenario tiny") || !strings.Contains(errs, "/proc/popsim-x") {
		t.Errorf("unwritable -out: the run started, or the error does not name the folder:\nstdout:\n%s\nstderr:\n%s", out, errs)
	}
	wantCode(t, exitBadInput, "sweep", "-f", tiny, "-seeds", "1", "-out", "/proc/popsim-x")
	wantCode(t, exitBadInput, "plan", "-f", tiny, "-target", "p99<=1s", "-search", "consumers=1..2", "-out", "/proc/popsim-x")
}

func TestReplayRefusesNegativeAround(t *testing.T) {
	_, errs := wantCode(t, exitBadInput, "replay", "-f", tiny, "-seed", "1", "-around", "-5")
	if !strings.Contains(errs, "want an event index, a whole number >= 0") {
		t.Errorf("stderr: %s", errs)
	}
}

// -h prints a subcommand's usage once, on stdout (it printed it twice).
func TestHelpPrintedOnce(t *testing.T) {
	for _, c := range commands() {
		code, out, errs := popsim(t, c.name, "-h")
		if n := strings.Count(out+errs, "usage: popsim "+c.name); code != exitOK || n != 1 || errs != "" {
			t.Errorf("%s -h: exit %d, usage printed %d times, stderr %q", c.name, code, n, errs)
		}
	}
	// A flag error prints the error and the usage once, on stderr.
	code, out, errs := popsim(t, "run", "-nosuchflag")
	if code != exitBadInput || out != "" || strings.Count(errs, "usage: popsim run") != 1 {
		t.Errorf("run -nosuchflag: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// fakeClock advances ten seconds per reading.
func fakeClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(10 * time.Second); return t }
}

// The header (seed, config hash, fault sites) comes first; a long run
// shows its progress on stderr with virtual time, events and an ETA.
func TestRunHeaderFirstAndProgress(t *testing.T) {
	args := []string{"run", "-f", tiny, "-out", t.TempDir(), "-set", "producers[0].arrivals=poisson(2000/s)", "-set", "duration=10s"}
	code, out, errs := popsimEnv(&env{now: fakeClock()}, args...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	iSeed, iHash, iFault, iSum := strings.Index(out, "  seed 1\n"), strings.Index(out, "config_sha256"), strings.Index(out, "fault crash:"), strings.Index(out, "messages ")
	if iSeed < 0 || iHash < iSeed || iFault < iHash || iSum < iFault {
		t.Errorf("header not first (seed %d, hash %d, faults %d, summary %d):\n%s", iSeed, iHash, iFault, iSum, out)
	}
	if !strings.Contains(errs, "run: ") || !strings.Contains(errs, "virtual") || !strings.Contains(errs, "events") || !strings.Contains(errs, "% of 10 s, ETA") {
		t.Errorf("no progress on stderr:\n%s", errs)
	}
}

// A sweep shows progress when stderr is not a terminal: a line per run.
func TestSweepProgressLines(t *testing.T) {
	code, out, errs := popsimEnv(&env{now: fakeClock()}, "sweep", "-f", tiny, "-param", "consumers=1,2", "-seeds", "1", "-parallel", "1", "-out", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"[1/2] consumers=1 seed 1: PASS", "[2/2] consumers=2 seed 1: PASS", "ETA"} {
		if !strings.Contains(errs, want) {
			t.Errorf("sweep progress lacks %q:\n%s", want, errs)
		}
	}
}

func TestVersionSaysHowToGetTheCommit(t *testing.T) {
	out, _ := wantCode(t, exitOK, "version")
	// go test builds without VCS stamping, like go run.
	if !strings.Contains(out, "go build ./cmd/popsim") || !strings.Contains(out, "results/COMMIT") {
		t.Errorf("version without a stamped commit does not say how to get it: %s", out)
	}
}

// A run and a check of its trace both print the messages acked and not
// done when there are any, and neither prints the line without them.
func TestAckedNotDoneLine(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.txt")
	out, _ := wantCode(t, exitOK, "run", "-f", tiny, "-out", filepath.Join(dir, "run"), "-trace", trace,
		"-set", "consumers[0].outcomes=outcomes(ack_then_fail=0.05)")
	checked, _ := wantCode(t, exitOK, "check", trace)
	for what, text := range map[string]string{"run": out, "check": checked} {
		if !strings.Contains(text, "acked, not done") || !strings.Contains(text, "not a violation") {
			t.Errorf("%s: no acked-not-done line:\n%s", what, text)
		}
	}
	out, _ = wantCode(t, exitOK, "run", "-f", tiny, "-out", filepath.Join(dir, "plain"))
	if strings.Contains(out, "acked, not done") {
		t.Errorf("an acked-not-done line in a run without any:\n%s", out)
	}
}
