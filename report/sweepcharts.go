package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"popsim/model"
)

// Metric is a per-cell number plotted against the swept parameter.
type Metric int

// The sweep metrics.
const (
	MetricP99EndToEndMs  Metric = iota // p99 end-to-end latency, ms
	MetricDuplicatesPct                // duplicate deliveries per produced message, %
	MetricThroughput                   // acks per virtual second, mean over seeds
	MetricMeanEndToEndMs               // mean end-to-end latency, ms
	MetricP50EndToEndMs                // median end-to-end latency, ms
	MetricP90EndToEndMs                // p90 end-to-end latency, ms
	MetricP999EndToEndMs               // p99.9 end-to-end latency, ms
	MetricMaxEndToEndMs                // largest end-to-end latency, ms
	numMetrics
)

// Metrics lists the metrics every sweep charts, in report order; the
// others are charted when a Threshold names them.
var Metrics = []Metric{MetricP99EndToEndMs, MetricDuplicatesPct, MetricThroughput}

// latencyMetric describes the end-to-end latency metrics; pick is nil for
// max, which has no interval.
var latencyMetric = map[Metric]struct {
	name, label string
	pick        func(model.PointStats) model.SeedMetric
}{
	MetricP99EndToEndMs:  {"p99-e2e", "p99 end-to-end latency (ms)", func(s model.PointStats) model.SeedMetric { return s.P99 }},
	MetricMeanEndToEndMs: {"mean-e2e", "mean end-to-end latency (ms)", func(s model.PointStats) model.SeedMetric { return s.Mean }},
	MetricP50EndToEndMs:  {"p50-e2e", "median end-to-end latency (ms)", func(s model.PointStats) model.SeedMetric { return s.P50 }},
	MetricP90EndToEndMs:  {"p90-e2e", "p90 end-to-end latency (ms)", func(s model.PointStats) model.SeedMetric { return s.P90 }},
	MetricP999EndToEndMs: {"p99.9-e2e", "p99.9 end-to-end latency (ms)", func(s model.PointStats) model.SeedMetric { return s.P999 }},
	MetricMaxEndToEndMs:  {"max-e2e", "max end-to-end latency (ms)", nil},
}

// Threshold is a target drawn on the chart of its metric as a horizontal
// line (a plan's target, in the metric's unit).
type Threshold struct {
	Metric Metric
	Value  float64
	Label  string // legend text, e.g. "target p99<=200ms"
}

// Name is the metric's file stem: sweep-<Name>.png.
func (m Metric) Name() string {
	if l, ok := latencyMetric[m]; ok {
		return l.name
	}
	switch m {
	case MetricDuplicatesPct:
		return "duplicates"
	case MetricThroughput:
		return "throughput"
	}
	return "metric" + strconv.Itoa(int(m))
}

// Label is the metric's axis label, with its unit.
func (m Metric) Label() string {
	if l, ok := latencyMetric[m]; ok {
		return l.label
	}
	switch m {
	case MetricDuplicatesPct:
		return "duplicates (% of produced)"
	case MetricThroughput:
		return "throughput (acks/s)"
	}
	return m.Name()
}

// Of is the metric's estimate and interval over a cell's seeds (see
// SweepCell.Stats), in the chart's unit (ms for latencies). Max has no
// interval: its OK is false and Est is the largest over the seeds.
func (m Metric) Of(st model.PointStats) model.Interval {
	if l, ok := latencyMetric[m]; ok {
		if l.pick == nil {
			return model.Interval{Est: float64(st.Max) / 1000, Level: st.Level, N: len(st.Seeds), Note: "a maximum has no interval"}
		}
		return scaled(l.pick(st).Interval, 1.0/1000)
	}
	switch m {
	case MetricDuplicatesPct:
		return st.DuplicatesPct.Interval
	case MetricThroughput:
		return st.ThroughputPerSec.Interval
	}
	panic(fmt.Sprintf("report: unknown metric %d", int(m)))
}

// SweepChart plots metric m of every cell against the numeric value of the
// swept parameter s.X, one line (with point marks) per value of s.Group,
// with each point's interval over its seeds as an error bar (at s.Level;
// none for a point without one), and each of s.Thresholds on m as a
// horizontal line. The x axis is marked
// at the swept values (log scale when they span a factor of 20 or more).
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

// sweepSeries are the lines of a sweep chart: one per group, in order,
// each with its points and its error bars (only points with an interval).
type sweepSeries struct {
	groups []string
	lines  map[string]plotter.XYs
	bars   map[string]*errorBars
	xs     []float64
	xLabel string
}

func seriesOf(s *Sweep, m Metric) (*sweepSeries, error) {
	ss := &sweepSeries{lines: map[string]plotter.XYs{}, bars: map[string]*errorBars{}, xLabel: s.X}
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
			ss.xLabel = s.X + " (ms)"
		}
		g := groupLabel(s, c)
		if _, seen := ss.lines[g]; !seen {
			ss.groups = append(ss.groups, g)
		}
		iv := m.Of(c.Stats(s.ConfidenceLevel()))
		ss.lines[g] = append(ss.lines[g], plotter.XY{X: x, Y: iv.Est})
		if iv.OK {
			if ss.bars[g] == nil {
				ss.bars[g] = &errorBars{}
			}
			ss.bars[g].add(x, iv)
		}
		ss.xs = append(ss.xs, x)
	}
	return ss, nil
}

