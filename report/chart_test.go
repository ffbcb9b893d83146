package report

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	for _, want := range []string{"Pull vs POP", "latency (ms)", "0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "POP", "Pull", "idle (no data)"} {
		if !svgText(svg, want) {
			t.Errorf("latency chart has no text %q", want)
		}
	}
}

func TestTimeSeriesChart(t *testing.T) {
	c := TimeSeriesChart("ts", "fixture", fixtureSummary().Series)
	checkChart(t, c)
	svg, _ := c.SVG()
	for _, want := range []string{"virtual time (s)", "acked/s", "produced/s", "backlog", "in flight (broker records)", "redeliveries/s"} {
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
