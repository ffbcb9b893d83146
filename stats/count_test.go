package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Each column of a CountSeries is the Series (or the RatioSeries over 1)
// of the same whole numbers: the same groups, sums, keys and intervals
// from any key, through merges, with equal keys and an unfinished batch
// or group at the end.
func TestCountSeriesIsSeries(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for round := range 120 {
		ratio, cols := round%2 == 1, 1+r.IntN(3)
		c := NewCountSeries(cols)
		if ratio {
			c = NewCountRatioSeries(cols)
		}
		s, rs := make([]*Series, cols), make([]*RatioSeries, cols)
		for j := range cols {
			s[j], rs[j] = NewSeries(), NewRatioSeries()
		}
		n := r.IntN(1 << (4 + r.IntN(12))) // up to 32 767: merges in both kinds
		top := []int{2, 6, 255}[r.IntN(3)]
		at := int64(r.IntN(100)) - 50
		var keys []int64
		for i := range n {
			xs := make([]int64, cols)
			for j := range xs {
				xs[j] = int64(r.IntN(top))
				if ratio {
					rs[j].Add(at, float64(xs[j]), 1)
				} else {
					s[j].Add(at, float64(xs[j]))
				}
			}
			c.Add(at, xs...)
			keys = append(keys, at)
			if c.Count() != int64(i+1) {
				t.Fatalf("round %d: Count %d after %d observations", round, c.Count(), i+1)
			}
			at += int64(r.IntN(3))
		}
		froms := []int64{math.MinInt64, at + 1}
		for range 5 {
			if n > 0 {
				froms = append(froms, keys[r.IntN(n)])
			}
		}
		for j := range cols {
			ref := &s[j].g
			if ratio {
				ref = &rs[j].g
			}
			if g := &c.g[j]; g.size != ref.size || !slices.Equal(g.x, ref.x) || !slices.Equal(g.at, ref.at) || !slices.Equal(g.y, ref.y) {
				t.Fatalf("round %d (ratio %v, n %d) column %d: groups of %d: %v at %v, want %d: %v at %v", round, ratio, n, j,
					g.size, g.x, g.at, ref.size, ref.x, ref.at)
			}
			for _, from := range froms {
				want := s[j].MeanCI(from, 0.95)
				if ratio {
					want = rs[j].CI(from, 0.95)
				}
				if got := c.CI(j, from, 0.95); got != want {
					t.Fatalf("round %d (ratio %v, n %d) column %d from %d: %+v, want %+v", round, ratio, n, j, from, got, want)
				}
			}
		}
	}
}

func TestCountSeriesRejectsMisuse(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5, 6, 7} { // a push's first, inside, its last
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a key that decreases after %d observations did not panic", k)
				}
			}()
			s := NewCountSeries(1)
			for i := range k {
				s.Add(int64(10+i), 1)
			}
			s.Add(9, 1)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("an Add of too few values did not panic")
		}
	}()
	NewCountRatioSeries(2).Add(1, 1)
}
