package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"popsim/internal/bench"
	"popsim/sim"
)

//go:embed budgets.json
var defaultBudgets []byte

// budgets is budgets.json: the largest value each gated metric may take
// (max) and, for speed figures gated with a wide tolerance, the smallest
// (min). Keys are "<benchmark name> <unit>".
type budgets struct {
	Comment []string           `json:"comment"`
	Max     map[string]float64 `json:"max"`
	Min     map[string]float64 `json:"min"`
}

func parseBudgets(name string, data []byte) (budgets, error) {
	var b budgets
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("%s: %v", name, err)
	}
	if len(b.Max) == 0 {
		return b, fmt.Errorf("%s: no budgets under \"max\"", name)
	}
	for _, k := range slices.Sorted(maps.Keys(b.Max)) {
		if err := checkBudgetKey(k, gatedKey); err != nil {
			return b, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Min)) {
		if err := checkBudgetKey(k, floorKey); err != nil {
			return b, fmt.Errorf("under \"min\": %v", err)
		}
	}
	return b, nil
}

// checkBudgetKey refuses a malformed key or one smoke does not gate that way.
func checkBudgetKey(k string, gated func(string) bool) error {
	if name, unit, ok := strings.Cut(k, " "); !ok || name == "" || unit == "" {
		return fmt.Errorf("budget key %q: want \"<benchmark name> <unit>\"", k)
	}
	if !gated(k) {
		return fmt.Errorf("budget key %q: smoke measures no such gated metric, so the budget would check nothing "+
			"(max: <case> allocs/msg for the cases of popbench run, PopAck32.pop/... and PopAck32.ack/... allocs/msg, and SimRun/default or SimRun/default-scenario %s; "+
			"min: SimRun/default or SimRun/default-scenario %s)", k, strings.Join(simGated, ", "), strings.Join(simFloors, ", "))
	}
	return nil
}

// simGated are the simulator figures smoke gates with a largest value
// (simMeasure); simFloors are those gated with a smallest value.
var (
	simGated  = []string{"violations", "lost", "sim_events", "end_to_end_p99_us", "allocs/event"}
	simFloors = []string{"proc-cpu-events/s"}
)

// floorKey reports whether smoke measures key and gates it with a smallest value.
func floorKey(key string) bool {
	name, unit, _ := strings.Cut(key, " ")
	return simRunNamed(name) && slices.Contains(simFloors, unit)
}

var inflightRE = regexp.MustCompile(`inflight=([0-9]+[kM]?)`)

// gatedKey reports whether smoke measures and gates the budget key at
// some in-flight size: an allocs/msg of a benchmark case (or of the pop or
// ack half of PopAck32), or a gated simulator figure.
func gatedKey(key string) bool {
	name, unit, _ := strings.Cut(key, " ")
	if simRunNamed(name) {
		return slices.Contains(simGated, unit)
	}
	if unit != "allocs/msg" {
		return false
	}
	m := inflightRE.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	sizes, err := bench.ParseSizes(m[1])
	if err != nil {
		return false
	}
	for _, half := range []string{"PopAck32.pop/", "PopAck32.ack/"} {
		if rest, ok := strings.CutPrefix(name, half); ok {
			name = "PopAck32/" + rest
		}
	}
	for _, c := range bench.Cases(sizes) {
		if c.Op != "SimRun" && c.Name() == name {
			return true
		}
	}
	return false
}

type smokeConfig struct {
	budgets budgets
	sizes   []int
	sim     bool
}

func parseSmokeFlags(args []string, stderr io.Writer) (smokeConfig, error) {
	fs := flag.NewFlagSet("popbench smoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("budgets", "", "budgets file (default: the budgets.json built into popbench)")
	sizes := fs.String("sizes", "1k,100k", "in-flight sizes, comma-separated")
	c := smokeConfig{}
	fs.BoolVar(&c.sim, "sim", true, "also check the simulator's default seed")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, usageErr("unexpected argument %q: smoke takes flags only", fs.Arg(0))
	}
	var err error
	if c.sizes, err = bench.ParseSizes(*sizes); err != nil {
		return c, usageErr("-sizes: %v", err)
	}
	name, data := "built-in budgets.json", defaultBudgets
	if *file != "" {
		if data, err = os.ReadFile(*file); err != nil {
			return c, usageErr("-budgets: %v", err)
		}
		name = *file
	}
	if c.budgets, err = parseBudgets(name, data); err != nil {
		return c, usageErr("-budgets: %v", err)
	}
	return c, nil
}

// measurement is one smoke figure; gated ones are checked against budgets.
type measurement struct {
	key   string // "<benchmark name> <unit>"
	value float64
	gated bool
}

// smoke iteration counts: fixed, so allocation counts repeat exactly.
var smokeIters = map[string]string{"Revive": "4x"}

const smokeDefaultIters = "300x"

func cmdSmoke(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseSmokeFlags(args, stderr)
	if err != nil {
		return flagExit(err, stderr)
	}
	ms, err := smokeMeasure(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "popbench smoke: %v\n", err)
		return 1
	}
	return judge(stdout, cfg.budgets, ms)
}

