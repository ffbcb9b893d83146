package sweep

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"popsim/report"
	"popsim/scenarios"
)

// Shard is shard I of N of a sweep: the runs whose index in the sweep's
// fixed run order is I modulo N.
type Shard struct{ I, N int }

// Whole is the unsharded sweep.
var Whole = Shard{0, 1}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard parses "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 1_000_000 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("-shard %q: want i/n with 0 <= i < n, e.g. 0/4 .. 3/4 (the shard index is 0-based)", s)
	}
	return Shard{i, n}, nil
}

// Job is one run of a sweep: a parameter point and a seed.
type Job struct {
	Index int // position in the whole sweep's run order
	Point int // index of the parameter point (scenarios.Grid order)
	Seed  uint64
}

// Jobs lists a sweep's runs in its fixed order — parameter points in
// scenarios.Grid order, then seeds in the given order — and keeps those of
// the shard: Index % N == I. Every shard gets a share of every point, and
// the N shards partition the list exactly.
func Jobs(points int, seeds []uint64, shard Shard) []Job {
	var out []Job
	for p := range points {
		for s, seed := range seeds {
			k := p*len(seeds) + s
			if k%shard.N == shard.I {
				out = append(out, Job{Index: k, Point: p, Seed: seed})
			}
		}
	}
	return out
}

// ParamLabel is the name a parameter has in summaries and reports: the
// kind parameter is the summary's consumer kind, which the report package
// already joins to every run's parameters as consumer_kind.
func ParamLabel(name string) string {
	if name == "kind" {
		return report.ParamConsumerKind
	}
	return name
}

// Labelled returns the point with its names as ParamLabel gives them.
func Labelled(p scenarios.Point) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[ParamLabel(k)] = v
	}
	return out
}

// Axes picks the chart's x parameter (the first whose values are all
// numbers or durations) and the line grouping (the first other one), by
// their labels.
func Axes(params []scenarios.Param) (x, group string) {
	for _, p := range params {
		numeric := true
		for _, v := range p.Values {
			if _, err := report.ParamValue(v); err != nil {
				numeric = false
			}
		}
		if numeric && x == "" {
			x = ParamLabel(p.Name)
		} else if group == "" {
			group = ParamLabel(p.Name)
		}
	}
	return x, group
}

// PointLabel is "a=1 b=2" in parameter-name order, or "(no parameters)".
func PointLabel(p scenarios.Point) string {
	if len(p) == 0 {
		return "(no parameters)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, " ")
}

// RunFolder names a run's folder under RunsDir: point index, parameters,
// seed, with characters other than [A-Za-z0-9._-] replaced by '_'.
func RunFolder(pointIdx int, p scenarios.Point, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p%03d", pointIdx)
	for _, k := range slices.Sorted(maps.Keys(p)) {
		b.WriteString("_" + k + "-" + p[k])
	}
	fmt.Fprintf(&b, "_seed%d", seed)
	name := []byte(b.String())
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			name[i] = '_'
		}
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return string(name)
}
