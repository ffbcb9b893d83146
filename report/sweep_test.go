package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"popsim/model"
)

// sweepPoint builds one run of a consumers sweep with n exponential
// end-to-end latencies; failing runs get one violation.
func sweepPoint(kind string, consumers int, seed uint64, n int, failing bool) SweepPoint {
	rng := rand.New(rand.NewPCG(seed, uint64(consumers)))
	h := NewLatencyHistogram()
	for i := 0; i < n; i++ {
		h.RecordValue(int64(rng.ExpFloat64()*100000/float64(consumers)) + 1)
	}
	s := model.Summary{Scenario: "sweep", Seed: seed, ConsumerKind: kind, Produced: int64(n), Acked: int64(n),
		Duplicates: int64(consumers), ThroughputPerSec: float64(100 * consumers), EndToEnd: LatencyOf(h)}
	if failing {
		s.Violations = []model.Violation{
			{Invariant: "no-loss", Seed: seed, Replay: fmt.Sprintf("popsim run sweep --seed %d --consumers %d", seed, consumers)},
			{Invariant: "no-loss", Seed: seed, Replay: fmt.Sprintf("popsim run sweep --seed %d --consumers %d", seed, consumers)},
		}
	}
	return SweepPoint{Params: map[string]string{"consumers": strconv.Itoa(consumers)}, Summary: s,
		Hists: map[string]*hdrhistogram.Histogram{HistEndToEnd: h}}
}

