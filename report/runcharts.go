package report

import (
	"fmt"
	"maps"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"popsim/model"
)

// Chart file stems of a run folder.
const (
	ChartLatency    = "latency"
	ChartTimeSeries = "timeseries"
	ChartDuplicates = "duplicates"
)

// LatencySeries is one curve of a latency percentile chart.
type LatencySeries struct {
	Label string
	Hist  *hdrhistogram.Histogram // values in µs
}

// HistLabel is the legend label of a run's histogram name.
func HistLabel(name string) string {
	switch name {
	case HistEndToEnd:
		return "end-to-end (produce → ack)"
	case HistServiceTime:
		return "service time (pop → ack)"
	}
	return name
}

// percentileTicks label x = 1/(1-q) at each decade with its percentile.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"},
}

// LatencyChart draws latency against percentile: x is 1/(1-q) on a log
// scale labelled 0 %, 90 %, 99 % ... 99.999 %, y is latency in ms, one line
// per series (from PercentileCurve with the .hgrm spacing). Series with no
// values are listed in the legend as "(no data)".
func LatencyChart(name, title string, series []LatencySeries) *Chart {
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: 6 * vg.Inch,
		panels: func() ([]*plot.Plot, error) { return latencyPanel(title, series) }}
}

func latencyPanel(title string, series []LatencySeries) ([]*plot.Plot, error) {
	p := newPanel(title, "percentile (x = 1/(1-q), log scale)", "latency (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.X.Min, p.X.Max = 1, 1e5
	p.Y.Min = 0
	for i, s := range series {
		curve := PercentileCurve(s.Hist, HgrmTicksPerHalfDistance)
		if len(curve) == 0 {
			p.Legend.Add(s.Label + " (no data)")
			continue
		}
		xys := make(plotter.XYs, len(curve))
		for j, pt := range curve {
			xys[j] = plotter.XY{X: pt.Inverse, Y: float64(pt.ValueUs) / 1000}
		}
		if err := addLine(p, i, s.Label, xys, false); err != nil {
			return nil, err
		}
	}
	p.Y.Max = math.Max(1, p.Y.Max*1.05)
	return []*plot.Plot{p}, nil
}

// intervalRates turns per-interval counts into rates per second. Point i
// covers (AtMs[i-1], AtMs[i]], the first one (0, AtMs[0]]; points with an
// empty interval are skipped.
func intervalRates(series []model.SeriesPoint, count func(model.SeriesPoint) int64) plotter.XYs {
	var xys plotter.XYs
	prev := int64(0)
	for _, pt := range series {
		if dt := pt.AtMs - prev; dt > 0 {
			xys = append(xys, plotter.XY{X: float64(pt.AtMs) / 1000, Y: float64(count(pt)) * 1000 / float64(dt)})
		}
		prev = pt.AtMs
	}
	return xys
}

// gauge plots an instantaneous value at each sample.
func gauge(series []model.SeriesPoint, value func(model.SeriesPoint) int64) plotter.XYs {
	xys := make(plotter.XYs, len(series))
	for i, pt := range series {
		xys[i] = plotter.XY{X: float64(pt.AtMs) / 1000, Y: float64(value(pt))}
	}
	return xys
}

// TimeSeriesChart draws a run's time series over virtual time in four
// stacked panels: throughput (produced/s and acked/s), backlog (messages
// produced but not yet acked, DLQ'd or dropped), in-flight broker records,
// and redeliveries/s. Produced, Acked and Redelivered are per-interval
// counts: point i covers (AtMs[i-1], AtMs[i]].
func TimeSeriesChart(name, title string, series []model.SeriesPoint) *Chart {
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: 12 * vg.Inch,
		panels: func() ([]*plot.Plot, error) { return timeSeriesPanels(title, series) }}
}

func timeSeriesPanels(title string, series []model.SeriesPoint) ([]*plot.Plot, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("no time series samples")
	}
	const x = "virtual time (s)"
	type line struct {
		label string
		xys   plotter.XYs
	}
	panels := []struct {
		title, y string
		lines    []line
	}{
		{title + ": throughput", "messages/s", []line{
			{"produced/s", intervalRates(series, func(p model.SeriesPoint) int64 { return p.Produced })},
			{"acked/s", intervalRates(series, func(p model.SeriesPoint) int64 { return p.Acked })},
		}},
		{"backlog", "messages", []line{{"backlog", gauge(series, func(p model.SeriesPoint) int64 { return p.Backlog })}}},
		{"in flight (broker records)", "records", []line{{"in flight", gauge(series, func(p model.SeriesPoint) int64 { return p.InFlight })}}},
		{"redeliveries", "redeliveries/s", []line{
			{"redelivered/s", intervalRates(series, func(p model.SeriesPoint) int64 { return p.Redelivered })},
		}},
	}
	plots := make([]*plot.Plot, len(panels))
	for i, pd := range panels {
		p := newPanel(pd.title, x, pd.y)
		p.Legend.Top, p.Legend.Left = false, false // rates sit near the top
		p.Legend.XOffs, p.Legend.YOffs = -2*vg.Millimeter, 2*vg.Millimeter
		p.Y.Min = 0
		for j, l := range pd.lines {
			if len(l.xys) == 0 {
				continue
			}
			if err := addLine(p, j, l.label, l.xys, false); err != nil {
				return nil, err
			}
		}
		if len(pd.lines) == 1 { // the panel title says it all
			p.Legend = plot.NewLegend()
		}
		// Same x range on every panel so they line up; headroom above.
		p.X.Min, p.X.Max = 0, math.Max(1, float64(series[len(series)-1].AtMs)/1000)
		p.Y.Max = math.Max(1, p.Y.Max*1.1)
		plots[i] = p
	}
	return plots, nil
}

