package workload

import (
	"fmt"
	"math"

	"popsim/clock"
	"popsim/workload/pcg"
)

// Arrivals is an open-loop arrival process: a stateful iterator over the
// instants at which messages are produced.
//
// The first call to Next fixes the process's origin at now; later calls
// continue the schedule from the previous arrival and do not depend on now.
// The schedule is therefore the intended production time, whatever the
// caller was doing: a caller that has fallen behind gets instants in its
// past, which is what latency should be measured from (no coordinated
// omission). Arrivals never go backwards. ok is false once the process is
// exhausted, and stays false.
//
// A process is single-use. ParseArrivals(a.String()) gives a fresh copy.
type Arrivals interface {
	Next(r *pcg.Rand, now clock.Time) (at clock.Time, ok bool)
	String() string
}

// MaxSpan is the longest duration an arrival spec may name (on, off, over,
// for): one year.
const MaxSpan = 365 * 24 * clock.Hour

// maxOffset bounds how far after its origin a process may schedule
// (2^62 us, about 146,000 years); past it the process is exhausted rather
// than overflowing.
const maxOffset = 1 << 62

// anchor is the origin of a schedule: the now of the first Next call.
type anchor struct {
	started bool
	origin  clock.Time
}

func (a *anchor) start(now clock.Time) clock.Time {
	if !a.started {
		a.started, a.origin = true, now
	}
	return a.origin
}

// offset accumulates sampled gaps as whole microseconds plus a fractional
// carry, so that rounding does not bias the mean gap and precision does not
// decay over long runs.
type offset struct {
	whole int64
	frac  float64
}

// add advances by gap microseconds; false if the result passes maxOffset.
func (o *offset) add(gap float64) bool {
	t := o.frac + gap
	w := math.Floor(t)
	if !(w < float64(maxOffset-o.whole)) {
		return false
	}
	o.whole += int64(w)
	o.frac = t - w
	return true
}

func checkSpan(field string, d clock.Duration, min clock.Duration) error {
	if d < min || d > MaxSpan {
		return fmt.Errorf("workload: %s %s out of range: want %s to %s", field, fmtDur(d), fmtDur(min), fmtDur(MaxSpan))
	}
	return nil
}

// ConstantRate produces arrivals evenly spaced at an exact rate. Arrival k
// (from 0) is at origin + floor(k*Per/Count), computed from k rather than
// by adding gaps, so 3/s gives exactly three arrivals in every second with
// no drift. The first arrival is at the origin. It draws nothing from r.
type ConstantRate struct {
	rate Rate
	anchor
	k    int64
	done bool
}

// NewConstantRate returns a constant-rate process; rate must be positive.
func NewConstantRate(rate Rate) (*ConstantRate, error) {
	if err := rate.check("const rate", false); err != nil {
		return nil, err
	}
	return &ConstantRate{rate: rate}, nil
}

// Next implements Arrivals.
func (c *ConstantRate) Next(_ *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := c.start(now)
	count, per := c.rate.Count, int64(c.rate.Per)
	q, rem := c.k/count, c.k%count
	if c.done || q > maxOffset/per {
		c.done = true
		return 0, false
	}
	c.k++
	return origin.Add(clock.Duration(q*per + rem*per/count)), true
}

func (c *ConstantRate) String() string { return "const(" + c.rate.String() + ")" }

// Poisson produces arrivals with independent exponential gaps: the
// standard open-loop model of many independent producers. The first
// arrival is one gap after the origin. Each arrival makes one call on r.
type Poisson struct {
	rate Rate
	anchor
	off  offset
	done bool
}

// NewPoisson returns a Poisson process; rate must be positive.
func NewPoisson(rate Rate) (*Poisson, error) {
	if err := rate.check("poisson rate", false); err != nil {
		return nil, err
	}
	return &Poisson{rate: rate}, nil
}

// Next implements Arrivals.
func (p *Poisson) Next(r *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := p.start(now)
	if p.done || !p.off.add(float64(expSample(r)*p.rate.meanGap())) {
		p.done = true
		return 0, false
	}
	return origin.Add(clock.Duration(p.off.whole)), true
}

func (p *Poisson) String() string { return "poisson(" + p.rate.String() + ")" }

// Backlog produces n arrivals, all at the origin, then is exhausted: a
// topic that already holds n messages when consumers start.
type Backlog struct {
	n, sent int64
	anchor
}

// maxBacklog bounds Backlog's size.
const maxBacklog = 1_000_000_000

// NewBacklog returns a backlog of n messages, 1 to 1e9.
func NewBacklog(n int64) (*Backlog, error) {
	if n < 1 || n > maxBacklog {
		return nil, fmt.Errorf("workload: backlog size %d out of range: want 1 to %d", n, maxBacklog)
	}
	return &Backlog{n: n}, nil
}

// Next implements Arrivals.
func (b *Backlog) Next(_ *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := b.start(now)
	if b.sent >= b.n {
		return 0, false
	}
	b.sent++
	return origin, true
}

func (b *Backlog) String() string { return fmt.Sprintf("backlog(%d)", b.n) }
