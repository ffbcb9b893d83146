package workload

import (
	"math/bits"

	"popsim/clock"
	"popsim/workload/pcg"
)

// Sampler draws from a Dist exactly as the Dist's Sample does (the same
// draws on r, the same value), for a caller that samples a network
// latency for each request and answer: a constant (the hot topic's) is
// returned inline and a uniform (the default) is drawn in a direct call,
// where Dist.Sample is a call through the interface to the compiler's
// pointer wrapper of the value method, which calls the method (the
// wrapper alone is 12 instructions a sample), and the uniform's bounded
// draw is written out, where Int64N is a call (BenchmarkRunDefault:
// 1 403.7 -> 1 401.3 M instructions outside the runtime, callgrind); a
// uniform over a power of two microseconds, which the bounded draw masks,
// is sampled through the interface. Any other Dist is sampled
// through the interface: calling an exponential's or a log-normal's
// method directly from here saved nothing (their wrappers inline them).
// The zero Sampler is a constant 0: build one with NewSampler.
type Sampler struct {
	lo clock.Duration // a constant's duration, a uniform's min
	n  int64          // a constant's 0, a uniform's number of whole microseconds in [min, max] (not a power of two); else -1
	d  Dist
}

// NewSampler returns the Sampler of d.
func NewSampler(d Dist) Sampler {
	switch d := d.(type) {
	case Constant:
		return Sampler{lo: d.d, d: d}
	case Uniform:
		if n := int64(d.max-d.min) + 1; n&(n-1) != 0 { // a power of two is masked, not multiplied (draw)
			return Sampler{lo: d.min, n: n, d: d}
		}
	}
	return Sampler{n: -1, d: d}
}

// Sample is the Dist's Sample. Inlined: a constant draws nothing.
func (s *Sampler) Sample(r *pcg.Rand) clock.Duration {
	if s.n == 0 {
		return s.lo
	}
	return s.draw(r)
}

// draw is Sample of a Dist that is not a constant.
func (s *Sampler) draw(r *pcg.Rand) clock.Duration {
	if s.n > 0 { // Uniform.Sample, its draw (Int64N) written out: n is not a power of two
		n := uint64(s.n)
		hi, lo := bits.Mul64(r.Uint64(), n)
		if lo < n {
			hi = r.Redraw(hi, lo, n)
		}
		return s.lo + clock.Duration(hi)
	}
	return s.d.Sample(r)
}
