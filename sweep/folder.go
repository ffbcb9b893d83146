package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"popsim/model"
	"popsim/report"
)

// File and folder names popsim writes besides the report package's.
const (
	// ManifestFile describes a sweep folder: what was swept and which
	// shard of it the folder holds. merge checks that shards belong to the
	// same sweep; report lists the runs a folder lacks.
	ManifestFile = "popsim-sweep.json"
	// RunsDir is the sub-folder of a sweep folder holding one folder per run.
	RunsDir = "runs"
	// PlanFile holds a plan's question and answer (plan folders only).
	PlanFile = "plan.json"
	// IncompleteFile marks a folder popsim has not finished writing. It is
	// written before anything else and removed after everything else, so
	// a folder holding it was interrupted (or is being written): report
	// and merge refuse to take it for complete.
	IncompleteFile = "INCOMPLETE"
)

// runFiles are the files a run folder may hold (report.WriteRun's).
var runFiles = []string{
	report.SummaryFile, report.HlogFile, report.ReportFile,
	report.HistEndToEnd + report.HgrmExt, report.HistServiceTime + report.HgrmExt, report.HistReviveLag + report.HgrmExt,
	report.ChartLatency + ".png", report.ChartLatency + ".svg",
	report.ChartTimeSeries + ".png", report.ChartTimeSeries + ".svg",
	report.ChartDuplicates + ".png", report.ChartDuplicates + ".svg",
	report.ChartBreakdown + ".png", report.ChartBreakdown + ".svg",
	model.PartBrokerWait + report.HgrmExt, model.PartRedeliveryWait + report.HgrmExt, model.PartLocalBuffer + report.HgrmExt,
	model.PartProcessing + report.HgrmExt, model.PartAck + report.HgrmExt,
}

// isTemp reports whether name is a temporary file of report.AtomicFile
// (left behind only when a process was killed mid-write).
func isTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") }

// isRunFile reports whether a run folder may hold name.
func isRunFile(name string, dir bool) bool {
	return !dir && (slices.Contains(runFiles, name) || name == IncompleteFile || isTemp(name))
}

// isSweepFile reports whether a sweep or plan folder may hold name at its
// top level (runs/ is checked separately).
func isSweepFile(name string, dir bool) bool {
	if dir {
		return name == RunsDir
	}
	switch name {
	case ManifestFile, PlanFile, report.SweepFile, report.ReportFile, IncompleteFile:
		return true
	}
	return isTemp(name) || strings.HasPrefix(name, "sweep-") && (strings.HasSuffix(name, ".png") || strings.HasSuffix(name, ".svg"))
}

// foreign returns the first entry of dir that allowed rejects ("" when
// none) and whether dir exists. A run folder under a sweep's runs/ is
// checked entry by entry too.
func foreign(dir string, allowed func(name string, dir bool) bool) (string, bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	for _, en := range entries {
		if !allowed(en.Name(), en.IsDir()) {
			return filepath.Join(dir, en.Name()), true, nil
		}
		if en.IsDir() && en.Name() == RunsDir {
			if f, err := foreignRuns(filepath.Join(dir, RunsDir)); f != "" || err != nil {
				return f, true, err
			}
		}
	}
	return "", true, nil
}

// foreignRuns checks a sweep's runs/ folder: only run folders.
func foreignRuns(runs string) (string, error) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return "", err
	}
	for _, en := range entries {
		p := filepath.Join(runs, en.Name())
		if !en.IsDir() {
			return p, nil
		}
		if f, _, err := foreign(p, isRunFile); f != "" || err != nil {
			return f, err
		}
	}
	return "", nil
}

// Output is a folder a command is about to write, checked before any
// simulation starts.
type Output struct {
	Dir     string
	created bool // Dir did not exist before
	mixed   bool // Dir holds files popsim did not write (-overwrite)
}

// ErrForeign is returned (wrapped) when an output folder holds files
// popsim did not write there.
var ErrForeign = errors.New("holds files popsim did not write there")

// OpenRunDir checks, before a run starts, that dir can receive a run
// folder: it must not exist, be empty, or be a run folder popsim wrote
// (only the files of one; exempt names an extra file allowed there, such
// as the run's own -trace). With overwrite, anything else is accepted and
// its files are left in place. dir is created and must be writable.
func OpenRunDir(dir string, overwrite bool, exempt ...string) (*Output, error) {
	allowed := func(name string, isDir bool) bool {
		return isRunFile(name, isDir) || !isDir && slices.Contains(exempt, filepath.Join(dir, name))
	}
	return open(dir, overwrite, allowed, "a run folder")
}

// OpenSweepDir checks, before a sweep or plan starts, that dir can receive
// a sweep folder: it must not exist, be empty, or be a sweep folder popsim
// wrote (manifest, report, charts and runs/ of run folders), which is then
// cleared. With overwrite, anything else is accepted and left in place.
// dir is created and must be writable.
func OpenSweepDir(dir string, overwrite bool) (*Output, error) {
	o, err := open(dir, overwrite, isSweepFile, "a sweep folder")
	if err != nil || o.mixed {
		return o, err
	}
	if err := clearSweep(dir); err != nil {
		return nil, err
	}
	return o, nil
}

