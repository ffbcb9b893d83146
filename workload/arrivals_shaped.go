package workload

import (
	"math"

	"popsim/clock"
	"popsim/workload/pcg"
)

// OnOff alternates bursts and silence: for on it is a Poisson process at
// rate, then nothing for off, repeating, starting with an on period at the
// origin. Gaps are sampled on an "on-time" clock that stops during off
// periods (exact because exponential gaps are memoryless), so the long-run
// rate is rate*on/(on+off). Each arrival makes one call on r.
type OnOff struct {
	rate    Rate
	on, off clock.Duration
	anchor
	onTime offset
	done   bool
}

// NewOnOff returns an on/off process: rate positive, on 1us to MaxSpan,
// off 0 to MaxSpan.
func NewOnOff(rate Rate, on, off clock.Duration) (*OnOff, error) {
	if err := rate.check("onoff rate", false); err != nil {
		return nil, err
	}
	if err := checkSpan("onoff on", on, clock.Microsecond); err != nil {
		return nil, err
	}
	if err := checkSpan("onoff off", off, 0); err != nil {
		return nil, err
	}
	return &OnOff{rate: rate, on: on, off: off}, nil
}

// Next implements Arrivals.
func (o *OnOff) Next(r *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := o.start(now)
	if o.done || !o.onTime.add(float64(expSample(r)*o.rate.meanGap())) {
		o.done = true
		return 0, false
	}
	cycle := int64(o.on + o.off)
	bursts, within := o.onTime.whole/int64(o.on), o.onTime.whole%int64(o.on)
	if bursts > (maxOffset-within)/cycle {
		o.done = true
		return 0, false
	}
	return origin.Add(clock.Duration(bursts*cycle + within)), true
}

func (o *OnOff) String() string {
	return "onoff(rate=" + o.rate.String() + ",on=" + fmtDur(o.on) + ",off=" + fmtDur(o.off) + ")"
}

// Ramp is a Poisson process whose rate rises (or falls) linearly from
// `from` to `to` over `over`, then stays at `to`. Arrivals come from
// inverting the cumulative intensity Λ(t) at the running sum of standard
// exponential draws (one call on r per arrival), which is exact for a
// non-homogeneous Poisson process and needs no rejection. `from` may be
// zero; `to` must be positive.
type Ramp struct {
	from, to Rate
	over     clock.Duration
	anchor
	sum  float64 // running sum of Exp(1) draws: the Λ of the next arrival
	last int64   // previous offset; arrivals never go backwards
	done bool
}

// NewRamp returns a ramp process: from >= 0, to > 0, over 1us to MaxSpan.
func NewRamp(from, to Rate, over clock.Duration) (*Ramp, error) {
	if err := from.check("ramp from", true); err != nil {
		return nil, err
	}
	if err := to.check("ramp to", false); err != nil {
		return nil, err
	}
	if err := checkSpan("ramp over", over, clock.Microsecond); err != nil {
		return nil, err
	}
	return &Ramp{from: from, to: to, over: over}, nil
}

// Next implements Arrivals.
func (p *Ramp) Next(r *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := p.start(now)
	if p.done {
		return 0, false
	}
	p.sum += expSample(r)
	t := p.timeAt(p.sum)
	if !(t < maxOffset) {
		p.done = true
		return 0, false
	}
	p.last = max(p.last, int64(math.Round(t)))
	return origin.Add(clock.Duration(p.last)), true
}

// timeAt solves Λ(t) = e for t in microseconds, where
// Λ(t) = r0·t + (r1−r0)·t²/(2D) for t ≤ D and Λ(D) + r1·(t−D) after.
// The quadratic uses the cancellation-free root 2e/(r0 + √(r0² + 4ae)).
func (p *Ramp) timeAt(e float64) float64 {
	r0, r1, d := p.from.perMicro(), p.to.perMicro(), float64(p.over)
	lamD := float64((r0+r1)*d) / 2
	if e > lamD {
		return d + (e-lamD)/r1
	}
	a := (r1 - r0) / float64(2*d)
	disc := max(float64(r0*r0)+float64(float64(4*a)*e), 0)
	den := r0 + math.Sqrt(disc)
	if den <= 0 {
		return 0
	}
	return float64(2*e) / den
}

func (p *Ramp) String() string {
	return "ramp(from=" + p.from.String() + ",to=" + p.to.String() + ",over=" + fmtDur(p.over) + ")"
}
