package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"popsim/internal/bench"
	popreport "popsim/report"
)

// runConfig is what `popbench run` was asked to do.
type runConfig struct {
	count      int
	benchtime  string
	sizes      []int
	out        string
	cpuprofile string
	filter     *regexp.Regexp
	every      int
}

// errUsage marks a bad flag or argument: exit status 2.
var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

func parseRunFlags(args []string, stderr io.Writer) (runConfig, error) {
	fs := flag.NewFlagSet("popbench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := runConfig{}
	fs.IntVar(&c.count, "count", 10, "runs of each case (>= 6 gives a 95% CI of the median)")
	fs.StringVar(&c.benchtime, "benchtime", "1s", "time (1s, 500ms) or iterations (100x) of each run")
	sizes := fs.String("sizes", "1k,100k,1M", "in-flight sizes, comma-separated")
	fs.StringVar(&c.out, "out", "out/bench", "output directory (make bench writes the committed results/bench)")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of all runs to this file")
	run := fs.String("run", "", "only cases whose name matches this regular expression")
	fs.IntVar(&c.every, "latency-every", 16, "sample the wall-clock time of one round in this many")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, usageErr("unexpected argument %q: run takes flags only", fs.Arg(0))
	}
	if c.count < 1 || c.count > 1000 {
		return c, usageErr("-count %d: want 1..1000", c.count)
	}
	if err := checkBenchtime(c.benchtime); err != nil {
		return c, err
	}
	var err error
	if c.sizes, err = bench.ParseSizes(*sizes); err != nil {
		return c, usageErr("-sizes: %v", err)
	}
	if c.filter, err = regexp.Compile(*run); err != nil {
		return c, usageErr("-run %q: %v", *run, err)
	}
	if len(selectCases(c)) == 0 {
		var names []string
		for _, bc := range bench.Cases(c.sizes) {
			names = append(names, bc.Name())
		}
		return c, usageErr("-run %q matches no case at sizes %s; cases:\n  %s", *run, *sizes, strings.Join(names, "\n  "))
	}
	if c.out == "" {
		return c, usageErr("-out is empty: want a directory")
	}
	if c.every < 1 {
		return c, usageErr("-latency-every %d: want >= 1", c.every)
	}
	return c, nil
}

// checkBenchtime accepts what go test's -benchtime does: a positive
// duration or a positive count followed by x.
func checkBenchtime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		var v int
		if _, err := fmt.Sscanf(n, "%d", &v); err != nil || v < 1 || fmt.Sprint(v) != n {
			return usageErr("-benchtime %q: want a positive iteration count such as 100x", s)
		}
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return usageErr("-benchtime %q: want a positive duration such as 1s or an iteration count such as 100x", s)
	}
	return nil
}

// setBenchtime points testing.Benchmark at d (it reads -test.benchtime).
func setBenchtime(d string) error {
	if flag.Lookup("test.benchtime") == nil {
		testing.Init()
	}
	return flag.Set("test.benchtime", d)
}

// startCPUProfile profiles into path, written atomically: stop ends the
// profile and renames the complete file into place.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := popreport.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Commit()
	}, nil
}

// result is one case's runs and latency recorder.
type result struct {
	c    bench.Case
	runs []run
	lat  *bench.Latency
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseRunFlags(args, stderr)
	if err != nil {
		return flagExit(err, stderr)
	}
	if err := setBenchtime(cfg.benchtime); err != nil {
		fmt.Fprintf(stderr, "popbench run: %v\n", err)
		return 2
	}
	if cfg.cpuprofile != "" {
		stop, err := startCPUProfile(cfg.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "popbench run: -cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(stderr, "popbench run: -cpuprofile: %v\n", err)
			}
		}()
	}
	if err := checkWritable(cfg.out); err != nil { // before an hour of benchmarks, not after
		fmt.Fprintf(stderr, "popbench run: -out: %v\n", err)
		return 2
	}
	st := newStamp(cfg.count, cfg.benchtime) // before the runs: the code measured is HEAD now
	results, err := runCases(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "popbench run: %v\n", err)
		return 1
	}
	rep := buildReport(st, results)
	if err := writeOutputs(cfg.out, rep, results); err != nil {
		fmt.Fprintf(stderr, "popbench run: %v\n", err)
		return 1
	}
	printTable(stdout, rep)
	fmt.Fprintf(stdout, "\nwrote %s, %s and %s\n", filepath.Join(cfg.out, "bench.txt"), filepath.Join(cfg.out, "bench.json"), filepath.Join(cfg.out, "latency"))
	return 0
}

// selectCases lists the cases -run selects at -sizes.
func selectCases(cfg runConfig) []bench.Case {
	var out []bench.Case
	for _, c := range bench.Cases(cfg.sizes) {
		if cfg.filter.MatchString(c.Name()) {
			out = append(out, c)
		}
	}
	return out
}

// checkWritable creates dir (and dir/latency) and proves it writable.
func checkWritable(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "latency"), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".popbench-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// runCases runs every selected case cfg.count times, round-robin.
func runCases(cfg runConfig, progress io.Writer) ([]*result, error) {
	var results []*result
	for _, c := range selectCases(cfg) {
		results = append(results, &result{c: c, lat: bench.NewLatency(cfg.every)})
	}
	procs := runtime.GOMAXPROCS(0)
	for i := 0; i < cfg.count; i++ {
		for _, r := range results {
			br := testing.Benchmark(func(b *testing.B) { r.c.Run(b, r.lat) })
			if br.N == 0 {
				return nil, fmt.Errorf("benchmark %s failed: %s", r.c.Name(), orUnknown(bench.TakeFailure()))
			}
			rn := toRun(r.c.Name(), br)
			r.runs = append(r.runs, rn)
			fmt.Fprintf(progress, "%d/%d %s\n", i+1, cfg.count, formatRun(rn, procs))
		}
	}
	return results, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "no message (the body skipped or failed without one)"
	}
	return s
}

