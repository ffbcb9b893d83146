package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
	"popsim/stats"
)

// Condition is one clause of a plan's target: metric op value.
type Condition struct {
	Metric string  // mean p50 p90 p99 p99.9 max (end to end, µs), dup (%), throughput (acks/s)
	Op     string  // <= < >= >
	Value  float64 // µs for latency metrics, percent for dup, acks/s for throughput
	Text   string  // as written
}

// Target is every clause a plan's runs must meet (and no violation).
type Target []Condition

// latencyMetrics picks each end-to-end latency metric of a target out of
// a Latency: the one list both parsing and evaluation use.
var latencyMetrics = map[string]func(model.Latency) int64{
	"mean":  func(l model.Latency) int64 { return l.Mean },
	"p50":   func(l model.Latency) int64 { return l.P50 },
	"p90":   func(l model.Latency) int64 { return l.P90 },
	"p99":   func(l model.Latency) int64 { return l.P99 },
	"p99.9": func(l model.Latency) int64 { return l.P999 },
	"max":   func(l model.Latency) int64 { return l.Max },
}

// reportMetrics maps target metrics to the sweep chart that shows them.
var reportMetrics = map[string]report.Metric{
	"mean": report.MetricMeanEndToEndMs, "p50": report.MetricP50EndToEndMs, "p90": report.MetricP90EndToEndMs,
	"p99": report.MetricP99EndToEndMs, "p99.9": report.MetricP999EndToEndMs, "max": report.MetricMaxEndToEndMs,
	"dup": report.MetricDuplicatesPct, "throughput": report.MetricThroughput,
}

// ParseTarget parses "p99<=2s,dup<=0.1%,throughput>=900".
func ParseTarget(s string) (Target, error) {
	var out Target
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		c, err := parseCondition(part)
		if err != nil {
			return nil, fmt.Errorf("-target %q: %q: %v", s, part, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func parseCondition(part string) (Condition, error) {
	c := Condition{Text: part}
	i := strings.IndexAny(part, "<>")
	if i <= 0 {
		return c, fmt.Errorf("want metric<=value, e.g. p99<=2s, dup<=0.1%% or throughput>=900 (metrics: mean, p50, p90, p99, p99.9, max, dup, throughput)")
	}
	c.Metric = strings.TrimSpace(part[:i])
	rest := part[i:]
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if v, ok := strings.CutPrefix(rest, op); ok {
			c.Op, rest = op, strings.TrimSpace(v)
			break
		}
	}
	switch {
	case latencyMetrics[c.Metric] != nil:
		d, err := clock.ParseDuration(rest)
		if err != nil {
			return c, fmt.Errorf("want a duration such as 2s or 250ms after %s", c.Op)
		}
		c.Value = float64(d)
	case c.Metric == "dup":
		v, err := parseDupPct(rest)
		if err != nil {
			return c, err
		}
		c.Value = v
	case c.Metric == "throughput":
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || v < 0 {
			return c, fmt.Errorf("want acks per second, e.g. throughput>=900")
		}
		c.Value = v
	default:
		return c, fmt.Errorf("unknown metric %q: want mean, p50, p90, p99, p99.9, max (end-to-end latency), dup (duplicates) or throughput (acks/s)", c.Metric)
	}
	return c, nil
}

// parseDupPct reads "0.1%" or a fraction "0.001" as a percentage.
func parseDupPct(s string) (float64, error) {
	pctForm := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a share of produced messages, 0.1%% or 0.001")
	}
	if !pctForm {
		v *= 100
	}
	return v, nil
}

// Threshold is the clause as a line on its report chart.
func (c Condition) Threshold() report.Threshold {
	v := c.Value
	if latencyMetrics[c.Metric] != nil {
		v /= float64(clock.Millisecond) // µs to ms, the charts' unit
	}
	return report.Threshold{Metric: reportMetrics[c.Metric], Value: v, Label: "target " + c.Text}
}

// Clauses is the target as -target takes it: the clauses joined by ",".
func (t Target) Clauses() string {
	parts := make([]string, len(t))
	for i, c := range t {
		parts[i] = c.Text
	}
	return strings.Join(parts, ",")
}

// String is the clauses as written, joined by ", ", plus the implicit one.
func (t Target) String() string {
	var parts []string
	for _, c := range t {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, ", ") + " (and no violations)"
}

// StatsTarget is the clause as a decision target, in SeedValue's unit.
// A strict clause (<, >) is decided like its non-strict form: an interval
// never meets a threshold exactly.
func (c Condition) StatsTarget() stats.Target {
	if strings.HasPrefix(c.Op, ">") {
		return stats.Target{Goal: stats.AtLeast, Threshold: c.Value}
	}
	return stats.Target{Goal: stats.AtMost, Threshold: c.Value}
}

// SeedValue is the clause's metric for one run in the clause's unit (µs
// for latencies, % for dup, acks/s for throughput); ok is false when the
// run has none (a latency of a run that measured no latency, a duplicate
// share of a run that produced nothing).
func (c Condition) SeedValue(s model.Summary) (v float64, ok bool) {
	if pick := latencyMetrics[c.Metric]; pick != nil {
		return float64(pick(s.EndToEnd)), s.EndToEnd.Count > 0
	}
	switch c.Metric {
	case "dup":
		return 100 * float64(s.Duplicates) / float64(max(s.Produced, 1)), s.Produced > 0
	case "throughput":
		return s.ThroughputPerSec, true
	}
	panic("sweep: a parsed condition has an unknown metric " + strconv.Quote(c.Metric))
}

// Display is how the clause's values are shown: latencies in ms (scale
// 1/1000 from µs), dup in %, throughput in acks/s.
func (c Condition) Display() (unit string, scale float64) {
	switch {
	case latencyMetrics[c.Metric] != nil:
		return "ms", 1.0 / 1000
	case c.Metric == "dup":
		return "%", 1
	}
	return "acks/s", 1
}

// Space is a plan's searched parameter, name=lo..hi over integers or
// durations (then counted in Unit).
type Space struct {
	Name   string
	Lo, Hi int64          // in units
	Unit   clock.Duration // 0 for whole numbers
}

// ParseSpace parses "consumers=1..500" or "invisible=5s..300s".
func ParseSpace(s string) (Space, error) {
	name, rng, ok := strings.Cut(s, "=")
	a, b, ok2 := strings.Cut(rng, "..")
	sp := Space{Name: strings.TrimSpace(name)}
	if !ok || !ok2 || sp.Name == "" {
		return sp, fmt.Errorf("-search %q: want name=lo..hi, e.g. consumers=1..500 or invisible=5s..300s", s)
	}
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		dlo, e1 := clock.ParseDuration(a)
		dhi, e2 := clock.ParseDuration(b)
		if e1 != nil || e2 != nil {
			return sp, fmt.Errorf("-search %q: the bounds must both be whole numbers or both durations", s)
		}
		sp.Unit = commonUnit(dlo, dhi)
		lo, hi = int64(dlo/sp.Unit), int64(dhi/sp.Unit)
	}
	sp.Lo, sp.Hi = lo, hi
	if lo < 0 || hi <= lo || hi-lo > 1<<40 {
		return sp, fmt.Errorf("-search %q: want 0 <= lo < hi", s)
	}
	if _, err := scenarios.ParamOverride(sp.Name, sp.Format(lo)); err != nil {
		return sp, fmt.Errorf("-search %q: %v", s, err)
	}
	return sp, nil
}

