package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture holds shards 0/2 and 1/2 of the tiny sweep (s0, s1) and their
// merge (whole), written once for the package's tests (TestMain).
var fixture struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}

// shards copies the fixture's two shard folders under root.
func shards(t *testing.T, root string) []string {
	t.Helper()
	fixture.once.Do(func() {
		if fixture.dir, fixture.err = os.MkdirTemp("", "sweep-fixture-*"); fixture.err != nil {
			return
		}
		for i, name := range []string{"s0", "s1"} {
			sw := tinySweep(t, Shard{i, 2})
			out, err := OpenSweepDir(filepath.Join(fixture.dir, name), false)
			if err != nil {
				fixture.err = err
				return
			}
			if _, fixture.err = sw.Run(context.Background(), out, 2, nil); fixture.err != nil {
				return
			}
		}
		_, _, fixture.err = Merge(filepath.Join(fixture.dir, "whole"), []string{filepath.Join(fixture.dir, "s0"), filepath.Join(fixture.dir, "s1")}, 0)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	dirs := []string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}
	for i, d := range dirs {
		copyTree(t, filepath.Join(fixture.dir, []string{"s0", "s1"}[i]), d)
	}
	return dirs
}

// whole copies the fixture's merged (complete, unsharded) sweep to dir.
func whole(t *testing.T, dir string) {
	t.Helper()
	shards(t, t.TempDir())
	copyTree(t, filepath.Join(fixture.dir, "whole"), dir)
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMergeValidation(t *testing.T) {
	root := t.TempDir()
	s := shards(t, root)
	merged := filepath.Join(root, "merged")
	rs, m, err := Merge(merged, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Totals().Runs != 4 || m.Shards != 1 || m.Jobs != 4 {
		t.Fatalf("merged %d runs, manifest %+v", rs.Totals().Runs, m)
	}
	if _, _, err := Merge(merged, s, 0); err != nil {
		t.Errorf("merging again into an earlier merge: %v", err)
	}
	// A merge states its own level: the intervals are recomputed from the
	// runs, and the manifest keeps the level for popsim report.
	rs, m, err = Merge(merged, s, 0.9)
	if err != nil || rs.ConfidenceLevel() != 0.9 || m.Level != 0.9 {
		t.Fatalf("merge at 0.9: level %g, manifest %+v, %v", rs.ConfidenceLevel(), m, err)
	}
	if again, _, _, err := Reread(merged); err != nil || again.ConfidenceLevel() != 0.9 {
		t.Errorf("a merge at 0.9 reads back at %g (%v)", again.ConfidenceLevel(), err)
	}
	if st := rs.Cells()[0].Stats(0.9); st.Mean.Level != 0.9 || !st.Mean.OK || len(st.Seeds) != 2 {
		t.Errorf("merged cell stats %+v", st)
	}

	other := filepath.Join(root, "other")
	sw, _ := Prepare(Source{File: tiny}, nil, "1..2", Shard{1, 2})
	runSweep(t, context.Background(), sw, other)
	incomplete := filepath.Join(root, "incomplete")
	copyTree(t, s[1], incomplete)
	os.RemoveAll(filepath.Join(incomplete, RunsDir, "p001_consumers-2_seed2"))
	Mark(incomplete, "popsim sweep interrupted after 1 of 2 runs")
	foreignDir := filepath.Join(root, "mine")
	os.MkdirAll(foreignDir, 0o755)
	os.WriteFile(filepath.Join(foreignDir, "notes.txt"), []byte("mine"), 0o644)

	for _, c := range []struct {
		out    string
		shards []string
		want   string
	}{
		{s[0], []string{s[0], s[1]}, "would overwrite the shard folder"},
		{filepath.Join(s[1], "runs", "x"), []string{s[0], s[1]}, "would overwrite the shard folder"},
		{root, []string{s[0], s[1]}, "would overwrite the shard folder"},
		{foreignDir, []string{s[0], s[1]}, "notes.txt"},
		{filepath.Join(root, "m2"), []string{s[0]}, "shards [1] of 2 are missing"},
		{filepath.Join(root, "m2"), []string{s[0], s[0]}, "given twice"},
		{filepath.Join(root, "m2"), []string{s[0], other}, "another sweep"},
		{filepath.Join(root, "m2"), []string{s[0], incomplete}, "incomplete (INCOMPLETE: popsim sweep interrupted after 1 of 2 runs): 1 of its 2 runs missing\n  seed 2, consumers=2 (runs/p001_consumers-2_seed2)"},
		{filepath.Join(root, "m2"), []string{s[0], root}, "not a popsim sweep folder"},
	} {
		if _, _, err := Merge(c.out, c.shards, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Merge(%s, %v): %v, want an error with %q", c.out, c.shards, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "m2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge created its output: %v", err)
	}
	if got := listDir(t, foreignDir); len(got) != 1 {
		t.Errorf("a refused merge wrote into %s: %v", foreignDir, got)
	}
}

// A merge that fails half way (a corrupt histogram log in the second
// shard) leaves nothing: no output folder, no temporary sibling.
func TestFailedMergeLeavesNothing(t *testing.T) {
	root := t.TempDir()
	s := shards(t, root)
	hlog := filepath.Join(s[1], RunsDir, "p001_consumers-2_seed2", "histograms.hlog")
	if err := os.WriteFile(hlog, []byte("#[Histogram log format version 1.3]\nnot a histogram\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	if _, _, err := Merge(out, s, 0); err == nil || !strings.Contains(err.Error(), "histograms.hlog") {
		t.Fatalf("merge with a corrupt shard: %v", err)
	}
	got := listDir(t, root)
	if len(got) != 2 {
		t.Errorf("a failed merge left %v beside the shards", got)
	}
}
