package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
)

// ParamConsumerKind is the parameter name under which a run's
// Summary.ConsumerKind joins its parameters, so sweeps can group by it.
const ParamConsumerKind = "consumer_kind"

// SweepPoint is one run of a sweep: its parameters, its summary and its
// histograms. Params, when non-nil, replaces Summary.Params.
type SweepPoint struct {
	Params  map[string]string
	Summary model.Summary
	Hists   map[string]*hdrhistogram.Histogram
}

// Sweep aggregates runs by parameter set: every run with the same
// parameters (and any seed) joins one SweepCell, whose histograms are the
// exact merge of its runs' histograms.
type Sweep struct {
	Name  string // title of the sweep
	X     string // the swept numeric parameter: x axis of the sweep charts
	Group string // parameter whose values label the chart lines; "" for one line

	// A capacity plan's sweep: the question it answers and its answer,
	// which lead its report, and its target clauses, drawn on the charts.
	Question, Answer string
	Thresholds       []Threshold

	// Missing lists runs the sweep should have and does not (an
	// interrupted sweep): the report says it is incomplete and names them.
	Missing []string

	// Level is the confidence level of every interval in the report
	// (SweepCell.Stats); 0 means DefaultLevel.
	Level float64

	// Evidence is a plan's decision at each value it tried, shown in its
	// report (nil for a sweep).
	Evidence []PlanEvidence

	cells map[string]*SweepCell
}

// SweepCell is one parameter set of a sweep, aggregated across seeds.
type SweepCell struct {
	Params   map[string]string
	Runs     []model.Summary                    // sorted by seed
	Hists    map[string]*hdrhistogram.Histogram // merged over the runs that had each name
	histRuns map[string]int                     // how many runs contributed to each histogram
}

// NewSweep returns an empty sweep; x and group name parameters (see Sweep).
func NewSweep(name, x, group string) *Sweep {
	return &Sweep{Name: name, X: x, Group: group, cells: make(map[string]*SweepCell)}
}

// pointParams is the parameter set of a point: p.Params or
// Summary.Params, plus consumer_kind from the summary when absent.
func pointParams(p SweepPoint) map[string]string {
	src := p.Params
	if src == nil {
		src = p.Summary.Params
	}
	params := make(map[string]string, len(src)+1)
	for k, v := range src {
		params[k] = v
	}
	if _, ok := params[ParamConsumerKind]; !ok && p.Summary.ConsumerKind != "" {
		params[ParamConsumerKind] = p.Summary.ConsumerKind
	}
	return params
}

// ParamsKey is the canonical text of a parameter set: "k=v" pairs sorted by
// key, joined by ", "; "(none)" for an empty set.
func ParamsKey(params map[string]string) string {
	if len(params) == 0 {
		return "(none)"
	}
	keys := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + params[k]
	}
	return strings.Join(parts, ", ")
}

// Add puts one run into its cell, merging its histograms. Adding the same
// parameter set and seed twice is an error (it would count the run twice),
// and so are invalid histogram names and histograms of another layout.
func (s *Sweep) Add(p SweepPoint) error {
	params := pointParams(p)
	key := ParamsKey(params)
	c := s.cells[key]
	if c == nil {
		c = &SweepCell{Params: params, Hists: make(map[string]*hdrhistogram.Histogram), histRuns: make(map[string]int)}
	}
	i := sort.Search(len(c.Runs), func(i int) bool { return c.Runs[i].Seed >= p.Summary.Seed })
	if i < len(c.Runs) && c.Runs[i].Seed == p.Summary.Seed {
		return fmt.Errorf("report: sweep %q: seed %d with parameters %s added twice", s.Name, p.Summary.Seed, key)
	}
	merged := make(map[string]*hdrhistogram.Histogram, len(p.Hists))
	for _, name := range sortedHistNames(p.Hists) {
		if err := ValidHistName(name); err != nil {
			return err
		}
		dst := copyHist(c.Hists[name])
		if err := Merge(dst, p.Hists[name]); err != nil {
			return fmt.Errorf("report: sweep %q: seed %d histogram %q: %w", s.Name, p.Summary.Seed, name, err)
		}
		merged[name] = dst
	}
	for name, h := range merged { // all merges succeeded: commit
		c.Hists[name] = h
		c.histRuns[name]++
	}
	c.Runs = append(c.Runs, model.Summary{})
	copy(c.Runs[i+1:], c.Runs[i:])
	c.Runs[i] = p.Summary
	s.cells[key] = c
	return nil
}

