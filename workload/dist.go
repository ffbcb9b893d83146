package workload

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/workload/pcg"
)

// Dist is a distribution of processing times (or any other non-negative
// duration). Implementations are immutable values, safe to share.
//
// Every sample lies in [0, MaxSample]: parameters are validated to lie
// there, continuous samples are rounded to the nearest microsecond with
// math.Round, and anything the arithmetic pushes outside the range is
// clamped to it.
//
// Build a Dist with its New function or ParseDist; zero values are
// placeholders, not distributions (a zero Mixture panics when sampled).
type Dist interface {
	Sample(r *pcg.Rand) clock.Duration
	// Mean is the analytic mean of the distribution, rounded to the
	// microsecond (for reports and tests; no sampling involved).
	Mean() clock.Duration
	String() string
}

// MaxSample is the largest duration a Dist may name or return: one day.
const MaxSample = 24 * clock.Hour

func checkDur(field string, d, min clock.Duration) error {
	if d < min || d > MaxSample {
		return fmt.Errorf("workload: %s %s out of range: want %s to %s", field, fmtDur(d), fmtDur(min), fmtDur(MaxSample))
	}
	return nil
}

// checkAfter checks that hi is above lo (strictly unless orEqual) and at
// most MaxSample; loField names lo in the message.
func checkAfter(field string, hi clock.Duration, loField string, lo clock.Duration, orEqual bool) error {
	if hi < lo || (hi == lo && !orEqual) {
		op := ">"
		if orEqual {
			op = ">="
		}
		return fmt.Errorf("workload: %s %s out of range: want %s %s %s", field, fmtDur(hi), op, loField, fmtDur(lo))
	}
	return checkDur(field, hi, lo)
}

// toDur rounds x microseconds and clamps it to [0, MaxSample].
func toDur(x float64) clock.Duration { return clock.Duration(roundClamp(x, int64(MaxSample))) }

// Constant always returns the same duration. It draws nothing from r.
type Constant struct{ d clock.Duration }

// NewConstant returns a constant distribution, d 0 to MaxSample.
func NewConstant(d clock.Duration) (Constant, error) {
	if err := checkDur("const duration", d, 0); err != nil {
		return Constant{}, err
	}
	return Constant{d}, nil
}

func (c Constant) Sample(*pcg.Rand) clock.Duration { return c.d }
func (c Constant) Mean() clock.Duration            { return c.d }
func (c Constant) String() string                  { return "const(" + fmtDur(c.d) + ")" }

// Uniform is uniform over the whole microseconds in [min, max], both ends
// included. Each sample makes one call on r.
type Uniform struct{ min, max clock.Duration }

// NewUniform returns a uniform distribution, 0 <= min <= max <= MaxSample.
func NewUniform(min, max clock.Duration) (Uniform, error) {
	if err := checkDur("uniform min", min, 0); err != nil {
		return Uniform{}, err
	}
	if err := checkAfter("uniform max", max, "min", min, true); err != nil {
		return Uniform{}, err
	}
	return Uniform{min, max}, nil
}

func (u Uniform) Sample(r *pcg.Rand) clock.Duration {
	return u.min + clock.Duration(r.Int64N(int64(u.max-u.min)+1))
}

// Mean returns (min+max)/2, halves rounded up.
func (u Uniform) Mean() clock.Duration { return (u.min + u.max + 1) / 2 }
func (u Uniform) String() string {
	return "uniform(" + fmtDur(u.min) + "," + fmtDur(u.max) + ")"
}

// Exponential is exponential with the given mean: memoryless service
// times, the "M" of M/M/c. Each sample makes one call on r.
type Exponential struct{ mean clock.Duration }

// NewExponential returns an exponential distribution, mean 1us to
// MaxSample.
func NewExponential(mean clock.Duration) (Exponential, error) {
	if err := checkDur("exp mean", mean, clock.Microsecond); err != nil {
		return Exponential{}, err
	}
	return Exponential{mean}, nil
}

// Sample inlines (cost 63) into the method the compiler writes for an
// Exponential held in a Dist, so that a draw through the interface is
// that method's call of expDur and expDur's of logP.
func (e Exponential) Sample(r *pcg.Rand) clock.Duration { return expDur(r, e.mean) }

// expDur is an exponential draw of the given mean, expSample written in
// (it does not inline): Exponential.Sample's body, in a function of its
// own so that Sample inlines: a call fewer a draw (BenchmarkRunDefault:
// 1 412.6 -> 1 412.3 M instructions outside the runtime, callgrind).
func expDur(r *pcg.Rand, mean clock.Duration) clock.Duration {
	return toDur(float64(-logP(1-r.Float64()) * float64(mean)))
}
func (e Exponential) Mean() clock.Duration { return e.mean }
func (e Exponential) String() string       { return "exp(" + fmtDur(e.mean) + ")" }

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// LogNormal is log-normal, given by the two numbers a capacity planner
// reads off a latency dashboard: the median and the 99th percentile. Then
// mu = ln(median) and sigma = ln(p99/median)/z99, and the mean is
// median·exp(sigma²/2). Each sample makes at least two calls on r (polar
// method, on average 2.55).
type LogNormal struct {
	median, p99 clock.Duration
	sigma       float64
}

// NewLogNormal returns a log-normal distribution,
// 1us <= median < p99 <= MaxSample.
func NewLogNormal(median, p99 clock.Duration) (LogNormal, error) {
	if err := checkDur("lognormal median", median, clock.Microsecond); err != nil {
		return LogNormal{}, err
	}
	if err := checkAfter("lognormal p99", p99, "median", median, false); err != nil {
		return LogNormal{}, err
	}
	sigma := (logP(float64(p99)) - logP(float64(median))) / z99
	return LogNormal{median: median, p99: p99, sigma: sigma}, nil
}

