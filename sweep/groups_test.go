package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"popsim/report"
	"popsim/scenarios"
)

// A sweep over a scenario with several consumer groups writes one row per
// cell and group (report.md's Consumer groups table, sweep.json's groups),
// and rereading the run folders gives the same; the tiny one-group sweep
// writes neither.
func TestSweepPerGroupRows(t *testing.T) {
	src := Source{Name: "filtered-fanout", Sets: []scenarios.Override{
		{Path: "duration", Value: "2s"}, {Path: "warmup", Value: "0s"}, {Path: "producers[0].arrivals", Value: "poisson(100/s)"}}}
	sw, err := Prepare(src, []scenarios.Param{{Name: "consumers[0].count", Values: []string{"1", "2"}}}, "1", Whole)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if res := runSweep(t, context.Background(), sw, dir); !res.Complete() {
		t.Fatalf("sweep incomplete: %+v", res)
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.ReportFile))
	js, _ := os.ReadFile(filepath.Join(dir, report.SweepFile))
	for _, g := range []string{"billing", "eu-audit", "ledger"} {
		if n := strings.Count(string(md), " | "+g+" | orders | "); n != 2 {
			t.Errorf("report.md has %d rows of group %s, want one per cell (2)", n, g)
		}
		if n := strings.Count(string(js), `"group": "`+g+`"`); n != 2 {
			t.Errorf("sweep.json names group %s %d times, want once per cell (2)", g, n)
		}
	}
	if !strings.Contains(string(md), "## Consumer groups") {
		t.Errorf("report.md has no Consumer groups table:\n%s", md)
	}
	rs, _, _, err := Reread(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := report.EncodeSweep(rs); string(again) != string(js) {
		t.Errorf("sweep.json reread from the run folders differs:\n%s\nwant:\n%s", again, js)
	}

	one := filepath.Join(t.TempDir(), "one")
	runSweep(t, context.Background(), tinySweep(t, Whole), one)
	md, _ = os.ReadFile(filepath.Join(one, report.ReportFile))
	js, _ = os.ReadFile(filepath.Join(one, report.SweepFile))
	if strings.Contains(string(md), "Consumer groups") || strings.Contains(string(js), `"groups"`) {
		t.Errorf("a one-group sweep shows per-group rows:\n%s\n%s", md, js)
	}
}
