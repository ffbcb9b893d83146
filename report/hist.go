package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"popsim/model"
)

// Latency histogram configuration: microseconds from 1 µs to one hour with
// three significant figures (a recorded value is off by at most 0.1 %).
const (
	LatencyLowestUs  = 1
	LatencyHighestUs = 3_600_000_000
	LatencySigFigs   = 3
)

// Names of the two histograms every run records. The names double as file
// stems (<name>.hgrm) and as tags in histograms.hlog.
const (
	HistEndToEnd    = "end_to_end"   // produce to successful ack
	HistServiceTime = "service_time" // delivery (pop) to ack
	// HistReviveLag is a lease's deadline to the revive that wrote its
	// copy, recorded by runs whose engine revived something.
	HistReviveLag = "revive_lag"
)

// hgrm output parameters: five percentile ticks per half distance to 100 %,
// values divided by 1000 so the file reads in milliseconds (µs / 1000).
const (
	HgrmTicksPerHalfDistance = 5
	HgrmValueScale           = 1000.0
)

// HgrmHeader is the first line (and the blank line after it) that
// hdrhistogram-go's PercentilesPrint writes. The Java implementation pads
// the same four column names with spaces instead of tabs; every .hgrm reader
// (the HdrHistogram plotter, hdr-plot) skips this line and parses the
// whitespace-separated numeric rows below it.
const HgrmHeader = " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n"

var histNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidHistName reports whether name can be a histogram name: it becomes a
// file name and an hlog tag, so only letters, digits, '_', '.' and '-' are
// allowed, starting with a letter or digit.
func ValidHistName(name string) error {
	if !histNameRE.MatchString(name) {
		return fmt.Errorf("report: histogram name %q: want letters, digits, '_', '.' or '-', starting with a letter or digit", name)
	}
	return nil
}

// NewLatencyHistogram returns an empty latency histogram in microseconds
// (1 µs .. 1 h, 3 significant figures). Every histogram that report merges
// must have this configuration.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LatencyLowestUs, LatencyHighestUs, LatencySigFigs)
}

// LatencyOf summarises h (values in µs) as a model.Latency. Percentiles and
// max are HdrHistogram's highest equivalent values (within 0.1 % of the
// recorded value); the mean is rounded to the nearest microsecond. An empty
// histogram gives the zero Latency.
func LatencyOf(h *hdrhistogram.Histogram) model.Latency {
	if h == nil || h.TotalCount() == 0 {
		return model.Latency{}
	}
	return model.Latency{
		Count: h.TotalCount(),
		Mean:  int64(math.Round(h.Mean())),
		P50:   h.ValueAtQuantile(50),
		P90:   h.ValueAtQuantile(90),
		P99:   h.ValueAtQuantile(99),
		P999:  h.ValueAtQuantile(99.9),
		Max:   h.Max(),
	}
}

// sameConfig reports whether two histograms bucket values identically, the
// condition for an exact merge.
func sameConfig(a, b *hdrhistogram.Histogram) bool {
	return a.LowestTrackableValue() == b.LowestTrackableValue() &&
		a.HighestTrackableValue() == b.HighestTrackableValue() &&
		a.SignificantFigures() == b.SignificantFigures()
}

// Merge adds every count of src to dst. It is exact (dst ends up equal to
// the histogram of all values recorded into either) because it refuses
// histograms whose bucket layouts differ; src is not modified.
func Merge(dst, src *hdrhistogram.Histogram) error {
	if dst == nil || src == nil {
		return fmt.Errorf("report: merge of a nil histogram")
	}
	if !sameConfig(dst, src) {
		return fmt.Errorf("report: cannot merge histograms with different layouts: dst [%d..%d, %d sig figs], src [%d..%d, %d sig figs]",
			dst.LowestTrackableValue(), dst.HighestTrackableValue(), dst.SignificantFigures(),
			src.LowestTrackableValue(), src.HighestTrackableValue(), src.SignificantFigures())
	}
	if dropped := dst.Merge(src); dropped != 0 {
		panic(fmt.Sprintf("report: merge of identical layouts dropped %d values", dropped))
	}
	return nil
}

// Hgrm renders h as HdrHistogram percentile text (.hgrm), values in
// milliseconds: HgrmHeader, one row per percentile tick ("Value Percentile
// TotalCount 1/(1-Percentile)"), then the #[Mean ...], #[Max ...] and
// #[Buckets ...] footer lines.
func Hgrm(h *hdrhistogram.Histogram) ([]byte, error) {
	var b bytes.Buffer
	if _, err := h.PercentilesPrint(&b, HgrmTicksPerHalfDistance, HgrmValueScale); err != nil {
		return nil, fmt.Errorf("report: hgrm: %w", err)
	}
	return b.Bytes(), nil
}

// PercentilePoint is one point of a percentile distribution curve.
type PercentilePoint struct {
	Quantile float64 // percent, 0 .. 100
	Inverse  float64 // 1/(1-Quantile/100), the x coordinate of percentile plots
	ValueUs  int64
}

// MaxPlotQuantile is the last percentile plotted: 99.999 %, x = 100000.
const MaxPlotQuantile = 99.999

// PercentileCurve returns h's percentile distribution from 0 to
// MaxPlotQuantile exactly as the .hgrm file lists it (the same rows, so a
// chart and its .hgrm agree): one point per tick, ticks per halving of the
// distance to 100 % (10 %, 5 %, 2.5 % ... steps for ticks = 5), each the
// highest equivalent value of the first bucket reaching that percentile.
// The last point is at MaxPlotQuantile with the value of the first row at
// or beyond it. An empty histogram gives no points.
func PercentileCurve(h *hdrhistogram.Histogram, ticks int) []PercentilePoint {
	if h == nil || h.TotalCount() == 0 || ticks < 1 {
		return nil
	}
	var pts []PercentilePoint
	for _, b := range h.CumulativeDistributionWithTicks(int32(ticks)) {
		if b.Quantile >= MaxPlotQuantile {
			return append(pts, PercentilePoint{MaxPlotQuantile, 100 / (100 - MaxPlotQuantile), b.ValueAt})
		}
		pts = append(pts, PercentilePoint{b.Quantile, 100 / (100 - b.Quantile), b.ValueAt})
	}
	panic("report: hdrhistogram percentile iteration did not end at 100%")
}
