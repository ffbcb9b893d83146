package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// histMaxOf is the library's Max on histograms of every spread: single
// values at each bucket's edges, a few values, heavy tails up to histMax,
// another histogram shape, none.
func TestHistMaxIsTheLibrarys(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	check := func(h *hdrhistogram.Histogram, what string) {
		t.Helper()
		if got, want := histMaxOf(h), h.Max(); got != want {
			t.Fatalf("%s: histMaxOf = %d, the library's Max = %d", what, got, want)
		}
	}
	edges := []int64{1, 2, histMax}
	for b := 0; b < 63 && int64(1)<<b <= histMax; b++ {
		for _, v := range []int64{1<<b - 1, 1 << b, 1<<b + 1, 2047 << b, 2048<<b - 1} {
			if v >= 1 && v <= histMax {
				edges = append(edges, v)
			}
		}
	}
	for _, v := range edges {
		h := newHist()
		record(h, v)
		check(h, "one value")
		record(h, 1+v/3)
		check(h, "two values")
	}
	for round := 0; round < 300; round++ {
		h := newHist()
		n := 1 + r.IntN(3000)
		for range n {
			var v int64
			switch r.IntN(4) {
			case 0:
				v = 1 + r.Int64N(5000)
			case 1:
				v = edges[r.IntN(len(edges))]
			default: // log-uniform up to histMax
				v = 1 + int64(float64(histMax)*r.Float64()*r.Float64()*r.Float64())
			}
			if err := h.RecordValues(min(v, histMax), 1+r.Int64N(3)); err != nil {
				t.Fatal(err)
			}
		}
		check(h, "random values")
	}
	other := hdrhistogram.New(1, 1000, 2)
	for _, v := range []int64{1, 77, 999} {
		record(other, v)
	}
	check(other, "another shape")
	check(newHist(), "empty")
}

// histEdges are values at every bucket's edges, up to histMax.
func histEdges() []int64 {
	edges := []int64{0, 1, 2, histMax}
	for b := 0; b < 63 && int64(1)<<b <= histMax; b++ {
		for _, v := range []int64{1<<b - 1, 1 << b, 1<<b + 1, 1023 << b, 1024 << b, 2047 << b, 2048<<b - 1} {
			if v >= 0 && v <= histMax {
				edges = append(edges, v)
			}
		}
	}
	return edges
}

// sameAsLibrary fails unless h reads as lib, the library's histogram of
// the same values: counts slot for slot (through hdr), mean bit for bit,
// percentiles, and the summary latency makes of them.
func sameAsLibrary(t *testing.T, r *rand.Rand, h *hist, lib *hdrhistogram.Histogram, what string) {
	t.Helper()
	got, want := h.hdr().Export().Counts, lib.Export().Counts
	if len(got) != len(want) || len(want) != histSlots {
		t.Fatalf("%s: %d counts, the library %d (histSlots %d)", what, len(got), len(want), histSlots)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: slot %d counts %d, the library %d", what, i, got[i], want[i])
		}
	}
	if h.total > 0 {
		if a, _ := h.walk(); math.Float64bits(a) != math.Float64bits(lib.Mean()) {
			t.Fatalf("%s: mean %v, the library %v", what, a, lib.Mean())
		}
	}
	ps := []float64{0, 1e-9, 50, 90, 99, 99.9, 100, 100 * (1 - 1e-12)}
	for range 20 {
		ps = append(ps, 100*r.Float64())
	}
	for _, p := range ps {
		if a, b := h.valueAt(p), lib.ValueAtQuantile(p); a != b {
			t.Fatalf("%s: percentile %v is %d, the library's %d", what, p, a, b)
		}
	}
	if a, b := h.latency(), latency(lib); a != b {
		t.Fatalf("%s: latency %+v, the library's %+v", what, a, b)
	}
}

// hist counts, reads and rebuilds exactly what the library's histogram
// does, for single values at every bucket edge, random mixes with heavy
// tails, counts taken away again, and none.
func TestHistIsTheLibrarys(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	edges := histEdges()
	for _, v := range edges {
		h := newHistCounts()
		lib := newHist()
		h.record(v)
		record(lib, v)
		sameAsLibrary(t, r, h, lib, "one value")
	}
	for round := range 300 {
		h := newHistCounts()
		lib := newHist()
		var taken [][2]int64
		for range 1 + r.IntN(3000) {
			var v int64
			switch r.IntN(4) {
			case 0:
				v = r.Int64N(5000)
			case 1:
				v = edges[r.IntN(len(edges))]
			default: // log-uniform up to histMax
				v = int64(float64(histMax) * r.Float64() * r.Float64() * r.Float64())
			}
			n := 1 + r.Int64N(3)
			for range n {
				h.record(v)
			}
			if round%2 == 1 && r.IntN(4) == 0 {
				taken = append(taken, [2]int64{v, n}) // counted, then taken away
				continue
			}
			if err := lib.RecordValues(v, n); err != nil {
				t.Fatal(err)
			}
		}
		for _, vn := range taken {
			for range vn[1] {
				h.take(vn[0])
			}
		}
		sameAsLibrary(t, r, h, lib, "random values")
	}
	sameAsLibrary(t, r, newHistCounts(), newHist(), "empty")
}

