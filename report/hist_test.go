package report

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	"popsim/model"
)

// uniformHist records every value lo..hi once.
func uniformHist(t testing.TB, lo, hi int64) *hdrhistogram.Histogram {
	t.Helper()
	h := NewLatencyHistogram()
	for v := lo; v <= hi; v++ {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// within checks got against want with HdrHistogram's 3-significant-figure
// precision: got is want's highest equivalent value, so want <= got and
// got - want < 0.1 % of want (+1 for rounding at small values).
func within(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got < want || got-want > want/1000+1 {
		t.Errorf("%s = %d, want %d within 0.1%%", what, got, want)
	}
}

func TestLatencyOfUniform(t *testing.T) {
	l := LatencyOf(uniformHist(t, 1, 10000))
	if l.Count != 10000 {
		t.Fatalf("count = %d, want 10000", l.Count)
	}
	within(t, "p50", l.P50, 5000)
	within(t, "p90", l.P90, 9000)
	within(t, "p99", l.P99, 9900)
	within(t, "p99.9", l.P999, 9990)
	within(t, "max", l.Max, 10000)
	if l.Mean < 4998 || l.Mean > 5005 {
		t.Errorf("mean = %d, want about 5000.5", l.Mean)
	}
}

func TestLatencyOfSmallValuesExact(t *testing.T) {
	// Below 2048 µs every value has its own bucket: percentiles are exact.
	h := NewLatencyHistogram()
	for _, v := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
		h.RecordValue(v)
	}
	want := model.Latency{Count: 10, Mean: 6, P50: 5, P90: 9, P99: 10, P999: 10, Max: 10}
	if diff := cmp.Diff(want, LatencyOf(h)); diff != "" {
		t.Errorf("LatencyOf (-want +got):\n%s", diff)
	}
}

func TestLatencyOfEmpty(t *testing.T) {
	if got := LatencyOf(NewLatencyHistogram()); got != (model.Latency{}) {
		t.Errorf("empty histogram: %+v, want zero", got)
	}
	if got := LatencyOf(nil); got != (model.Latency{}) {
		t.Errorf("nil histogram: %+v, want zero", got)
	}
}

func TestMergeIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	all, a, b := NewLatencyHistogram(), NewLatencyHistogram(), NewLatencyHistogram()
	for i := 0; i < 50000; i++ {
		v := int64(rng.ExpFloat64()*20000) + 1
		all.RecordValue(v)
		if i%3 == 0 {
			a.RecordValue(v)
		} else {
			b.RecordValue(v)
		}
	}
	before := LatencyOf(b)
	if err := Merge(a, b); err != nil {
		t.Fatal(err)
	}
	if !a.Equals(all) {
		t.Fatal("merge of two shards differs from the histogram of all values")
	}
	if diff := cmp.Diff(LatencyOf(all), LatencyOf(a)); diff != "" {
		t.Errorf("LatencyOf after merge (-all +merged):\n%s", diff)
	}
	if LatencyOf(b) != before {
		t.Error("Merge modified its source")
	}
}

func TestMergeRefusesOtherLayout(t *testing.T) {
	dst := uniformHist(t, 1, 100)
	want := hdrhistogram.Import(dst.Export())
	other := hdrhistogram.New(1, 1_000_000, 2)
	other.RecordValue(5)
	err := Merge(dst, other)
	if err == nil || !strings.Contains(err.Error(), "different layouts") {
		t.Fatalf("Merge with another layout: err = %v, want a layout error", err)
	}
	if !dst.Equals(want) {
		t.Error("a refused merge changed dst")
	}
	if err := Merge(nil, dst); err == nil {
		t.Error("Merge into nil: want an error")
	}
}