func toRun(name string, br testing.BenchmarkResult) run {
	m := map[string]float64{"ns/op": float64(br.NsPerOp()), "B/op": float64(br.AllocedBytesPerOp()), "allocs/op": float64(br.AllocsPerOp())}
	if br.N > 0 {
		m["ns/op"] = float64(br.T.Nanoseconds()) / float64(br.N)
	}
	for u, v := range br.Extra {
		m[u] = v
	}
	return run{Name: name, Iters: br.N, Metrics: m}
}

func buildReport(st stamp, results []*result) report {
	rep := report{Stamp: st}
	byName := map[string]*caseReport{}
	for _, r := range results {
		cr := caseReport{Name: r.c.Name(), Op: r.c.Op, Size: r.c.Size, Variant: variant(r.c), Unit: r.c.Unit, Runs: r.runs, Summary: map[string]metric{}}
		cr.Floor = r.c.FloorName()
		s := samples{}
		for _, rn := range r.runs {
			s.add(rn)
		}
		for unit, xs := range s[cr.Name] {
			cr.Summary[unit] = toMetric(summarize(xs, 0.95))
		}
		cr.Latency = latencySummary(r)
		rep.Cases = append(rep.Cases, cr)
	}
	for i := range rep.Cases {
		byName[rep.Cases[i].Name] = &rep.Cases[i]
	}
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if f := byName[c.Floor]; f != nil {
			c.Ratio = map[string]float64{}
			for _, u := range []string{"ns/msg", "cpu-ns/msg"} {
				if a, b := c.Summary[u], f.Summary[u]; b.Median > 0 {
					c.Ratio[u] = a.Median / b.Median
				}
			}
		}
	}
	return rep
}

// variant is the case's sub-name without the in-flight size.
func variant(c bench.Case) string {
	parts := strings.Split(c.Sub, "/")
	var out []string
	for _, p := range parts {
		if !strings.HasPrefix(p, "inflight=") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, "/")
}

func hgrmName(name string) string {
	return strings.NewReplacer("/", "_", "=", "-").Replace(name) + ".hgrm"
}

func latencySummary(r *result) *latencyReport {
	h := r.lat.Hist
	if h.TotalCount() == 0 {
		return nil
	}
	us := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	return &latencyReport{File: filepath.Join("latency", hgrmName(r.c.Name())), RoundUnits: r.lat.Round, Samples: h.TotalCount(),
		P50: us(50), P90: us(90), P99: us(99), P999: us(99.9), Max: float64(h.Max()) / 1000}
}

func writeOutputs(dir string, rep report, results []*result) error {
	var txt bytes.Buffer
	st := rep.Stamp
	fmt.Fprintf(&txt, "goos: %s\ngoarch: %s\npkg: popsim/internal/bench\ncpu: %s\ncommit: %s\ngo: %s\nhugepages: %s\ndate: %s\n", st.GOOS, st.GOARCH, st.CPU, st.Commit, st.GoVersion, st.HugePages, st.Date)
	for i := 0; i < st.Count; i++ { // in run order: round i of every case
		for _, r := range results {
			if i < len(r.runs) {
				txt.WriteString(formatRun(r.runs[i], st.GOMAXPROCS) + "\n")
			}
		}
	}
	if err := writeFileAtomic(filepath.Join(dir, "bench.txt"), txt.Bytes()); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "bench.json"), append(js, '\n')); err != nil {
		return err
	}
	for _, r := range results {
		if r.lat.Hist.TotalCount() == 0 {
			continue
		}
		hgrm, err := popreport.Hgrm(r.lat.Hist)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, "latency", hgrmName(r.c.Name())), hgrm); err != nil {
			return err
		}
	}
	return nil
}

func printTable(w io.Writer, rep report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tin flight\tvariant\tns/unit\t95% CI\tcpu-ns/unit\tallocs/unit\tB/unit\tx floor\tx floor (cpu)\t")
	for _, c := range rep.Cases {
		u := c.Unit
		ns := c.Summary["ns/"+u]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Op, sizeCol(c.Size), c.Variant,
			num(ns.Median), ci(ns), num(c.Summary["cpu-ns/"+u].Median), num(c.Summary["allocs/"+u].Median),
			num(c.Summary["B/"+u].Median), ratio(c.Ratio["ns/msg"]), ratio(c.Ratio["cpu-ns/msg"]))
	}
	tw.Flush()
	for _, c := range rep.Cases {
		if c.Unit == "event" {
			fmt.Fprintf(w, "%s: %s events/s, %s events per CPU second of the whole process, %s virtual seconds per wall second (median of %d)\n", c.Name,
				num(c.Summary["events/s"].Median), num(c.Summary["proc-cpu-events/s"].Median), num(c.Summary["virtual-s/wall-s"].Median), c.Summary["events/s"].N)
		}
	}
	fmt.Fprintln(w, "x floor: engine median / floor median at the same in-flight size (PopAck32, PopAck32Batch: FloorPopAck32; ChangeInvisibleTime: FloorChangeInvisibleTime);")
	fmt.Fprintln(w, "PopAckQueues: median / the same path's median at the fewest queues (1.00x: the cost does not grow with empty queues)")
}

func sizeCol(n int) string {
	if n == 0 {
		return "-"
	}
	return bench.SizeLabel(n)
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func ci(m metric) string {
	if m.Lo == nil || m.Median == 0 {
		return "n<6"
	}
	return fmt.Sprintf("[%s, %s]", num(*m.Lo), num(*m.Hi))
}

func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}
