package bench

import (
	"runtime"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
)

// meter reports per-message figures. testing.B counts allocations per op
// only after the body returns, so the meter keeps its own count, leaving
// out whatever happens while the timer is stopped (message production).
//
// It also counts the CPU time of the benchmark's thread (the body is locked
// to it) as cpu-ns/msg: on a shared machine wall time includes waiting for
// a core, CPU time does not.
type meter struct {
	b              *testing.B
	ms             runtime.MemStats
	startA, startB uint64
	offA, offB     uint64 // allocations while paused
	pauseA, pauseB uint64
	cpu0, cpuOff   int64 // thread CPU time at start, and while paused
	cpuPause       int64
}

func startMeter(b *testing.B) *meter {
	b.ReportAllocs()
	runtime.LockOSThread()
	m := &meter{b: b}
	runtime.ReadMemStats(&m.ms)
	m.startA, m.startB = m.ms.Mallocs, m.ms.TotalAlloc
	m.cpu0, _ = ThreadCPU()
	return m
}

// pause stops the timer and the allocation count.
func (m *meter) pause() {
	m.b.StopTimer()
	m.cpuPause, _ = ThreadCPU()
	runtime.ReadMemStats(&m.ms)
	m.pauseA, m.pauseB = m.ms.Mallocs, m.ms.TotalAlloc
}

// resume restarts them.
func (m *meter) resume() {
	runtime.ReadMemStats(&m.ms)
	m.offA += m.ms.Mallocs - m.pauseA
	m.offB += m.ms.TotalAlloc - m.pauseB
	c, _ := ThreadCPU()
	m.cpuOff += c - m.cpuPause
	m.b.StartTimer()
}

// report is called after the loop with the messages per iteration.
func (m *meter) report(perOp int) { m.reportUnits(float64(m.b.N)*float64(perOp), "msg") }

// reportUnits reports per-unit figures for n units in all: ns/unit,
// units/s, cpu-ns/unit, allocs/unit and B/unit.
func (m *meter) reportUnits(n float64, unit string) {
	cpu, cpuOK := ThreadCPU()
	runtime.UnlockOSThread()
	runtime.ReadMemStats(&m.ms)
	if n == 0 {
		return
	}
	if cpuOK {
		m.b.ReportMetric(float64(cpu-m.cpu0-m.cpuOff)/n, "cpu-ns/"+unit)
	}
	ns := float64(m.b.Elapsed().Nanoseconds()) / n
	m.b.ReportMetric(ns, "ns/"+unit)
	if ns > 0 {
		m.b.ReportMetric(1e9/ns, unit+"s/s")
	}
	m.b.ReportMetric(float64(m.ms.Mallocs-m.startA-m.offA)/n, "allocs/"+unit)
	m.b.ReportMetric(float64(m.ms.TotalAlloc-m.startB-m.offB)/n, "B/"+unit)
}

// Latency samples the wall-clock time of whole rounds with clock.Real: the
// clock is read at the start and the end of one round in Every, never per
// message. Values are nanoseconds per round (the clock's resolution is one
// microsecond); Round is the number of messages in one round.
type Latency struct {
	Hist  *hdrhistogram.Histogram
	Every int
	Round int
	clk   *clock.Real
	n     int
}

// NewLatency samples one round in every (at least 1).
func NewLatency(every int) *Latency {
	return &Latency{Hist: hdrhistogram.New(1, 3_600_000_000_000, 3), Every: max(every, 1), clk: clock.NewReal()}
}

// begin returns the start time when this round is sampled.
func (l *Latency) begin() (clock.Time, bool) {
	if l == nil {
		return 0, false
	}
	l.n++
	if l.n%l.Every != 0 {
		return 0, false
	}
	return l.clk.Now(), true
}

func (l *Latency) end(t0 clock.Time, sampled bool) {
	if sampled {
		_ = l.Hist.RecordValue(int64(l.clk.Now().Sub(t0)) * 1000)
	}
}

func (l *Latency) setRound(n int) {
	if l != nil {
		l.Round = n
	}
}
