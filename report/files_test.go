package report

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"popsim/model"
)

// fixtureSummary is a run summary with every section the report renders.
func fixtureSummary() model.Summary {
	var series []model.SeriesPoint
	for i := int64(0); i <= 30; i++ {
		series = append(series, model.SeriesPoint{AtMs: i * 1000, Produced: 1000, Acked: 950 + i,
			Backlog: 50 * i, InFlight: 40 + i%5, Redelivered: i % 4})
	}
	return model.Summary{
		Scenario: "fixture", Seed: 42, ConsumerKind: "pop", Params: map[string]string{"consumers": "8"},
		ConfigSHA256: "c0ffee", TraceXXH3: "deadbeef",
		Produced: 30000, Acked: 29900, DLQ: 40, Dropped: 3, Lost: 0, Deliveries: 30400, Duplicates: 400,
		DuplicatesByCause: map[string]int64{"lease-expired": 300, "ack-lost": 90, "crash": 10},
		DroppedByPolicy:   map[string]int64{"max-attempts": 3},
		Violations: []model.Violation{
			{Invariant: "no-double-lease", Seed: 42, EventIndex: 1234, Msg: "m-17", Detail: "delivered inside a live lease | twice",
				History: []string{"t=1 deliver m-17", "t=2 deliver m-17"}, Replay: "popsim run fixture --seed 42 --until 1234"},
			{Invariant: "all-resolved", Seed: 42, EventIndex: 9999, Detail: "m-99 never acked", Replay: "popsim run fixture --seed 42"},
		},
		EndToEnd:         model.Latency{Count: 29900, Mean: 41000, P50: 31000, P90: 80000, P99: 150000, P999: 220000, Max: 400000},
		ServiceTime:      model.Latency{Count: 29900, Mean: 10000, P50: 7000, P90: 23000, P99: 46000, P999: 69000, Max: 140000},
		ThroughputPerSec: 996.7, SimEvents: 123456, SimSeconds: 30, WallSeconds: 0.5,
		Coverage: map[string]int64{"ack-lost": 90, "crash": 1},
		Series:   series,
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteFileAtomic(path, []byte("old contents, longer")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("contents %q, err %v; want %q", got, err, "new")
	}
	if names := listDir(t, dir); len(names) != 1 || names[0] != "f.txt" {
		t.Errorf("folder holds %q, want only f.txt (no temp files)", names)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Renaming a file over a non-empty folder fails after the temp file is
	// written: the temp file must be removed and the folder kept.
	target := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("x")); err == nil {
		t.Fatal("want an error renaming over a non-empty folder")
	}
	if names := listDir(t, dir); len(names) != 1 || names[0] != "busy" {
		t.Errorf("folder holds %q, want only busy", names)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Error("want an error writing into a missing folder")
	}
}

// A streamed file is invisible until Commit; Abort leaves the old file
// and no temporary one.
func TestAtomicFileStreams(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.txt")
	if err := WriteFileAtomic(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	a, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("dropped")); err != nil {
		t.Fatal(err)
	}
	a.Abort()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after Abort: contents %q, want %q", got, "old")
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("after Abort: folder holds %q, want only trace.txt", names)
	}
	if a, err = CreateAtomic(path); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"line 1\n", "line 2\n"} {
		if _, err := a.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old" {
			t.Fatalf("before Commit: contents %q, want %q", got, "old")
		}
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	a.Abort() // after Commit: must not remove the committed file
	if got, _ := os.ReadFile(path); string(got) != "line 1\nline 2\n" {
		t.Errorf("after Commit: contents %q", got)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("after Commit: folder holds %q, want only trace.txt", names)
	}
}

func TestWriteRunReadRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := fixtureSummary()
	hists := randomHists(9, 10000)
	if err := WriteRun(dir, s, hists); err != nil {
		t.Fatal(err)
	}
	want := []string{"duplicates.png", "duplicates.svg", "end_to_end.hgrm", "histograms.hlog", "latency.png", "latency.svg",
		"report.md", "service_time.hgrm", "summary.json", "timeseries.png", "timeseries.svg"}
	if diff := cmp.Diff(want, listDir(t, dir)); diff != "" {
		t.Errorf("run folder (-want +got):\n%s", diff)
	}
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, run.Summary); diff != "" {
		t.Errorf("summary round trip (-want +got):\n%s", diff)
	}
	for name, h := range hists {
		if run.Hists[name] == nil || !run.Hists[name].Equals(h) {
			t.Errorf("histogram %q does not round-trip", name)
		}
	}
	if len(run.Hists) != len(hists) || run.Dir != dir {
		t.Errorf("ReadRun: %d histograms, dir %q", len(run.Hists), run.Dir)
	}
	js, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if !bytes.HasPrefix(js, []byte("{\n  \"scenario\": \"fixture\",\n  \"seed\": 42,")) || !bytes.HasSuffix(js, []byte("}\n")) {
		t.Errorf("summary.json is not indented in field order:\n%.80s", js)
	}
}

func TestWriteRunIsDeterministic(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, dir := range []string{a, b} {
		if err := WriteRun(dir, fixtureSummary(), randomHists(9, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range listDir(t, a) {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renders of the same run", name)
		}
	}
}

func TestReadRunErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRun(dir); err == nil {
		t.Error("empty folder: want an error")
	}
	if err := WriteRun(dir, fixtureSummary(), randomHists(1, 10)); err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	bad := strings.Replace(string(js), `"seed": 42,`, `"seed": 42, "sead": 1,`, 1)
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(dir); err == nil || !strings.Contains(err.Error(), "sead") {
		t.Errorf("unknown field: err = %v, want one naming it", err)
	}
	os.WriteFile(filepath.Join(dir, SummaryFile), js, 0o644)
	os.Remove(filepath.Join(dir, HlogFile))
	if _, err := ReadRun(dir); err == nil || !strings.Contains(err.Error(), HlogFile) {
		t.Errorf("missing hlog: err = %v, want one naming %s", err, HlogFile)
	}
}

func TestWriteRunRejectsBadHistName(t *testing.T) {
	hists := randomHists(1, 10)
	hists["../escape"] = NewLatencyHistogram()
	if err := WriteRun(t.TempDir(), fixtureSummary(), hists); err == nil {
		t.Error("WriteRun accepted a histogram name with a path in it")
	}
}
