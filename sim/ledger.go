package sim

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
)

// Histogram range: 1us..1h, 3 significant figures.
const (
	histMin    = 1
	histMax    = int64(clock.Hour)
	histSigFig = 3
)

// ledger is the simulator's own bookkeeping for latency, throughput, the
// time series and quiescence. The verdict (lost, duplicates, violations)
// is the checker's, from the trace.
type ledger struct {
	open                      map[string]openMsg // produced, not yet acked/DLQ'd/dropped
	warmEnd, safeEnd          clock.Time
	nProduced                 int64
	nAcked, nWarmAcks         int64
	nDeliveries, nRedelivered int64
	e2e, svc                  *hdrhistogram.Histogram
	last                      model.SeriesPoint // cumulative counters at the previous sample
	series                    []model.SeriesPoint
}

// openMsg is an open message: its intended send time, and whether it was
// delivered at least once.
type openMsg struct {
	intended clock.Time
	seen     bool
}

func newLedger(warmEnd, safeEnd clock.Time) *ledger {
	return &ledger{
		open: map[string]openMsg{}, warmEnd: warmEnd, safeEnd: safeEnd,
		e2e: hdrhistogram.New(histMin, histMax, histSigFig), svc: hdrhistogram.New(histMin, histMax, histSigFig),
	}
}

func (l *ledger) produced(key string, intended clock.Time) {
	l.open[key] = openMsg{intended: intended, seen: l.open[key].seen}
	l.nProduced++
}

// delivered counts a delivery; a message delivered before (or already
// finished) counts as redelivered.
func (l *ledger) delivered(key string) {
	l.nDeliveries++
	m, open := l.open[key]
	if !open || m.seen {
		l.nRedelivered++
		return
	}
	m.seen = true
	l.open[key] = m
}

// acked records a successful ack (or a pull consumer's success) at now of
// a message delivered at deliveredAt.
func (l *ledger) acked(key string, deliveredAt, now clock.Time) {
	if deliveredAt >= l.warmEnd {
		record(l.svc, now.Sub(deliveredAt))
	}
	m, open := l.open[key]
	if !open {
		return
	}
	delete(l.open, key)
	l.nAcked++
	if m.intended >= l.warmEnd {
		record(l.e2e, now.Sub(m.intended))
	}
	if now >= l.warmEnd && now < l.safeEnd {
		l.nWarmAcks++
	}
}

// finish closes a message (acked, DLQ'd or dropped).
func (l *ledger) finish(key string) { delete(l.open, key) }

func (l *ledger) outstanding() int64 { return int64(len(l.open)) }

func record(h *hdrhistogram.Histogram, d clock.Duration) {
	v := min(max(int64(d), histMin), histMax)
	if err := h.RecordValue(v); err != nil {
		panic("sim: histogram rejected a clamped value: " + err.Error())
	}
}

func latency(h *hdrhistogram.Histogram) model.Latency {
	if h.TotalCount() == 0 {
		return model.Latency{}
	}
	return model.Latency{
		Count: h.TotalCount(), Mean: int64(h.Mean() + 0.5),
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(),
	}
}
