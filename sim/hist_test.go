package sim

import (
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

// A hist that counted 2^31 values, which its 32-bit slots cannot hold,
// panics when read or taken from; one value fewer reads.
func TestHistRefusesWhatItsSlotsCannotHold(t *testing.T) {
	for _, read := range []func(h *hist){
		func(h *hist) { h.latency() },
		func(h *hist) { h.hdr() },
		func(h *hist) { h.take(5) },
	} {
		h := newHistCounts()
		h.record(5)
		h.total = math.MaxInt32
		read(h) // at the bound: fine
		h.total = math.MaxInt32 + 1
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a hist past 2^31 values was read")
				}
			}()
			read(h)
		}()
	}
}