// hist refuses the values the library refuses, and takes the rest.
func TestHistRangeIsTheLibrarys(t *testing.T) {
	for _, v := range []int64{-1, 0, histMax, 2048<<21 - 1, 2048 << 21, 1 << 40} {
		libOK := newHist().RecordValue(v) == nil
		ok := func() (ok bool) {
			defer func() { ok = recover() == nil }()
			newHistCounts().record(v)
			return
		}()
		if ok != libOK {
			t.Errorf("value %d: hist takes it %v, the library %v", v, ok, libOK)
		}
	}
}

// A hist whose 32-bit counts spill into 64-bit ones, at any point and
// any number of times, read or not in between, counts and reads what one
// that never spilled does;
// a slot past 2^31 values counts on (it would wrap in 32 bits).
func TestHistSpillKeepsCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	edges := histEdges()
	for round := range 100 {
		h, ref := newHistCounts(), newHistCounts()
		var kept []int64
		for range 1 + r.IntN(2000) {
			v := edges[r.IntN(len(edges))]
			if len(kept) > 0 && r.IntN(5) == 0 { // take one recorded before
				k := r.IntN(len(kept))
				v, kept[k] = kept[k], kept[len(kept)-1]
				kept = kept[:len(kept)-1]
				h.take(v)
				ref.take(v)
			} else {
				kept = append(kept, v)
				h.record(v)
				ref.record(v)
			}
			if r.IntN(300) == 0 {
				h.spill()
			}
			if r.IntN(400) == 0 { // a read, which settles a spilled hist's counts, between changes
				h.valueAt(90)
			}
		}
		if round%2 == 0 {
			h.spill()
		}
		sameHist(t, h, ref, fmt.Sprintf("round %d", round))
	}
	// the spill at histSpillAt changes, and a slot counting past 2^31
	h := newHistCounts()
	h.counts[histSlot(7)], h.total, h.narrow = math.MaxInt32-1, math.MaxInt32-1, histSpillAt-1
	h.record(7)
	if h.wide == nil || h.narrow != 0 || h.counts[histSlot(7)] != 0 {
		t.Fatalf("no spill at %d changes: narrow %d, wide %v", histSpillAt, h.narrow, h.wide != nil)
	}
	h.narrow = histSpillAt - 1
	h.counts[histSlot(7)] = math.MaxInt32 - 1
	h.total += math.MaxInt32 - 1
	h.record(7)
	if got, want := h.count(histSlot(7)), int64(2*math.MaxInt32); got != want || h.total != want {
		t.Fatalf("slot past 2^31: count %d, total %d, want %d", got, h.total, want)
	}
	if l := h.latency(); l.Count != 2*math.MaxInt32 || l.Max != 7 || l.P50 != 7 || l.Mean != 7 {
		t.Fatalf("latency of 2^32-2 sevens: %+v", l)
	}
}

// sameHist fails unless h and ref count and read the same.
func sameHist(t *testing.T, h, ref *hist, what string) {
	t.Helper()
	for i := range h.counts {
		if a, b := h.count(i), ref.count(i); a != b {
			t.Fatalf("%s: slot %d counts %d, want %d", what, i, a, b)
		}
	}
	if a, b := h.latency(), ref.latency(); a != b || h.total != ref.total {
		t.Fatalf("%s: latency %+v, want %+v", what, a, b)
	}
	if a, b := h.hdr(), ref.hdr(); !a.Equals(b) {
		t.Fatalf("%s: the library's histograms differ", what)
	}
}

// add and sub count what record and take do; the meter's aggregate,
// which adds without the spill check, spills all its histograms at
// histSpillAt messages, a slot counting on past 2^31.
func TestHistAddIsRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	edges := histEdges()
	h, ref := newHistCounts(), newHistCounts()
	var kept []int64
	for range 5000 {
		v := edges[r.IntN(len(edges))]
		if len(kept) > 0 && r.IntN(4) == 0 {
			v = kept[len(kept)-1]
			kept = kept[:len(kept)-1]
			h.sub(v)
			ref.take(v)
			continue
		}
		kept = append(kept, v)
		h.add(v)
		ref.record(v)
	}
	sameHist(t, h, ref, "add and sub")

	m := newMeter(0, WarmupAuto, 1<<40)
	m.atBroker, m.nGroups = true, 2
	a := &m.agg
	a.begin()
	hs := []*hist{a.e2eH, a.svcH, a.groups[0].e2e, a.groups[0].svc, a.groups[1].e2e, a.groups[1].svc}
	for _, p := range a.order {
		hs = append(hs, a.partH[p])
	}
	for _, h := range hs {
		h.counts[histSlot(7)], h.total = math.MaxInt32-1, math.MaxInt32-1
	}
	a.changes = histSpillAt
	o := &meterObs{e2e: 7, svc: 7, flags: obsStored | obsMeasured, group: 1}
	for i := range o.part {
		o.part[i] = 7
	}
	a.count(o)
	if a.changes != 1 {
		t.Fatalf("%d changes after the spill and the message", a.changes)
	}
	for i, h := range hs {
		want, narrow := int64(math.MaxInt32), int32(1)
		if i == 2 || i == 3 { // group 0's: not counted, spilled all the same
			want, narrow = want-1, 0
		}
		if h.wide == nil || h.counts[histSlot(7)] != narrow || h.count(histSlot(7)) != want || h.total != want {
			t.Fatalf("histogram %d: wide %v, narrow count %d, count %d, total %d, want %d", i, h.wide != nil, h.counts[histSlot(7)],
				h.count(histSlot(7)), h.total, want)
		}
	}
	a.count(o)
	if got := a.e2eH.count(histSlot(7)); got != math.MaxInt32+1 {
		t.Fatalf("past 2^31: count %d", got)
	}
}