// commonUnit is the largest of h, m, s, ms, us dividing both durations:
// the search's resolution.
func commonUnit(a, b clock.Duration) clock.Duration {
	for _, u := range []clock.Duration{clock.Hour, clock.Minute, clock.Second, clock.Millisecond} {
		if a%u == 0 && b%u == 0 {
			return u
		}
	}
	return clock.Microsecond
}

// Format renders x (in units) as the parameter's value text.
func (sp Space) Format(x int64) string {
	if sp.Unit == 0 {
		return strconv.FormatInt(x, 10)
	}
	suffix := map[clock.Duration]string{clock.Hour: "h", clock.Minute: "m", clock.Second: "s", clock.Millisecond: "ms", clock.Microsecond: "us"}[sp.Unit]
	return strconv.FormatInt(x, 10) + suffix
}

// String is "name=lo..hi".
func (sp Space) String() string { return sp.Name + "=" + sp.Format(sp.Lo) + ".." + sp.Format(sp.Hi) }

// Override is the scenario override that sets the parameter to x.
func (sp Space) Override(x int64) scenarios.Override {
	o, err := scenarios.ParamOverride(sp.Name, sp.Format(x))
	if err != nil {
		panic("sweep: a parsed search parameter no longer parses: " + err.Error())
	}
	return o
}

// Search finds the smallest x in [lo, hi] for which meets(x) is true,
// assuming that once true it stays true for larger x: it tries lo, then
// gallops up (lo+1, lo+2, lo+4, ... capped at hi) until a value meets,
// then bisects between the last miss and that value. found is false when
// hi misses; answer is then hi.
func Search(lo, hi int64, meets func(x int64) (bool, error)) (answer int64, found bool, err error) {
	ok, err := meets(lo)
	if err != nil || ok {
		return lo, ok, err
	}
	fail, step := lo, int64(1)
	for {
		x := min(lo+step, hi)
		ok, err := meets(x)
		if err != nil {
			return 0, false, err
		}
		if ok {
			return bisect(fail, x, meets)
		}
		if x == hi {
			return hi, false, nil
		}
		fail, step = x, step*2
	}
}

// bisect narrows (fail, ok] to the smallest value that meets.
func bisect(fail, ok int64, meets func(int64) (bool, error)) (int64, bool, error) {
	for ok-fail > 1 {
		mid := fail + (ok-fail)/2
		m, err := meets(mid)
		if err != nil {
			return 0, false, err
		}
		if m {
			ok = mid
		} else {
			fail = mid
		}
	}
	return ok, true, nil
}
