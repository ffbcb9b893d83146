package stats

import (
	"errors"
	"math"
	"slices"
	"strconv"
)

// Batch-means parameters.
const (
	// minBatches is the fewest batches an interval is built from: below
	// it the t interval's variance estimate is too unstable to report.
	minBatches = 20
	// targetBatches is how many batches the final interval uses when the
	// data allow more: about 30, the usual choice (Law & Kelton,
	// Alexopoulos & Seila), trading degrees of freedom against batches
	// long enough to be nearly independent and normal.
	targetBatches = 30
	// independenceBeta is the significance level of the lag-1 test that
	// decides whether batches must grow; a large beta errs towards larger
	// batches, the safe side.
	independenceBeta = 0.10
	// giveUpBeta is the stricter level at which batches that cannot grow
	// any more (doubling would leave fewer than minBatches) are refused as
	// still correlated.
	giveUpBeta = 0.01
	// defaultGroups is how many groups a series keeps (between half and
	// all of it in use): memory is 8 to 24 bytes per group.
	defaultGroups = 1024
)

// groups is the bounded store behind Series, RatioSeries and
// QuantileSeries: consecutive groups of size units each, at most capacity
// of them. When a group completes and the store is full, adjacent pairs
// merge and the group size doubles ("batch doubling"), so memory stays
// bounded however long the run and the groups always cover all complete
// data in order. The unfinished current group is not part of any result.
//
// Per group it keeps the sum of the units' values x, optionally the sum of
// their denominators y (ratios) and of their squares q (the warm-up rule),
// and the key of its first unit.
type groups struct {
	capacity     int
	size         int64     // units per stored group
	x, y, q      []float64 // per-group sums; y and q only when enabled
	at           []int64   // key of each group's first unit
	withY, withQ bool
	unitN        float64 // observations per unit, for means (when !withY)

	curX, curY, curQ float64
	curN, curAt      int64
	n, lastAt        int64
}

func newGroups(capacity int, unitN float64, withY, withQ bool) groups {
	if capacity < 2 || capacity%2 != 0 {
		panic("stats: groups need an even capacity >= 2")
	}
	return groups{capacity: capacity, size: 1, unitN: unitN, withY: withY, withQ: withQ}
}

// add appends one unit. Keys must not decrease.
func (g *groups) add(at int64, x, y, q float64) {
	checkKey(g.n, g.lastAt, at)
	g.lastAt = at
	if g.curN == 0 {
		g.curAt = at
	}
	g.curX += x
	g.curY += y
	g.curQ += q
	g.curN++
	g.n++
	if g.curN < g.size {
		return
	}
	g.complete()
}

// complete stores the current group, which add just filled.
func (g *groups) complete() {
	if len(g.x) == g.capacity {
		// Full: merge pairs and double the size; the group just completed
		// becomes the first half of the next, larger one.
		g.mergePairs()
		return
	}
	if len(g.x) == cap(g.x) {
		g.grow()
	}
	g.x = append(g.x, g.curX)
	if g.withY {
		g.y = append(g.y, g.curY)
	}
	if g.withQ {
		g.q = append(g.q, g.curQ)
	}
	g.at = append(g.at, g.curAt)
	g.curX, g.curY, g.curQ, g.curN = 0, 0, 0, 0
}

// firstGroups is the room a store takes at its first group: a short
// series (a run's throughput samples) stays small.
const firstGroups = 64

// grow gives the store room for more groups, in two steps: firstGroups,
// then all of capacity, each one block of sums (x, y, q) and one of keys.
// Growing by append would take a dozen allocations a slice on the way to
// capacity, four slices a store (the end of a run makes a dozen stores).
func (g *groups) grow() {
	n := firstGroups
	if cap(g.x) >= firstGroups {
		n = g.capacity
	}
	n = min(n, g.capacity)
	k := 1
	if g.withY {
		k++
	}
	if g.withQ {
		k++
	}
	sums := make([]float64, k*n)
	take := func(old []float64) []float64 {
		s := sums[:len(old):n]
		copy(s, old)
		sums = sums[n:]
		return s
	}
	g.x = take(g.x)
	if g.withY {
		g.y = take(g.y)
	}
	if g.withQ {
		g.q = take(g.q)
	}
	at := make([]int64, len(g.at), n)
	copy(at, g.at)
	g.at = at
}

