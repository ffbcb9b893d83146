package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/model"
)

// File names inside a run folder.
const (
	SummaryFile = "summary.json"
	HlogFile    = "histograms.hlog"
	ReportFile  = "report.md"
	SweepFile   = "sweep.json"
	HgrmExt     = ".hgrm"
)

// Run is one run's results as stored in its folder.
type Run struct {
	Dir     string // the folder it was read from; "" for a run built in memory
	Summary model.Summary
	Hists   map[string]*hdrhistogram.Histogram // by name, e.g. HistEndToEnd
}

// WriteFileAtomic writes data to path so that readers see either the old
// file or the complete new one (see AtomicFile). The file is created with
// mode 0644. On error the temporary file is removed.
func WriteFileAtomic(path string, data []byte) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	defer a.Abort()
	if _, err := a.Write(data); err != nil {
		return err
	}
	return a.Commit()
}

// AtomicFile streams a file that appears at its path only when complete:
// it writes a temporary file in the same folder, and Commit fsyncs it,
// renames it over the path and fsyncs the folder. For files too large to
// hold in memory (traces); WriteFileAtomic is the one-call form.
type AtomicFile struct {
	path string
	f    *os.File
}

// CreateAtomic starts writing path. Call Commit, or Abort to drop it.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("report: write %s: %w", path, err)
	}
	return &AtomicFile{path: path, f: f}, nil
}

// Write writes to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	if err != nil {
		return n, fmt.Errorf("report: write %s: %w", a.path, err)
	}
	return n, nil
}

// Commit makes the file durable with mode 0644 and renames it into place.
// On error the temporary file is removed.
func (a *AtomicFile) Commit() (err error) {
	f, path := a.f, a.path
	defer func() {
		if err != nil {
			a.Abort()
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("report: fsync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("report: close %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("report: rename into %s: %w", path, err)
	}
	a.f = nil
	return syncDir(filepath.Dir(path))
}

// Abort removes the temporary file unless Commit renamed it; it may be
// called after Commit (e.g. deferred).
func (a *AtomicFile) Abort() {
	if a.f != nil {
		a.f.Close()
		os.Remove(a.f.Name())
		a.f = nil
	}
}

// syncDir makes a rename in dir durable. Platforms that cannot fsync a
// folder report EINVAL or similar; the rename has happened either way, so
// only an open failure is an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("report: open folder %s: %w", dir, err)
	}
	d.Sync()
	return d.Close()
}

// EncodeSummary renders s as summary.json: two-space indented, fields in
// declaration order, map keys sorted (encoding/json), newline-terminated.
func EncodeSummary(s model.Summary) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteRun writes a run folder (see the package doc for its layout):
// summary.json, one <name>.hgrm per histogram, histograms.hlog, the run's
// charts as PNG and SVG, and report.md. It creates dir if needed. Every
// file is written atomically; files of an earlier run that this run does
// not produce are left alone (report.md links only this run's charts).
func WriteRun(dir string, s model.Summary, hists map[string]*hdrhistogram.Histogram) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: create run folder: %w", err)
	}
	files, err := runFiles(Run{Summary: s, Hists: hists})
	if err != nil {
		return err
	}
	return writeFiles(dir, files)
}

type namedFile struct {
	name string
	data []byte
}

