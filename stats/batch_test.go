package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The bounded store against the obvious reference: after n units the
// stored groups are exactly the consecutive chunks of size units from the
// start, as many as fit, and between half and all of the capacity is in
// use once merging has begun.
func TestGroupsMatchConsecutiveChunks(t *testing.T) {
	for _, capacity := range []int{2, 4, 8, 16, 1024} {
		g := newGroups(capacity, 1, true, true)
		r := newRand(uint64(capacity))
		var xs, ys, qs []float64
		for n := 1; n <= 6000; n++ {
			x, y, q := r.Float64(), float64(r.IntN(5)), r.Float64()
			xs, ys, qs = append(xs, x), append(ys, y), append(qs, q)
			g.add(int64(10*n), x, y, q)
			if n%97 != 0 && n != 6000 {
				continue
			}
			if want := n / int(g.size); len(g.x) != want {
				t.Fatalf("cap %d n %d: %d groups of %d, want %d", capacity, n, len(g.x), g.size, want)
			}
			if g.size > 1 && len(g.x) < capacity/2 {
				t.Fatalf("cap %d n %d: only %d groups in use after merging", capacity, n, len(g.x))
			}
			for i := range g.x {
				var sx, sy, sq float64
				for j := i * int(g.size); j < (i+1)*int(g.size); j++ {
					sx += xs[j]
					sy += ys[j]
					sq += qs[j]
				}
				if !closeRel(g.x[i], sx, 1e-12) || g.y[i] != sy || !closeRel(g.q[i], sq, 1e-12) || g.at[i] != int64(10*(i*int(g.size)+1)) {
					t.Fatalf("cap %d n %d group %d: (%v, %v, %d), want (%v, %v, %d)", capacity, n, i,
						g.x[i], g.y[i], g.at[i], sx, sy, 10*(i*int(g.size)+1))
				}
			}
		}
	}
}

func TestGroupsRejectDecreasingKeys(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "keys must not decrease") {
			t.Errorf("recovered %v", r)
		}
	}()
	s := NewSeries()
	s.Add(5, 1)
	s.Add(4, 1)
}

// With 100 i.i.d. observations there are 20 groups of 5, the lag-1 test
// passes at once, and the interval is exactly MeanCI of the 20 batch means.
func TestBatchMeansExactSmallCase(t *testing.T) {
	xs := normals(newRand(7), 100, 50, 3)
	means := make([]float64, 20)
	for i := range means {
		for _, x := range xs[5*i : 5*i+5] {
			means[i] += x / 5
		}
	}
	got, want := BatchMeansCI(xs, 0.95), MeanCI(means, 0.95)
	if !got.OK || got.N != 20 || got.Method != BatchMeans || !closeRel(got.Est, want.Est, 1e-12) ||
		!closeRel(got.Lo, want.Lo, 1e-12) || !closeRel(got.Hi, want.Hi, 1e-12) {
		t.Fatalf("batch means %+v, MeanCI of batch means %+v", got, want)
	}
	if !strings.HasPrefix(got.Note, "20 batches of 5 observations, lag-1 r = ") {
		t.Errorf("note %q", got.Note)
	}
}

func TestBatchMeansNotEnoughData(t *testing.T) {
	iv := BatchMeansCI(normals(newRand(1), 99, 0, 1), 0.95)
	want := "not enough data: 19 groups of 5 observations after the warm-up, need 20 batches"
	if iv.OK || iv.Note != want || iv.N != 19 {
		t.Errorf("99 observations: %+v, want note %q", iv, want)
	}
}

func TestBatchMeansNonFinite(t *testing.T) {
	xs := normals(newRand(1), 1000, 0, 1)
	xs[500] = math.Inf(1)
	if iv := BatchMeansCI(xs, 0.95); iv.OK || iv.Note != "a value is NaN or infinite" {
		t.Errorf("with +Inf: %+v", iv)
	}
}

// A series that never settles (a trend) keeps its batch means correlated
// at every batch size: no interval, and the note says to run longer.
func TestBatchMeansStillCorrelated(t *testing.T) {
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = float64(i) / 100
	}
	iv := BatchMeansCI(xs, 0.95)
	if iv.OK || !strings.Contains(iv.Note, "batches still correlated at 31 batches of 320 observations") ||
		!strings.HasSuffix(iv.Note, "run longer") {
		t.Errorf("trend: %+v", iv)
	}
}

