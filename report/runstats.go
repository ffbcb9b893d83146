package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"popsim/model"
	"popsim/stats"
)

// A run's own uncertainty and where its time went: the warm-up it cut,
// its within-run intervals, the latency breakdown and the notes the
// simulator left for the reader (model/runstats.go).

// ChartBreakdown is the file stem of a run's latency breakdown chart.
const ChartBreakdown = "breakdown"

// PartLabel is a latency part's name for people: "broker wait".
func PartLabel(name string) string { return strings.ReplaceAll(name, "_", " ") }

// partMeaning says what each part of end-to-end latency is.
var partMeaning = map[string]string{
	model.PartBrokerWait:     "intended send → delivered to the consuming client, less the redelivery wait: the produce request, the backlog, the pop's answer",
	model.PartAtBroker:       "with a broker cost model: its put waiting for a thread and a core, the pop that delivered it waiting (while it was stored) and served",
	model.PartRedeliveryWait: "each lease that did not end in the ack, from its start until the message was available again (the lease time, the revive's lag)",
	model.PartLocalBuffer:    "delivered → a consume thread takes it: prefetched, waiting in the client",
	model.PartProcessing:     "consume start → consume end",
	model.PartAck:            "consume end → the engine accepted the ack (0 for Pull: success ends at consume end)",
}

// IsPart reports whether a histogram name is a latency part's.
func IsPart(name string) bool {
	_, ok := partMeaning[name]
	return ok
}

// hasRunStats reports whether a summary carries a run's own analysis (a
// summary written before popsim had it does not).
func hasRunStats(s model.Summary) bool { return s.Intervals.Level > 0 }

// msInterval renders a µs interval in ms for a table cell.
func msInterval(iv model.Interval) string { return FormatInterval(iv, usMs) }

// writeRunIntervals writes the within-run intervals under the latency
// table.
func writeRunIntervals(b *bytes.Buffer, s model.Summary) {
	if !hasRunStats(s) {
		return
	}
	iv := s.Intervals
	fmt.Fprintf(b, "Within-run %s confidence intervals, after the warm-up (%s):\n\n", levelText(iv.Level), mdText(s.Warmup.String()))
	b.WriteString("| | mean ms | p50 ms | p90 ms | p99 ms |\n|---|--:|--:|--:|--:|\n")
	for _, r := range []struct {
		name string
		l    model.LatencyIntervals
	}{{HistLabel(HistEndToEnd), iv.EndToEnd}, {HistLabel(HistServiceTime), iv.ServiceTime}} {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdText(r.name), msInterval(r.l.Mean), msInterval(r.l.P50), msInterval(r.l.P90), msInterval(r.l.P99))
	}
	fmt.Fprintf(b, "\nDuplicates: %s %% of the messages stored after the warm-up; throughput: %s acks/s.\n\n",
		FormatInterval(iv.DuplicatesPct, stats.FormatNumber), FormatInterval(iv.ThroughputPerSec, stats.FormatNumber))
	b.WriteString("Means by batch means; percentiles by batch proportion (the run's own percentile, with the batch-means interval " +
		"of the share of messages at or below it turned back into latencies); duplicates and throughput by batch ratio; over the measured messages " +
		"in the order the engine stored them (throughput: over the sample intervals); a maximum has no interval. " +
		"\"no interval\" says why: too little data, or batches still correlated (run longer).\n\n")
}

// writeBreakdown writes where the time goes: each part's mean with its
// interval and share of the mean end-to-end latency, and its percentiles.
func writeBreakdown(b *bytes.Buffer, s model.Summary) {
	if len(s.Breakdown.Parts) == 0 {
		return
	}
	b.WriteString("## Where the time goes (ms)\n\n")
	b.WriteString("Each measured message's end-to-end latency split into parts that add up to it exactly.\n\n")
	b.WriteString("| part | mean [95 % interval] | share of mean | p50 | p90 | p99 | max | what it is |\n|---|--:|--:|--:|--:|--:|--:|---|\n")
	e2e := s.EndToEnd
	for _, p := range s.Breakdown.Parts {
		fmt.Fprintf(b, "| %s | %s | %s %% | %s | %s | %s | %s | %s |\n", mdText(PartLabel(p.Name)), msInterval(p.MeanInterval),
			fmtFloat(pct(p.Mean, e2e.Mean), 1), fmtMs(p.P50), fmtMs(p.P90), fmtMs(p.P99), fmtMs(p.Max), mdText(partMeaning[p.Name]))
	}
	fmt.Fprintf(b, "| end-to-end | %s | 100 %% | %s | %s | %s | %s | the sum |\n\n", fmtMs(e2e.Mean), fmtMs(e2e.P50), fmtMs(e2e.P90), fmtMs(e2e.P99), fmtMs(e2e.Max))
	if n := s.Breakdown.Unattributed; n > 0 {
		fmt.Fprintf(b, "%d measured messages are in no part (the trace did not show their delivery and consumption).\n\n", n)
	}
	b.WriteString("Percentiles of the parts do not add up: each part's p99 comes from different messages.\n\n")
}