// checkKey panics when a key decreases: the caller broke the contract.
// It is small enough to be inlined where every observation takes it.
func checkKey(n, last, at int64) {
	if n > 0 && at < last {
		keyDecreased(last, at)
	}
}

func keyDecreased(last, at int64) {
	panic("stats: Add with key " + strconv.FormatInt(at, 10) + " after " + strconv.FormatInt(last, 10) + ": keys must not decrease")
}

func (g *groups) mergePairs() {
	half := len(g.x) / 2
	for i := range half {
		g.x[i] = g.x[2*i] + g.x[2*i+1]
		if g.withY {
			g.y[i] = g.y[2*i] + g.y[2*i+1]
		}
		if g.withQ {
			g.q[i] = g.q[2*i] + g.q[2*i+1]
		}
		g.at[i] = g.at[2*i]
	}
	g.x, g.at = g.x[:half], g.at[:half]
	if g.withY {
		g.y = g.y[:half]
	}
	if g.withQ {
		g.q = g.q[:half]
	}
	g.size *= 2
}

// from returns the index of the first group whose key is >= from.
func (g *groups) from(from int64) int {
	i, _ := slices.BinarySearch(g.at, from)
	return i
}

// sums returns the kept groups' numerators and denominators; without
// stored denominators each group's is its observation count.
func (g *groups) sums(first int) (x, y []float64) {
	x = g.x[first:]
	if g.withY {
		return x, g.y[first:]
	}
	y = make([]float64, len(x))
	for i := range y {
		y[i] = float64(g.size) * g.unitN
	}
	return x, y
}

// batchInterval turns the groups from key from on into a t interval:
//
//  1. Starting with one group per batch, test the lag-1 correlation of
//     the batch values (von Neumann's ratio in Young's C form, one-sided
//     at independenceBeta); while it is significant, double the batch size
//     (Fishman's batch-doubling rule, LBATCH of Fishman & Yarberry), as
//     long as at least minBatches batches remain. When the batches cannot
//     grow any more and the correlation is still significant at
//     giveUpBeta, the run is too short: no interval; significant only at
//     independenceBeta, the interval comes with a "borderline" note.
//  2. Use about targetBatches batches of at least the accepted size (many
//     small batches for the test, fewer large ones for the interval, as in
//     Law & Carson's procedure) and return the delta-method t interval of
//     ΣX/ΣY over them, which for plain means is the textbook batch-means
//     interval.
//
// Groups that do not fill a whole batch are dropped from the start, next
// to the warm-up. units renders a number of units for the notes.
func (g *groups) batchInterval(from int64, level float64, m Method, units func(int) string) Interval {
	first := g.from(from)
	xs, ys := g.sums(first)
	k := len(xs)
	if why := checkLevel(level); why != "" {
		return none(0, level, k, m, why)
	}
	if !finite(xs) || !finite(ys) {
		return none(math.NaN(), level, k, m, "a value is NaN or infinite")
	}
	est := ratioOf(xs, ys)
	if k < minBatches {
		return none(est, level, k, m, "not enough data: "+plural(k, "group")+" of "+units(int(g.size))+
			" after the warm-up, need "+strconv.Itoa(minBatches)+" batches")
	}
	accepted, borderline := 1, false
	for ; ; accepted *= 2 {
		c, sd := youngC(regroup(xs, ys, accepted))
		if c <= NormalQuantile(1-independenceBeta)*sd {
			break
		}
		if k/(2*accepted) >= minBatches {
			continue // grow the batches
		}
		// The batches cannot grow further: give up only on strong
		// evidence, so that independent batches are not refused one time
		// in ten at the edge.
		if c > NormalQuantile(1-giveUpBeta)*sd {
			return none(est, level, k, m, "batches still correlated at "+plural(k/accepted, "batch")+" of "+
				units(int(g.size)*accepted)+" (lag-1 C = "+strconv.FormatFloat(c, 'f', 2, 64)+"): run longer")
		}
		borderline = true
		break
	}
	per := max(accepted, k/targetBatches)
	bx, by := regroup(xs, ys, per)
	iv := ratioInterval(bx, by, level, m, "batch")
	iv.Note = plural(len(bx), "batch") + " of " + units(int(g.size)*per) +
		", lag-1 r = " + strconv.FormatFloat(lag1(bx, by), 'f', 2, 64)
	if borderline {
		iv.Note += "; borderline lag-1 correlation at the largest batches: the interval may be narrow, run longer to be sure"
	}
	return iv
}

