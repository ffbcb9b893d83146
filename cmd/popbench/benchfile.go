package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// run is one benchmark run: one line of Go benchmark output.
type run struct {
	Name    string             `json:"name"` // without "Benchmark" and the -GOMAXPROCS suffix
	Iters   int                `json:"n"`
	Metrics map[string]float64 `json:"metrics"` // unit -> value, including ns/op, B/op, allocs/op
}

// samples groups runs by benchmark name and metric.
type samples map[string]map[string][]float64

func (s samples) add(r run) {
	m := s[r.Name]
	if m == nil {
		m = map[string][]float64{}
		s[r.Name] = m
	}
	for unit, v := range r.Metrics {
		m[unit] = append(m[unit], v)
	}
}

func (s samples) names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBenchLine parses "BenchmarkX-2  N  v1 unit1  v2 unit2 ...".
func parseBenchLine(line string) (run, error) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return run{}, fmt.Errorf("want a name, an iteration count and value/unit pairs, got %d fields", len(f))
	}
	name := procSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
	if name == "" {
		return run{}, fmt.Errorf("benchmark name %q is empty", f[0])
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return run{}, fmt.Errorf("iteration count %q: want a non-negative integer", f[1])
	}
	r := run{Name: name, Iters: n, Metrics: map[string]float64{}}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return run{}, fmt.Errorf("value %q of unit %s: want a finite number", f[i], f[i+1])
		}
		r.Metrics[f[i+1]] = v
	}
	return r, nil
}

// parseBenchText reads Go benchmark format. Lines that are not benchmark
// results (configuration, PASS, ok ...) are skipped; a malformed result
// line is an error naming the file and line.
func parseBenchText(name string, rd io.Reader) ([]run, error) {
	var out []run
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		r, err := parseBenchLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: malformed benchmark line: %v", name, ln, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// readRuns reads a benchmark-format or popbench JSON file.
func readRuns(path string) ([]run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var runs []run
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var rep report
		d := json.NewDecoder(bytes.NewReader(data))
		if err := d.Decode(&rep); err != nil {
			return nil, fmt.Errorf("%s: not a popbench JSON report: %v", path, err)
		}
		for _, c := range rep.Cases {
			for _, r := range c.Runs {
				if r.Name == "" {
					r.Name = c.Name
				}
				runs = append(runs, r)
			}
		}
	} else if runs, err = parseBenchText(path, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results (want lines like \"BenchmarkX-2  100  123 ns/op\" or a popbench JSON report)", path)
	}
	return runs, nil
}

// formatRun renders a run as a Go benchmark line: ns/op first, then the
// other metrics in unit order, B/op and allocs/op last.
func formatRun(r run, procs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Benchmark%s-%d\t%8d", r.Name, procs, r.Iters)
	units := make([]string, 0, len(r.Metrics))
	for u := range r.Metrics {
		if u != "ns/op" && u != "B/op" && u != "allocs/op" {
			units = append(units, u)
		}
	}
	sort.Strings(units)
	units = append(append([]string{"ns/op"}, units...), "B/op", "allocs/op")
	for _, u := range units {
		if v, ok := r.Metrics[u]; ok {
			fmt.Fprintf(&b, "\t%s %s", fmtValue(v), u)
		}
	}
	return b.String()
}

// fmtValue prints the shortest text that reads back as exactly v, so
// bench.txt and bench.json carry the same numbers.
func fmtValue(v float64) string {
	if math.Abs(v) >= 1e-4 && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