func open(dir string, overwrite bool, allowed func(string, bool) bool, what string) (*Output, error) {
	f, exists, err := foreign(dir, allowed)
	if err != nil {
		return nil, err
	}

	if f != "" && !overwrite {
		return nil, fmt.Errorf("%s %w (e.g. %s): it is not %s popsim wrote; choose another -out, or pass -overwrite to write into it anyway", dir, ErrForeign, f, what)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output folder %s: %w", dir, err)
	}
	o := &Output{Dir: dir, created: !exists, mixed: f != ""}
	if err := probe(dir); err != nil {
		o.Abandon()
		return nil, err
	}
	return o, nil
}

// probe proves dir writable by creating and removing a file in it.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".popsim-probe-*")
	if err != nil {
		return fmt.Errorf("output folder %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Abandon undoes the Output when nothing worth keeping was written: a
// folder it created is removed with everything this process wrote into
// it; in a folder that existed, the marker, the manifest and an empty
// runs/ are removed. An interrupted command leaves nothing then.
func (o *Output) Abandon() {
	if o.created {
		os.RemoveAll(o.Dir)
		return
	}
	os.Remove(filepath.Join(o.Dir, ManifestFile))
	os.Remove(filepath.Join(o.Dir, RunsDir)) // only if empty
	os.Remove(filepath.Join(o.Dir, IncompleteFile))
}

// clearSweep removes an earlier sweep from dir, which holds nothing else:
// the files popsim writes there and runs/ with its run folders.
func clearSweep(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if err := os.RemoveAll(filepath.Join(dir, en.Name())); err != nil {
			return fmt.Errorf("clearing the earlier sweep in %s: %w", dir, err)
		}
	}
	return nil
}

// Mark writes the IncompleteFile into dir with a line saying why.
func Mark(dir, why string) error {
	return report.WriteFileAtomic(filepath.Join(dir, IncompleteFile), []byte(why+"\n"))
}

// Unmark removes the IncompleteFile from dir: the folder is complete.
func Unmark(dir string) error {
	err := os.Remove(filepath.Join(dir, IncompleteFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Incomplete returns the IncompleteFile's text when dir holds one.
func Incomplete(dir string) (why string, incomplete bool) {
	data, err := os.ReadFile(filepath.Join(dir, IncompleteFile))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(data)), true
}

// WriteRun writes a run folder: the IncompleteFile first, then (after
// removing the files of an earlier run there) report.WriteRun's files,
// then the marker is removed. A folder killed mid-write keeps its marker.
func WriteRun(dir string, o *Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	if err := Mark(dir, "popsim was writing this run folder and did not finish"); err != nil {
		return err
	}
	for _, name := range runFiles {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := report.WriteRun(dir, o.Summary, o.Hists); err != nil {
		return err
	}
	return Unmark(dir)
}

// RewriteRun re-renders a run folder in place from what was read from it
// (report.ReadRun): marked incomplete while the files are rewritten.
func RewriteRun(dir string, r report.Run) error {
	if err := Mark(dir, "popsim was re-rendering this run folder and did not finish"); err != nil {
		return err
	}
	if err := report.WriteRun(dir, r.Summary, r.Hists); err != nil {
		return err
	}
	return Unmark(dir)
}

// IsRunDir reports whether dir holds a run's summary.json (complete or
// not: see Incomplete).
func IsRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, report.SummaryFile))
	return err == nil && st.Mode().IsRegular()
}

// RunDirs lists the complete run folders under a sweep folder's runs/,
// sorted by name; folders without a summary or with an IncompleteFile are
// left out (see Missing).
func RunDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if err != nil {
		return nil, fmt.Errorf("%s has no %s folder: %w", dir, RunsDir, err)
	}
	var out []string
	for _, en := range entries {
		p := filepath.Join(dir, RunsDir, en.Name())
		if _, inc := Incomplete(p); en.IsDir() && IsRunDir(p) && !inc {
			out = append(out, en.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// AddRuns reads every complete run folder of the sweep folder dir into rs
// and returns their names.
func AddRuns(dir string, rs *report.Sweep) ([]string, error) {
	names, err := RunDirs(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		src := filepath.Join(dir, RunsDir, name)
		run, err := report.ReadRun(src)
		if err != nil {
			return nil, err
		}
		if err := rs.Add(report.SweepPoint{Summary: run.Summary, Hists: run.Hists}); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	}
	return names, nil
}

// writeJSON writes v indented, atomically, with <, > and & as they are
// (a target reads p99<=55ms, not p99\u003c=55ms).
func writeJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return report.WriteFileAtomic(path, b.Bytes())
}