// DuplicatesChart draws duplicate deliveries by cause as horizontal bars,
// causes sorted by name, and, when the run dropped messages, a second panel
// of drops by policy.
func DuplicatesChart(name, title string, s model.Summary) *Chart {
	rows := len(s.DuplicatesByCause) + len(s.DroppedByPolicy)
	panels := 1
	if len(s.DroppedByPolicy) > 0 {
		panels = 2
	}
	h := vg.Length(panels)*2*vg.Inch + vg.Length(rows)*0.4*vg.Inch
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: h,
		panels: func() ([]*plot.Plot, error) {
			p, err := barPanel(fmt.Sprintf("%s: duplicate deliveries by cause (total %d)", title, s.Duplicates),
				"duplicate deliveries", s.DuplicatesByCause, 0)
			if err != nil || len(s.DroppedByPolicy) == 0 {
				return []*plot.Plot{p}, err
			}
			d, err := barPanel(fmt.Sprintf("dropped messages by policy (total %d)", s.Dropped),
				"messages dropped", s.DroppedByPolicy, 1)
			return []*plot.Plot{p, d}, err
		}}
}

func barPanel(title, xLabel string, counts map[string]int64, colour int) (*plot.Plot, error) {
	names := slices.Sorted(maps.Keys(counts))
	p := newPanel(title, xLabel, "")
	p.X.Min = 0
	if len(names) == 0 {
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Add("none")
		return p, nil
	}
	// NominalY puts the first name at the bottom; list them top down.
	vals := make(plotter.Values, len(names))
	labels := make([]string, len(names))
	for i, n := range names {
		vals[len(names)-1-i] = float64(counts[n])
		labels[len(names)-1-i] = n
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, err
	}
	bars.Horizontal = true
	bars.Color = plotutil.Color(colour)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalY(labels...)
	p.X.Max = math.Max(1, p.X.Max*1.05)
	return p, nil
}

// RunCharts returns the charts WriteRun renders for a run, in report order:
// the latency percentile chart when any histogram has values (one curve per
// histogram, end-to-end first), the time series when the summary has
// samples, and the duplicates chart when there were duplicates or drops.
func RunCharts(r Run) []*Chart {
	s := r.Summary
	var charts []*Chart
	if series := runLatencySeries(r.Hists); hasValues(series) {
		charts = append(charts, LatencyChart(ChartLatency, fmt.Sprintf("%s seed %d: latency by percentile", s.Scenario, s.Seed), series))
	}
	if len(s.Series) > 0 {
		charts = append(charts, TimeSeriesChart(ChartTimeSeries, fmt.Sprintf("%s seed %d", s.Scenario, s.Seed), s.Series))
	}
	if s.Duplicates > 0 || len(s.DuplicatesByCause) > 0 || len(s.DroppedByPolicy) > 0 {
		charts = append(charts, DuplicatesChart(ChartDuplicates, fmt.Sprintf("%s seed %d", s.Scenario, s.Seed), s))
	}
	return charts
}

// runLatencySeries orders a run's histograms: end-to-end, service time,
// then the others by name.
func runLatencySeries(hists map[string]*hdrhistogram.Histogram) []LatencySeries {
	var out []LatencySeries
	for _, name := range []string{HistEndToEnd, HistServiceTime} {
		if h, ok := hists[name]; ok {
			out = append(out, LatencySeries{Label: HistLabel(name), Hist: h})
		}
	}
	for _, name := range sortedHistNames(hists) {
		if name != HistEndToEnd && name != HistServiceTime {
			out = append(out, LatencySeries{Label: HistLabel(name), Hist: hists[name]})
		}
	}
	return out
}

func hasValues(series []LatencySeries) bool {
	for _, s := range series {
		if s.Hist != nil && s.Hist.TotalCount() > 0 {
			return true
		}
	}
	return false
}