// unitsOf renders counts of a unit: unitsOf("observation")(5) is
// "5 observations".
func unitsOf(unit string) func(int) string {
	return func(n int) string { return plural(n, unit) }
}

// regroup sums consecutive runs of per groups, dropping the k mod per
// oldest groups.
func regroup(xs, ys []float64, per int) (bx, by []float64) {
	skip := len(xs) % per
	n := len(xs) / per
	bx, by = make([]float64, n), make([]float64, n)
	for i := range n {
		for j := skip + i*per; j < skip+(i+1)*per; j++ {
			bx[i] += xs[j]
			by[i] += ys[j]
		}
	}
	return bx, by
}

// residuals returns e_j = x_j - R·y_j with R = Σx/Σy: for equal y they are
// the deviations of the batch means (scaled), for a ratio the terms of its
// delta-method variance.
func residuals(xs, ys []float64) []float64 {
	r := ratioOf(xs, ys)
	e := make([]float64, len(xs))
	for i := range xs {
		e[i] = xs[i] - r*ys[i]
	}
	return e
}

func ratioOf(xs, ys []float64) float64 {
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	if sy == 0 {
		return 0
	}
	return sx / sy
}

// youngC returns the C statistic of the batch residuals,
// C = 1 - Σ(e_j - e_j+1)² / (2·Σ(e_j - ē)²), and its standard deviation
// under independence. Under independence (normal batch values) C has mean
// 0 and variance (k-2)/(k²-1) (von Neumann 1941; Young 1941); positive
// correlation makes it large.
func youngC(xs, ys []float64) (c, sd float64) {
	e := residuals(xs, ys)
	k := float64(len(e))
	_, variance := meanVar(e)
	ss := variance * (k - 1)
	sd = math.Sqrt((k - 2) / (k*k - 1))
	if ss == 0 {
		return 0, sd
	}
	var sq float64
	for i := 1; i < len(e); i++ {
		d := e[i] - e[i-1]
		sq += d * d
	}
	return 1 - sq/(2*ss), sd
}

