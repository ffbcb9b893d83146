package sim

import (
	"math"
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

// histSlots is a whole number of octets (histOctets).
var _ = [1]struct{}{}[histSlots%8]

// hist counts latencies as an hdrhistogram.Histogram of newHist's geometry
// does, slot for slot, and reads them back as the library would (its
// mean, percentiles, max: latency): recording a value is an index, an
// increment and a test for spill (the library's RecordValue checks and
// converts on every call), and the mean adds the slots' counts instead of walking
// every sub-bucket (the library's Mean, most of the end of a run). A slot
// counts in 32 bits, half the library's 188 KB; after histSpillAt changes
// the 32-bit counts are added into 64-bit ones (wide, made then) and start
// again from zero, so no count wraps however long the run. hdr builds the
// library's histogram where a Result hands one out.
type hist struct {
	counts *[histSlots]int32 // by slot, the changes since the last spill
	wide   *[histSlots]int64 // by slot, up to the last spill; nil before the first
	total  int64
	narrow int32 // values recorded or taken since the last spill
}

// histSpillAt is how many changes counts takes before spill: no 32-bit
// slot can wrap before it.
const histSpillAt = math.MaxInt32

// newHistCounts returns an empty hist.
func newHistCounts() *hist { return &hist{counts: new([histSlots]int32)} }

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
// its last slot) panics, out of the slots' range.
func (h *hist) record(v int64) {
	h.counts[histSlot(v)]++
	h.total++
	if h.narrow++; h.narrow == histSpillAt {
		h.spill()
	}
}

// take takes value v, recorded before, away again.
func (h *hist) take(v int64) {
	h.counts[histSlot(v)]--
	h.total--
	if h.narrow++; h.narrow == histSpillAt {
		h.spill()
	}
}

// add counts value v as record does but for the spill, small enough to
// be inlined: for a caller that spills the hist itself (spill) before
// histSpillAt changes (obsAgg, for its histograms together). A hist takes
// either add and sub or record and take.
func (h *hist) add(v int64) {
	h.counts[histSlot(v)]++
	h.total++
}

// sub takes value v, added before, away again, as add.
func (h *hist) sub(v int64) {
	h.counts[histSlot(v)]--
	h.total--
}

// spill adds the 32-bit counts into the 64-bit ones and empties them.
func (h *hist) spill() {
	if h.wide == nil {
		h.wide = new([histSlots]int64)
	}
	for i, c := range h.counts {
		h.wide[i] += int64(c)
	}
	clear(h.counts[:])
	h.narrow = 0
}

// count is slot i's count.
func (h *hist) count(i int) int64 {
	c := int64(h.counts[i])
	if h.wide != nil {
		c += h.wide[i]
	}
	return c
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
	var i int
	if h.settled() {
		i = slotOfRank(h.counts, rank)
	} else {
		i = slotOfRank(h.wide, rank)
	}
	if p == 0 {
		return histLowest(i)
	}
	return histLowest(i) + histSpan(i) - 1
}

// settled spills the counts into the 64-bit ones when h has spilled
// before, so that its readers find every count in one array: the
// 32-bit counts when it reports true, else the 64-bit ones. The readers
// loop over that array with a load and a test a slot (most are empty),
// where count would add the two arrays' slots at every step.
func (h *hist) settled() bool {
	if h.wide == nil {
		return true
	}
	h.spill()
	return false
}

// slotOfRank is the slot of counts cs where their sum reaches rank, the
// last slot when it never does.
func slotOfRank[T int32 | int64](cs *[histSlots]T, rank int64) int {
	var sum int64
	for g := range histOctets {
		o := octet(cs, g)
		if emptyOctet(o) {
			continue
		}
		for j, c := range o {
			if c == 0 {
				continue
			}
			if sum += int64(c); sum >= rank {
				return 8*g + j
			}
		}
	}
	return histSlots - 1
}

// histOctets is how many runs of eight slots a hist has: its readers
// loop over those, and skip an empty one with a single test (most slots
// of a run's latencies are empty, past the first few buckets; scanned
// one at a time they were most of a reader's cost).
const histOctets = histSlots / 8

// octet is slots 8g to 8g+7 of cs.
func octet[T int32 | int64](cs *[histSlots]T, g int) *[8]T { return (*[8]T)(cs[8*g : 8*g+8]) }

// emptyOctet reports whether the eight slots of o are all empty.
func emptyOctet[T int32 | int64](o *[8]T) bool {
	return o[0]|o[1]|o[2]|o[3]|o[4]|o[5]|o[6]|o[7] == 0
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

// latencyPercentiles are the percentiles of a model.Latency, in its order.
var latencyPercentiles = [...]float64{50, 90, 99, 99.9, 100}

// latency is the summary of h's values, as latency of the library's
// histogram would be.
func (h *hist) latency() model.Latency {
	if h.total == 0 {
		return model.Latency{}
	}
	mean, at := h.walk()
	return model.Latency{Count: h.total, Mean: int64(mean + 0.5), P50: at[0], P90: at[1], P99: at[2], P999: at[3], Max: at[4]}
}

// walk returns the library's Mean of a non-empty h (each slot's count
// times its median value, over the total, summed in slot order) and its
// latencyPercentiles (valueAt), in one walk of the slots that stops at the
// last value.
func (h *hist) walk() (mean float64, at [len(latencyPercentiles)]int64) {
	var ranks [len(latencyPercentiles)]int64
	for k, p := range latencyPercentiles {
		ranks[k] = histRank(p, h.total)
	}
	if h.settled() {
		return walkSlots(h.counts, h.total, &ranks)
	}
	return walkSlots(h.wide, h.total, &ranks)
}

// walkSlots is walk over counts cs that sum to total.
func walkSlots[T int32 | int64](cs *[histSlots]T, total int64, ranks *[len(latencyPercentiles)]int64) (mean float64, at [len(latencyPercentiles)]int64) {
	tf := float64(total)
	var sum int64
	k := 0
	for g := range histOctets {
		o := octet(cs, g)
		if emptyOctet(o) {
			continue
		}
		for j, c := range o {
			if c == 0 {
				continue
			}
			i := 8*g + j
			mean += float64(c) * float64(histLowest(i)+histSpan(i)>>1) / tf
			for sum += int64(c); k < len(ranks) && sum >= ranks[k]; k++ {
				at[k] = histLowest(i) + histSpan(i) - 1
			}
			if sum == total {
				return mean, at
			}
		}
	}
	return mean, at
}

// hdr is the library's histogram of the same counts.
func (h *hist) hdr() *hdrhistogram.Histogram {
	out := newHist()
	if h.settled() {
		hdrSlots(out, h.counts, h.total)
	} else {
		hdrSlots(out, h.wide, h.total)
	}
	return out
}

// hdrSlots records counts cs, which sum to total, in out. It stops at the
// slot that brings them to the total: the slots past it are empty.
func hdrSlots[T int32 | int64](out *hdrhistogram.Histogram, cs *[histSlots]T, total int64) {
	if total == 0 {
		return
	}
	var sum int64
	for g := range histOctets {
		o := octet(cs, g)
		if emptyOctet(o) {
			continue
		}
		for j, c := range o {
			if c == 0 {
				continue
			}
			if err := out.RecordValues(histLowest(8*g+j), int64(c)); err != nil {
				panic("sim: histogram rejected a count in its range: " + err.Error())
			}
			if sum += int64(c); sum == total {
				return
			}
		}
	}
}
