package sweep

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/report"
	"popsim/stats"
)

// Search finds the first value meeting a monotone predicate for every
// threshold in range (and reports none above it), evaluating each value
// at most once and O(log) values in all.
func TestSearchMonotone(t *testing.T) {
	for lo := int64(0); lo <= 5; lo++ {
		for hi := lo + 1; hi <= 70; hi++ {
			for threshold := lo; threshold <= hi+1; threshold++ {
				seen := map[int64]bool{}
				meets := func(x int64) (bool, error) {
					if x < lo || x > hi || seen[x] {
						t.Fatalf("lo %d hi %d: evaluated %d (twice: %v)", lo, hi, x, seen[x])
					}
					seen[x] = true
					return x >= threshold, nil // a synthetic monotone metric
				}
				got, found, err := Search(lo, hi, meets)
				if err != nil {
					t.Fatal(err)
				}
				if want := threshold <= hi; found != want || found && got != threshold {
					t.Fatalf("lo %d hi %d threshold %d: got %d found %v", lo, hi, threshold, got, found)
				}
				if limit := 2*bits(hi-lo) + 2; len(seen) > limit {
					t.Fatalf("lo %d hi %d threshold %d: %d evaluations, want at most %d", lo, hi, threshold, len(seen), limit)
				}
			}
		}
	}
	// Gallop order: lo, lo+1, lo+2, lo+4, ... then bisect.
	var order []int64
	Search(4, 64, func(x int64) (bool, error) { order = append(order, x); return x >= 13, nil })
	if got := fmtInts(order); got != "4 5 6 8 12 20 16 14 13" {
		t.Errorf("evaluation order %s, want 4 5 6 8 12 20 16 14 13", got)
	}
	boom := errors.New("boom")
	if _, _, err := Search(1, 9, func(x int64) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("an evaluation error is not returned: %v", err)
	}
}

func bits(n int64) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

func fmtInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, " ")
}

func TestParseTarget(t *testing.T) {
	tg, err := ParseTarget("p99<=200ms, dup<=0.5%,throughput>=900,p99.9<2s,mean>1ms,dup<=0.001")
	if err != nil {
		t.Fatal(err)
	}
	want := []Condition{
		{"p99", "<=", float64(200 * clock.Millisecond), "p99<=200ms"},
		{"dup", "<=", 0.5, "dup<=0.5%"},
		{"throughput", ">=", 900, "throughput>=900"},
		{"p99.9", "<", float64(2 * clock.Second), "p99.9<2s"},
		{"mean", ">", float64(clock.Millisecond), "mean>1ms"},
		{"dup", "<=", 0.1, "dup<=0.001"},
	}
	if len(tg) != len(want) {
		t.Fatalf("%d clauses, want %d", len(tg), len(want))
	}
	for i := range want {
		if tg[i] != want[i] {
			t.Errorf("clause %d = %+v, want %+v", i, tg[i], want[i])
		}
	}
	if got := tg.Clauses(); got != "p99<=200ms,dup<=0.5%,throughput>=900,p99.9<2s,mean>1ms,dup<=0.001" {
		t.Errorf("Clauses() = %q", got)
	}
	if th := tg[0].Threshold(); th.Metric != report.MetricP99EndToEndMs || th.Value != 200 || th.Label != "target p99<=200ms" {
		t.Errorf("p99 threshold = %+v, want 200 ms on the p99 chart", th)
	}
	for in, msg := range map[string]string{
		"latency<=1s":  `unknown metric "latency"`,
		"p99<=fast":    "want a duration",
		"dup<=lots":    "want a share",
		"throughput>x": "want acks per second",
		"p99":          "want metric<=value",
		"p99<=1s,":     "want metric<=value",
	} {
		if _, err := ParseTarget(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTarget(%q): %v, want %q", in, err, msg)
		}
	}
}

// Each clause reads its metric off a run's summary in its own unit and
// becomes a decision target.
func TestConditionSeedValue(t *testing.T) {
	s := model.Summary{Produced: 2000, Duplicates: 3, ThroughputPerSec: 950,
		EndToEnd: model.Latency{Count: 100, Mean: 40_000, P50: 30_000, P90: 70_000, P99: 99_000, P999: 120_000, Max: 130_000}}
	for in, want := range map[string]struct {
		v    float64
		goal stats.Goal
		unit string
	}{
		"p99<=100ms": {99_000, stats.AtMost, "ms"}, "mean<50ms": {40_000, stats.AtMost, "ms"}, "max<=1s": {130_000, stats.AtMost, "ms"},
		"dup<=0.2%": {0.15, stats.AtMost, "%"}, "throughput>=900": {950, stats.AtLeast, "acks/s"}, "throughput>900": {950, stats.AtLeast, "acks/s"},
	} {
		tg, err := ParseTarget(in)
		if err != nil {
			t.Fatal(err)
		}
		c := tg[0]
		v, ok := c.SeedValue(s)
		unit, _ := c.Display()
		if !ok || v != want.v || c.StatsTarget().Goal != want.goal || c.StatsTarget().Threshold != c.Value || unit != want.unit {
			t.Errorf("%s: value %v (%v), target %v, unit %s; want %v, %v, %s", in, v, ok, c.StatsTarget(), unit, want.v, want.goal, want.unit)
		}
	}
	// A run without latencies or without messages has no value.
	tg, _ := ParseTarget("p99<=1s,dup<=1%")
	if _, ok := tg[0].SeedValue(model.Summary{}); ok {
		t.Error("a run without latencies gave a p99")
	}
	if _, ok := tg[1].SeedValue(model.Summary{}); ok {
		t.Error("a run that produced nothing gave a duplicate share")
	}
}

func TestParseSpace(t *testing.T) {
	sp, err := ParseSpace("invisible=5s..300s")
	if err != nil || sp.Unit != clock.Second || sp.Lo != 5 || sp.Hi != 300 || sp.Format(17) != "17s" || sp.String() != "invisible=5s..300s" {
		t.Errorf("invisible=5s..300s: %+v %v", sp, err)
	}
	sp, err = ParseSpace("invisible=500ms..2s")
	if err != nil || sp.Unit != clock.Millisecond || sp.Lo != 500 || sp.Hi != 2000 {
		t.Errorf("invisible=500ms..2s: %+v %v", sp, err)
	}
	if sp, err = ParseSpace("consumers=1..16"); err != nil || sp.Unit != 0 || sp.Format(3) != "3" || sp.Override(3).String() != "consumers[*].count=3" {
		t.Errorf("consumers=1..16: %+v %v", sp, err)
	}
	for in, msg := range map[string]string{
		"consumers":         "want name=lo..hi",
		"consumers=4..1":    "want 0 <= lo < hi",
		"consumers=1..5s":   "must both be whole numbers or both durations",
		"consumers=-1..2":   "want 0 <= lo < hi",
		"=1..2":             "want name=lo..hi",
		"consumers=1..1":    "want 0 <= lo < hi",
		"invisible=1s..1ms": "want 0 <= lo < hi",
	} {
		if _, err := ParseSpace(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSpace(%q): %v, want an error with %q", in, err, msg)
		}
	}
}
