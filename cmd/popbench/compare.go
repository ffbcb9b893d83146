package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// threshold is how much worse a metric may get before compare fails.
type threshold struct {
	relative bool    // limit is a fraction of the old median
	limit    float64 // >= 0
}

// thresholds is the repeatable -threshold METRIC=LIMIT flag.
type thresholds map[string]threshold

func (t thresholds) String() string {
	keys := slices.Sorted(maps.Keys(t))
	var parts []string
	for _, k := range keys {
		v := t[k]
		if v.relative {
			parts = append(parts, fmt.Sprintf("%s=%g%%", k, v.limit*100))
		} else {
			parts = append(parts, fmt.Sprintf("%s=%g", k, v.limit))
		}
	}
	return strings.Join(parts, ",")
}

func (t thresholds) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		return fmt.Errorf("%q: want METRIC=LIMIT such as ns/msg=10%% or allocs/msg=0", s)
	}
	th := threshold{}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		th.relative, v = true, p
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return fmt.Errorf("%q: limit %q is not a non-negative number (N%% relative, N absolute)", s, v)
	}
	if th.relative {
		x /= 100
	}
	th.limit = x
	t[k] = th
	return nil
}

// defaultThresholds gate when no -threshold is given.
func defaultThresholds() thresholds {
	return thresholds{"ns/msg": {relative: true, limit: 0.10}, "allocs/msg": {limit: 0}}
}

type compareConfig struct {
	old, new string
	th       thresholds
	explicit bool // -threshold was given: every metric it names must exist
	alpha    float64
}