func smokeMeasure(cfg smokeConfig, progress io.Writer) ([]measurement, error) {
	var ms []measurement
	for _, n := range cfg.sizes {
		for _, cache := range []bool{false, true} {
			popA, ackA, err := bench.PhaseAllocs(n, cache, 50, 200)
			if err != nil {
				return nil, err
			}
			sub := "/inflight=" + bench.SizeLabel(n) + "/cache=" + map[bool]string{false: "off", true: "on"}[cache]
			ms = append(ms, measurement{"PopAck32.pop" + sub + " allocs/msg", popA, true}, measurement{"PopAck32.ack" + sub + " allocs/msg", ackA, true})
		}
	}
	for _, c := range bench.Cases(cfg.sizes) {
		if c.Op == "SimRun" {
			continue
		}
		it := smokeDefaultIters
		if v, ok := smokeIters[c.Op]; ok {
			it = v
		}
		if err := setBenchtime(it); err != nil {
			return nil, err
		}
		r := testing.Benchmark(func(b *testing.B) { c.Run(b, nil) })
		if r.N == 0 {
			return nil, fmt.Errorf("benchmark %s failed: %s", c.Name(), orUnknown(bench.TakeFailure()))
		}
		fmt.Fprintf(progress, "%s\n", formatRun(toRun(c.Name(), r), 1))
		ms = append(ms, measurement{c.Name() + " allocs/msg", r.Extra["allocs/msg"], true},
			measurement{c.Name() + " ns/msg", r.Extra["ns/msg"], false}, measurement{c.Name() + " cpu-ns/msg", r.Extra["cpu-ns/msg"], false})
	}
	if cfg.sim {
		sm, err := simMeasureAll()
		if err != nil {
			return nil, err
		}
		ms = append(ms, sm...)
	}
	return ms, nil
}

// simRuns are the simulator runs smoke measures, by the name of their
// popbench run case: sim.DefaultConfig (the checkpoint path, 60 s) and the
// built-in default scenario (default.yaml: the KV path, 30 s), which is
// what `popsim run` runs.
var simRuns = []simRun{
	{"SimRun/default", func() (sim.Config, error) { return sim.DefaultConfig(), nil }},
	{"SimRun/default-scenario", func() (sim.Config, error) { return bench.BuiltinConfig("default") }},
}

// simRun is one run smoke measures: its case name and its configuration.
type simRun struct {
	name   string
	config func() (sim.Config, error)
}

// simRunNamed reports whether name is one of simRuns.
func simRunNamed(name string) bool {
	return slices.ContainsFunc(simRuns, func(r simRun) bool { return r.name == name })
}

// simMeasureAll measures every run of simRuns.
func simMeasureAll() ([]measurement, error) {
	var ms []measurement
	for _, r := range simRuns {
		cfg, err := r.config()
		if err != nil {
			return nil, fmt.Errorf("simulator run %s: %v", r.name, err)
		}
		m, err := simMeasure(r.name, cfg)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m...)
	}
	return ms, nil
}

// simMeasure runs one simulator configuration (fixed seed): its results
// are a deterministic function of the code, so they can be gated; its
// speed is printed only, but for the floor on events per CPU second.
func simMeasure(name string, cfg sim.Config) ([]measurement, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, _, cpuKnown := processUsage()
	start := time.Now()
	r, err := sim.Run(cfg, sim.RunOptions{Scenario: "default"})
	if err != nil {
		return nil, fmt.Errorf("simulator run %s: %v", name, err)
	}
	wall := time.Since(start).Seconds()
	cpu1, _, _ := processUsage()
	runtime.ReadMemStats(&after)
	s := r.Summary
	events := float64(s.SimEvents)
	ms := []measurement{
		{name + " violations", float64(len(s.Violations)), true},
		{name + " lost", float64(s.Lost), true},
		{name + " sim_events", events, true},
		{name + " end_to_end_p99_us", float64(s.EndToEnd.P99), true},
		{name + " allocs/event", float64(after.Mallocs-before.Mallocs) / events, true},
		{name + " events/s", events / wall, false},
		{name + " virtual-s/wall-s", s.SimSeconds / wall, false},
	}
	if cpuKnown && cpu1 > cpu0 {
		ms = append(ms, measurement{name + " proc-cpu-events/s", events / (cpu1 - cpu0), true})
	}
	return ms, nil
}

// judge prints every measurement with its budget and returns 1 when a
// gated one is over budget.
func judge(w io.Writer, b budgets, ms []measurement) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tvalue\tbudget\tverdict")
	failed := 0
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.key] = true
		verdict, budget, ok := verdictOf(b, m)
		if !ok {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.key, num(m.value), budget, verdict)
	}
	tw.Flush()
	var unmeasured []string
	for _, k := range slices.Concat(slices.Collect(maps.Keys(b.Max)), slices.Collect(maps.Keys(b.Min))) {
		if !seen[k] {
			unmeasured = append(unmeasured, k)
		}
	}
	sort.Strings(unmeasured)
	if len(unmeasured) > 0 {
		fmt.Fprintf(w, "not measured in this run (other sizes or -sim=false): %s\n", strings.Join(unmeasured, ", "))
	}
	if failed > 0 {
		fmt.Fprintf(w, "\nFAIL: %d metric(s) outside their budget\n", failed)
		return 1
	}
	fmt.Fprintf(w, "\nok: every gated metric within budget\n")
	return 0
}

// verdictOf judges one measurement against its largest or smallest value;
// ok is false when it is outside its budget.
func verdictOf(b budgets, m measurement) (verdict, budget string, ok bool) {
	if !m.gated {
		return "printed only (wall clock)", "-", true
	}
	if max, found := b.Max[m.key]; found {
		if m.value <= max+1e-9 {
			return "ok", num(max), true
		}
		return "OVER BUDGET", num(max), false
	}
	if min, found := b.Min[m.key]; found {
		if m.value >= min-1e-9 {
			return "ok", ">= " + num(min), true
		}
		return "UNDER FLOOR", ">= " + num(min), false
	}
	return "no budget", "-", true
}