// copyHist returns an empty latency histogram for nil, else a copy of h.
func copyHist(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if h == nil {
		return NewLatencyHistogram()
	}
	return hdrhistogram.Import(h.Export())
}

// Cells returns the sweep's cells ordered by group value, then by the
// numeric value of X (cells where X is not numeric last), then by ParamsKey.
func (s *Sweep) Cells() []*SweepCell {
	cells := make([]*SweepCell, 0, len(s.cells))
	for _, c := range s.cells {
		cells = append(cells, c)
	}
	sort.Slice(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if ga, gb := a.Params[s.Group], b.Params[s.Group]; ga != gb {
			return ga < gb
		}
		xa, ea := ParamValue(a.Params[s.X])
		xb, eb := ParamValue(b.Params[s.X])
		if (ea == nil) != (eb == nil) {
			return ea == nil
		}
		if ea == nil && xa != xb {
			return xa < xb
		}
		return ParamsKey(a.Params) < ParamsKey(b.Params)
	})
	return cells
}

// ParamValue reads a parameter value as a number: a plain number as is, a
// duration ("250ms", "30s", see clock.ParseDuration) in milliseconds.
func ParamValue(v string) (float64, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, nil
	}
	d, err := clock.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("report: parameter value %q is neither a number nor a duration", v)
	}
	return float64(d) / float64(clock.Millisecond), nil
}

// Seeds returns the cell's seeds in increasing order.
func (c *SweepCell) Seeds() []uint64 {
	seeds := make([]uint64, len(c.Runs))
	for i, r := range c.Runs {
		seeds[i] = r.Seed
	}
	return seeds
}

