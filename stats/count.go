package stats

import "strconv"

// CountSeries is several Series of whole-number observations made
// together, one a column (0 or 1 for "at or below a quantile", one column
// a quantile), or, made by NewCountRatioSeries, RatioSeries of pairs
// (count, 1) (a message's duplicate consumptions). A column's interval is
// the one its Series' (RatioSeries') would be, from the same groups: a
// sum of whole numbers below 2^53 is exact in float64 in any order, so it
// adds an int64 and hands its groups a whole group's sum at once, where a
// Series adds each batch of 5 (a RatioSeries each pair) to them; and one
// Add takes a value for every column.
//
// The observations must be whole numbers from 0 whose sums stay below
// 2^53. It keeps no squares: it has no Warmup (cut with a Series').
type CountSeries struct {
	g     []groups // by column
	sum   []int64  // by column, of the observations since the last push
	per   int64    // observations per unit: mserBatch as a Series', 1 as a RatioSeries'
	left  int64    // observations until the groups' current group is complete
	open  bool     // observations since the last push are in sum
	room  int64    // while open, how many more may come before the push's last
	first int64    // the key of the first of them
	last  int64    // the latest key
}

// NewCountSeries returns an empty CountSeries of cols columns whose CI is
// a Series' MeanCI.
func NewCountSeries(cols int) *CountSeries { return newCountSeries(cols, mserBatch, false) }

// NewCountRatioSeries returns an empty CountSeries of cols columns whose
// CI is a RatioSeries' CI of each observation over 1.
func NewCountRatioSeries(cols int) *CountSeries { return newCountSeries(cols, 1, true) }

func newCountSeries(cols int, per int64, ratio bool) *CountSeries {
	s := &CountSeries{g: make([]groups, cols), sum: make([]int64, cols), per: per, left: per}
	for j := range s.g {
		s.g[j] = newGroups(defaultGroups, float64(per), ratio, false)
	}
	return s
}

// Add records one observation per column, xs[j] in column j, with key at
// (keys must not decrease): as Series.Add(at, float64(xs[j])), or
// RatioSeries.Add(at, float64(xs[j]), 1), of each column's.
func (s *CountSeries) Add(at int64, xs ...int64) {
	sum := s.sum
	if len(xs) != len(sum) {
		panic("stats: CountSeries.Add of " + strconv.Itoa(len(xs)) + " values to " + strconv.Itoa(len(sum)) + " columns")
	}
	for j, x := range xs {
		sum[j] += x // no bounds check: len(sum) is len(xs)
	}
	if s.room--; s.room >= 0 && at >= s.last { // neither a push's first nor its last
		s.last = at
		return
	}
	s.add(at)
}

// add is the rest of Add of a push's first or last observation (or of
// one whose key decreased), already in sum.
func (s *CountSeries) add(at int64) {
	checkKey(s.Count(), s.last, at) // 0 only before the first observation
	s.last = at
	if !s.open {
		s.open, s.first, s.room = true, at, s.left-2
		if s.left > 1 {
			return
		}
	}
	s.push()
}

// push hands each column's groups the observations since the last push,
// which complete their current group: the sum of its units and, for a
// ratio, their denominators (one each); the group's key is its first
// unit's, unless it began before a merge (groups.complete).
func (s *CountSeries) push() {
	units := s.left / s.per
	for j := range s.g {
		g := &s.g[j]
		if g.curN == 0 {
			g.curAt = s.first
		}
		g.curX += float64(s.sum[j])
		if g.withY {
			g.curY += float64(units)
		}
		g.curN += units
		g.n += units
		g.lastAt = s.last
		g.complete()
		s.sum[j] = 0
	}
	s.open, s.room = false, 0
	s.left = (s.g[0].size - s.g[0].curN) * s.per
}

// Count returns how many observations were added.
func (s *CountSeries) Count() int64 {
	if !s.open {
		return s.g[0].n * s.per
	}
	return s.g[0].n*s.per + s.left - 1 - max(s.room, 0)
}

// CI returns column j's interval: a Series' MeanCI (NewCountSeries) or a
// RatioSeries' CI (NewCountRatioSeries) of the same observations.
func (s *CountSeries) CI(j int, from int64, level float64) Interval {
	g := &s.g[j]
	if g.withY {
		return g.batchInterval(from, level, BatchRatio, unitsOf("unit"))
	}
	return g.batchInterval(from, level, BatchMeans, func(n int) string { return plural(mserBatch*n, "observation") })
}
