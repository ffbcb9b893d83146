package workload

import (
	"math"

	"popsim/clock"
)

// The configuration forms of Dist and Arrivals. A configuration holds
// parsed values whose types know their text form
// (encoding.TextUnmarshaler and TextMarshaler), so a file decoder, a
// command-line override and a report all go through the same parser and
// printer, once.

// DistSpec is a Dist in a configuration: it parses and prints the text
// form of ParseDist. The zero value holds no distribution (IsZero); its
// owner decides the default.
type DistSpec struct{ Dist }

// MustDist returns the DistSpec of a text that is known to parse (a
// default written in code); it panics otherwise.
func MustDist(s string) DistSpec {
	d, err := ParseDist(s)
	if err != nil {
		panic("workload: MustDist: " + err.Error())
	}
	return DistSpec{d}
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseDist.
func (d *DistSpec) UnmarshalText(b []byte) error {
	v, err := ParseDist(string(b))
	if err != nil {
		return err
	}
	d.Dist = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: the canonical form.
func (d DistSpec) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// IsZero reports whether d holds no distribution.
func (d DistSpec) IsZero() bool { return d.Dist == nil }

// String is the canonical form, "" for the zero value.
func (d DistSpec) String() string {
	if d.Dist == nil {
		return ""
	}
	return d.Dist.String()
}

// ArrivalsSpec is an arrival process that has not started: immutable and
// shareable, unlike the Arrivals iterator it describes. New returns a
// fresh iterator for each run. It parses and prints the text form of
// ParseArrivals; the zero value holds no process (IsZero).
type ArrivalsSpec struct{ proto process }

// process is what every Arrivals built by this package is besides an
// iterator: it can start afresh and knows its mean count.
type process interface {
	Arrivals
	// fresh returns a new, unstarted process with the same parameters.
	fresh() process
	// expected is the mean number of arrivals in the first span after
	// the origin.
	expected(span clock.Duration) float64
}

// MustArrivals returns the ArrivalsSpec of a text that is known to parse;
// it panics otherwise.
func MustArrivals(s string) ArrivalsSpec {
	var a ArrivalsSpec
	if err := a.UnmarshalText([]byte(s)); err != nil {
		panic("workload: MustArrivals: " + err.Error())
	}
	return a
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseArrivals.
func (a *ArrivalsSpec) UnmarshalText(b []byte) error {
	v, err := ParseArrivals(string(b))
	if err != nil {
		return err
	}
	a.proto = v.(process)
	return nil
}

// MarshalText implements encoding.TextMarshaler: the canonical form.
func (a ArrivalsSpec) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// IsZero reports whether a holds no process.
func (a ArrivalsSpec) IsZero() bool { return a.proto == nil }

// String is the canonical form, "" for the zero value.
func (a ArrivalsSpec) String() string {
	if a.proto == nil {
		return ""
	}
	return a.proto.String()
}

// New returns a fresh iterator over the process's arrivals. It panics on
// the zero value.
func (a ArrivalsSpec) New() Arrivals {
	if a.proto == nil {
		panic("workload: ArrivalsSpec.New on the zero value")
	}
	return a.proto.fresh()
}

// Expected is the mean number of arrivals in the first span after the
// origin (for estimates: a Poisson process's actual count varies around
// it). It is 0 for the zero value.
func (a ArrivalsSpec) Expected(span clock.Duration) float64 {
	if a.proto == nil || span <= 0 {
		return 0
	}
	return a.proto.expected(span)
}

func (c *ConstantRate) fresh() process { return &ConstantRate{rate: c.rate} }
func (p *Poisson) fresh() process      { return &Poisson{rate: p.rate} }
func (b *Backlog) fresh() process      { return &Backlog{n: b.n} }
func (o *OnOff) fresh() process        { return &OnOff{rate: o.rate, on: o.on, off: o.off} }
func (p *Ramp) fresh() process         { return &Ramp{from: p.from, to: p.to, over: p.over} }
func (l *Limit) fresh() process {
	return &Limit{inner: l.inner.(process).fresh(), count: l.count, span: l.span}
}

func (c *ConstantRate) expected(span clock.Duration) float64 {
	return float64(span) * c.rate.perMicro()
}
func (p *Poisson) expected(span clock.Duration) float64 { return float64(span) * p.rate.perMicro() }
func (b *Backlog) expected(clock.Duration) float64      { return float64(b.n) }

func (o *OnOff) expected(span clock.Duration) float64 {
	cycle := o.on + o.off
	on := (span/cycle)*o.on + min(span%cycle, o.on)
	return float64(on) * o.rate.perMicro()
}

// expected is Λ(span), the ramp's cumulative intensity.
func (p *Ramp) expected(span clock.Duration) float64 {
	r0, r1, d, t := p.from.perMicro(), p.to.perMicro(), float64(p.over), float64(span)
	if t >= d {
		return (r0+r1)*d/2 + r1*(t-d)
	}
	return r0*t + (r1-r0)*t*t/(2*d)
}

func (l *Limit) expected(span clock.Duration) float64 {
	if l.span > 0 {
		span = min(span, l.span)
	}
	n := l.inner.(process).expected(span)
	if l.count > 0 {
		n = math.Min(n, float64(l.count))
	}
	return n
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseOutcomes.
func (o *Outcomes) UnmarshalText(b []byte) error {
	v, err := ParseOutcomes(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: the canonical form.
func (o Outcomes) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseTags.
func (t *Tags) UnmarshalText(b []byte) error {
	v, err := ParseTags(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: the canonical form.
func (t Tags) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Names lists the tags a message may carry, in the order given; the zero
// Tags gives [""] (every message is untagged).
func (t Tags) Names() []string {
	if len(t.tags) == 0 {
		return []string{""}
	}
	out := make([]string, len(t.tags))
	for i, tag := range t.tags {
		out[i] = tag.Name
	}
	return out
}
