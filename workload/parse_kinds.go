package workload

import (
	"fmt"

	"popsim/clock"
)

// ParseDist parses a processing-time distribution:
//
//	const(5ms)
//	uniform(1ms,5ms)
//	exp(10ms)                           mean
//	lognormal(median=10ms,p99=200ms)
//	pareto(alpha=1.5,min=1ms,max=10s)
//	mix(0.99:const(5ms),0.01:exp(30s))  probabilities summing to 1
//
// Durations are Go durations with microsecond resolution (250us, 5ms,
// 1.5s, 2m). Named arguments may come in any order. The String of every
// Dist is accepted and parses to an equal Dist.
func ParseDist(s string) (Dist, error) {
	n, err := parseCall("dist", s)
	if err != nil {
		return nil, err
	}
	return buildDist(n)
}

func buildDist(n *node) (Dist, error) {
	switch n.name {
	case "const":
		d, err := oneDur(n, "duration")
		if err != nil {
			return nil, err
		}
		return NewConstant(d)
	case "uniform":
		return buildUniform(n)
	case "exp":
		d, err := oneDur(n, "mean")
		if err != nil {
			return nil, err
		}
		return NewExponential(d)
	case "lognormal":
		return buildLogNormal(n)
	case "pareto":
		return buildPareto(n)
	case "mix":
		return buildMix(n)
	}
	return nil, fmt.Errorf("workload: dist kind %q unknown: want const, uniform, exp, lognormal, pareto or mix", n.name)
}

func oneDur(n *node, field string) (clock.Duration, error) {
	vals, err := n.positional(1, field)
	if err != nil {
		return 0, err
	}
	return vals[0].dur(n.name + " " + field)
}

func buildUniform(n *node) (Dist, error) {
	vals, err := n.positional(2, "min,max")
	if err != nil {
		return nil, err
	}
	lo, err := vals[0].dur("uniform min")
	if err != nil {
		return nil, err
	}
	hi, err := vals[1].dur("uniform max")
	if err != nil {
		return nil, err
	}
	return NewUniform(lo, hi)
}

func buildLogNormal(n *node) (Dist, error) {
	keys := []string{"median", "p99"}
	vals, err := n.named(0, keys...)
	if err == nil {
		err = n.required(vals, keys...)
	}
	if err != nil {
		return nil, err
	}
	median, err := vals[0].dur("lognormal median")
	if err != nil {
		return nil, err
	}
	p99, err := vals[1].dur("lognormal p99")
	if err != nil {
		return nil, err
	}
	return NewLogNormal(median, p99)
}

func buildPareto(n *node) (Dist, error) {
	keys := []string{"alpha", "min", "max"}
	vals, err := n.named(0, keys...)
	if err == nil {
		err = n.required(vals, keys...)
	}
	if err != nil {
		return nil, err
	}
	alpha, err := vals[0].float("pareto alpha")
	if err != nil {
		return nil, err
	}
	lo, err := vals[1].dur("pareto min")
	if err != nil {
		return nil, err
	}
	hi, err := vals[2].dur("pareto max")
	if err != nil {
		return nil, err
	}
	return NewBoundedPareto(alpha, lo, hi)
}

func buildMix(n *node) (Dist, error) {
	if len(n.args) > maxParts {
		return nil, fmt.Errorf("workload: mix has %d parts: want 1 to %d", len(n.args), maxParts)
	}
	parts := make([]Part, len(n.args))
	for i, a := range n.args {
		if a.key == "" || a.sep != ':' || !a.val.call {
			return nil, fmt.Errorf("workload: mix part %d is not probability:dist, e.g. 0.99:const(5ms)", i+1)
		}
		ppm, err := (&node{name: a.key}).ppm(fmt.Sprintf("mix part %d weight", i+1))
		if err != nil {
			return nil, err
		}
		d, err := buildDist(a.val)
		if err != nil {
			return nil, err
		}
		parts[i] = Part{PPM: ppm, Dist: d}
	}
	return NewMixture(parts...)
}

// ParseArrivals parses an arrival process:
//
//	const(500/s)
//	poisson(1000/s)
//	onoff(rate=2000/s,on=10s,off=20s)
//	ramp(from=100/s,to=1000/s,over=60s)
//	backlog(10000)
//	limit(poisson(1000/s),count=10000,for=60s)   count, for or both
//
// Rates are N/s, N/ms, N/m, N/h, N/us or N/<duration> (see ParseRate).
// Named arguments may come in any order. The String of every Arrivals
// built here is accepted and parses to an equivalent fresh process.
func ParseArrivals(s string) (Arrivals, error) {
	n, err := parseCall("arrivals", s)
	if err != nil {
		return nil, err
	}
	return buildArrivals(n)
}

func buildArrivals(n *node) (Arrivals, error) {
	switch n.name {
	case "const", "poisson":
		return buildSteady(n)
	case "onoff":
		return buildOnOff(n)
	case "ramp":
		return buildRamp(n)
	case "backlog":
		vals, err := n.positional(1, "count")
		if err != nil {
			return nil, err
		}
		c, err := vals[0].int("backlog size")
		if err != nil {
			return nil, err
		}
		return NewBacklog(c)
	case "limit":
		return buildLimit(n)
	}
	return nil, fmt.Errorf("workload: arrivals kind %q unknown: want const, poisson, onoff, ramp, backlog or limit", n.name)
}

func buildSteady(n *node) (Arrivals, error) {
	vals, err := n.positional(1, "rate")
	if err != nil {
		return nil, err
	}
	r, err := vals[0].rate(n.name + " rate")
	if err != nil {
		return nil, err
	}
	if n.name == "const" {
		return NewConstantRate(r)
	}
	return NewPoisson(r)
}

func buildOnOff(n *node) (Arrivals, error) {
	keys := []string{"rate", "on", "off"}
	vals, err := n.named(0, keys...)
	if err == nil {
		err = n.required(vals, keys...)
	}
	if err != nil {
		return nil, err
	}
	r, err := vals[0].rate("onoff rate")
	if err != nil {
		return nil, err
	}
	on, err := vals[1].dur("onoff on")
	if err != nil {
		return nil, err
	}
	off, err := vals[2].dur("onoff off")
	if err != nil {
		return nil, err
	}
	return NewOnOff(r, on, off)
}

func buildRamp(n *node) (Arrivals, error) {
	keys := []string{"from", "to", "over"}
	vals, err := n.named(0, keys...)
	if err == nil {
		err = n.required(vals, keys...)
	}
	if err != nil {
		return nil, err
	}
	from, err := vals[0].rate("ramp from")
	if err != nil {
		return nil, err
	}
	to, err := vals[1].rate("ramp to")
	if err != nil {
		return nil, err
	}
	over, err := vals[2].dur("ramp over")
	if err != nil {
		return nil, err
	}
	return NewRamp(from, to, over)
}

func buildLimit(n *node) (Arrivals, error) {
	if len(n.args) == 0 || n.args[0].key != "" || !n.args[0].val.call {
		return nil, fmt.Errorf("workload: limit: want limit(<arrivals>,count=N,for=D)")
	}
	inner, err := buildArrivals(n.args[0].val)
	if err != nil {
		return nil, err
	}
	vals, err := n.named(1, "count", "for")
	if err != nil {
		return nil, err
	}
	var count int64
	var span clock.Duration
	if vals[0] != nil {
		if count, err = vals[0].int("limit count"); err != nil {
			return nil, err
		}
	}
	if vals[1] != nil {
		if span, err = vals[1].dur("limit for"); err != nil {
			return nil, err
		}
	}
	return NewLimit(inner, count, span)
}
