// Package workload describes what producers and consumers do in a
// simulation: when messages arrive, how long each takes to process, how
// processing ends, and which tag and key a message carries.
//
// It owns:
//
//   - Arrivals: open-loop arrival processes (ConstantRate, Poisson, OnOff,
//     Ramp, Backlog) and the Limit wrapper. A process is a stateful
//     iterator anchored at the time of its first Next call; it yields the
//     intended production instants, independent of when the caller asks.
//   - Dist: processing-time distributions (Constant, Uniform, Exponential,
//     LogNormal, BoundedPareto, Mixture), immutable and shareable; a
//     Sampler draws from one as its Sample does, a constant inline and a
//     uniform without the interface's call (the simulator's network
//     latencies, one a request and an answer).
//   - Outcomes: the probability, in parts per million, of Success,
//     ReconsumeLater and Exception, and the poison messages (every Nth
//     message, at most K of them) whose every delivery throws.
//   - Tags and Key: message tags from a weighted list, deterministic keys.
//   - A text form for each of the above (ParseDist, ParseArrivals,
//     ParseRate, ParseOutcomes, ParseTags) whose String methods print the
//     canonical form the parsers accept, so specs round-trip through
//     scenario files, flags and reports.
//
// It must not read the wall clock, start goroutines, use a global random
// source, or let map iteration order decide anything. Every random draw
// comes from a *pcg.Rand (workload/pcg: math/rand/v2's PCG stream as a
// concrete type whose draws inline) passed by the caller, so the caller
// decides the streams (one per concern) and the same seed gives the same
// values on every machine. Results are integers:
// clock.Time and clock.Duration in microseconds, counts, parts per million.
// Floats appear only inside sampling and are rounded explicitly
// (math.Round) to whole microseconds. Because math.Log and math.Exp are
// assembly on some architectures and Go may fuse multiply-adds, the package
// carries its own portable logarithm and exponential (see fmath.go).
//
// Layer 3: it imports only the standard library, popsim/clock, popsim/model
// and its own workload/pcg, and is imported by sim and scenarios.
//
// Usage:
//
//	arr, err := workload.ParseArrivals("poisson(1000/s)")
//	svc, err := workload.ParseDist("lognormal(median=10ms,p99=200ms)")
//	out, err := workload.NewOutcomes(10_000, 1_000) // 1% reconsume, 0.1% exception
//	rng := pcg.New(seed, 1)                         // the workload stream
//	for {
//		at, ok := arr.Next(rng, now)
//		if !ok {
//			break
//		}
//		work, result := svc.Sample(rng), out.Sample(rng)
//		// schedule the produce at `at`; the consumer takes `work` and
//		// ends with `result`
//		now = at
//	}
package workload
