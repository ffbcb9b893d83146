package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

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
	case HistReviveLag:
		return "revive lag (deadline → revive)"
	}
	if IsPart(name) {
		return PartLabel(name)
	}
	return name
}

// percentileTicks label x = 1/(1-q) at each decade with its percentile.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"},
}

// LatencyChart draws latency against percentile: x is 1/(1-q) on a log
// scale labelled 0 %, 90 %, 99 % ... 99.999 %, y is latency on a log scale
// (so the body, a few ms, and the tail, seconds, both read), one line per
// series (from PercentileCurve with the .hgrm spacing). Series with no
// values are listed in the legend as "(no data)".
func LatencyChart(name, title string, series []LatencySeries) *Chart {
	return latencyChart(name, title, series, nil)
}

// latencyChart is LatencyChart with error bars (ms) in the first series'
// colour, when bars is not nil.
func latencyChart(name, title string, series []LatencySeries, bars *errorBars) *Chart {
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: 6 * vg.Inch,
		panels: func() ([]*plot.Plot, error) {
			ps, err := latencyPanel(title, series)
			if err == nil {
				err = bars.draw(ps[0], 0)
			}
			return ps, err
		}}
}

func latencyPanel(title string, series []LatencySeries) ([]*plot.Plot, error) {
	p := newPanel(title, "percentile (x = 1/(1-q), log scale)", "latency (log scale)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.X.Min, p.X.Max = 1, 1e5
	lo, hi := math.Inf(1), 0.0
	for i, s := range series {
		curve := PercentileCurve(s.Hist, HgrmTicksPerHalfDistance)
		var xys plotter.XYs
		for _, pt := range curve {
			if pt.ValueUs > 0 { // a log axis has no zero; recorded values are >= 1 µs
				ms := float64(pt.ValueUs) / 1000
				xys = append(xys, plotter.XY{X: pt.Inverse, Y: ms})
				lo, hi = math.Min(lo, ms), math.Max(hi, ms)
			}
		}
		if len(xys) == 0 {
			p.Legend.Add(s.Label + " (no data)")
			continue
		}
		if err := addLine(p, i, s.Label, xys, false); err != nil {
			return nil, err
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = latencyTicks{}
	// A decade of headroom above for the legend, a little below.
	p.Y.Min, p.Y.Max = lo/1.5, math.Max(hi*12, lo*100)
	return []*plot.Plot{p}, nil
}

// latencyTicks marks a log latency axis (values in ms) at 1, 2 and 5
// times each power of ten, labelled with a unit (µs, ms, s, min); over
// more than four decades only the powers of ten are labelled.
type latencyTicks struct{}

func (latencyTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	labelAll := math.Log10(max/min) <= 4
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		for _, m := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || labelAll && (m == 2 || m == 5) {
				t.Label = msLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// msLabel renders a latency in ms with a readable unit: 500 µs, 20 ms,
// 2 s, 100 s, 10 min (whole minutes only).
func msLabel(ms float64) string {
	f := func(v float64, unit string) string { return strconv.FormatFloat(v, 'f', -1, 64) + " " + unit }
	switch {
	case ms < 1:
		return f(math.Round(ms*1000*1000)/1000, "µs")
	case ms < 1000:
		return f(ms, "ms")
	case ms < 60_000 || math.Mod(ms, 60_000) != 0:
		return f(ms/1000, "s")
	}
	return f(ms/60_000, "min")
}

// intervalRates turns per-interval counts into rates per second. Point i
// covers (AtMs[i-1], AtMs[i]], the first one (0, AtMs[0]]; points with an
// empty interval are skipped, and so is a last interval shorter than the
// one before it: the run ended inside it, and a few events over a short
// interval would draw a spike that is not there.
func intervalRates(series []model.SeriesPoint, count func(model.SeriesPoint) int64) plotter.XYs {
	var xys plotter.XYs
	prev, prevDt := int64(0), int64(0)
	for i, pt := range series {
		dt := pt.AtMs - prev
		if dt > 0 && !(i == len(series)-1 && i > 0 && dt < prevDt) {
			xys = append(xys, plotter.XY{X: float64(pt.AtMs) / 1000, Y: float64(count(pt)) * 1000 / float64(dt)})
		}
		prev, prevDt = pt.AtMs, dt
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

// TimeSeriesChart draws a run's time series over virtual time in three
// stacked panels: throughput (produced/s and acked/s); backlog (messages
// produced but not yet acked, DLQ'd or dropped) with in-flight broker
// records, which usually track each other closely; and redeliveries/s. Produced, Acked and Redelivered are per-interval
// counts: point i covers (AtMs[i-1], AtMs[i]].
func TimeSeriesChart(name, title string, series []model.SeriesPoint) *Chart {
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: 9 * vg.Inch,
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
		{"backlog and in flight", "messages", []line{
			{"backlog (not yet acked)", gauge(series, func(p model.SeriesPoint) int64 { return p.Backlog })},
			{"in flight (broker records)", gauge(series, func(p model.SeriesPoint) int64 { return p.InFlight })},
		}},
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
		title := fmt.Sprintf("%s seed %d: latency by percentile%s", s.Scenario, s.Seed, intervalTitle(s))
		charts = append(charts, latencyChart(ChartLatency, title, series, percentileBars(s)))
	}
	if len(s.Breakdown.Parts) > 0 && s.EndToEnd.Count > 0 {
		charts = append(charts, BreakdownChart(ChartBreakdown, fmt.Sprintf("%s seed %d", s.Scenario, s.Seed), s))
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
// then the others by name; the latency parts have a chart of their own.
func runLatencySeries(hists map[string]*hdrhistogram.Histogram) []LatencySeries {
	var out []LatencySeries
	for _, name := range []string{HistEndToEnd, HistServiceTime} {
		if h, ok := hists[name]; ok {
			out = append(out, LatencySeries{Label: HistLabel(name), Hist: h})
		}
	}
	for _, name := range sortedHistNames(hists) {
		if name != HistEndToEnd && name != HistServiceTime && !IsPart(name) {
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