func TestSweepMergesSeedsExactly(t *testing.T) {
	sw := NewSweep("s", "consumers", ParamConsumerKind)
	all := NewLatencyHistogram()
	for seed := uint64(1); seed <= 4; seed++ {
		p := sweepPoint("pop", 2, seed, 3000, false)
		Merge(all, p.Hists[HistEndToEnd])
		if err := sw.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	cells := sw.Cells()
	if len(cells) != 1 {
		t.Fatalf("%d cells, want 1", len(cells))
	}
	c := cells[0]
	if !c.Hists[HistEndToEnd].Equals(all) {
		t.Error("cell histogram is not the exact merge of its seeds")
	}
	lat, exact := c.EndToEnd()
	if !exact || lat != LatencyOf(all) {
		t.Errorf("EndToEnd = %+v exact=%v, want %+v exact", lat, exact, LatencyOf(all))
	}
	if diff := cmp.Diff([]uint64{1, 2, 3, 4}, c.Seeds()); diff != "" {
		t.Errorf("seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"consumers": "2", "consumer_kind": "pop"}, c.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	// Duplicates % over all seeds: 4×2 duplicates per 4×3000 produced.
	if got := c.DuplicatesPct(); got < 0.0666 || got > 0.0667 {
		t.Errorf("DuplicatesPct = %v, want 0.0667", got)
	}
	if c.Throughput() != 200 {
		t.Errorf("Throughput = %v, want 200", c.Throughput())
	}
}

func TestSweepAddErrors(t *testing.T) {
	sw := NewSweep("s", "consumers", "")
	p := sweepPoint("pop", 2, 1, 100, false)
	if err := sw.Add(p); err != nil {
		t.Fatal(err)
	}
	before := hdrhistogram.Import(sw.Cells()[0].Hists[HistEndToEnd].Export())
	if err := sw.Add(p); err == nil || !strings.Contains(err.Error(), "added twice") {
		t.Errorf("same seed twice: err = %v", err)
	}
	bad := sweepPoint("pop", 2, 2, 100, false)
	bad.Hists["other"] = hdrhistogram.New(1, 1000, 2)
	if err := sw.Add(bad); err == nil {
		t.Error("a histogram of another layout was accepted")
	}
	c := sw.Cells()[0]
	if len(c.Runs) != 1 || !c.Hists[HistEndToEnd].Equals(before) || c.Hists["other"] != nil {
		t.Error("a refused Add changed the cell")
	}
}

func TestSweepCellOrderIsNumeric(t *testing.T) {
	sw := NewSweep("s", "invisible", "kind")
	for _, v := range []string{"10s", "500ms", "2s", "1m"} {
		for _, kind := range []string{"pull", "pop"} {
			err := sw.Add(SweepPoint{Params: map[string]string{"invisible": v, "kind": kind}, Summary: model.Summary{Seed: 1}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	for _, c := range sw.Cells() {
		got = append(got, c.Params["kind"]+"/"+c.Params["invisible"])
	}
	want := []string{"pop/500ms", "pop/2s", "pop/10s", "pop/1m", "pull/500ms", "pull/2s", "pull/10s", "pull/1m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cell order (-want +got):\n%s", diff)
	}
	if v, err := ParamValue("250ms"); err != nil || v != 250 {
		t.Errorf("ParamValue(250ms) = %v, %v; want 250 ms", v, err)
	}
	if _, err := ParamValue("eight"); err == nil {
		t.Error("ParamValue(eight): want an error")
	}
}

func TestSweepEndToEndWithoutHistograms(t *testing.T) {
	sw := NewSweep("s", "consumers", "")
	for i, p99 := range []int64{100, 300} {
		s := model.Summary{Seed: uint64(i + 1), EndToEnd: model.Latency{Count: 10, Mean: 10 * p99, P99: p99}}
		if err := sw.Add(SweepPoint{Params: map[string]string{"consumers": "1"}, Summary: s}); err != nil {
			t.Fatal(err)
		}
	}
	lat, exact := sw.Cells()[0].EndToEnd()
	if exact || lat.P99 != 300 || lat.Count != 20 || lat.Mean != 2000 {
		t.Errorf("EndToEnd = %+v exact=%v; want worst p99 300, count 20, mean 2000, not exact", lat, exact)
	}
}

func TestSweepChartsRender(t *testing.T) {
	sw := NewSweep("consumers", "consumers", ParamConsumerKind)
	for _, kind := range []string{"pop", "pull"} {
		for _, c := range []int{1, 2, 4, 8} {
			if err := sw.Add(sweepPoint(kind, c, 1, 500, false)); err != nil {
				t.Fatal(err)
			}
		}
	}
	charts := SweepCharts(sw)
	if len(charts) != len(Metrics)+1 || charts[0].Name != "sweep-latency" {
		t.Fatalf("%d sweep charts, want the latency overlay and %d metric charts", len(charts), len(Metrics))
	}
	for _, c := range charts {
		checkChart(t, c)
	}
	svg, _ := charts[1].SVG()
	for _, want := range []string{"consumer_kind=pop", "consumer_kind=pull", "p99 end-to-end latency (ms)", "consumers"} {
		if !svgText(svg, want) {
			t.Errorf("sweep chart has no text %q", want)
		}
	}
	bad := NewSweep("bad", "kind", "")
	bad.Add(SweepPoint{Params: map[string]string{"kind": "pop"}})
	if _, err := SweepChart(bad, MetricThroughput).PNG(); err == nil {
		t.Error("non-numeric x parameter: want an error")
	}
	if _, err := SweepChart(sw, numMetrics).SVG(); err == nil {
		t.Error("unknown metric: want an error")
	}
	if _, err := (&Chart{Name: "bare", Width: vg.Inch, Height: vg.Inch}).PNG(); err == nil {
		t.Error("a Chart literal without panels: want an error")
	}
}

func TestWriteSweep(t *testing.T) {
	sw := NewSweep("consumers", "consumers", ParamConsumerKind)
	for seed := uint64(1); seed <= 2; seed++ {
		for _, c := range []int{1, 4} {
			if err := sw.Add(sweepPoint("pop", c, seed, 200, seed == 2 && c == 4)); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := WriteSweep(filepath.Join(base, d), sw); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(base, "a")
	want := []string{"report.md", "sweep-duplicates.png", "sweep-duplicates.svg", "sweep-latency.png", "sweep-latency.svg",
		"sweep-p99-e2e.png", "sweep-p99-e2e.svg", "sweep-throughput.png", "sweep-throughput.svg", "sweep.json"}
	if diff := cmp.Diff(want, listDir(t, a)); diff != "" {
		t.Errorf("sweep folder (-want +got):\n%s", diff)
	}
	for _, name := range want {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(base, "b", name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renders", name)
		}
	}
	js, _ := os.ReadFile(filepath.Join(a, SweepFile))
	if !bytes.Contains(js, []byte(`"failing_seeds": [
        2
      ]`)) || !bytes.Contains(js, []byte(`"failed": 1`)) {
		t.Errorf("sweep.json does not list the failing seed:\n%s", js)
	}
}

func TestSweepLatencyChartOverlaysEveryPoint(t *testing.T) {
	sw := NewSweep("kinds", "", ParamConsumerKind)
	for _, kind := range []string{"pull", "simple"} {
		if err := sw.Add(sweepPoint(kind, 8, 1, 200, false)); err != nil {
			t.Fatal(err)
		}
	}
	charts := SweepCharts(sw)
	if len(charts) != 1 || charts[0].Name != "sweep-latency" {
		t.Fatalf("a sweep over a non-numeric parameter should still get its latency overlay, got %d charts", len(charts))
	}
	svg, err := charts[0].SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pull", "simple"} {
		if !svgText(svg, "consumer_kind="+kind) {
			t.Errorf("latency overlay has no curve labelled consumer_kind=%s", kind)
		}
	}
}

// The x axis is marked at the swept values (1, 2, 4, 8), not at round
// numbers in between, and a plan's target is drawn on its metric's chart.
func TestSweepChartTicksAndThreshold(t *testing.T) {
	sw := NewSweep("consumers", "consumers", "")
	for _, c := range []int{1, 2, 4, 8} {
		if err := sw.Add(sweepPoint("pop", c, 1, 200, false)); err != nil {
			t.Fatal(err)
		}
	}
	sw.Thresholds = []Threshold{{Metric: MetricP90EndToEndMs, Value: 40, Label: "target p90<=40ms"}}
	panels, err := sweepPanel(sw, MetricP90EndToEndMs)
	if err != nil {
		t.Fatal(err)
	}
	p := panels[0]
	var vals []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		vals = append(vals, tk.Label)
	}
	if got := strings.Join(vals, " "); got != "1 2 4 8" {
		t.Errorf("x ticks %q, want the swept values 1 2 4 8", got)
	}
	var names []string
	for _, c := range SweepCharts(sw) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "sweep-latency sweep-p99-e2e sweep-duplicates sweep-throughput sweep-p90-e2e" {
		t.Errorf("charts %q: want the p90 chart the threshold names", got)
	}
	svg, err := SweepChart(sw, MetricP90EndToEndMs).SVG()
	if err != nil || !svgText(svg, "target p90<=40ms") {
		t.Errorf("the p90 chart does not draw the target (%v)", err)
	}
	if p.Y.Max < 40 {
		t.Errorf("y axis ends at %g, below the target 40", p.Y.Max)
	}
	for _, c := range []struct {
		values []int
		log    bool
	}{{[]int{4, 5, 6, 8, 12, 20, 36, 64}, false}, {[]int{1, 2, 4, 100}, true}} {
		sw := NewSweep("consumers", "consumers", "")
		for _, v := range c.values {
			sw.Add(sweepPoint("pop", v, 1, 100, false))
		}
		panels, err := sweepPanel(sw, MetricThroughput)
		if err != nil {
			t.Fatal(err)
		}
		if _, log := panels[0].X.Scale.(plot.LogScale); log != c.log {
			t.Errorf("values %v are drawn on %T; want a log scale only from a factor of 20", c.values, panels[0].X.Scale)
		}
	}
}

// groupsPoint is one run of a two-group scenario: billing and audit on
// topic t, audit's p99 growing with the seed.
func groupsPoint(rate string, seed uint64) SweepPoint {
	g := func(name string, produced, dup, p99 int64) model.GroupSummary {
		return model.GroupSummary{Group: name, Topic: "t", Produced: produced, Acked: produced - 1, Lost: 1, Deliveries: produced + dup,
			Duplicates: dup, EndToEnd: model.Latency{Count: produced - 1, Mean: p99 / 2, P50: p99 / 4, P99: p99, P999: p99, Max: p99}}
	}
	s := model.Summary{Scenario: "fanout", Seed: seed, Produced: 30, Acked: 28, Lost: 2,
		Groups: []model.GroupSummary{g("billing", 10, 1, 4000), g("audit", 20, 2, 1000*int64(seed))}}
	return SweepPoint{Params: map[string]string{"rate": rate}, Summary: s}
}

// A sweep of runs with several groups has one row per cell and group, in
// report.md and sweep.json, summed over the seeds with the worst seed's
// percentiles; a sweep of one-group runs has neither.
func TestSweepGroups(t *testing.T) {
	sw := NewSweep("fanout", "rate", "")
	for _, rate := range []string{"10", "20"} {
		for seed := uint64(1); seed <= 2; seed++ {
			if err := sw.Add(groupsPoint(rate, seed)); err != nil {
				t.Fatal(err)
			}
		}
	}
	gs := sw.Cells()[0].Groups()
	want := []model.GroupSummary{
		{Group: "billing", Topic: "t", Produced: 20, Acked: 18, Lost: 2, Deliveries: 22, Duplicates: 2,
			EndToEnd: model.Latency{Count: 18, Mean: 2000, P50: 1000, P99: 4000, P999: 4000, Max: 4000}},
		{Group: "audit", Topic: "t", Produced: 40, Acked: 38, Lost: 2, Deliveries: 44, Duplicates: 4,
			EndToEnd: model.Latency{Count: 38, Mean: 750, P50: 500, P99: 2000, P999: 2000, Max: 2000}},
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("cell 0's groups (-want +got):\n%s", diff)
	}
	md := string(RenderSweepMarkdown(sw, nil))
	for _, row := range []string{
		"## Consumer groups",
		"| rate=10 | billing | t | 20 | 18 | 0 | 0 | 2 | 2 | 18 | 1.000 | 4.000 | 4.000 | 4.000 |",
		"| rate=10 | audit | t | 40 | 38 | 0 | 0 | 2 | 4 | 38 | 0.500 | 2.000 | 2.000 | 2.000 |",
		"| rate=20 | audit | t |",
	} {
		if !strings.Contains(md, row) {
			t.Errorf("report.md lacks %q:\n%s", row, md)
		}
	}
	js, err := EncodeSweep(sw)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(js), `"group": "audit"`); n != 2 {
		t.Errorf("sweep.json names group audit %d times, want once per cell:\n%s", n, js)
	}

	one := NewSweep("one", "consumers", "")
	if err := one.Add(sweepPoint("pop", 1, 1, 50, false)); err != nil {
		t.Fatal(err)
	}
	js, _ = EncodeSweep(one)
	if md := string(RenderSweepMarkdown(one, nil)); strings.Contains(md, "Consumer groups") || strings.Contains(string(js), `"groups"`) {
		t.Errorf("a one-group sweep shows per-group rows:\n%s\n%s", md, js)
	}
}