// Failing returns the runs of the cell that reported violations, by seed.
func (c *SweepCell) Failing() []model.Summary {
	var out []model.Summary
	for _, r := range c.Runs {
		if len(r.Violations) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Violations is the total number of violations over the cell's runs.
func (c *SweepCell) Violations() int {
	n := 0
	for _, r := range c.Runs {
		n += len(r.Violations)
	}
	return n
}

// EndToEnd is the cell's end-to-end latency. It is exact (from the merged
// histogram) when every run supplied an end_to_end histogram; otherwise it
// is the element-wise worst over the runs' summaries and exact is false
// (the mean is then the count-weighted mean, which is exact).
func (c *SweepCell) EndToEnd() (lat model.Latency, exact bool) {
	if h := c.Hists[HistEndToEnd]; h != nil && c.histRuns[HistEndToEnd] == len(c.Runs) {
		return LatencyOf(h), true
	}
	var weighted float64
	for _, r := range c.Runs {
		weighted += worstInto(&lat, r.EndToEnd)
	}
	lat.Mean = weightedMean(weighted, lat.Count)
	return lat, len(c.Runs) == 1
}

// hasCrashRedelivery: some run measured the time from a crash to the next
// delivery of the messages its consumer held.
func (s *Sweep) hasCrashRedelivery() bool {
	return s.anyRun(func(r *model.Summary) bool { return r.RedeliverAfterCrash != nil })
}

// hasLimitsHit: some run ran into one of its engine's documented caps.
func (s *Sweep) hasLimitsHit() bool {
	return s.anyRun(func(r *model.Summary) bool { return len(r.LimitsHit) > 0 })
}

func (s *Sweep) anyRun(f func(*model.Summary) bool) bool {
	for _, c := range s.cells {
		for i := range c.Runs {
			if f(&c.Runs[i]) {
				return true
			}
		}
	}
	return false
}

// CrashRedelivery is the crash-to-redelivery p50 and p99 over the cell's
// runs that measured it, in ms: each seed's own value, as a range over the
// seeds ("p50 60000–60012 / p99 …"), a single value with one seed, "—"
// when no run had a crash followed by a redelivery.
func (c *SweepCell) CrashRedelivery() string {
	var p50, p99 []int64
	for _, r := range c.Runs {
		if l := r.RedeliverAfterCrash; l != nil && l.Count > 0 {
			p50, p99 = append(p50, l.P50), append(p99, l.P99)
		}
	}
	if len(p50) == 0 {
		return "—"
	}
	span := func(v []int64) string {
		lo, hi := slices.Min(v), slices.Max(v)
		if lo == hi {
			return usMs(float64(lo))
		}
		return usMs(float64(lo)) + "–" + usMs(float64(hi))
	}
	out := span(p50) + " / " + span(p99)
	if len(p50) < len(c.Runs) {
		out += fmt.Sprintf(" (%d of %d seeds)", len(p50), len(c.Runs))
	}
	return out
}

// LimitsHit lists the engine caps the cell's runs hit, in markdown: each
// limit with its value, how many of the seeds hit it and how many times in
// all ("none" when no run did), sorted by engine and limit.
func (c *SweepCell) LimitsHit() string {
	type agg struct {
		l            model.LimitHit
		seeds, times int64
	}
	var all []agg
	for _, r := range c.Runs {
		for _, l := range r.LimitsHit {
			i := slices.IndexFunc(all, func(a agg) bool { return a.l.Engine == l.Engine && a.l.Limit == l.Limit && a.l.Value == l.Value })
			if i < 0 {
				all = append(all, agg{l: l})
				i = len(all) - 1
			}
			all[i].seeds++
			all[i].times += l.Count
		}
	}
	if len(all) == 0 {
		return "none"
	}
	slices.SortFunc(all, func(a, b agg) int {
		return cmp.Or(strings.Compare(a.l.Engine, b.l.Engine), strings.Compare(a.l.Limit, b.l.Limit), cmp.Compare(a.l.Value, b.l.Value))
	})
	parts := make([]string, len(all))
	for i, a := range all {
		parts[i] = fmt.Sprintf("%s %d: %d of %d seeds, %d times", mdCode(a.l.Limit), a.l.Value, a.seeds, len(c.Runs), a.times)
	}
	return strings.Join(parts, "; ")
}

// DuplicatesPct is duplicate deliveries per produced message, in percent,
// over all the cell's runs (0 when nothing was produced).
func (c *SweepCell) DuplicatesPct() float64 {
	var dup, produced int64
	for _, r := range c.Runs {
		dup += r.Duplicates
		produced += r.Produced
	}
	return pct(dup, produced)
}

// Throughput is the mean over the cell's runs of acks per virtual second.
func (c *SweepCell) Throughput() float64 {
	if len(c.Runs) == 0 {
		return 0
	}
	var sum float64
	for _, r := range c.Runs {
		sum += r.ThroughputPerSec
	}
	return sum / float64(len(c.Runs))
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// SweepTotals counts a sweep's runs.
type SweepTotals struct {
	Cells  int `json:"cells"`  // distinct parameter sets
	Runs   int `json:"runs"`   // (parameter set, seed) runs
	Passed int `json:"passed"` // runs without violations
	Failed int `json:"failed"` // runs with at least one violation
}

// Swept lists each parameter that takes more than one value across the
// cells, as "name (v1, v2, ...)" with values in cell order, by name.
func (s *Sweep) Swept() []string {
	values := map[string][]string{}
	for _, c := range s.Cells() {
		for k, v := range c.Params {
			if !slices.Contains(values[k], v) {
				values[k] = append(values[k], v)
			}
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if vs := values[k]; len(vs) > 1 {
			out = append(out, k+" ("+strings.Join(vs, ", ")+")")
		}
	}
	return out
}

// Totals counts the sweep's cells and runs, and how many runs passed (no
// violations) and failed.
func (s *Sweep) Totals() SweepTotals {
	var t SweepTotals
	for _, c := range s.cells {
		t.Cells++
		t.Runs += len(c.Runs)
		f := len(c.Failing())
		t.Failed += f
		t.Passed += len(c.Runs) - f
	}
	return t
}
