package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"popsim/report"
)

// CheckShards requires the folders to be the shards 0..n-1 of one sweep,
// each exactly once and each complete, and returns the sweep's manifest.
func CheckShards(dirs []string) (Manifest, error) {
	var first Manifest
	seen := map[int]string{}
	for i, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil {
			return first, err
		}
		if i == 0 {
			first = m
		}
		a, b := m, first
		a.Shard, b.Shard = 0, 0
		a.Level, b.Level = 0, 0 // the report's, not the runs': merge states its own
		if !reflect.DeepEqual(a, b) {
			return first, fmt.Errorf("%s is a shard of another sweep than %s (scenario, -set flags, parameters, seeds or shard count differ)", dir, dirs[0])
		}
		if prev, dup := seen[m.Shard]; dup {
			return first, fmt.Errorf("shard %d/%d given twice: %s and %s", m.Shard, m.Shards, prev, dir)
		}
		seen[m.Shard] = dir
		if err := checkComplete(dir, m); err != nil {
			return first, err
		}
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

// checkComplete fails, naming the missing runs, when a shard folder lacks
// runs or is marked incomplete.
func checkComplete(dir string, m Manifest) error {
	missing, err := m.Missing(dir)
	if err != nil {
		return err
	}
	why, marked := Incomplete(dir)
	if len(missing) == 0 && !marked {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is incomplete", dir)
	if marked {
		fmt.Fprintf(&b, " (%s: %s)", IncompleteFile, why)
	}
	fmt.Fprintf(&b, ": %d of its %d runs missing", len(missing), len(m.ShardJobs()))
	for i, r := range missing {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(missing)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s", r)
	}
	return errors.New(b.String())
}

// checkMergeOut refuses an output folder that is one of the shards, lies
// inside one or holds one, or holds files popsim did not write as a sweep.
func checkMergeOut(out string, shards []string) error {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		return a
	}
	o := abs(out)
	for _, s := range shards {
		a := abs(s)
		if a == o || strings.HasPrefix(o+string(filepath.Separator), a+string(filepath.Separator)) || strings.HasPrefix(a+string(filepath.Separator), o+string(filepath.Separator)) {
			return fmt.Errorf("-out %s would overwrite the shard folder %s: merge into a new folder", out, s)
		}
	}
	f, _, err := foreign(out, isSweepFile)
	if err != nil {
		return err
	}
	if f != "" {
		return fmt.Errorf("-out %s %w (e.g. %s): merge into a new folder or an earlier merge's", out, ErrForeign, f)
	}
	return nil
}

// Merge combines the shard folders of one sweep into the sweep folder out:
// the run folders are copied, each parameter point's histograms merged
// exactly (from the runs' histograms.hlog), and one report written. It
// checks everything first (CheckShards, then that out is none of the
// shards and holds nothing but an earlier sweep),
// builds the folder under a temporary name beside out and renames it into
// place at the end, replacing an earlier sweep folder there: a failed
// merge leaves nothing. The intervals are recomputed from the runs'
// summaries at level (0: the first shard's), so a merge reports exactly
// what one machine running the whole sweep would.
func Merge(out string, shards []string, level float64) (*report.Sweep, Manifest, error) {
	m, err := CheckShards(shards)
	if err != nil {
		return nil, m, err
	}
	if level != 0 {
		m.Level = level
	}
	if err := checkMergeOut(out, shards); err != nil {
		return nil, m, err
	}
	parent, base := filepath.Split(filepath.Clean(out))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, m, err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".merge-tmp-*")
	if err != nil {
		return nil, m, fmt.Errorf("-out %s: %w", out, err)
	}
	defer os.RemoveAll(tmp) // after the rename there is nothing left here
	rs := m.NewReport()
	for _, dir := range shards {
		if err := copyRuns(dir, tmp, rs); err != nil {
			return nil, m, err
		}
	}
	if t := rs.Totals(); t.Runs != m.Jobs {
		return nil, m, fmt.Errorf("the shards hold %d runs, the sweep has %d: a shard folder is incomplete", t.Runs, m.Jobs)
	}
	m.Shard, m.Shards = 0, 1
	if err := m.Write(tmp); err != nil {
		return nil, m, err
	}
	if err := report.WriteSweep(tmp, rs); err != nil {
		return nil, m, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, m, err
	}
	return rs, m, replaceDir(tmp, out)
}

// replaceDir renames the folder src to dst, replacing dst when it exists
// (checked by the caller to be popsim's): dst is first renamed aside, then
// removed once src is in place.
func replaceDir(src, dst string) error {
	aside := src + ".old"
	_, err := os.Stat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.Rename(src, dst)
	case err != nil:
		return err
	}
	if err := os.Rename(dst, aside); err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		os.Rename(aside, dst) // put the old one back
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	return os.RemoveAll(aside)
}

// copyRuns reads every run of a shard into rs and copies its folder byte
// for byte into out/runs.
func copyRuns(shard, out string, rs *report.Sweep) error {
	names, err := AddRuns(shard, rs)
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
		if !en.Type().IsRegular() || isTemp(en.Name()) {
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
