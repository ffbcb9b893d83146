package report

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Metric is a per-cell number plotted against the swept parameter.
type Metric int

// The sweep metrics.
const (
	MetricP99EndToEndMs Metric = iota // p99 end-to-end latency, ms
	MetricDuplicatesPct               // duplicate deliveries per produced message, %
	MetricThroughput                  // acks per virtual second, mean over seeds
)

// Metrics lists every Metric in report order.
var Metrics = []Metric{MetricP99EndToEndMs, MetricDuplicatesPct, MetricThroughput}

// Name is the metric's file stem: sweep-<Name>.png.
func (m Metric) Name() string {
	switch m {
	case MetricP99EndToEndMs:
		return "p99-e2e"
	case MetricDuplicatesPct:
		return "duplicates"
	case MetricThroughput:
		return "throughput"
	}
	return "metric" + strconv.Itoa(int(m))
}

// Label is the metric's axis label, with its unit.
func (m Metric) Label() string {
	switch m {
	case MetricP99EndToEndMs:
		return "p99 end-to-end latency (ms)"
	case MetricDuplicatesPct:
		return "duplicates (% of produced)"
	case MetricThroughput:
		return "throughput (acks/s)"
	}
	return m.Name()
}

// Of is the metric's value for a cell.
func (m Metric) Of(c *SweepCell) float64 {
	switch m {
	case MetricP99EndToEndMs:
		lat, _ := c.EndToEnd()
		return float64(lat.P99) / 1000
	case MetricDuplicatesPct:
		return c.DuplicatesPct()
	case MetricThroughput:
		return c.Throughput()
	}
	panic(fmt.Sprintf("report: unknown metric %d", int(m)))
}

// SweepChart plots metric m of every cell against the numeric value of the
// swept parameter s.X, one line (with point marks) per value of s.Group.
// Every cell must have a numeric or duration value for s.X (durations are
// plotted in ms).
func SweepChart(s *Sweep, m Metric) *Chart {
	return &Chart{
		Name:  "sweep-" + m.Name(),
		Title: fmt.Sprintf("%s: %s against %s", s.Name, m.Label(), s.X),
		Width: 10 * vg.Inch, Height: 6 * vg.Inch,
		panels: func() ([]*plot.Plot, error) { return sweepPanel(s, m) },
	}
}

func sweepPanel(s *Sweep, m Metric) ([]*plot.Plot, error) {
	if m < 0 || int(m) >= len(Metrics) {
		return nil, fmt.Errorf("unknown metric %d", int(m))
	}
	xLabel := s.X
	var groups []string
	lines := map[string]plotter.XYs{}
	for _, c := range s.Cells() {
		raw, ok := c.Params[s.X]
		if !ok {
			return nil, fmt.Errorf("cell %s has no parameter %q to plot on the x axis", ParamsKey(c.Params), s.X)
		}
		x, err := ParamValue(raw)
		if err != nil {
			return nil, err
		}
		if _, perr := strconv.ParseFloat(raw, 64); perr != nil {
			xLabel = s.X + " (ms)"
		}
		g := groupLabel(s, c)
		if _, seen := lines[g]; !seen {
			groups = append(groups, g)
		}
		lines[g] = append(lines[g], plotter.XY{X: x, Y: m.Of(c)})
	}
	p := newPanel(fmt.Sprintf("%s: %s", s.Name, m.Label()), xLabel, m.Label())
	p.Y.Min = 0
	for i, g := range groups {
		if err := addLine(p, i, g, lines[g], true); err != nil {
			return nil, err
		}
	}
	p.Legend.Left = false // curves against a resource usually fall to the right
	p.Legend.XOffs = -2 * vg.Millimeter
	p.Y.Max = math.Max(1, p.Y.Max*1.15) // headroom for the legend
	return []*plot.Plot{p}, nil
}

// groupLabel is the legend label of a cell's line.
func groupLabel(s *Sweep, c *SweepCell) string {
	if s.Group == "" {
		return "all"
	}
	if v, ok := c.Params[s.Group]; ok {
		return s.Group + "=" + v
	}
	return s.Group + " unset"
}

// SweepCharts returns one SweepChart per metric, or none when the sweep
// has no X parameter or no cells.
func SweepCharts(s *Sweep) []*Chart {
	var charts []*Chart
	if c := SweepLatencyChart(s); c != nil {
		charts = append(charts, c)
	}
	if s.X == "" || len(s.cells) == 0 {
		return charts
	}
	for _, m := range Metrics {
		charts = append(charts, SweepChart(s, m))
	}
	return charts
}

// MaxLatencySeries bounds the curves on a sweep's latency chart; beyond it
// the chart would be unreadable and the table says more.
const MaxLatencySeries = 12

// SweepLatencyChart overlays the end-to-end latency percentile curve of
// every parameter point (its seeds' histograms merged exactly) on one
// 1/(1-q) chart, e.g. Pull against POP. It returns nil when no point has a
// complete end-to-end histogram or there are more than MaxLatencySeries.
func SweepLatencyChart(s *Sweep) *Chart {
	var series []LatencySeries
	for _, c := range s.Cells() {
		if _, exact := c.EndToEnd(); !exact {
			continue
		}
		series = append(series, LatencySeries{Label: ParamsKey(c.Params), Hist: c.Hists[HistEndToEnd]})
	}
	if len(series) == 0 || len(series) > MaxLatencySeries {
		return nil
	}
	return LatencyChart("sweep-latency", s.Name+": end-to-end latency by percentile", series)
}