// AR(1) with phi = 0.9 has lag-1 correlation 0.9 between observations:
// the rule must grow batches past the correlation (about 19 observations)
// before it accepts them, and report a final lag-1 estimate near zero.
func TestBatchMeansGrowBatchesForCorrelatedData(t *testing.T) {
	iv := BatchMeansCI(ar1(newRand(3), 20000, 0, 0.9), 0.95)
	if !iv.OK || iv.N < 20 || iv.N > 60 {
		t.Fatalf("AR(1): %+v", iv)
	}
	// The naive interval pretends 20000 independent values: ~4.4x narrower.
	naive := MeanCI(ar1(newRand(3), 20000, 0, 0.9), 0.95)
	if ratio := iv.HalfWidth() / naive.HalfWidth(); ratio < 3 || ratio > 6.5 {
		t.Errorf("batch/naive half-width ratio %.2f, want about sqrt(19) = 4.36", ratio)
	}
}

// The C statistic's null distribution: with i.i.d. normal batches the
// one-sided test rejects about beta = 10% of the time.
func TestYoungCNullRejectionRate(t *testing.T) {
	const reps = 4000
	for _, k := range []int{20, 64} {
		ys := make([]float64, k)
		for i := range ys {
			ys[i] = 1
		}
		rejected := 0
		for s := range reps {
			c, sd := youngC(normals(newRand(uint64(s)), k, 0, 1), ys)
			if c > NormalQuantile(0.9)*sd {
				rejected++
			}
		}
		if rate := float64(rejected) / reps; rate < 0.085 || rate > 0.115 {
			t.Errorf("k=%d: rejected %.3f of i.i.d. samples, want about 0.10", k, rate)
		}
	}
}

func TestSeriesMeanCIFrom(t *testing.T) {
	s := NewSeries()
	xs := normals(newRand(4), 1000, 0, 1)
	for i := range xs {
		if i < 500 {
			xs[i] += 100 // a transient the caller cuts by key
		}
		s.Add(int64(1000+i), xs[i])
	}
	all, cut := s.MeanCI(math.MinInt64, 0.95), s.MeanCI(1500, 0.95)
	ref := BatchMeansCI(xs[500:], 0.95)
	if cut.Est != ref.Est || cut.Lo != ref.Lo || cut.Hi != ref.Hi {
		t.Errorf("from key 1500: %v, want %v", cut, ref)
	}
	if all.OK {
		t.Errorf("with the transient kept the batches cannot pass the test: %v", all)
	}
	if s.Count() != 1000 {
		t.Errorf("Count = %d", s.Count())
	}
}

// RatioSeries with den = 1 per unit is batch means with groups of one.
func TestRatioSeriesExactSmallCase(t *testing.T) {
	xs := normals(newRand(8), 40, 3, 1)
	rs := NewRatioSeries()
	for i, x := range xs {
		rs.Add(int64(i), 2*x, 2)
	}
	got, want := rs.CI(0, 0.9), MeanCI(xs, 0.9)
	if !got.OK || got.N != 40 || !closeRel(got.Est, want.Est, 1e-12) || !closeRel(got.Lo, want.Lo, 1e-12) || !closeRel(got.Hi, want.Hi, 1e-12) {
		t.Errorf("ratio of 2x/2: %v (%s), want %v", got, got.Note, want)
	}
	if !strings.HasPrefix(got.Note, "40 batches of 1 unit, lag-1") {
		t.Errorf("note %q", got.Note)
	}
}

func TestQuantileSeries(t *testing.T) {
	if _, err := NewQuantileSeries(1, 0); err == nil || err.Error() != "stats: quantile 1 out of range: want 0 < q < 1 (0.99 for p99)" {
		t.Errorf("q = 1: %v", err)
	}
	if _, err := NewQuantileSeries(0.5, -3); err == nil {
		t.Error("negative block accepted")
	}
	for _, c := range []struct {
		q    float64
		want int
	}{{0.5, 200}, {0.9, 1000}, {0.99, 10000}, {0.999, 100000}, {0.1, 112}} {
		if s, _ := NewQuantileSeries(c.q, 0); s.block != c.want {
			t.Errorf("default block for %v: %d, want %d", c.q, s.block, c.want)
		}
	}
	// Blocks of 10 values 0..9 in shuffled order: every block's median
	// (nearest rank 5) is 4, so the estimate is exactly 4 with zero width.
	s, _ := NewQuantileSeries(0.5, 10)
	r := newRand(2)
	for b := range 25 {
		perm := r.Perm(10)
		for i, v := range perm {
			s.Add(int64(10*b+i), float64(v))
		}
	}
	iv := s.CI(0, 0.95)
	if !iv.OK || iv.Est != 4 || iv.Lo != 4 || iv.Hi != 4 || iv.N != 25 || iv.Method != BatchQuantiles {
		t.Errorf("per-block medians all 4: %+v", iv)
	}
	if !strings.HasPrefix(iv.Note, "25 batches of 1 block of 10 observations") {
		t.Errorf("note %q", iv.Note)
	}
	if iv := BatchQuantileCI(make([]float64, 50), 0.5, 10, 0.95); iv.OK || !strings.Contains(iv.Note, "5 groups of 1 block of 10 observations") {
		t.Errorf("5 blocks: %+v", iv)
	}
}

