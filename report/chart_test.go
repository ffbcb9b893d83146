package report

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"popsim/model"
)

// checkChart renders c twice in both formats and checks the bytes are a
// decodable PNG of the expected size and an SVG, identical both times.
func checkChart(t *testing.T, c *Chart) {
	t.Helper()
	p1, err := c.PNG()
	if err != nil {
		t.Fatalf("%s: PNG: %v", c.Name, err)
	}
	p2, _ := c.PNG()
	if !bytes.Equal(p1, p2) {
		t.Errorf("%s: PNG bytes differ between two renders", c.Name)
	}
	img, err := png.Decode(bytes.NewReader(p1))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", c.Name, err)
	}
	wantW := int(float64(c.Width/vg.Inch)*PNGDPI + 0.5)
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() < 100 {
		t.Errorf("%s: PNG is %dx%d, want %d wide", c.Name, b.Dx(), b.Dy(), wantW)
	}
	s1, err := c.SVG()
	if err != nil {
		t.Fatalf("%s: SVG: %v", c.Name, err)
	}
	s2, _ := c.SVG()
	if !bytes.Equal(s1, s2) {
		t.Errorf("%s: SVG bytes differ between two renders", c.Name)
	}
	if !bytes.Contains(s1, []byte("<svg")) || !bytes.Contains(s1, []byte("</svg>")) || len(s1) < 1000 {
		t.Errorf("%s: SVG looks empty (%d bytes)", c.Name, len(s1))
	}
}

// svgText reports whether the SVG contains s as text (XML-escaped).
func svgText(svg []byte, s string) bool {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return bytes.Contains(svg, []byte(r.Replace(s)))
}

func TestLatencyChart(t *testing.T) {
	hists := randomHists(4, 20000)
	c := LatencyChart("latency", "Pull vs POP", []LatencySeries{
		{Label: "POP", Hist: hists[HistEndToEnd]},
		{Label: "Pull", Hist: hists[HistServiceTime]},
		{Label: "idle", Hist: NewLatencyHistogram()},
	})
	checkChart(t, c)
	svg, _ := c.SVG()
	for _, want := range []string{"Pull vs POP", "latency (log scale)", "0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "POP", "Pull", "idle (no data)"} {
		if !svgText(svg, want) {
			t.Errorf("latency chart has no text %q", want)
		}
	}
}

// The latency axis is logarithmic, so a body of a few ms and a tail of
// tens of seconds both get room: the default run's p50 is 8 ms and its
// p99 10 s, which a linear axis drew as a flat line under the tail.
func TestLatencyChartLogAxis(t *testing.T) {
	h := NewLatencyHistogram()
	for i := range 1000 {
		v := int64(5000 + i) // 5 ms body
		if i%100 == 0 {
			v = 10_000_000 // a 10 s tail at 1 %
		}
		h.RecordValue(v)
	}
	panels, err := latencyPanel("x", []LatencySeries{{Label: "e2e", Hist: h}})
	if err != nil {
		t.Fatal(err)
	}
	p := panels[0]
	if _, ok := p.Y.Scale.(plot.LogScale); !ok {
		t.Fatalf("latency axis scale %T, want plot.LogScale", p.Y.Scale)
	}
	if p.Y.Min > 5 || p.Y.Min <= 0 || p.Y.Max < 10_000 {
		t.Errorf("latency axis %g..%g ms does not span the body (5 ms) and the tail (10 s)", p.Y.Min, p.Y.Max)
	}
	var labels []string
	for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); !strings.Contains(got, "10 ms") || !strings.Contains(got, "10 s") {
		t.Errorf("latency tick labels %q: want units such as 10 ms and 10 s", got)
	}
	for ms, want := range map[float64]string{0.5: "500 µs", 20: "20 ms", 2000: "2 s", 100_000: "100 s", 600_000: "10 min"} {
		if got := msLabel(ms); got != want {
			t.Errorf("msLabel(%g) = %q, want %q", ms, got, want)
		}
	}
}

