package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"popsim/report"
	"popsim/scenarios"
)

const tiny = "testdata/tiny.yaml"

// stopAfter is a context cancelled by its n-th Err call. Execute checks
// Err before a run and the simulator polls it (through the Progress hook)
// before the first event and every sim.ProgressEvery events, so the
// cancellation lands at a chosen point of a sweep without real signals.
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

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// tinySweep prepares 2 consumer counts x 2 seeds of the tiny scenario.
func tinySweep(t *testing.T, shard Shard) *Sweep {
	t.Helper()
	sw, err := Prepare(Source{File: tiny}, []scenarios.Param{{Name: "consumers", Values: []string{"1", "2"}}}, "1..2", shard)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// runSweep runs sw into dir to the end.
func runSweep(t *testing.T, ctx context.Context, sw *Sweep, dir string) Result {
	t.Helper()
	out, err := OpenSweepDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sw.Run(ctx, out, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOpenRunDir(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "fresh", "run")
	o, err := OpenRunDir(fresh, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || !st.IsDir() || len(listDir(t, fresh)) != 0 {
		t.Fatalf("OpenRunDir did not create an empty %s: %v", fresh, err)
	}
	o.Abandon()
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Abandon left the folder it created: %v", err)
	}

	// An earlier run folder is fine (re-running a command), a folder with
	// a sweep or anything else is refused unless overwrite.
	runDir := filepath.Join(root, "run")
	if err := WriteRun(runDir, FailedRun("x", 1, nil, "replay", errors.New("x"))); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRunDir(runDir, false); err != nil {
		t.Errorf("an earlier run folder: %v", err)
	}
	trace := filepath.Join(runDir, "trace.txt")
	os.WriteFile(trace, []byte("0 x\n"), 0o644)
	if _, err := OpenRunDir(runDir, false, trace); err != nil {
		t.Errorf("a run folder holding the run's own -trace: %v", err)
	}
	if _, err := OpenRunDir(runDir, false); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "trace.txt") || !strings.Contains(err.Error(), "-overwrite") {
		t.Errorf("a run folder with another file: %v, want ErrForeign naming trace.txt and -overwrite", err)
	}
	sweepDir := filepath.Join(root, "sweep")
	whole(t, sweepDir)
	if _, err := OpenRunDir(sweepDir, false); !errors.Is(err, ErrForeign) {
		t.Errorf("a sweep folder as a run folder: %v, want ErrForeign", err)
	}
	if _, err := OpenRunDir(sweepDir, true); err != nil {
		t.Errorf("a sweep folder with overwrite: %v", err)
	}
	if _, err := OpenRunDir("/proc/popsim-x", false); err == nil {
		t.Error("/proc/popsim-x accepted as an output folder")
	}
	if _, err := OpenSweepDir(runDir, false); !errors.Is(err, ErrForeign) {
		t.Errorf("a run folder as a sweep folder: %v, want ErrForeign", err)
	}
}

// A sweep into the folder of an earlier sweep replaces it: no stale runs.
func TestOpenSweepDirReplacesEarlierSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	whole(t, dir)
	runSweep(t, context.Background(), tinySweep(t, Shard{1, 4}), dir)
	if got := listDir(t, filepath.Join(dir, RunsDir)); len(got) != 1 || got[0] != "p000_consumers-1_seed2" {
		t.Errorf("runs after re-running shard 1/4 into the folder: %v, want only p000_consumers-1_seed2", got)
	}
}

// WriteRun marks the folder while it writes; a folder left marked is not
// a complete run for RunDirs, Missing or merge.
func TestWriteRunMarksUntilDone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	whole(t, dir)
	for _, name := range listDir(t, filepath.Join(dir, RunsDir)) {
		if _, inc := Incomplete(filepath.Join(dir, RunsDir, name)); inc {
			t.Errorf("%s still marked incomplete", name)
		}
	}
	if _, inc := Incomplete(dir); inc || slices.Contains(listDir(t, dir), IncompleteFile) {
		t.Error("a finished sweep folder is still marked incomplete")
	}
	killed := filepath.Join(dir, RunsDir, "p001_consumers-2_seed1")
	if err := Mark(killed, "killed"); err != nil {
		t.Fatal(err)
	}
	names, _ := RunDirs(dir)
	if slices.Contains(names, "p001_consumers-2_seed1") || len(names) != 3 {
		t.Errorf("RunDirs lists a run marked incomplete: %v", names)
	}
	m, _ := ReadManifest(dir)
	missing, _ := m.Missing(dir)
	if len(missing) != 1 || missing[0].Folder != "p001_consumers-2_seed1" || missing[0].String() != "seed 1, consumers=2 (runs/p001_consumers-2_seed1)" {
		t.Errorf("Missing = %v", missing)
	}
}

// An interrupted sweep leaves its finished runs in a folder marked
// INCOMPLETE, no temporary files, and Reread names the missing runs; a
// sweep interrupted before any run finished leaves nothing.
func TestSweepInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	sw := tinySweep(t, Whole)
	out, err := OpenSweepDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// Two Err calls per tiny run (before it and at its first event): the
	// fifth stops the third run.
	res, err := sw.Run(newStopAfter(5), out, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Done != 2 || res.Complete() {
		t.Fatalf("result %+v, want interrupted after 2 runs", res)
	}
	why, marked := Incomplete(dir)
	if !marked || !strings.Contains(why, "interrupted after 2 of 4 runs") {
		t.Errorf("marker %q (%v)", why, marked)
	}
	if got := listDir(t, dir); slices.Contains(got, report.SweepFile) || !slices.Contains(got, ManifestFile) {
		t.Errorf("interrupted sweep folder holds %v: want the manifest and no report", got)
	}
	assertNoTemp(t, dir)
	rs, _, missing, err := Reread(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 2 || rs.Totals().Runs != 2 || len(rs.Missing) != 2 || missing[0].Folder != "p001_consumers-2_seed1" {
		t.Errorf("Reread: %d runs, missing %v", rs.Totals().Runs, missing)
	}

	empty := filepath.Join(t.TempDir(), "e")
	out, _ = OpenSweepDir(empty, false)
	if res, err := sw.Run(newStopAfter(1), out, 2, nil); err != nil || !res.Interrupted || res.Done != 0 {
		t.Fatalf("stopped at once: %+v, %v", res, err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a sweep stopped before any run left its folder: %v", err)
	}
}

func assertNoTemp(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && (isTemp(d.Name()) || strings.Contains(d.Name(), "merge-tmp")) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
