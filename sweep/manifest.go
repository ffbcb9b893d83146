package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"popsim/report"
	"popsim/scenarios"
)

// Manifest is ManifestFile's content: a sweep's definition and the shard
// the folder holds. Its JSON shape is stable (committed results read it).
type Manifest struct {
	Scenario string            `json:"scenario"`
	Source   []string          `json:"source"` // the -scenario/-f and -set flags
	Params   []scenarios.Param `json:"params"`
	Seeds    []uint64          `json:"seeds"`
	Jobs     int               `json:"jobs"` // runs in the whole sweep, all shards
	Shard    int               `json:"shard"`
	Shards   int               `json:"shards"`
	X        string            `json:"x,omitempty"`
	Group    string            `json:"group,omitempty"`
	// Level is the confidence level of the report's intervals; 0 for
	// report.DefaultLevel.
	Level float64 `json:"level,omitempty"`
	// PointSeeds, when set (a plan's folder), is how many seeds ran at each
	// point: the first PointSeeds[i] of Seeds. Otherwise every point ran
	// every seed.
	PointSeeds []int `json:"point_seeds,omitempty"`
}

// ReadManifest reads a sweep folder's ManifestFile.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, fmt.Errorf("%s is not a popsim sweep folder: %w", dir, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Shards < 1 || m.Shard < 0 || m.Shard >= m.Shards {
		return m, fmt.Errorf("%s: shard %d/%d is not valid", filepath.Join(dir, ManifestFile), m.Shard, m.Shards)
	}
	if err := m.checkPointSeeds(); err != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestFile), err)
	}
	if n := len(m.jobs(Whole)); n != m.Jobs {
		return m, fmt.Errorf("%s: %d runs, but its parameters and seeds make %d", filepath.Join(dir, ManifestFile), m.Jobs, n)
	}
	if m.Level != 0 && report.CheckLevel(m.Level) != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestFile), report.CheckLevel(m.Level))
	}
	return m, nil
}

// checkPointSeeds requires PointSeeds, when set, to give every point
// between 1 and len(Seeds) seeds, in one shard.
func (m Manifest) checkPointSeeds() error {
	if m.PointSeeds == nil {
		return nil
	}
	if n := len(m.Points()); len(m.PointSeeds) != n || m.Shards != 1 {
		return fmt.Errorf("point_seeds has %d entries for %d points in %d shards: want one per point, one shard", len(m.PointSeeds), n, m.Shards)
	}
	for i, k := range m.PointSeeds {
		if k < 1 || k > len(m.Seeds) {
			return fmt.Errorf("point_seeds[%d] = %d: want 1..%d", i, k, len(m.Seeds))
		}
	}
	return nil
}

// jobs lists the runs of the manifest's sweep in run order, those of the
// given shard.
func (m Manifest) jobs(shard Shard) []Job {
	if m.PointSeeds == nil {
		return Jobs(len(m.Points()), m.Seeds, shard)
	}
	var out []Job
	k := 0
	for p, n := range m.PointSeeds {
		for _, seed := range m.Seeds[:n] {
			if k%shard.N == shard.I {
				out = append(out, Job{Index: k, Point: p, Seed: seed})
			}
			k++
		}
	}
	return out
}

// NewReport is an empty report for the manifest's sweep: its name, axes
// and confidence level.
func (m Manifest) NewReport() *report.Sweep {
	rs := report.NewSweep(m.Scenario, m.X, m.Group)
	rs.Level = m.Level
	return rs
}

// Write writes the manifest into dir, atomically.
func (m Manifest) Write(dir string) error {
	return writeJSON(filepath.Join(dir, ManifestFile), m)
}

// Points is the sweep's parameter grid (scenarios.Grid of Params).
func (m Manifest) Points() []scenarios.Point { return scenarios.Grid(m.Params) }

// ShardJobs lists the runs of the shard this folder holds, in run order.
func (m Manifest) ShardJobs() []Job { return m.jobs(Shard{m.Shard, m.Shards}) }

// MissingRun is a run a sweep folder should hold and does not.
type MissingRun struct {
	Job    Job
	Point  scenarios.Point
	Folder string // its folder name under RunsDir
}

func (r MissingRun) String() string {
	return fmt.Sprintf("seed %d, %s (%s)", r.Job.Seed, PointLabel(r.Point), filepath.Join(RunsDir, r.Folder))
}

// Missing lists the runs of the folder's shard that have no complete run
// folder under dir/runs (absent, or marked incomplete), in run order.
func (m Manifest) Missing(dir string) ([]MissingRun, error) {
	have, err := RunDirs(dir)
	if err != nil {
		have = nil // no runs/ at all: every run is missing
	}
	present := map[string]bool{}
	for _, h := range have {
		present[h] = true
	}
	points := m.Points()
	var out []MissingRun
	for _, j := range m.ShardJobs() {
		name := RunFolder(j.Point, points[j.Point], j.Seed)
		if !present[name] {
			out = append(out, MissingRun{Job: j, Point: points[j.Point], Folder: name})
		}
	}
	return out, nil
}