func sweepPanel(s *Sweep, m Metric) ([]*plot.Plot, error) {
	if m < 0 || m >= numMetrics {
		return nil, fmt.Errorf("unknown metric %d", int(m))
	}
	ss, err := seriesOf(s, m)
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("%s: %s", s.Name, m.Label())
	if m != MetricMaxEndToEndMs {
		title += fmt.Sprintf(", bars: %s intervals over the seeds", levelText(s.ConfidenceLevel()))
	}
	p := newPanel(title, ss.xLabel, m.Label())
	p.Y.Min = 0
	for i, g := range ss.groups {
		if err := addLine(p, i, g, ss.lines[g], true); err != nil {
			return nil, err
		}
		if err := ss.bars[g].draw(p, i); err != nil {
			return nil, err
		}
	}
	setValueAxis(p, ss.xs)
	for _, t := range s.Thresholds {
		if t.Metric == m {
			if err := addThreshold(p, t); err != nil {
				return nil, err
			}
		}
	}
	p.Legend.Left = false // curves against a resource usually fall to the right
	p.Legend.XOffs = -2 * vg.Millimeter
	p.Y.Max = math.Max(1, p.Y.Max*1.15) // headroom for the legend
	return []*plot.Plot{p}, nil
}

// errorBars are one line's intervals, drawn as vertical error bars.
type errorBars struct {
	xys  plotter.XYs
	errs plotter.YErrors
}

// add appends a point's interval; its lower end is cut at 0, below which
// no metric charted here can go (a t interval for a rare duplicate rate
// can reach below it).
func (e *errorBars) add(x float64, iv model.Interval) {
	e.xys = append(e.xys, plotter.XY{X: x, Y: iv.Est})
	e.errs = append(e.errs, struct{ Low, High float64 }{max(0, iv.Est-max(0, iv.Lo)), max(0, iv.Hi-iv.Est)})
}

// YError implements plotter.YErrorer.
func (e *errorBars) YError(i int) (float64, float64) { return e.errs[i].Low, e.errs[i].High }
func (e *errorBars) Len() int                        { return len(e.xys) }
func (e *errorBars) XY(i int) (float64, float64)     { return e.xys[i].X, e.xys[i].Y }

// draw adds the bars in the colour of line i; nil draws nothing.
func (e *errorBars) draw(p *plot.Plot, i int) error {
	if e == nil || len(e.xys) == 0 {
		return nil
	}
	eb, err := plotter.NewYErrorBars(e)
	if err != nil {
		return err
	}
	eb.Color = plotutil.Color(i)
	eb.Width = vg.Points(1)
	eb.CapWidth = vg.Points(6)
	p.Add(eb) // its data range reaches the bars' ends
	return nil
}

// setValueAxis marks the x axis at the swept values xs (labels thinned
// where they would collide) and uses a log scale when they are positive
// and span a factor of 20 or more.
func setValueAxis(p *plot.Plot, xs []float64) {
	xs = slices.Compact(slices.Sorted(slices.Values(xs)))
	if len(xs) == 0 {
		return
	}
	lo, hi := xs[0], xs[len(xs)-1]
	log := lo > 0 && hi/lo >= 20
	pos := func(x float64) float64 { return x }
	if log {
		p.X.Scale = plot.LogScale{}
		pos = math.Log
	}
	span := pos(hi) - pos(lo)
	if span == 0 {
		span = 1
	}
	var ticks plot.ConstantTicks
	last := math.Inf(-1)
	for _, x := range xs {
		t := plot.Tick{Value: x}
		if (pos(x)-last)/span >= 0.035 || x == hi && len(ticks) == 0 {
			t.Label, last = strconv.FormatFloat(x, 'f', -1, 64), pos(x)
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = ticks
	pad := span * 0.03
	if log {
		p.X.Min, p.X.Max = lo/math.Exp(pad), hi*math.Exp(pad)
	} else {
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
}

// addThreshold draws t across the panel as a dashed black line.
func addThreshold(p *plot.Plot, t Threshold) error {
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: t.Value}, {X: p.X.Max, Y: t.Value}})
	if err != nil {
		return fmt.Errorf("threshold %q: %w", t.Label, err)
	}
	line.Color = color.Black
	line.Width = vg.Points(1)
	line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(line)
	p.Legend.Add(t.Label, line)
	p.Y.Max = math.Max(p.Y.Max, t.Value)
	return nil
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

// chartedMetrics are Metrics plus any metric a threshold names, in
// Metric order after Metrics.
func (s *Sweep) chartedMetrics() []Metric {
	ms := slices.Clone(Metrics)
	for m := Metric(0); m < numMetrics; m++ {
		for _, t := range s.Thresholds {
			if t.Metric == m && !slices.Contains(ms, m) {
				ms = append(ms, m)
			}
		}
	}
	return ms
}

// SweepCharts returns the latency overlay (SweepLatencyChart) when there
// is one, then one SweepChart per charted metric (Metrics, and any metric
// a threshold names) unless the sweep has no X parameter or no cells.
func SweepCharts(s *Sweep) []*Chart {
	var charts []*Chart
	if c := SweepLatencyChart(s); c != nil {
		charts = append(charts, c)
	}
	if s.X == "" || len(s.cells) == 0 {
		return charts
	}
	for _, m := range s.chartedMetrics() {
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