// writeFiles writes each file into dir with WriteFileAtomic, in order.
func writeFiles(dir string, files []namedFile) error {
	for _, f := range files {
		if err := WriteFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// runFiles renders every file of a run folder in memory, in write order.
func runFiles(r Run) ([]namedFile, error) {
	sum, err := EncodeSummary(r.Summary)
	if err != nil {
		return nil, err
	}
	files := []namedFile{{SummaryFile, sum}}
	for _, name := range sortedHistNames(r.Hists) {
		if err := ValidHistName(name); err != nil {
			return nil, err
		}
		if r.Hists[name] == nil {
			return nil, fmt.Errorf("report: histogram %q is nil", name)
		}
		hgrm, err := Hgrm(r.Hists[name])
		if err != nil {
			return nil, err
		}
		files = append(files, namedFile{name + HgrmExt, hgrm})
	}
	hlog, err := EncodeHlog(r.Hists)
	if err != nil {
		return nil, err
	}
	files = append(files, namedFile{HlogFile, hlog})
	charts := RunCharts(r)
	for _, c := range charts {
		imgs, err := c.render()
		if err != nil {
			return nil, err
		}
		files = append(files, imgs...)
	}
	return append(files, namedFile{ReportFile, RenderRunMarkdown(r, charts)}), nil
}

// ReadRun reads a run folder written by WriteRun: summary.json and
// histograms.hlog (the .hgrm files, charts and report.md are derived and
// not read). Unknown JSON fields are an error, so a summary from another
// version of popsim is not silently misread.
func ReadRun(dir string) (Run, error) {
	run := Run{Dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Run{}, fmt.Errorf("report: read run: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&run.Summary); err != nil {
		return Run{}, fmt.Errorf("report: %s: %w", filepath.Join(dir, SummaryFile), err)
	}
	f, err := os.Open(filepath.Join(dir, HlogFile))
	if err != nil {
		return Run{}, fmt.Errorf("report: read run: %w", err)
	}
	defer f.Close()
	run.Hists, err = DecodeHlog(f)
	if err != nil {
		return Run{}, fmt.Errorf("report: %s: %w", filepath.Join(dir, HlogFile), err)
	}
	return run, nil
}

// sweepRow is one cell of sweep.json.
type sweepRow struct {
	Params           map[string]string `json:"params"`
	Seeds            []uint64          `json:"seeds"`
	FailingSeeds     []uint64          `json:"failing_seeds"`
	EndToEnd         model.Latency     `json:"end_to_end"`
	EndToEndExact    bool              `json:"end_to_end_exact"` // false: worst over seeds, not merged
	DuplicatesPct    float64           `json:"duplicates_pct"`
	ThroughputPerSec float64           `json:"throughput_per_sec"`
	Violations       int               `json:"violations"`
	Stats            model.PointStats  `json:"stats"` // every metric with its interval over the seeds
	// HeadOfLine: the cell's orderly groups' blocking (SweepCell.HeadOfLine).
	HeadOfLine *model.HeadOfLine `json:"head_of_line,omitempty"`
	// Groups: each consumer group's share, when the runs had several
	// (SweepCell.Groups); absent with one.
	Groups []model.GroupSummary `json:"groups,omitempty"`
}

// EncodeSweep renders sweep.json: one row per cell in Cells order.
func EncodeSweep(s *Sweep) ([]byte, error) {
	rows := []sweepRow{}
	for _, c := range s.Cells() {
		lat, exact := c.EndToEnd()
		failing := []uint64{}
		for _, r := range c.Failing() {
			failing = append(failing, r.Seed)
		}
		rows = append(rows, sweepRow{Params: c.Params, Seeds: c.Seeds(), FailingSeeds: failing,
			EndToEnd: lat, EndToEndExact: exact, DuplicatesPct: c.DuplicatesPct(),
			ThroughputPerSec: c.Throughput(), Violations: c.Violations(), Stats: c.Stats(s.ConfidenceLevel()), HeadOfLine: c.HeadOfLine(), Groups: c.Groups()})
	}
	doc := struct {
		Name     string         `json:"name"`
		X        string         `json:"x,omitempty"`
		Group    string         `json:"group,omitempty"`
		Question string         `json:"question,omitempty"`
		Answer   string         `json:"answer,omitempty"`
		Missing  []string       `json:"missing,omitempty"`
		Level    float64        `json:"level"` // of every interval
		Evidence []PlanEvidence `json:"evidence,omitempty"`
		Totals   SweepTotals    `json:"totals"`
		Cells    []sweepRow     `json:"cells"`
	}{s.Name, s.X, s.Group, s.Question, s.Answer, s.Missing, s.ConfidenceLevel(), s.Evidence, s.Totals(), rows}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: encode sweep: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteSweep writes a sweep folder: sweep.json, one chart per Metric (PNG
// and SVG) and report.md, each atomically. It creates dir if needed.
func WriteSweep(dir string, s *Sweep) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: create sweep folder: %w", err)
	}
	js, err := EncodeSweep(s)
	if err != nil {
		return err
	}
	files := []namedFile{{SweepFile, js}}
	charts := SweepCharts(s)
	for _, c := range charts {
		imgs, err := c.render()
		if err != nil {
			return err
		}
		files = append(files, imgs...)
	}
	files = append(files, namedFile{ReportFile, RenderSweepMarkdown(s, charts)})
	return writeFiles(dir, files)
}