func TestHgrmFormat(t *testing.T) {
	out, err := Hgrm(uniformHist(t, 1, 10000))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.HasPrefix(text, HgrmHeader) {
		t.Fatalf("hgrm starts %q, want header %q", text[:min(60, len(text))], HgrmHeader)
	}
	var rows [][]string
	var footer []string
	sc := bufio.NewScanner(bytes.NewReader(out[len(HgrmHeader):]))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#[") {
			footer = append(footer, sc.Text())
			continue
		}
		rows = append(rows, strings.Fields(sc.Text()))
	}
	for _, r := range rows {
		if len(r) != 4 {
			t.Fatalf("row %q: want 4 fields (value, percentile, total count, 1/(1-p))", r)
		}
	}
	// Values are in ms (µs / 1000 with 3 decimals); the 50 % row is 5.003 ms.
	found := false
	for _, r := range rows {
		if r[1] == "0.500000" {
			found = true
			if r[0] != "5.003" || r[2] != "5003" || r[3] != "2.00" {
				// 5000..5003 share a bucket: the row counts all of it.
				t.Errorf("50%% row = %q, want [5.003 0.500000 5003 2.00]", r)
			}
		}
	}
	if !found {
		t.Error("no 50% row")
	}
	last := rows[len(rows)-1]
	if last[1] != "1.000000" || last[2] != "10000" || last[3] != "inf" {
		t.Errorf("last row = %q, want percentile 1.000000, count 10000, inf", last)
	}
	wantFooter := []string{"#[Mean    = ", "#[Max     =       10.007, Total count    =        10000]", "#[Buckets = "}
	if len(footer) != 3 {
		t.Fatalf("footer = %q, want 3 lines", footer)
	}
	for i, w := range wantFooter {
		if !strings.HasPrefix(footer[i], w) {
			t.Errorf("footer line %d = %q, want prefix %q", i, footer[i], w)
		}
	}
}

func TestPercentileCurveFollowsHgrmSpacing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	h := NewLatencyHistogram()
	for i := 0; i < 1_000_000; i++ {
		h.RecordValue(int64(rng.ExpFloat64()*5000) + 1)
	}
	curve := PercentileCurve(h, HgrmTicksPerHalfDistance)
	if curve[0].Quantile != 0 || curve[0].Inverse != 1 {
		t.Errorf("first point %+v, want q=0 at x=1", curve[0])
	}
	lastPt := curve[len(curve)-1]
	if lastPt.Quantile != MaxPlotQuantile || lastPt.Inverse < 99999 || lastPt.Inverse > 100001 {
		t.Errorf("last point %+v, want q=99.999 at x=100000", lastPt)
	}
	for i := 1; i < len(curve); i++ {
		if curve[i].Inverse <= curve[i-1].Inverse || curve[i].ValueUs < curve[i-1].ValueUs {
			t.Fatalf("points %d, %d not increasing: %+v %+v", i-1, i, curve[i-1], curve[i])
		}
	}
	// With a million distinct-enough values the hgrm has a row at every
	// tick: the curve must use exactly the same quantiles and values.
	var hgrm []hdrhistogram.Bracket
	for _, b := range h.CumulativeDistributionWithTicks(HgrmTicksPerHalfDistance) {
		if b.Quantile < MaxPlotQuantile {
			hgrm = append(hgrm, b)
		}
	}
	if len(hgrm) != len(curve)-1 {
		t.Fatalf("curve has %d points below 99.999%%, hgrm %d", len(curve)-1, len(hgrm))
	}
	for i, b := range hgrm {
		if curve[i].Quantile != b.Quantile || curve[i].ValueUs != b.ValueAt {
			t.Fatalf("point %d: curve (%v%%, %d µs), hgrm (%v%%, %d µs)", i,
				curve[i].Quantile, curve[i].ValueUs, b.Quantile, b.ValueAt)
		}
	}
	if got := PercentileCurve(NewLatencyHistogram(), 5); got != nil {
		t.Errorf("empty histogram: %d points, want none", len(got))
	}
}

func TestValidHistName(t *testing.T) {
	for _, ok := range []string{"end_to_end", "a", "pop-1.x"} {
		if err := ValidHistName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a,b", "../x", "_x", "a/b", "x\n"} {
		if ValidHistName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPercentileCurveSparse(t *testing.T) {
	// Ten values: the curve reaches the maximum at the 90 % tick and stays
	// there up to 99.999 %, as the .hgrm rows do.
	curve := PercentileCurve(uniformHist(t, 1, 10), HgrmTicksPerHalfDistance)
	last := curve[len(curve)-1]
	if last.Quantile != MaxPlotQuantile || last.ValueUs != 10 {
		t.Errorf("last point %+v, want 10 µs at 99.999%%", last)
	}
	for _, p := range curve {
		if p.Quantile == 50 && p.ValueUs != 5 {
			t.Errorf("50%% point %+v, want 5 µs", p)
		}
	}
}
