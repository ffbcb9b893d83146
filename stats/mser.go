package stats

import (
	"math"
	"slices"
	"strconv"
)

// MSER parameters.
const (
	// mserBatch is the 5 of MSER-5: the rule runs on averages of 5
	// consecutive observations (White, Cobb & Spratt 2000).
	mserBatch = 5
	// mserMinBatches is the fewest batch averages the rule runs on.
	mserMinBatches = 20
	// mserTail is how many batch averages at the end are never a
	// candidate: with only a handful left, their spread says nothing.
	mserTail = 10
)

// Warmup is the warm-up (initial transient) a rule found in one run's
// output: drop the first Truncate observations, that is everything before
// key At.
type Warmup struct {
	Truncate int64  `json:"truncate"`       // observations to drop from the start
	At       int64  `json:"at"`             // key of the first kept observation (its index for MSER5)
	N        int64  `json:"n"`              // observations examined
	Step     int64  `json:"step"`           // observations between candidate cut points: 5, more once a Series has merged groups
	Failed   bool   `json:"failed"`         // no trustworthy truncation point: see Note
	Note     string `json:"note,omitempty"` // why the rule failed
}

// String renders the result for a report: "MSER-5 truncated 1230 of
// 20000 observations (6.2%)", with the failure appended when there is one.
func (w Warmup) String() string {
	s := "MSER-5 truncated " + strconv.FormatInt(w.Truncate, 10) + " of " + strconv.FormatInt(w.N, 10) + " observations"
	if w.N > 0 {
		s += " (" + strconv.FormatFloat(100*float64(w.Truncate)/float64(w.N), 'f', 1, 64) + "%)"
	}
	if w.Failed {
		s += "; warning: " + w.Note
	}
	return s
}

// MSER5 runs the MSER-5 warm-up rule on a whole series (non-streaming):
// average consecutive batches of 5 observations (an incomplete last batch
// is ignored), then choose the truncation point d, in batches, that
// minimises
//
//	MSER(d) = Σ_{i>=d} (Y_i - Ȳ_d)² / (m-d)²
//
// over the first half of the m batch averages Y, Ȳ_d being the mean of
// the batch averages kept. MSER(d) estimates the squared standard error of
// the mean of what is kept, so the rule drops data while dropping it lowers
// that error by removing bias more than it costs in sample size (White
// 1997; the 5-batch form of White, Cobb & Spratt 2000, recommended by
// Hoad, Robinson & Davies 2010). The last 10 batch averages are never
// candidates: so few say nothing about the spread.
//
// The rule fails, and says so, when the minimum over all candidates lies
// in the second half: the series has not settled by its middle, so the
// run is too short to estimate anything steady. The returned truncation is
// then still the best point in the first half.
func MSER5(xs []float64) Warmup {
	m := len(xs) / mserBatch
	ys := make([]float64, m)
	for i := range ys {
		var s float64
		for _, x := range xs[mserBatch*i : mserBatch*(i+1)] {
			s += x
		}
		ys[i] = s / mserBatch
	}
	w := Warmup{N: int64(len(xs)), Step: mserBatch}
	if m < mserMinBatches {
		w.Failed, w.Note = true, notEnoughForMSER(m)
		return w
	}
	stat, pos := mserStats(ys)
	d, failed, why := mserPick(stat, pos, m)
	w.Truncate, w.At, w.Failed, w.Note = int64(pos[d])*mserBatch, int64(pos[d])*mserBatch, failed, why
	return w
}

// Warmup runs MSER-5 on the Series: the statistic is exactly MSER-5's (the
// groups keep the sums and squares of their batch averages), evaluated at
// group boundaries only, which are 5 observations apart while the series
// is short and at most 1/512 of it once groups have merged (Step).
func (s *Series) Warmup() Warmup {
	g := &s.g
	w := Warmup{N: s.Count(), Step: mserBatch * g.size, At: math.MinInt64}
	if len(g.at) > 0 {
		w.At = g.at[0]
	}
	m := len(g.x) * int(g.size)
	if m < mserMinBatches {
		w.Failed, w.Note = true, notEnoughForMSER(m)
		return w
	}
	// Suffix sums of (Y - ref) and (Y - ref)² over groups, from the end.
	var stat []float64
	var pos []int
	var s1, s2 float64
	for j := len(g.x) - 1; j >= 0; j-- {
		s1 += g.x[j]/mserBatch - float64(g.size)*s.ref
		s2 += g.q[j]
		c := float64((len(g.x) - j) * int(g.size))
		if c < mserTail {
			continue
		}
		stat = append(stat, max(0, s2-s1*s1/c)/(c*c))
		pos = append(pos, j*int(g.size))
	}
	slices.Reverse(stat)
	slices.Reverse(pos)
	d, failed, why := mserPick(stat, pos, m)
	w.Truncate, w.At, w.Failed, w.Note = int64(pos[d])*mserBatch, g.at[pos[d]/int(g.size)], failed, why
	return w
}

func notEnoughForMSER(m int) string {
	return "not enough data for a warm-up rule: " + plural(m, "batch average") + ", need " + strconv.Itoa(mserMinBatches)
}

// mserPick chooses among the candidate cuts, statistic stat[j] at batch
// position pos[j] (ascending) out of m batch averages: the smallest
// statistic in the first half, and failure when the smallest overall lies
// past it.
func mserPick(stat []float64, pos []int, m int) (d int, failed bool, why string) {
	best, bestAll := 0, 0
	for j, v := range stat {
		if pos[j] <= m/2 && v < stat[best] {
			best = j
		}
		if v < stat[bestAll] {
			bestAll = j
		}
	}
	if pos[bestAll] > m/2 {
		return best, true, "the MSER statistic is smallest at " + strconv.Itoa(100*pos[bestAll]/m) +
			"% of the run, past its middle: the run is too short to leave its initial transient, run longer"
	}
	return best, false, ""
}

// mserStats returns MSER(d) for every candidate d (all but the last
// mserTail batch averages) and the candidates' positions, from one
// backward pass of Welford's update over the suffixes (stable when the
// mean is large compared with the spread).
func mserStats(ys []float64) (stat []float64, pos []int) {
	m := len(ys)
	last := m - mserTail
	stat, pos = make([]float64, last+1), make([]int, last+1)
	var mean, m2 float64
	for i := m - 1; i >= 0; i-- {
		n := float64(m - i)
		dlt := ys[i] - mean
		mean += dlt / n
		m2 += dlt * (ys[i] - mean)
		if i <= last {
			stat[i], pos[i] = m2/(n*n), i
		}
	}
	return stat, pos
}
