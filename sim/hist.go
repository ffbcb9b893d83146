package sim

import (
	"reflect"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
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

// histMeanOf is h.Mean(), bit for bit: the same sum, in the same order, of
// each non-empty sub-bucket's count times the sub-bucket's median value
// over the total count. The library finds those sub-buckets walking every
// one up to the largest recorded, computing each one's values at every
// step (most of a short run's end, with several latency summaries a run);
// this reads the histogram's counts array and skips the empty ones at a
// few instructions each. The library exports no view of its counts
// (Export copies them, 188 KB here), so histLayout finds the fields by
// reflection once; were they ever renamed or retyped, histMeanOf falls
// back to h.Mean() (TestHistMeanIsTheLibrarys pins the two together).
func histMeanOf(h *hdrhistogram.Histogram) float64 {
	if !histLayout.ok || h.TotalCount() == 0 {
		return h.Mean()
	}
	p := unsafe.Pointer(h)
	counts := *(*[]int64)(unsafe.Add(p, histLayout.counts))
	unit := *(*int64)(unsafe.Add(p, histLayout.unitMagnitude))
	half := *(*int32)(unsafe.Add(p, histLayout.halfMagnitude))
	total := h.TotalCount()
	t := float64(total)
	var mean float64
	seen := int64(0)
	for idx := 0; idx < len(counts); idx++ {
		if idx&3 == 0 && idx+4 <= len(counts) { // skip four empty sub-buckets at once
			if q := counts[idx : idx+4 : idx+4]; q[0]|q[1]|q[2]|q[3] == 0 {
				idx += 3
				continue
			}
		}
		c := counts[idx]
		if c == 0 {
			continue
		}
		// counts[idx] is sub-bucket s of bucket b: bucket 0 holds
		// sub-buckets 0 .. 2^(half+1)-1 at indexes 0 .., every later
		// bucket its upper half, 2^half .., at (b+1)<<half ...
		b, s := int64(0), int64(idx)
		if k := int64(idx) >> half; k > 1 {
			b, s = k-1, int64(idx)&(1<<half-1)+1<<half
		}
		lowest := s << (b + unit)
		median := lowest + int64(1)<<(b+unit)>>1
		mean += float64(c) * float64(median) / t
		if seen += c; seen >= total {
			break
		}
	}
	return mean
}

// histLayout is where a hdrhistogram.Histogram keeps its counts and the
// two magnitudes that map a counts index to its values.
var histLayout = func() (l struct {
	counts, unitMagnitude, halfMagnitude uintptr
	ok                                   bool
}) {
	typ := reflect.TypeFor[hdrhistogram.Histogram]()
	c, ok1 := typ.FieldByName("counts")
	u, ok2 := typ.FieldByName("unitMagnitude")
	m, ok3 := typ.FieldByName("subBucketHalfCountMagnitude")
	l.ok = ok1 && ok2 && ok3 && c.Type == reflect.TypeFor[[]int64]() &&
		u.Type == reflect.TypeFor[int64]() && m.Type == reflect.TypeFor[int32]()
	l.counts, l.unitMagnitude, l.halfMagnitude = c.Offset, u.Offset, m.Offset
	return l
}()
