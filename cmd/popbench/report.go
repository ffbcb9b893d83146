package main

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	popreport "popsim/report"
)

// report is bench.json.
type report struct {
	Stamp stamp        `json:"stamp"`
	Cases []caseReport `json:"cases"`
}

// stamp says where and when the figures were measured: wall-clock numbers
// mean nothing without it.
type stamp struct {
	Commit     string `json:"commit"`
	Dirty      bool   `json:"dirty"` // uncommitted changes in the work tree
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	HugePages  string `json:"hugepages"` // what hugeheap.Setup did (README: huge pages)
	Date       string `json:"date"`
	Count      int    `json:"count"`
	Benchtime  string `json:"benchtime"`
	Note       string `json:"note"`
}

type caseReport struct {
	Name    string             `json:"name"`
	Op      string             `json:"op"`
	Size    int                `json:"in_flight"`
	Variant string             `json:"variant"`
	Unit    string             `json:"unit"` // "msg" or "event"
	Floor   string             `json:"floor,omitempty"`
	Runs    []run              `json:"runs"`
	Summary map[string]metric  `json:"summary"` // per unit: median and 95% CI
	Ratio   map[string]float64 `json:"floor_ratio,omitempty"`
	Latency *latencyReport     `json:"latency,omitempty"`
}

// metric is a median with its 95% confidence interval; the bounds are null
// when there are too few runs for one (fewer than 6).
type metric struct {
	Median     float64  `json:"median"`
	Lo         *float64 `json:"ci_lo"`
	Hi         *float64 `json:"ci_hi"`
	Confidence float64  `json:"ci_confidence,omitempty"`
	N          int      `json:"n"`
}

func toMetric(s summary) metric {
	m := metric{Median: s.Center, N: s.N}
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
		lo, hi := s.Lo, s.Hi
		m.Lo, m.Hi, m.Confidence = &lo, &hi, s.Confidence
	}
	return m
}

// latencyReport summarises the .hgrm file: wall-clock time of one sampled
// round (RoundUnits units of work), in microseconds.
type latencyReport struct {
	File       string  `json:"file"`
	RoundUnits int     `json:"round_units"`
	Samples    int64   `json:"samples"`
	P50        float64 `json:"p50_us"`
	P90        float64 `json:"p90_us"`
	P99        float64 `json:"p99_us"`
	P999       float64 `json:"p99_9_us"`
	Max        float64 `json:"max_us"`
}

func newStamp(count int, benchtime string) stamp {
	commit, dirty := gitCommit()
	return stamp{
		Commit: commit, Dirty: dirty, GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPU: cpuModel(), NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), HugePages: hugePages,
		Date: time.Now().UTC().Format(time.RFC3339), Count: count, Benchtime: benchtime,
		Note: "wall-clock figures: compare only side by side in one run (engine vs floor) or as ratios; cpu-ns is the benchmark thread's CPU time",
	}
}

// gitCommit is `git rev-parse HEAD`, "unknown" without git or a repository.
func gitCommit() (string, bool) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(strings.TrimSpace(string(st))) > 0
}

// cpuModel is the first "model name" of /proc/cpuinfo, "unknown" elsewhere.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// writeFileAtomic creates path's folder if needed and writes data with
// popreport.WriteFileAtomic (temporary file, fsync, rename).
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return popreport.WriteFileAtomic(path, data)
}