// selectKth against sorting, on random, sorted, reversed, constant and
// few-valued inputs.
func TestSelectKth(t *testing.T) {
	r := newRand(9)
	for n := 1; n <= 300; n += 7 {
		inputs := map[string][]float64{"random": normals(r, n, 0, 1)}
		sorted, rev, flat, few := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			sorted[i], rev[i], flat[i], few[i] = float64(i), float64(n-i), 3, float64(r.IntN(3))
		}
		inputs["sorted"], inputs["reversed"], inputs["constant"], inputs["few values"] = sorted, rev, flat, few
		for _, name := range []string{"random", "sorted", "reversed", "constant", "few values"} {
			ref := slices.Clone(inputs[name])
			slices.Sort(ref)
			for _, k := range []int{0, n / 2, n - 1, (n * 9) / 10} {
				a := slices.Clone(inputs[name])
				if got := selectKth(a, k); got != ref[k] {
					t.Fatalf("%s n=%d k=%d: %v, want %v", name, n, k, got, ref[k])
				}
			}
		}
	}
}

// QuantileByProportion inverts the proportion's interval through the
// quantile function, keeps the estimate, and passes on "no interval".
func TestQuantileByProportion(t *testing.T) {
	quantile := func(p float64) float64 { return 100 * p } // values uniform on [0, 100]
	p := Interval{Est: 0.9, Lo: 0.88, Hi: 0.92, Level: 0.95, N: 30, Method: BatchMeans, OK: true, Note: "30 batches"}
	iv := QuantileByProportion(0.9, 90, p, quantile)
	if !iv.OK || iv.Method != BatchProportion || math.Abs(iv.Lo-88) > 1e-9 || math.Abs(iv.Hi-92) > 1e-9 || iv.Est != 90 || iv.N != 30 {
		t.Fatalf("got %+v, want 90 [88, 92] by batch proportion", iv)
	}
	if iv := QuantileByProportion(0.99, 99, Interval{Est: 0.99, Lo: 0.97, Hi: 1.01, Level: 0.95, OK: true}, quantile); iv.Hi != 100 {
		t.Fatalf("got %+v, want the upper end clamped at the largest value", iv)
	}
	none := Interval{Est: 0.9, Level: 0.95, N: 12, Method: BatchMeans, Note: "not enough data: 12 groups"}
	if iv := QuantileByProportion(0.9, 90, none, quantile); iv.OK || iv.Est != 90 || iv.Note != none.Note {
		t.Fatalf("got %+v, want no interval with the proportion's note", iv)
	}
	if iv := QuantileByProportion(1, 90, p, quantile); iv.OK || !strings.Contains(iv.Note, "out of range") {
		t.Fatalf("got %+v, want q=1 refused", iv)
	}
}

