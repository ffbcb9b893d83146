package report

import (
	"bytes"
	"fmt"

	"popsim/model"
)

// Per-group rows of a sweep: a run with several consumer groups carries
// each group's share (model.Summary.Groups, the single-run report's
// "Consumer groups" table); a sweep shows the same per cell, over its
// seeds. A sweep whose runs have one group each has none, and its report
// and sweep.json are what they were without this.

// Groups is each consumer group's share of the cell's runs, in the order
// the runs list them (nil when no run had several groups). Counts are
// summed over the seeds; latencies are exact with one seed, otherwise the
// count-weighted mean and the worst seed's percentiles (runs carry no
// per-group histogram to merge), as EndToEnd without histograms.
func (c *SweepCell) Groups() []model.GroupSummary {
	var out []model.GroupSummary
	var e2e, svc []float64 // count-weighted mean sums, per group
	for _, r := range c.Runs {
		for _, g := range r.Groups {
			i := groupIndex(out, g.Group, g.Topic)
			if i < 0 {
				out = append(out, model.GroupSummary{Group: g.Group, Topic: g.Topic})
				e2e, svc = append(e2e, 0), append(svc, 0)
				i = len(out) - 1
			}
			o := &out[i]
			o.Produced += g.Produced
			o.Acked += g.Acked
			o.DLQ += g.DLQ
			o.Dropped += g.Dropped
			o.Lost += g.Lost
			o.Deliveries += g.Deliveries
			o.Duplicates += g.Duplicates
			e2e[i] += worstInto(&o.EndToEnd, g.EndToEnd)
			svc[i] += worstInto(&o.ServiceTime, g.ServiceTime)
		}
	}
	for i := range out {
		out[i].EndToEnd.Mean = weightedMean(e2e[i], out[i].EndToEnd.Count)
		out[i].ServiceTime.Mean = weightedMean(svc[i], out[i].ServiceTime.Count)
	}
	return out
}

func groupIndex(gs []model.GroupSummary, group, topic string) int {
	for i := range gs {
		if gs[i].Group == group && gs[i].Topic == topic {
			return i
		}
	}
	return -1
}

// worstInto adds l's count to dst and keeps the worse of each percentile;
// it returns l's mean weighted by its count.
func worstInto(dst *model.Latency, l model.Latency) float64 {
	dst.Count += l.Count
	dst.P50, dst.P90 = max(dst.P50, l.P50), max(dst.P90, l.P90)
	dst.P99, dst.P999, dst.Max = max(dst.P99, l.P99), max(dst.P999, l.P999), max(dst.Max, l.Max)
	return float64(l.Mean) * float64(l.Count)
}

func weightedMean(sum float64, n int64) int64 {
	if n == 0 {
		return 0
	}
	return int64(sum/float64(n) + 0.5)
}

// writeSweepGroups writes one row per cell and consumer group when some
// cell's runs had several groups; nothing otherwise.
func writeSweepGroups(b *bytes.Buffer, s *Sweep) {
	cells := s.Cells()
	groups := make([][]model.GroupSummary, len(cells))
	any := false
	for i, c := range cells {
		groups[i] = c.Groups()
		any = any || len(groups[i]) > 0
	}
	if !any {
		return
	}
	b.WriteString("## Consumer groups\n\n")
	b.WriteString("Each group consumes every message of its topic that it subscribes to, independently of the others: " +
		"the first table counts (group, message) pairs. Counts are summed over the seeds of each parameter set; " +
		"latencies (ms, end to end, after the warm-up) are exact with one seed, otherwise the worst seed's percentiles.\n\n")
	b.WriteString("| parameters " + groupHeader + "\n|---" + groupRule + "\n")
	for i, c := range cells {
		for _, g := range groups[i] {
			fmt.Fprintf(b, "| %s ", mdText(ParamsKey(c.Params)))
			writeGroupCells(b, g)
		}
	}
	b.WriteString("\n")
}
