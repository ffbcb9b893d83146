package sim

import "popsim/workload/pcg"

// Random streams. Every concern draws from its own PCG stream derived from
// the run seed, so that turning a fault family on or off, or adding a
// consumer, does not shift the draws of any other concern. Stream ids are
// part of the trace contract: changing one changes every trace.
const (
	streamTie        uint64 = 1       // scheduler tie-breaks between same-time events
	streamNetwork    uint64 = 2       // request and response latencies
	streamActivation uint64 = 3       // two-level activation and swarm weights
	streamBroker     uint64 = 4       // the broker cost model's service times
	streamFault0     uint64 = 16      // + fault family (faultFamily)
	streamProducer   uint64 = 1 << 20 // + producer index: arrivals, tags
	streamConsumer   uint64 = 2 << 20 // + consumer index: processing time, outcome
	streamSDKRetry   uint64 = 3 << 20 // + consumer index: the AWS SDK's retry jitter
)

// newStream returns the PCG stream id of the run seed: math/rand/v2's PCG
// of the two words streamSeeds derives, as the concrete pcg.Rand whose
// draws inline at the call site (the same draws as rand.New over
// rand.NewPCG of those words, which TestStreamIsMathRandPCG checks).
func newStream(seed, id uint64) *pcg.Rand { return pcg.New(streamSeeds(seed, id)) }

// streamSeeds derives the two PCG seed words of stream id of the run seed
// with splitmix64, so that nearby seeds and ids give unrelated streams.
func streamSeeds(seed, id uint64) (uint64, uint64) {
	a := splitmix64(seed ^ splitmix64(id))
	return a, splitmix64(a ^ id<<1 ^ 0x5851f42d4c957f2d)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// chance reports true with probability p parts per million (ppm),
// drawing once (but for the rare rejection of a bounded draw). The hot
// sites (lost, injectRenewals) write its draw out with pcg.Redraw.
func chance(r *pcg.Rand, p int64) bool { return r.Int64N(ppm) < p }

// ppm is a million: the parts of chance's probabilities.
const ppm = 1_000_000
