package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"popsim/model"
	"popsim/stats"
)

// DefaultLevel is the confidence level of a sweep's intervals when the
// Sweep does not name one.
const DefaultLevel = 0.95

// CheckLevel returns an error unless level is a usable confidence level
// (0 < level < 1), for the commands' -level flags.
func CheckLevel(level float64) error {
	if !(level > 0 && level < 1) {
		return fmt.Errorf("-level %g out of range: want a confidence level between 0 and 1, e.g. 0.95", level)
	}
	return nil
}

// Interval converts a stats.Interval into the results' model.Interval.
func Interval(iv stats.Interval) model.Interval {
	return model.Interval{Est: iv.Est, Lo: iv.Lo, Hi: iv.Hi, Level: iv.Level, N: iv.N,
		Method: string(iv.Method), OK: iv.OK, Note: iv.Note}
}

// scaled multiplies an interval's numbers by f (a fraction into percent).
func scaled(iv model.Interval, f float64) model.Interval {
	iv.Est, iv.Lo, iv.Hi = iv.Est*f, iv.Lo*f, iv.Hi*f
	return iv
}

// ConfidenceLevel is the level of the sweep's intervals: Level, or DefaultLevel.
func (s *Sweep) ConfidenceLevel() float64 {
	if s.Level == 0 {
		return DefaultLevel
	}
	return s.Level
}

// Stats are the cell's metrics across its seeds, each with a confidence
// interval at level (see model.PointStats). They come from the runs'
// summaries alone, one value per seed (independent replications), so a
// merge of shard folders gives exactly what one machine gives. Runs that
// measured no end-to-end latency (runs that did not finish) are left out
// and listed as Excluded.
func (c *SweepCell) Stats(level float64) model.PointStats { return StatsOf(c.Runs, level) }

// StatsOf is SweepCell.Stats for runs of one parameter point, in any
// order (they are taken by increasing seed).
func StatsOf(runs []model.Summary, level float64) model.PointStats {
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b model.Summary) int { return cmp.Compare(a.Seed, b.Seed) })
	ps := model.PointStats{Level: level, Seeds: []uint64{}}
	var mean, p50, p90, p99, p999, dupPct, dups, produced, tput []float64
	for _, r := range runs {
		l := r.EndToEnd
		if l.Count == 0 {
			ps.Excluded = append(ps.Excluded, r.Seed)
			continue
		}
		ps.Seeds = append(ps.Seeds, r.Seed)
		mean, p50, p90 = append(mean, float64(l.Mean)), append(p50, float64(l.P50)), append(p90, float64(l.P90))
		p99, p999 = append(p99, float64(l.P99)), append(p999, float64(l.P999))
		ps.Max = max(ps.Max, l.Max)
		dups, produced = append(dups, float64(r.Duplicates)), append(produced, float64(r.Produced))
		dupPct = append(dupPct, pct(r.Duplicates, r.Produced))
		tput = append(tput, r.ThroughputPerSec)
	}
	perSeed := func(xs []float64) model.SeedMetric {
		return model.SeedMetric{Interval: Interval(stats.MeanCI(xs, level)), PerSeed: nonNil(xs)}
	}
	ps.Mean, ps.P50, ps.P90, ps.P99, ps.P999 = perSeed(mean), perSeed(p50), perSeed(p90), perSeed(p99), perSeed(p999)
	ps.ThroughputPerSec = perSeed(tput)
	ps.DuplicatesPct = model.SeedMetric{Interval: scaled(Interval(stats.RatioCI(dups, produced, level)), 100), PerSeed: nonNil(dupPct)}
	return ps
}

func nonNil(xs []float64) []float64 {
	if xs == nil {
		return []float64{}
	}
	return xs
}

// FormatInterval renders an interval for a table cell: "60.21 [58.10,
// 62.32]" with num formatting each number, or, without an interval,
// "60.21 (1 seed: no interval)" or "60.21 (no interval: <why>)". A metric
// with no data at all is "-".
func FormatInterval(iv model.Interval, num func(float64) string) string {
	switch {
	case iv.OK:
		return num(iv.Est) + " [" + num(iv.Lo) + ", " + num(iv.Hi) + "]"
	case iv.N == 0:
		return "-"
	case iv.N < 2:
		return num(iv.Est) + " (" + plural(iv.N, "seed") + ": no interval)"
	}
	return num(iv.Est) + " (no interval: " + iv.Note + ")"
}

// levelText is FormatLevel rounded for people: "95 %", "99.29 %".
func levelText(level float64) string {
	return strconv.FormatFloat(level*100, 'g', 4, 64) + " %"
}

// plural renders "1 seed", "3 seeds".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// seedCounts is "10 seeds" when every cell has n seeds behind its
// intervals, else "3 to 10 seeds".
func seedCounts(cells []*SweepCell, level float64) string {
	var ns []int
	for _, c := range cells {
		ns = append(ns, len(c.Stats(level).Seeds))
	}
	if len(ns) == 0 {
		return "no seeds"
	}
	lo, hi := slices.Min(ns), slices.Max(ns)
	if lo == hi {
		return plural(lo, "seed") + " per row"
	}
	return fmt.Sprintf("%d to %d seeds per row", lo, hi)
}

// IntervalsLine says what a sweep's intervals are: their level, the
// number of seeds behind them and the method of each kind of metric, e.g.
// "Intervals: 95 % confidence over 10 seeds per row; latency (mean and
// percentiles: the mean of the seeds' own values) by t over replications,
// duplicates % by ratio over replications (Σ duplicates / Σ produced),
// throughput by t over replications. A row with fewer than 2 seeds has no
// interval."
func (s *Sweep) IntervalsLine() string {
	lv := s.ConfidenceLevel()
	cells := s.Cells()
	return fmt.Sprintf("Intervals: %s confidence over %s; latency (mean and percentiles: the mean of the seeds' own values) by %s, "+
		"duplicates %% by %s (Σ duplicates / Σ produced), throughput by %s. A row with fewer than 2 seeds has no interval.",
		levelText(lv), seedCounts(cells, lv), stats.Replications, stats.RatioReplications, stats.Replications)
}

// PlanEvidence is one value a capacity plan tried and its decision: the
// verdict on every condition of the target, each with the interval it
// rests on.
type PlanEvidence struct {
	Value      string              `json:"value"`
	Seeds      int                 `json:"seeds"`   // runs at this value
	Verdict    string              `json:"verdict"` // met, not met or undecided
	Violations int                 `json:"violations"`
	Conditions []ConditionEvidence `json:"conditions"`
}

// ConditionEvidence is the decision on one condition of a plan's target
// at one value.
type ConditionEvidence struct {
	Condition string         `json:"condition"` // as written, e.g. p99<=55ms
	Verdict   string         `json:"verdict"`
	Unit      string         `json:"unit"`     // of the interval: ms, %, acks/s
	Interval  model.Interval `json:"interval"` // t interval over the per-seed values, at the per-look level
}