func (l LogNormal) Sample(r *pcg.Rand) clock.Duration {
	return toDur(float64(l.median) * expP(float64(l.sigma*normalSample(r))))
}

// Mean returns median·exp(sigma²/2), capped at MaxSample.
func (l LogNormal) Mean() clock.Duration {
	return toDur(float64(l.median) * expP(float64(l.sigma*l.sigma)/2))
}

func (l LogNormal) String() string {
	return "lognormal(median=" + fmtDur(l.median) + ",p99=" + fmtDur(l.p99) + ")"
}

// Bounds on BoundedPareto's shape.
const (
	minAlpha = 0.01
	maxAlpha = 100
)

// BoundedPareto is a Pareto distribution with shape alpha truncated to
// [min, max]: heavy-tailed service times (a few messages take very long)
// with a hard ceiling. Sampled by inversion; each sample makes one call on
// r.
type BoundedPareto struct {
	alpha    float64
	min, max clock.Duration
	qAlpha   float64 // (min/max)^alpha
}

// NewBoundedPareto returns a bounded Pareto distribution, alpha 0.01 to
// 100, 1us <= min < max <= MaxSample.
func NewBoundedPareto(alpha float64, min, max clock.Duration) (BoundedPareto, error) {
	if !(alpha >= minAlpha && alpha <= maxAlpha) {
		return BoundedPareto{}, fmt.Errorf("workload: pareto alpha %s out of range: want %g to %g", fmtFloat(alpha), minAlpha, float64(maxAlpha))
	}
	if err := checkDur("pareto min", min, clock.Microsecond); err != nil {
		return BoundedPareto{}, err
	}
	if err := checkAfter("pareto max", max, "min", min, false); err != nil {
		return BoundedPareto{}, err
	}
	q := float64(min) / float64(max)
	return BoundedPareto{alpha: alpha, min: min, max: max, qAlpha: powP(q, alpha)}, nil
}

// Sample inverts the CDF: x = min / (1 − u·(1 − (min/max)^alpha))^(1/alpha).
func (p BoundedPareto) Sample(r *pcg.Rand) clock.Duration {
	den := 1 - float64(r.Float64()*(1-p.qAlpha))
	x := float64(p.min) / powP(den, 1/p.alpha)
	return max(p.min, min(p.max, toDur(x)))
}

// Mean returns min·alpha/(alpha−1)·(1−q^(alpha−1))/(1−q^alpha) with
// q = min/max, or min·ln(1/q)/(1−q) when alpha is 1.
func (p BoundedPareto) Mean() clock.Duration {
	l, q := float64(p.min), float64(p.min)/float64(p.max)
	if d := p.alpha - 1; d > -1e-9 && d < 1e-9 {
		return toDur(float64(l*-logP(q)) / (1 - q))
	}
	ratio := (1 - powP(q, p.alpha-1)) / (1 - p.qAlpha)
	return toDur(float64(float64(l*p.alpha)/(p.alpha-1)) * ratio)
}

func (p BoundedPareto) String() string {
	return "pareto(alpha=" + fmtFloat(p.alpha) + ",min=" + fmtDur(p.min) + ",max=" + fmtDur(p.max) + ")"
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Part is one component of a Mixture: its probability in parts per
// million and its distribution.
type Part struct {
	PPM  int64
	Dist Dist
}

// maxParts bounds the number of Mixture components.
const maxParts = 64

// Mixture picks a component with its probability, then samples it: e.g.
// 99% fast messages and 1% that hit a 30 s timeout. Each sample makes one
// call on r, then the component's.
type Mixture struct{ parts []Part }

// NewMixture returns a mixture of 1 to 64 parts whose probabilities are
// each positive and sum to exactly 1,000,000 ppm.
func NewMixture(parts ...Part) (Mixture, error) {
	if len(parts) < 1 || len(parts) > maxParts {
		return Mixture{}, fmt.Errorf("workload: mix has %d parts: want 1 to %d", len(parts), maxParts)
	}
	var sum int64
	for i, p := range parts {
		if p.Dist == nil {
			return Mixture{}, fmt.Errorf("workload: mix part %d has no distribution", i+1)
		}
		if p.PPM < 1 || p.PPM > ppmOne {
			return Mixture{}, fmt.Errorf("workload: mix part %d weight %dppm out of range: want 1 to %d", i+1, p.PPM, ppmOne)
		}
		sum += p.PPM
	}
	if sum != ppmOne {
		return Mixture{}, fmt.Errorf("workload: mix weights sum to %s: want exactly 1", fmtPPM(sum))
	}
	return Mixture{parts: append([]Part(nil), parts...)}, nil
}

func (m Mixture) Sample(r *pcg.Rand) clock.Duration {
	n := r.Int64N(ppmOne)
	for _, p := range m.parts {
		if n < p.PPM {
			return p.Dist.Sample(r)
		}
		n -= p.PPM
	}
	panic("workload: mixture weights do not sum to 1,000,000 ppm")
}

// Mean returns the probability-weighted mean of the parts' means.
func (m Mixture) Mean() clock.Duration {
	var sum int64 // at most 1e6 ppm × MaxSample: fits
	for _, p := range m.parts {
		sum += p.PPM * int64(p.Dist.Mean())
	}
	return clock.Duration((sum + ppmOne/2) / ppmOne)
}

func (m Mixture) String() string {
	var b strings.Builder
	b.WriteString("mix(")
	for i, p := range m.parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(fmtPPM(p.PPM) + ":" + p.Dist.String())
	}
	b.WriteByte(')')
	return b.String()
}
