package sim

import (
	"math/bits"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/model"
)

// histMaxOf is h.Max(): the highest value equivalent to the largest value
// recorded. It is the 100th percentile, which the library finds scanning
// its counts eight at a time; its Max walks them one sub-bucket at a time,
// computing the sub-bucket's values at every step (with Mean, whose sum
// needs that walk, it was most of a short run's end).
func histMaxOf(h *hdrhistogram.Histogram) int64 {
	if h.TotalCount() == 0 {
		return h.Max()
	}
	return h.ValueAtQuantile(100)
}

// The geometry of newHist's histograms (histMin 1, histSigFig 3): values
// below 2048 count one apiece; above, bucket b >= 1 holds 1024 slots of
// 2^b values each, from 1024<<b. A value's slot is its index in the
// library's counts (its "flat index"), the order its Mean and percentiles
// walk them in.
const (
	histHalfBits = 10                  // log2 of the slots of a bucket above the first
	histHalf     = 1 << histHalfBits   // 1024
	histHalfMask = histHalf - 1        // a slot's offset in its bucket
	histSubBits  = histHalfBits + 1    // log2 of bucket 0's values
	histSubMask  = 2*histHalf - 1      // the values of bucket 0
	histSlots    = (22 + 1) * histHalf // the library's counts for histMax: 22 buckets
)

// hist counts latencies as an hdrhistogram.Histogram of newHist's geometry
// does, slot for slot, and reads them back as the library would (its
// mean, percentiles, max: latency): recording a value is an index and an
// increment (the library's RecordValue checks and converts on every call),
// and the mean adds the few slots in use instead of walking every
// sub-bucket (the library's Mean, most of the end of a run). counts grows
// to the highest slot in use only. hdr builds the library's histogram
// where a Result hands one out.
type hist struct {
	counts []int64 // by slot, up to the highest recorded
	total  int64
}

// histSlot is value v's slot, the library's counts index for it.
func histSlot(v int64) int {
	b := 64 - bits.LeadingZeros64(uint64(v)|histSubMask) - histSubBits
	return (b+1)<<histHalfBits + int(v>>b) - histHalf
}

// histLowest is the lowest value of slot i, and histSpan how many values
// it holds.
func histLowest(i int) int64 {
	if i < 2*histHalf {
		return int64(i)
	}
	b := i>>histHalfBits - 1
	return int64(i&histHalfMask+histHalf) << b
}

func histSpan(i int) int64 {
	if i < 2*histHalf {
		return 1
	}
	return 1 << (i>>histHalfBits - 1)
}

// record counts value v; one the library would reject (negative, past
// its last slot) panics.
func (h *hist) record(v int64) { h.add(v, 1) }

// add counts n more of value v (n < 0 takes them away again); a value
// past the slots so far (a negative one among them) takes grow.
func (h *hist) add(v, n int64) {
	i := histSlot(v)
	if uint(i) >= uint(len(h.counts)) {
		h.grow(v)
	}
	h.counts[i] += n
	h.total += n
}

// grow makes counts reach value v's slot, doubling; a value the library
// would reject panics.
func (h *hist) grow(v int64) {
	i := histSlot(v)
	if v < 0 || i >= histSlots {
		panic("sim: a histogram value out of its range")
	}
	n := min(max(i+1, 2*len(h.counts), 256), histSlots)
	c := make([]int64, n)
	copy(c, h.counts)
	h.counts = c
}

// mean is the library's Mean: each slot's count times its median value,
// over the total, summed in slot order.
func (h *hist) mean() float64 {
	if h.total == 0 {
		return 0
	}
	var mean float64
	total := float64(h.total)
	for i, c := range h.counts {
		if c != 0 {
			mean += float64(c) * float64(histLowest(i)+histSpan(i)>>1) / total
		}
	}
	return mean
}

// valueAt is the library's ValueAtPercentile (p from 0 to 100): the
// highest value of the slot where the count reaches p's rank (the lowest
// for p = 0).
func (h *hist) valueAt(p float64) int64 {
	if h.total == 0 {
		return 0
	}
	p = min(max(p, 0), 100)
	rank := histRank(p, h.total)
	var sum int64
	i := len(h.counts) - 1
	for j, c := range h.counts {
		if sum += c; sum >= rank {
			i = j
			break
		}
	}
	if p == 0 {
		return histLowest(i)
	}
	return histLowest(i) + histSpan(i) - 1
}

// histRank is the library's rank of percentile p among total values:
// from 1 to total.
func histRank(p float64, total int64) int64 {
	rank := (p/100)*float64(total) + 0.5
	switch {
	case !(rank >= 1):
		return 1
	case rank >= float64(total):
		return total
	}
	return int64(rank)
}

// latency is the summary of h's values, as latency of the library's
// histogram would be.
func (h *hist) latency() model.Latency {
	if h.total == 0 {
		return model.Latency{}
	}
	return model.Latency{
		Count: h.total, Mean: int64(h.mean() + 0.5),
		P50: h.valueAt(50), P90: h.valueAt(90), P99: h.valueAt(99),
		P999: h.valueAt(99.9), Max: h.valueAt(100),
	}
}

// hdr is the library's histogram of the same counts.
func (h *hist) hdr() *hdrhistogram.Histogram {
	out := newHist()
	for i, c := range h.counts {
		if c != 0 {
			if err := out.RecordValues(histLowest(i), c); err != nil {
				panic("sim: histogram rejected a count in its range: " + err.Error())
			}
		}
	}
	return out
}