func TestTimeSeriesChart(t *testing.T) {
	c := TimeSeriesChart("ts", "fixture", fixtureSummary().Series)
	checkChart(t, c)
	panels, err := c.panels()
	if err != nil || len(panels) != 3 {
		t.Fatalf("%d panels (%v), want 3: throughput, backlog with in flight (near-identical on their own), redeliveries", len(panels), err)
	}
	svg, _ := c.SVG()
	for _, want := range []string{"virtual time (s)", "acked/s", "produced/s", "backlog and in flight", "backlog (not yet acked)", "in flight (broker records)", "redeliveries/s"} {
		if !svgText(svg, want) {
			t.Errorf("time series chart has no text %q", want)
		}
	}
	if _, err := TimeSeriesChart("ts", "empty", nil).PNG(); err == nil {
		t.Error("time series without samples: want an error")
	}
}

func TestIntervalRates(t *testing.T) {
	series := []model.SeriesPoint{{AtMs: 0, Acked: 5}, {AtMs: 500, Acked: 100}, {AtMs: 2500, Acked: 300}}
	got := intervalRates(series, func(p model.SeriesPoint) int64 { return p.Acked })
	// The zero-length first interval is skipped; 100 in 0.5 s, 300 in 2 s.
	if len(got) != 2 || got[0].X != 0.5 || got[0].Y != 200 || got[1].X != 2.5 || got[1].Y != 150 {
		t.Errorf("rates = %v, want [(0.5, 200) (2.5, 150)]", got)
	}
	// The run ends 10 ms into the last 1 s interval: 5 acks there are not
	// a rate of 500/s, and the point is left out.
	series = []model.SeriesPoint{{AtMs: 1000, Acked: 100}, {AtMs: 2000, Acked: 100}, {AtMs: 2010, Acked: 5}}
	got = intervalRates(series, func(p model.SeriesPoint) int64 { return p.Acked })
	if len(got) != 2 || got[1].X != 2 || got[1].Y != 100 {
		t.Errorf("rates with a partial last interval = %v, want [(1, 100) (2, 100)]", got)
	}
}

func TestDuplicatesChart(t *testing.T) {
	s := fixtureSummary()
	c := DuplicatesChart("dup", "fixture", s)
	checkChart(t, c)
	svg, _ := c.SVG()
	for _, want := range []string{"ack-lost", "crash", "lease-expired", "max-attempts", "duplicate deliveries by cause (total 400)"} {
		if !svgText(svg, want) {
			t.Errorf("duplicates chart has no text %q", want)
		}
	}
	s.DroppedByPolicy, s.DuplicatesByCause = nil, nil
	checkChart(t, DuplicatesChart("dup", "none", s))
}

func TestRunChartsSelection(t *testing.T) {
	s := fixtureSummary()
	names := func(cs []*Chart) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return strings.Join(out, " ")
	}
	if got := names(RunCharts(Run{Summary: s, Hists: randomHists(1, 100)})); got != "latency timeseries duplicates" {
		t.Errorf("full run charts: %q", got)
	}
	s.Series, s.Duplicates, s.DuplicatesByCause, s.DroppedByPolicy = nil, 0, nil, nil
	empty := map[string]*hdrhistogram.Histogram{HistEndToEnd: NewLatencyHistogram()}
	if got := names(RunCharts(Run{Summary: s, Hists: empty})); got != "" {
		t.Errorf("run without data: charts %q, want none", got)
	}
}

func TestChartWriteFiles(t *testing.T) {
	dir := t.TempDir()
	if err := LatencyChart("lat", "x", []LatencySeries{{"a", randomHists(1, 100)[HistEndToEnd]}}).WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listDir(t, dir), " "); got != "lat.png lat.svg" {
		t.Errorf("files %q, want lat.png lat.svg", got)
	}
}