// writeNotes writes the simulator's notes for the reader, and the
// warm-up rule's warning.
func writeNotes(b *bytes.Buffer, s model.Summary) {
	notes := s.Notes
	if s.Warmup.Failed {
		notes = append([]string{"warm-up: " + s.Warmup.String()}, notes...)
	}
	if len(notes) == 0 {
		return
	}
	b.WriteString("## Notes\n\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", mdText(n))
	}
	b.WriteString("\n")
}

// intervalTitle states the within-run interval of the mean end-to-end
// latency, for a chart title.
func intervalTitle(s model.Summary) string {
	iv := s.Intervals.EndToEnd.Mean
	if !hasRunStats(s) || iv.N == 0 {
		return ""
	}
	if !iv.OK {
		return fmt.Sprintf(" (mean %s ms, no within-run interval)", usMs(iv.Est))
	}
	return fmt.Sprintf(" (mean %s ms [%s, %s], %s within run)", usMs(iv.Est), usMs(iv.Lo), usMs(iv.Hi), levelText(iv.Level))
}

// percentileBars are the within-run intervals of the end-to-end p50, p90
// and p99 as error bars on the percentile chart (x = 1/(1-q)), in ms.
func percentileBars(s model.Summary) *errorBars {
	if !hasRunStats(s) {
		return nil
	}
	var e errorBars
	for _, q := range []struct {
		x  float64
		iv model.Interval
	}{{2, s.Intervals.EndToEnd.P50}, {10, s.Intervals.EndToEnd.P90}, {100, s.Intervals.EndToEnd.P99}} {
		if q.iv.OK && q.iv.Lo > 0 {
			e.add(q.x, model.Interval{Est: q.iv.Est / 1000, Lo: q.iv.Lo / 1000, Hi: q.iv.Hi / 1000, OK: true})
		}
	}
	return &e
}

// BreakdownChart draws where a run's end-to-end latency went: the mean
// split into its parts as one stacked bar (the parts add up to the mean),
// and each part's p99 beside the end-to-end p99 on a log axis (p99s do
// not add up, so they are not stacked).
func BreakdownChart(name, title string, s model.Summary) *Chart {
	return &Chart{Name: name, Title: title, Width: 10 * vg.Inch, Height: 6 * vg.Inch,
		panels: func() ([]*plot.Plot, error) {
			m, err := meanPanel(title, s)
			if err != nil {
				return nil, err
			}
			p, err := p99Panel(s)
			return []*plot.Plot{m, p}, err
		}}
}

func meanPanel(title string, s model.Summary) (*plot.Plot, error) {
	p := newPanel(title+": mean end-to-end latency by part (stacked)", "ms", "")
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs = -2 * vg.Millimeter
	p.X.Min = 0
	var below *plotter.BarChart
	total := 0.0
	for i, part := range s.Breakdown.Parts {
		v := float64(part.Mean) / 1000
		total += v
		bar, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(40))
		if err != nil {
			return nil, err
		}
		bar.Horizontal = true
		bar.Color = plotutil.Color(i)
		bar.LineStyle.Width = 0
		if below != nil {
			bar.StackOn(below)
		}
		below = bar
		p.Add(bar)
		p.Legend.Add(fmt.Sprintf("%s %s ms (%s %%)", PartLabel(part.Name), stats.FormatNumber(v), fmtFloat(pct(part.Mean, s.EndToEnd.Mean), 1)), bar)
	}
	p.NominalY("mean")
	p.X.Max = math.Max(1e-3, total) * 1.6 // room for the legend on the right
	return p, nil
}

func p99Panel(s model.Summary) (*plot.Plot, error) {
	p := newPanel("p99 of each part, and of end-to-end (log scale)", "ms", "")
	labels := []string{}
	vals := []float64{}
	for _, part := range s.Breakdown.Parts {
		labels, vals = append(labels, PartLabel(part.Name)), append(vals, float64(part.P99)/1000)
	}
	labels, vals = append(labels, "end-to-end"), append(vals, float64(s.EndToEnd.P99)/1000)
	lo := math.Inf(1)
	for _, v := range vals {
		if v > 0 {
			lo = math.Min(lo, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo = 1
	}
	lo /= 2
	n := len(vals)
	for i, v := range vals {
		y := float64(n - 1 - i) // the first part on top
		if v <= 0 {
			continue // nothing to draw on a log axis: the label reads 0
		}
		line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: y}, {X: v, Y: y}})
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(8)
		p.Add(line)
	}
	ylabels := make([]string, n)
	for i, l := range labels {
		ylabels[n-1-i] = fmt.Sprintf("%s %s ms", l, stats.FormatNumber(vals[i]))
	}
	p.NominalY(ylabels...)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = latencyTicks{}
	hi := 0.0
	for _, v := range vals {
		hi = math.Max(hi, v)
	}
	p.X.Min, p.X.Max = lo, math.Max(hi*2, lo*10)
	return p, nil
}
