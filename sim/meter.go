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

// meter is the simulator's own measurement of a run: latency, throughput,
// the time series and the count of messages still open (quiescence). The
// verdict (lost, duplicates, violations) is the checker's, from the trace.
type meter struct {
	// msgs holds the messages from id base on; those below head, and all
	// ids below base, are closed.
	msgs []meterMsg
	base model.MsgID
	head int
	open int64

	warmEnd, safeEnd          clock.Time
	nProduced                 int64
	nAcked, nWarmAcks         int64
	nDeliveries, nRedelivered int64
	e2e, svc                  *hdrhistogram.Histogram
	reviveLag                 *hdrhistogram.Histogram // a lease's deadline to its revive (a copy written)
	last                      model.SeriesPoint       // cumulative counters at the previous sample
	series                    []model.SeriesPoint
	// crashed holds, for each message a consumer held when it crashed, the
	// crash's time, until the message's next delivery; redeliver is the
	// time from the crash to that delivery.
	crashed   map[model.MsgID]clock.Time
	redeliver *hdrhistogram.Histogram
}

// meterMsg is a message: its intended send time, whether it is open
// (produced, not yet acked, sent to a DLQ or dropped) and whether it was
// delivered.
type meterMsg struct {
	intended clock.Time
	open     bool
	seen     bool
}

func newMeter(warmEnd, safeEnd clock.Time) *meter {
	return &meter{
		base: 1, warmEnd: warmEnd, safeEnd: safeEnd,
		e2e: hdrhistogram.New(histMin, histMax, histSigFig), svc: hdrhistogram.New(histMin, histMax, histSigFig),
		reviveLag: hdrhistogram.New(histMin, histMax, histSigFig),
		crashed:   map[model.MsgID]clock.Time{}, redeliver: hdrhistogram.New(histMin, histMax, histSigFig),
	}
}

// crash notes that a consumer crashed at now holding message id (the
// earliest crash counts when two held it).
func (m *meter) crash(id model.MsgID, now clock.Time) {
	if _, ok := m.crashed[id]; !ok && m.get(id) != nil {
		m.crashed[id] = now
	}
}

// get returns message id, nil when it is closed (or never produced).
func (m *meter) get(id model.MsgID) *meterMsg {
	if id < m.base || int(id-m.base) < m.head || int(id-m.base) >= len(m.msgs) {
		return nil
	}
	x := &m.msgs[id-m.base]
	if !x.open {
		return nil
	}
	return x
}

func (m *meter) produced(id model.MsgID, intended clock.Time) {
	m.nProduced++
	if id < m.base || int(id-m.base) < m.head {
		return
	}
	for int(id-m.base) >= len(m.msgs) {
		m.msgs = append(m.msgs, meterMsg{})
	}
	m.msgs[id-m.base] = meterMsg{intended: intended, open: true}
	m.open++
}

// delivered counts a delivery at now; a message delivered before (or
// already closed) counts as redelivered, and one a crashed consumer held
// records its time to come back.
func (m *meter) delivered(id model.MsgID, now clock.Time) {
	m.nDeliveries++
	if t, ok := m.crashed[id]; ok {
		delete(m.crashed, id)
		record(m.redeliver, now.Sub(t))
	}
	x := m.get(id)
	if x == nil || x.seen {
		m.nRedelivered++
		return
	}
	x.seen = true
}

// acked records a successful ack (or a pull consumer's success) at now of
// a message delivered at deliveredAt.
func (m *meter) acked(id model.MsgID, deliveredAt, now clock.Time) {
	if deliveredAt >= m.warmEnd {
		record(m.svc, now.Sub(deliveredAt))
	}
	x := m.get(id)
	if x == nil {
		return
	}
	intended := x.intended
	m.close(id)
	m.nAcked++
	if intended >= m.warmEnd {
		record(m.e2e, now.Sub(intended))
	}
	if now >= m.warmEnd && now < m.safeEnd {
		m.nWarmAcks++
	}
}

// revived records a revive that wrote a copy, lag after the deadline of
// the lease it ended; leases that ended during the warm-up are left out,
// as latencies are.
func (m *meter) revived(lag clock.Duration, deadline clock.Time) {
	if deadline >= m.warmEnd {
		record(m.reviveLag, lag)
	}
}

// finish closes a message (sent to a DLQ or dropped).
func (m *meter) finish(id model.MsgID) {
	if m.get(id) != nil {
		m.close(id)
	}
}

// close closes an open message and forgets the closed ones at the front.
func (m *meter) close(id model.MsgID) {
	delete(m.crashed, id)
	m.msgs[id-m.base].open = false
	m.open--
	for m.head < len(m.msgs) && !m.msgs[m.head].open {
		m.head++
	}
	if m.head == len(m.msgs) {
		m.msgs, m.base, m.head = m.msgs[:0], m.base+model.MsgID(m.head), 0
	} else if m.head >= 1024 && 2*m.head >= len(m.msgs) {
		k := copy(m.msgs, m.msgs[m.head:])
		m.msgs, m.base, m.head = m.msgs[:k], m.base+model.MsgID(m.head), 0
	}
}

func (m *meter) outstanding() int64 { return m.open }

// record appends a time-series point at at (since the start): counts since
// the previous point, and the backlog and the engine's in-flight level.
func (m *meter) record(at clock.Duration, inFlight int64) {
	p := model.SeriesPoint{
		AtMs:     at.Millis(),
		Produced: m.nProduced, Acked: m.nAcked, Redelivered: m.nRedelivered,
		Backlog: m.open, InFlight: inFlight,
	}
	d := p
	d.Produced -= m.last.Produced
	d.Acked -= m.last.Acked
	d.Redelivered -= m.last.Redelivered
	m.last = p
	m.series = append(m.series, d)
}

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