// lag1 is the usual lag-1 autocorrelation estimate of the batch
// residuals, reported in notes.
func lag1(xs, ys []float64) float64 {
	e := residuals(xs, ys)
	mean, _ := meanVar(e)
	var num, den float64
	for i := range e {
		d := e[i] - mean
		den += d * d
		if i > 0 {
			num += d * (e[i-1] - mean)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// Series is the streaming batch-means estimator of a mean over one long
// run, with bounded memory (about 24 KiB however many values go in), and
// the warm-up detector for the same data.
//
// Feed it every observation from the start of the run in completion order
// with a non-decreasing key (a virtual time, or an index): Add(at, x). At
// the end call Warmup for the truncation point and MeanCI(w.At, level) for
// the interval of the mean after it.
//
// It averages consecutive batches of 5 observations (the batches of
// MSER-5) and keeps them in at most 1024 groups; when the groups fill,
// adjacent ones merge and the group size doubles. Everything is computed
// from the groups, so the warm-up cut falls on a group boundary (at most
// 1/512 of the run off) and the newest observations, those of an
// unfinished group, are left out.
type Series struct {
	g    groups // units: batches of 5 observations
	b5   float64
	n5   int
	at5  int64
	ref  float64 // the first batch average: squares are taken about it
	last int64   // the latest key
}

// NewSeries returns an empty Series.
func NewSeries() *Series { return &Series{g: newGroups(defaultGroups, mserBatch, false, true)} }

// Add records observation x with key at (keys must not decrease). It is
// small enough to be inlined: the observations inside a batch of 5 only
// add to it; the first and the last of a batch take add.
func (s *Series) Add(at int64, x float64) {
	if uint(s.n5-1) < mserBatch-2 && at >= s.last { // 0 < n5 < 4
		s.last = at
		s.b5 += x
		s.n5++
		return
	}
	s.add(at, x)
}

func (s *Series) add(at int64, x float64) {
	checkKey(s.Count(), s.last, at)
	s.last = at
	if s.n5 == 0 {
		s.at5 = at
	}
	s.b5 += x
	if s.n5++; s.n5 < mserBatch {
		return
	}
	s.finish()
}

// finish closes the batch of 5 whose last observation is in: its sum and
// the square of its average's distance from ref go to the groups.
func (s *Series) finish() {
	s.unit(s.at5, s.b5)
	s.b5, s.n5 = 0, 0
}

// unit adds a batch of 5 observations with key at and sum sum to the
// groups: its sum, and the square of its average's distance from ref.
// It is groups.add written out for a Series, which keeps no y (its
// curY stays 0) and has checked the key against its own latest, which is
// at least the groups' (Add, AddBatch).
func (s *Series) unit(at int64, sum float64) {
	avg := sum / mserBatch
	g := &s.g
	if g.n == 0 {
		s.ref = avg
	}
	d := avg - s.ref
	g.lastAt = at
	if g.curN == 0 {
		g.curAt = at
	}
	g.curX += sum
	g.curQ += d * d
	g.curN++
	g.n++
	if g.curN < g.size {
		return
	}
	g.complete()
}

// AddBatch records n observations (1 to 5) at once from the start of a
// batch of 5 (the Series holds a multiple of 5 observations): keys first
// to last, sum their sum as Add forms it, 0 + x1 + x2 + ... from the left.
// It leaves the Series as the n calls of Add would: for a caller that
// sums its observations more cheaply than Add can (several series' at
// once), with n < 5 only for the last observations.
func (s *Series) AddBatch(first, last int64, sum float64, n int) {
	if s.n5 != 0 || n < 1 || n > mserBatch {
		panic("stats: AddBatch of " + strconv.Itoa(n) + " observations after " + strconv.Itoa(s.n5) + " of a batch")
	}
	checkKey(s.Count(), s.last, first)
	checkKey(1, first, last)
	s.last = last
	if n < mserBatch {
		s.at5, s.b5, s.n5 = first, sum, n
		return
	}
	s.unit(first, sum) // a whole batch: straight to the groups (finish)
}

// Count returns how many observations were added.
func (s *Series) Count() int64 { return s.g.n*mserBatch + int64(s.n5) }

// MeanCI returns the batch-means interval for the mean of the observations
// whose group starts at key from or later (pass Warmup().At, or
// math.MinInt64 for all). See the package documentation for the rule.
func (s *Series) MeanCI(from int64, level float64) Interval {
	return s.g.batchInterval(from, level, BatchMeans, func(n int) string { return plural(mserBatch*n, "observation") })
}

// BatchMeansCI is the non-streaming convenience: the batch-means interval
// for the mean of xs, taken as already past the warm-up (cut it first with
// MSER5).
func BatchMeansCI(xs []float64, level float64) Interval {
	s := NewSeries()
	for i, x := range xs {
		s.Add(int64(i), x)
	}
	return s.MeanCI(0, level)
}

// RatioSeries is the streaming batch interval for a ratio of sums over one
// run, R = Σnum / Σden: duplicates per produced message (feed per-interval
// duplicate and produced counts), acks per second (acks and interval
// length), and so on. Memory is bounded as for Series; each Add is one
// unit (no groups of 5, since per-interval counts are already sums).
type RatioSeries struct{ g groups }

// NewRatioSeries returns an empty RatioSeries.
func NewRatioSeries() *RatioSeries { return &RatioSeries{g: newGroups(defaultGroups, 1, true, false)} }

// Add records one pair (e.g. one interval's counts) with key at (keys must
// not decrease).
func (s *RatioSeries) Add(at int64, num, den float64) { s.g.add(at, num, den, 0) }

// CI returns the delta-method batch interval for Σnum/Σden over the units
// whose group starts at key from or later, with batches chosen as for
// Series.MeanCI (the lag-1 test runs on the batch residuals
// num - R·den).
func (s *RatioSeries) CI(from int64, level float64) Interval {
	return s.g.batchInterval(from, level, BatchRatio, unitsOf("unit"))
}

// QuantileSeries is the streaming batch-quantile estimator of a quantile
// over one long run: the q-quantile (nearest rank) of each block of
// consecutive observations, then batch means over those block values.
// Memory is one block of observations plus bounded groups.
//
// Its estimate is the mean of per-block quantiles, not the quantile of all
// the data: each block's estimate is biased by O(1/(block·(1-q))) of the
// value, which is why blocks default to 100/(1-q) observations (10000 for
// p99), and why it needs a long run (20 batches of at least one block
// each). It is noisier than batch means of the mean; for p99 and beyond
// prefer independent replications (MeanCI over per-seed percentiles).
type QuantileSeries struct {
	q       float64
	block   int
	buf     []float64
	bufAt   int64
	n, last int64
	g       groups
}

// NewQuantileSeries returns an empty QuantileSeries for the q-quantile
// with blocks of the given number of observations (0: ⌈100/(1-q)⌉, at
// least 100).
func NewQuantileSeries(q float64, block int) (*QuantileSeries, error) {
	if !(q > 0 && q < 1) {
		return nil, errors.New("stats: quantile " + strconv.FormatFloat(q, 'g', -1, 64) + " out of range: want 0 < q < 1 (0.99 for p99)")
	}
	if block < 0 {
		return nil, errors.New("stats: block size " + strconv.Itoa(block) + " out of range: want 0 (default) or more")
	}
	if block == 0 {
		block = max(100, int(math.Ceil(100/(1-q)-1e-9)))
	}
	return &QuantileSeries{q: q, block: block, buf: make([]float64, 0, block), g: newGroups(defaultGroups, 1, false, false)}, nil
}

// Add records observation x with key at (keys must not decrease).
func (s *QuantileSeries) Add(at int64, x float64) {
	checkKey(s.n, s.last, at)
	s.n, s.last = s.n+1, at
	if len(s.buf) == 0 {
		s.bufAt = at
	}
	s.buf = append(s.buf, x)
	if len(s.buf) == s.block {
		s.g.add(s.bufAt, selectKth(s.buf, nearestRank(s.block, s.q)-1), 0, 0)
		s.buf = s.buf[:0]
	}
}

// CI returns the batch-quantile interval over the blocks that start at
// key from or later.
func (s *QuantileSeries) CI(from int64, level float64) Interval {
	return s.g.batchInterval(from, level, BatchQuantiles, func(n int) string {
		return plural(n, "block") + " of " + plural(s.block, "observation")
	})
}

// selectKth returns the k-th smallest element (0-based) of a, reordering
// a: Hoare's quickselect with a median-of-three pivot, linear on average;
// after 2·log2(n) partitions without finishing it sorts what is left, so
// the worst case stays O(n log n).
func selectKth(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for budget := 2 * bitsLen(len(a)); lo < hi; budget-- {
		if budget == 0 {
			slices.Sort(a[lo : hi+1])
			break
		}
		// Median of three into a[mid], then Hoare partition around it.
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i, j = i+1, j-1
			}
		}
		// Now a[lo..j] <= pivot <= a[i..hi], and a[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// BatchQuantileCI is the non-streaming convenience for QuantileSeries:
// xs is taken as already past the warm-up; block 0 picks the default.
func BatchQuantileCI(xs []float64, q float64, block int, level float64) Interval {
	s, err := NewQuantileSeries(q, block)
	if err != nil {
		return none(0, level, 0, BatchQuantiles, err.Error())
	}
	for i, x := range xs {
		s.Add(int64(i), x)
	}
	return s.CI(0, level)
}