// AddBatch leaves a Series as the Adds of the same observations do: count,
// interval, warm-up and every later Add alike, for whole batches and a
// partial last one, integer and fractional values; misuse panics.
func TestSeriesAddBatchIsAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for round := range 200 {
		a, b := NewSeries(), NewSeries()
		n := r.IntN(20000)
		at := int64(r.IntN(10))
		for i := 0; i < n; {
			k := min(n-i, mserBatch)
			first, sum := at, 0.0
			for j := range k {
				x := float64(r.IntN(1 << r.IntN(30)))
				if round%2 == 1 {
					x = math.Log1p(x / 1000)
				}
				sum += x
				a.Add(at, x)
				if j < k-1 {
					at += int64(r.IntN(3))
				}
			}
			b.AddBatch(first, at, sum, k)
			i += k
			at += int64(r.IntN(3))
		}
		same := func(what string) {
			if a.Count() != b.Count() || a.MeanCI(math.MinInt64, 0.95) != b.MeanCI(math.MinInt64, 0.95) || a.Warmup() != b.Warmup() {
				t.Fatalf("round %d, %s: AddBatch %d, %+v, %+v; Add %d, %+v, %+v", round, what, b.Count(), b.MeanCI(math.MinInt64, 0.95),
					b.Warmup(), a.Count(), a.MeanCI(math.MinInt64, 0.95), a.Warmup())
			}
			if w := a.Warmup(); a.MeanCI(w.At, 0.9) != b.MeanCI(w.At, 0.9) {
				t.Fatalf("round %d, %s: the intervals after the cut differ", round, what)
			}
		}
		same("batches")
		for range 7 {
			a.Add(at+1, 3)
			b.Add(at+1, 3)
		}
		same("Adds after the batches")
	}
	for _, bad := range []func(s *Series){
		func(s *Series) { s.AddBatch(0, 0, 0, 0) },
		func(s *Series) { s.AddBatch(0, 0, 0, mserBatch+1) },
		func(s *Series) { s.Add(0, 1); s.AddBatch(0, 0, 0, 1) },
		func(s *Series) { s.AddBatch(5, 4, 0, 2) },
		func(s *Series) {
			s.Add(5, 1)
			s.Add(5, 1)
			s.Add(5, 1)
			s.Add(5, 1)
			s.Add(5, 1)
			s.AddBatch(4, 6, 0, 5)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a misused AddBatch did not panic")
				}
			}()
			bad(NewSeries())
		}()
	}
}

// grow lays x, y and q out in one block: whatever sums a store keeps,
// each keeps its own values (no slice runs into the next), and the store
// takes a handful of allocations, not a dozen a slice.
func TestGroupsGrowKeepsSumsApart(t *testing.T) {
	for _, with := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		g := newGroups(1024, 1, with[0], with[1])
		for n := 1; n <= 1024; n++ {
			g.add(int64(n), float64(n), float64(2*n), float64(3*n))
		}
		for i := range g.x {
			n := float64(i + 1)
			if g.x[i] != n || with[0] && g.y[i] != 2*n || with[1] && g.q[i] != 3*n || g.at[i] != int64(i+1) {
				t.Fatalf("with %v group %d: x %v y %v q %v at %d", with, i, g.x[i], g.y, g.q, g.at[i])
			}
		}
		if !with[0] && g.y != nil || !with[1] && g.q != nil {
			t.Fatalf("with %v: a sum it does not keep has room", with)
		}
		if cap(g.x) != 1024 || cap(g.at) != 1024 {
			t.Fatalf("with %v: room for %d groups, want the capacity", with, cap(g.x))
		}
	}
	allocs := testing.AllocsPerRun(5, func() {
		g := newGroups(1024, 1, true, true)
		for n := range 3000 {
			g.add(int64(n), 1, 1, 1)
		}
	})
	if allocs > 4 {
		t.Fatalf("%v allocations for a store of 1024 groups, want 4", allocs)
	}
}

// A Series' batches of 5 reach its groups (Series.unit) exactly as
// groups.add, the general store's, would put them: the sum and the square
// of the batch average's distance from the first one, keyed by the
// batch's first key.
func TestSeriesUnitIsGroupsAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for round := range 20 {
		s, ref := NewSeries(), newGroups(defaultGroups, mserBatch, false, true)
		var first int64
		var sum, avg0 float64
		at := int64(0)
		for i := range r.IntN(30000) {
			x := float64(r.IntN(1 << r.IntN(30)))
			if i%mserBatch == 0 {
				first, sum = at, 0
			}
			sum += x
			s.Add(at, x)
			if i%mserBatch == mserBatch-1 {
				avg := sum / mserBatch
				if ref.n == 0 {
					avg0 = avg
				}
				d := avg - avg0
				ref.add(first, sum, 0, d*d)
			}
			at += int64(r.IntN(3))
		}
		g := s.g
		if g.n != ref.n || g.size != ref.size || g.curN != ref.curN || g.curX != ref.curX || g.curQ != ref.curQ || g.curY != 0 ||
			g.lastAt != ref.lastAt || g.curN > 0 && g.curAt != ref.curAt ||
			!slices.Equal(g.x, ref.x) || !slices.Equal(g.q, ref.q) || !slices.Equal(g.at, ref.at) {
			t.Fatalf("round %d: the Series' groups differ from groups.add's", round)
		}
	}
}
