package sim

import "github.com/HdrHistogram/hdrhistogram-go"

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
