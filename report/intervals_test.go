package report

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"popsim/model"
	"popsim/stats"
)

// Stats gives every metric an interval over the seeds from the runs'
// summaries: latencies and throughput by MeanCI of the per-seed values,
// duplicates by RatioCI of Σduplicates/Σproduced, in percent.
func TestCellStats(t *testing.T) {
	sw := NewSweep("s", "consumers", "")
	var p99, dup, produced, tput []float64
	for seed := uint64(1); seed <= 6; seed++ {
		p := sweepPoint("pop", 2, seed, 400+100*int(seed), false)
		p.Summary.Duplicates = int64(seed % 3)
		p.Summary.ThroughputPerSec = 100 + float64(seed)
		if err := sw.Add(p); err != nil {
			t.Fatal(err)
		}
		p99 = append(p99, float64(p.Summary.EndToEnd.P99))
		dup, produced = append(dup, float64(p.Summary.Duplicates)), append(produced, float64(p.Summary.Produced))
		tput = append(tput, p.Summary.ThroughputPerSec)
	}
	// A run that did not finish measured nothing: it is left out.
	if err := sw.Add(SweepPoint{Params: map[string]string{"consumers": "2"}, Summary: model.Summary{Seed: 9, ConsumerKind: "pop"}}); err != nil {
		t.Fatal(err)
	}
	st := sw.Cells()[0].Stats(0.9)
	if diff := cmp.Diff([]uint64{1, 2, 3, 4, 5, 6}, st.Seeds); diff != "" {
		t.Errorf("seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{9}, st.Excluded); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(p99, st.P99.PerSeed); diff != "" {
		t.Errorf("per-seed p99 (-want +got):\n%s", diff)
	}
	if want := Interval(stats.MeanCI(p99, 0.9)); st.P99.Interval != want || !want.OK || want.Method != "t over replications" {
		t.Errorf("p99 interval %+v, want %+v", st.P99.Interval, want)
	}
	r := stats.RatioCI(dup, produced, 0.9)
	if d := st.DuplicatesPct.Interval; math.Abs(d.Est-100*r.Est) > 1e-12 || math.Abs(d.Lo-100*r.Lo) > 1e-12 || math.Abs(d.Hi-100*r.Hi) > 1e-12 || d.Method != "ratio over replications" {
		t.Errorf("duplicates interval %+v, want 100 × %+v", d, r)
	}
	if want := Interval(stats.MeanCI(tput, 0.9)); st.ThroughputPerSec.Interval != want {
		t.Errorf("throughput interval %+v, want %+v", st.ThroughputPerSec.Interval, want)
	}
	if st.Level != 0.9 || st.P50.N != 6 || st.Max == 0 {
		t.Errorf("stats %+v", st)
	}
	// sweep.json carries them with their per-seed values.
	js, err := EncodeSweep(sw)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Level float64 `json:"level"`
		Cells []struct {
			Stats model.PointStats `json:"stats"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js, &doc); err != nil || doc.Level != 0.95 || len(doc.Cells) != 1 {
		t.Fatalf("sweep.json (%v):\n%s", err, js)
	}
	if diff := cmp.Diff(sw.Cells()[0].Stats(0.95), doc.Cells[0].Stats); diff != "" {
		t.Errorf("sweep.json stats (-want +got):\n%s", diff)
	}
}

// The table prints "est [lo, hi]", a row with one seed says it has no
// interval, and a line states the level, the seeds and the methods.
func TestSweepMarkdownIntervals(t *testing.T) {
	sw := NewSweep("s", "consumers", "")
	for seed := uint64(1); seed <= 4; seed++ {
		sw.Add(sweepPoint("pop", 2, seed, 500, false))
	}
	sw.Add(sweepPoint("pop", 4, 1, 500, false))
	sw.Add(SweepPoint{Params: map[string]string{"consumers": "4"}, Summary: model.Summary{Seed: 2, ConsumerKind: "pop"}})
	md := string(RenderSweepMarkdown(sw, nil))
	st := sw.Cells()[0].Stats(0.95)
	p99 := FormatInterval(st.P99.Interval, usMs)
	if !strings.HasPrefix(p99, usMs(st.P99.Est)+" [") || !strings.Contains(md, " | "+p99+" | ") {
		t.Errorf("report lacks the p99 interval %q:\n%s", p99, md)
	}
	for _, want := range []string{
		"| e2e p99 ms [lo, hi] |",
		"(1 seed: no interval)",
		"Intervals: 95 % confidence over 1 to 4 seeds per row; latency (mean and percentiles: the mean of the seeds' own values) by t over replications, duplicates % by ratio over replications",
		"Left out of every interval (no end-to-end latency measured: the run did not finish): seed 2, consumer_kind=pop, consumers=4.",
		"docs/statistics.md",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "[0.00, 0.00]") {
		t.Errorf("a row with one seed prints a bound:\n%s", md)
	}
}

func TestFormatInterval(t *testing.T) {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for _, c := range []struct {
		iv   model.Interval
		want string
	}{
		{model.Interval{Est: 2, Lo: 1, Hi: 3, OK: true, N: 5}, "2.0 [1.0, 3.0]"},
		{model.Interval{Est: 2, N: 1}, "2.0 (1 seed: no interval)"},
		{model.Interval{Est: 2, N: 3, Note: "a value is NaN or infinite"}, "2.0 (no interval: a value is NaN or infinite)"},
		{model.Interval{}, "-"},
	} {
		if got := FormatInterval(c.iv, f); got != c.want {
			t.Errorf("FormatInterval(%+v) = %q, want %q", c.iv, got, c.want)
		}
	}
}

// The sweep charts draw each point's interval as an error bar.
func TestSweepChartErrorBars(t *testing.T) {
	sw := NewSweep("consumers", "consumers", "")
	for _, c := range []int{1, 2, 4} {
		for seed := uint64(1); seed <= 3; seed++ {
			sw.Add(sweepPoint("pop", c, seed, 300, false))
		}
	}
	sw.Add(sweepPoint("pop", 8, 1, 300, false)) // one seed: a point without a bar
	for _, m := range []Metric{MetricP99EndToEndMs, MetricDuplicatesPct, MetricThroughput} {
		ss, err := seriesOf(sw, m)
		if err != nil {
			t.Fatal(err)
		}
		bars := ss.bars["all"]
		if len(ss.bars) != 1 || bars.Len() != 3 || len(ss.lines["all"]) != 4 {
			t.Fatalf("%s: %d bar series, want one with 3 bars (the 1-seed point has none)", m.Name(), len(ss.bars))
		}
		if _, err := sweepPanel(sw, m); err != nil {
			t.Fatal(err)
		}
		cell := sw.Cells()[1] // consumers=2
		iv := m.Of(cell.Stats(0.95))
		x, y := bars.XY(1)
		lo, hi := bars.YError(1)
		if x != 2 || y != iv.Est || math.Abs(y+hi-iv.Hi) > 1e-9 || math.Abs(y-lo-max(0, iv.Lo)) > 1e-9 {
			t.Errorf("%s: bar at (%g, %g) -%g +%g, want the interval %+v", m.Name(), x, y, lo, hi, iv)
		}
	}
	svg, err := SweepChart(sw, MetricP99EndToEndMs).SVG()
	if err != nil || !svgText(svg, "bars: 95 % intervals over the seeds") {
		t.Errorf("the chart title does not say what the bars are (%v)", err)
	}
}
