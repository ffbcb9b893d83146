package sim

import (
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