func parseCompareFlags(args []string, stderr io.Writer) (compareConfig, error) {
	fs := flag.NewFlagSet("popbench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := compareConfig{th: thresholds{}}
	fs.Var(c.th, "threshold", "METRIC=LIMIT: fail when METRIC gets significantly worse by more than LIMIT (N% or absolute); repeatable")
	fs.Float64Var(&c.alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() != 2 {
		return c, usageErr("compare needs two files, OLD and NEW; got %d argument(s)", fs.NArg())
	}
	if c.alpha <= 0 || c.alpha >= 1 {
		return c, usageErr("-alpha %g: want a level in (0, 1)", c.alpha)
	}
	c.explicit = len(c.th) > 0
	if !c.explicit {
		c.th = defaultThresholds()
	}
	c.old, c.new = fs.Arg(0), fs.Arg(1)
	return c, nil
}

// row is one metric of one benchmark compared.
type row struct {
	name, unit string
	old, new   summary
	p          float64
	delta      float64 // relative change of the median, new/old - 1
	verdict    string  // "", "~", "better", "worse", "REGRESSION"
}

// higherIsBetter: throughput units (…/s, and the simulator's
// virtual-s/wall-s) improve upwards, the rest down.
func higherIsBetter(unit string) bool {
	return strings.HasSuffix(unit, "/s") || strings.HasSuffix(unit, "/wall-s")
}

// compareSamples compares every metric the two sides share.
func compareSamples(old, new samples, th thresholds, alpha float64) (rows []row, onlyOld, onlyNew []string) {
	for _, name := range old.names() {
		nm, ok := new[name]
		if !ok {
			onlyOld = append(onlyOld, name)
			continue
		}
		units := make([]string, 0, len(old[name]))
		for u := range old[name] {
			if _, ok := nm[u]; ok {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			rows = append(rows, compareMetric(name, u, old[name][u], nm[u], th, alpha))
		}
	}
	for _, name := range new.names() {
		if _, ok := old[name]; !ok {
			onlyNew = append(onlyNew, name)
		}
	}
	return rows, onlyOld, onlyNew
}

func compareMetric(name, unit string, a, b []float64, th thresholds, alpha float64) row {
	r := row{name: name, unit: unit, old: summarize(a, 0.95), new: summarize(b, 0.95), p: mannWhitney(a, b)}
	if r.old.Center != 0 {
		r.delta = r.new.Center/r.old.Center - 1
	}
	if r.p >= alpha || r.new.Center == r.old.Center || isAllocUnit(unit) && math.Abs(r.new.Center-r.old.Center) < allocNoise {
		r.verdict = "~"
		return r
	}
	worse := r.new.Center > r.old.Center
	if higherIsBetter(unit) {
		worse = !worse
	}
	r.verdict = "better"
	if worse {
		r.verdict = "worse"
		if t, ok := th[unit]; ok && beyond(unit, r.old.Center, r.new.Center, t) {
			r.verdict = "REGRESSION"
		}
	}
	return r
}

// resolution is the smallest relative change compare acts on. Per-message
// figures move by a few parts in ten thousand with the iteration count
// (amortized growth divided by a different N), which is not a change.
const resolution = 0.005

// allocNoise is the smallest change in an allocation count per unit
// (allocs/msg, allocs/op, ...) that compare acts on. An allocation made
// once per benchmark run, or per growth of b.N, is amortised over 10^5 or
// more iterations and shows up as 1e-7..1e-3 allocations per message:
// the floor's allocs/msg reads 0 in one run and 1e-7 in the next. A real
// change is at least one allocation per operation — 1/32 = 0.031 per
// message for a 32-message batch — so anything under 0.01 is noise.
const allocNoise = 0.01

func isAllocUnit(unit string) bool { return strings.HasPrefix(unit, "allocs/") }

// beyond reports whether the change from old to new in unit exceeds the
// limit, the resolution and, for allocations, allocNoise.
func beyond(unit string, old, new float64, t threshold) bool {
	d := math.Abs(new - old)
	if old != 0 && d/math.Abs(old) < resolution || isAllocUnit(unit) && d < allocNoise {
		return false
	}
	if t.relative {
		if old == 0 {
			return d > 0
		}
		return d/math.Abs(old) > t.limit
	}
	return d > t.limit
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseCompareFlags(args, stderr)
	if err != nil {
		return flagExit(err, stderr)
	}
	load := func(path string) (samples, error) {
		runs, err := readRuns(path)
		if err != nil {
			return nil, err
		}
		s := samples{}
		for _, r := range runs {
			s.add(r)
		}
		return s, nil
	}
	old, err := load(cfg.old)
	if err != nil {
		fmt.Fprintf(stderr, "popbench compare: %v\n", err)
		return 2
	}
	new, err := load(cfg.new)
	if err != nil {
		fmt.Fprintf(stderr, "popbench compare: %v\n", err)
		return 2
	}
	rows, onlyOld, onlyNew := compareSamples(old, new, cfg.th, cfg.alpha)
	if cfg.explicit {
		if err := checkThresholdMetrics(cfg.th, rows); err != nil {
			fmt.Fprintf(stderr, "popbench compare: %v\n", err)
			return 2
		}
	}
	return printComparison(stdout, cfg, rows, onlyOld, onlyNew)
}

// checkThresholdMetrics refuses a -threshold on a metric that no
// benchmark of both files reports: it would check nothing.
func checkThresholdMetrics(th thresholds, rows []row) error {
	have := map[string]bool{}
	for _, r := range rows {
		have[r.unit] = true
	}
	for _, m := range slices.Sorted(maps.Keys(th)) {
		if !have[m] {
			return fmt.Errorf("-threshold %s: no benchmark in both files reports %q, so it would check nothing; metrics in both: %s",
				m, m, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
	}
	return nil
}

func printComparison(w io.Writer, cfg compareConfig, rows []row, onlyOld, onlyNew []string) int {
	fmt.Fprintf(w, "old: %s\nnew: %s\ngates: %s (Mann-Whitney U, alpha %g)\n\n", cfg.old, cfg.new, cfg.th, cfg.alpha)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tmetric\told median\t95% CI\tnew median\t95% CI\tdelta\tp\tn\tverdict")
	regressions := 0
	for _, r := range rows {
		if r.verdict == "REGRESSION" {
			regressions++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%.3f\t%d+%d\t%s\n", r.name, r.unit, num(r.old.Center), ciText(r.old),
			num(r.new.Center), ciText(r.new), 100*r.delta, r.p, r.old.N, r.new.N, r.verdict)
	}
	tw.Flush()
	for _, n := range onlyOld {
		fmt.Fprintf(w, "only in old: %s\n", n)
	}
	for _, n := range onlyNew {
		fmt.Fprintf(w, "only in new: %s\n", n)
	}
	if len(rows) > 0 && minN(rows) < 4 {
		fmt.Fprintf(w, "note: with fewer than 4 runs on a side no difference can be significant at alpha 0.05\n")
	}
	if regressions > 0 {
		fmt.Fprintf(w, "\nFAIL: %d significant regression(s) beyond their threshold\n", regressions)
		return 1
	}
	fmt.Fprintf(w, "\nok: no significant regression beyond a threshold\n")
	return 0
}

func minN(rows []row) int {
	m := math.MaxInt
	for _, r := range rows {
		m = min(m, r.old.N, r.new.N)
	}
	return m
}

func ciText(s summary) string {
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return "n<6"
	}
	if s.Center == 0 {
		return "±0%"
	}
	return fmt.Sprintf("±%.0f%%", 100*math.Max(s.Hi/s.Center-1, 1-s.Lo/s.Center))
}
