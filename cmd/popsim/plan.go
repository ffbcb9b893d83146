package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
)

// condition is one clause of a -target: metric op value.
type condition struct {
	metric string // mean p50 p90 p99 p99.9 max (end to end, µs), dup (%), throughput (acks/s)
	op     string // <= < >= >
	value  float64
	text   string
}

// latencyMetrics picks each end-to-end latency metric of a -target out of
// a Latency: the one list both parsing and evaluation use.
var latencyMetrics = map[string]func(model.Latency) int64{
	"mean":  func(l model.Latency) int64 { return l.Mean },
	"p50":   func(l model.Latency) int64 { return l.P50 },
	"p90":   func(l model.Latency) int64 { return l.P90 },
	"p99":   func(l model.Latency) int64 { return l.P99 },
	"p99.9": func(l model.Latency) int64 { return l.P999 },
	"max":   func(l model.Latency) int64 { return l.Max },
}

// parseTarget parses "p99<=2s,dup<=0.1%,throughput>=900".
func parseTarget(s string) ([]condition, error) {
	var out []condition
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

func parseCondition(part string) (condition, error) {
	c := condition{text: part}
	i := strings.IndexAny(part, "<>")
	if i <= 0 {
		return c, fmt.Errorf("want metric<=value, e.g. p99<=2s, dup<=0.1%% or throughput>=900 (metrics: mean, p50, p90, p99, p99.9, max, dup, throughput)")
	}
	c.metric = strings.TrimSpace(part[:i])
	rest := part[i:]
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if v, ok := strings.CutPrefix(rest, op); ok {
			c.op, rest = op, strings.TrimSpace(v)
			break
		}
	}
	switch {
	case latencyMetrics[c.metric] != nil:
		d, err := clock.ParseDuration(rest)
		if err != nil {
			return c, fmt.Errorf("want a duration such as 2s or 250ms after %s", c.op)
		}
		c.value = float64(d)
	case c.metric == "dup":
		v, err := parseDupPct(rest)
		if err != nil {
			return c, err
		}
		c.value = v
	case c.metric == "throughput":
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || v < 0 {
			return c, fmt.Errorf("want acks per second, e.g. throughput>=900")
		}
		c.value = v
	default:
		return c, fmt.Errorf("unknown metric %q: want mean, p50, p90, p99, p99.9, max (end-to-end latency), dup (duplicates) or throughput (acks/s)", c.metric)
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

func (c condition) holds(m metrics) bool {
	v := m.value(c.metric)
	switch c.op {
	case "<=":
		return v <= c.value
	case "<":
		return v < c.value
	case ">=":
		return v >= c.value
	}
	return v > c.value
}

// metrics are one evaluated value's results over its seeds.
type metrics struct {
	e2e        *hdrhistogram.Histogram
	dupPct     float64
	throughput float64
	violations int
	runs       int
}

func (m metrics) value(metric string) float64 {
	if pick := latencyMetrics[metric]; pick != nil {
		return float64(pick(report.LatencyOf(m.e2e)))
	}
	if metric == "dup" {
		return m.dupPct
	}
	return m.throughput
}

// searchSpace is -search name=lo..hi over integers or durations.
type searchSpace struct {
	name   string
	lo, hi int64          // in units
	unit   clock.Duration // 0 for integers
}

func parseSearch(s string) (searchSpace, error) {
	name, rng, ok := strings.Cut(s, "=")
	a, b, ok2 := strings.Cut(rng, "..")
	sp := searchSpace{name: strings.TrimSpace(name)}
	if !ok || !ok2 || sp.name == "" {
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
		sp.unit = commonUnit(dlo, dhi)
		lo, hi = int64(dlo/sp.unit), int64(dhi/sp.unit)
	}
	sp.lo, sp.hi = lo, hi
	if lo < 0 || hi <= lo || hi-lo > 1<<40 {
		return sp, fmt.Errorf("-search %q: want 0 <= lo < hi", s)
	}
	if _, err := scenarios.ParamOverride(sp.name, sp.format(lo)); err != nil {
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

func (sp searchSpace) format(x int64) string {
	if sp.unit == 0 {
		return strconv.FormatInt(x, 10)
	}
	suffix := map[clock.Duration]string{clock.Hour: "h", clock.Minute: "m", clock.Second: "s", clock.Millisecond: "ms", clock.Microsecond: "us"}[sp.unit]
	return strconv.FormatInt(x, 10) + suffix
}

type planner struct {
	e        *env
	src      *source
	target   []condition
	space    searchSpace
	seeds    []uint64
	parallel int
	dir      string
	sweep    *report.Sweep
	evals    map[int64]metrics
	order    []int64
	failed   bool // a run violated an invariant
}

func (e *env) cmdPlan(args []string) int {
	fs := e.newFlags("plan", "[-scenario S | -f FILE] -target 'p99<=2s,dup<=0.1%' -search consumers=1..500 [-seeds LIST] [-parallel N] [-out DIR]",
		"Answers the capacity question directly: the smallest value of the searched parameter (fewest\n"+
			"consumers, smallest invisible time, ...) whose runs meet the target on every clause, over all\n"+
			"the seeds together (latency percentiles from the seeds' merged histograms). It assumes the target,\n"+
			"once met, stays met for larger values, gallops up from lo and then bisects. Runs that break an\n"+
			"invariant never meet a target. Prints the evidence table and writes a sweep folder with charts.")
	var src source
	src.register(fs)
	target := fs.String("target", "", "the `TARGET`: comma-separated metric<=value clauses; metrics mean, p50, p90, p99, p99.9, max (end to end), dup, throughput")
	search := fs.String("search", "", "the searched parameter `name=lo..hi` (a sweep parameter name or -set key)")
	seedList := fs.String("seeds", "", "seeds `LIST` per evaluated value (default: the scenario's seeds)")
	parallel := fs.Int("parallel", 0, "runs at a time, `N` >= 1 (default GOMAXPROCS)")
	out := fs.String("out", "", "output `DIR` (default out/<scenario>-plan)")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	p, code := e.preparePlan(&src, *target, *search, *seedList, *parallel, *out)
	if p == nil {
		return code
	}
	return p.run()
}

func (e *env) preparePlan(src *source, target, search, seedList string, parallel int, out string) (*planner, int) {
	if target == "" || search == "" {
		return nil, e.badInput("plan: -target and -search are required, e.g. -target 'p99<=2s,dup<=0.1%%' -search consumers=1..500")
	}
	conds, err := parseTarget(target)
	if err != nil {
		return nil, e.badInput("plan: %v", err)
	}
	space, err := parseSearch(search)
	if err != nil {
		return nil, e.badInput("plan: %v", err)
	}
	if parallel == 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	if err := checkParallel(parallel); err != nil {
		return nil, e.badInput("plan: %v", err)
	}
	base, err := src.load()
	if err != nil {
		return nil, e.badInput("%v", err)
	}
	seeds, err := seedsOf(base, seedList)
	if err != nil {
		return nil, e.badInput("plan: %v", err)
	}
	for _, x := range []int64{space.lo, space.hi} {
		o, _ := scenarios.ParamOverride(space.name, space.format(x))
		if _, err := src.load(o); err != nil {
			return nil, e.badInput("plan: %s=%s: %v", space.name, space.format(x), err)
		}
	}
	if out == "" {
		out = filepath.Join("out", base.Name+"-plan")
	}
	p := &planner{e: e, src: src, target: conds, space: space, seeds: seeds, parallel: parallel, dir: out,
		sweep: report.NewSweep(base.Name, space.name, ""), evals: map[int64]metrics{}}
	return p, 0
}

// run gallops up from lo until the target is met, then bisects.
func (p *planner) run() int {
	e := p.e
	fmt.Fprintf(e.stdout, "popsim plan: smallest %s in %s..%s meeting %s, %d seeds per value\n",
		p.space.name, p.space.format(p.space.lo), p.space.format(p.space.hi), p.targetText(), len(p.seeds))
	answer, found, err := p.search()
	if err != nil {
		return e.badInput("plan: %v", err)
	}
	p.printEvidence(answer, found)
	if err := p.write(answer, found); err != nil {
		return e.badInput("plan: %v", err)
	}
	switch {
	case p.failed:
		fmt.Fprintln(e.stdout, "FAIL: some runs broke an invariant (see the failing seeds above)")
		return exitViolation
	case !found:
		fmt.Fprintf(e.stdout, "no %s up to %s meets the target\n", p.space.name, p.space.format(p.space.hi))
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "answer: %s=%s\n", p.space.name, p.space.format(answer))
	return exitOK
}

func (p *planner) search() (int64, bool, error) {
	lo, hi := p.space.lo, p.space.hi
	ok, err := p.meets(lo)
	if err != nil || ok {
		return lo, ok, err
	}
	fail, step := lo, int64(1)
	for {
		x := min(lo+step, hi)
		ok, err := p.meets(x)
		if err != nil {
			return 0, false, err
		}
		if ok {
			return p.bisect(fail, x)
		}
		if x == hi {
			return hi, false, nil
		}
		fail, step = x, step*2
	}
}

// bisect narrows (fail, ok] to the smallest value that meets the target.
func (p *planner) bisect(fail, ok int64) (int64, bool, error) {
	for ok-fail > 1 {
		mid := fail + (ok-fail)/2
		m, err := p.meets(mid)
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

// meets runs every seed at x and checks the target.
func (p *planner) meets(x int64) (bool, error) {
	m, err := p.evaluate(x)
	if err != nil {
		return false, err
	}
	ok := m.violations == 0
	for _, c := range p.target {
		ok = ok && c.holds(m)
	}
	fmt.Fprintf(p.e.stdout, "  %s=%-10s p99 %9.2f ms  dup %7.3f%%  %9.1f acks/s  violations %d  %s\n", p.space.name, p.space.format(x),
		float64(report.LatencyOf(m.e2e).P99)/1000, m.dupPct, m.throughput, m.violations, verdictWord(ok))
	return ok, nil
}

func verdictWord(ok bool) string {
	if ok {
		return "meets"
	}
	return "misses"
}

func (p *planner) evaluate(x int64) (metrics, error) {
	val := p.space.format(x)
	o, _ := scenarios.ParamOverride(p.space.name, val)
	s, err := p.src.load(o)
	if err != nil {
		return metrics{}, fmt.Errorf("%s=%s: %v", p.space.name, val, err)
	}
	point := scenarios.Point{p.space.name: val}
	results := make([]jobResult, len(p.seeds))
	forEach(len(p.seeds), p.parallel, func(i int) {
		seed := p.seeds[i]
		out, err := runSeed(p.src, s, seed, point, o)
		results[i] = jobResult{j: job{seed: seed}, o: out, err: err}
	})
	return p.collect(x, point, results)
}

func (p *planner) collect(x int64, point scenarios.Point, results []jobResult) (metrics, error) {
	m := metrics{e2e: report.NewLatencyHistogram(), runs: len(results)}
	var dup, produced int64
	for _, r := range results {
		if r.err != nil {
			return m, r.err
		}
		s := r.o.sum
		if h := r.o.hists[report.HistEndToEnd]; h != nil {
			if err := report.Merge(m.e2e, h); err != nil {
				return m, err
			}
		}
		dup, produced = dup+s.Duplicates, produced+s.Produced
		m.throughput += s.ThroughputPerSec / float64(len(results))
		m.violations += len(s.Violations)
		if len(s.Violations) > 0 {
			p.failed = true
			fmt.Fprintf(p.e.stdout, "  FAIL seed %d %s: %s: %s\n    replay: %s\n", s.Seed, pointLabel(point), s.Violations[0].Invariant, s.Violations[0].Detail, s.Violations[0].Replay)
		}
		dir := filepath.Join(p.dir, RunsDir, runFolder(0, point, s.Seed))
		if err := report.WriteRun(dir, s, r.o.hists); err != nil {
			return m, err
		}
		if err := p.sweep.Add(report.SweepPoint{Summary: s, Hists: r.o.hists}); err != nil {
			return m, err
		}
	}
	if produced > 0 {
		m.dupPct = 100 * float64(dup) / float64(produced)
	}
	p.evals[x] = m
	p.order = append(p.order, x)
	return m, nil
}

func (p *planner) targetText() string {
	var parts []string
	for _, c := range p.target {
		parts = append(parts, c.text)
	}
	return strings.Join(parts, ", ") + " (and no violations)"
}

// printEvidence prints every evaluated value in increasing order.
func (p *planner) printEvidence(answer int64, found bool) {
	w := p.e.stdout
	fmt.Fprintf(w, "\nevidence (%d seeds per value; latency in ms from the merged end-to-end histogram):\n", len(p.seeds))
	fmt.Fprintf(w, "%12s %9s %9s %9s %9s %9s %12s %5s  %s\n", p.space.name, "mean", "p50", "p99", "p99.9", "dup %", "acks/s", "viol", "target")
	xs := append([]int64(nil), p.order...)
	slices.Sort(xs)
	for _, x := range xs {
		m := p.evals[x]
		l := report.LatencyOf(m.e2e)
		ok := m.violations == 0
		for _, c := range p.target {
			ok = ok && c.holds(m)
		}
		mark := ""
		if found && x == answer {
			mark = "  <- answer"
		}
		fmt.Fprintf(w, "%12s %9.2f %9.2f %9.2f %9.2f %9.3f %12.1f %5d  %s%s\n", p.space.format(x),
			float64(l.Mean)/1000, float64(l.P50)/1000, float64(l.P99)/1000, float64(l.P999)/1000, m.dupPct, m.throughput, m.violations, verdictWord(ok), mark)
	}
}

// write saves the plan folder: the runs, a sweep report with charts of
// each metric against the searched parameter, and plan.json.
func (p *planner) write(answer int64, found bool) error {
	plan := sweepPlan{Scenario: p.sweep.Name, Source: p.src.args(), Seeds: p.seeds, Jobs: len(p.order) * len(p.seeds), Shards: 1, X: p.space.name}
	for _, x := range p.order {
		plan.Params = append(plan.Params, scenarios.Param{Name: p.space.name, Values: []string{p.space.format(x)}})
	}
	plan.Params = mergeValues(plan.Params)
	if err := writeJSON(filepath.Join(p.dir, PlanFile), plan); err != nil {
		return err
	}
	result := struct {
		Target string `json:"target"`
		Search string `json:"search"`
		Found  bool   `json:"found"`
		Answer string `json:"answer,omitempty"`
	}{Target: p.targetText(), Search: p.space.name + "=" + p.space.format(p.space.lo) + ".." + p.space.format(p.space.hi), Found: found}
	if found {
		result.Answer = p.space.format(answer)
	}
	if err := writeJSON(filepath.Join(p.dir, "plan.json"), result); err != nil {
		return err
	}
	if err := report.WriteSweep(p.dir, p.sweep); err != nil {
		return err
	}
	fmt.Fprintf(p.e.stdout, "report and charts: %s\n", filepath.Join(p.dir, report.ReportFile))
	return nil
}

// mergeValues folds parameters of the same name into one value list.
func mergeValues(ps []scenarios.Param) []scenarios.Param {
	if len(ps) == 0 {
		return nil
	}
	out := scenarios.Param{Name: ps[0].Name}
	for _, p := range ps {
		out.Values = append(out.Values, p.Values...)
	}
	return []scenarios.Param{out}
}
