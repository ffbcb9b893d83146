package sim

import (
	"math/bits"
	"math/rand/v2"
)

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

// newStream returns the PCG stream id of the run seed. Both PCG words are
// derived with splitmix64 so that nearby seeds and ids give unrelated
// streams.
func newStream(seed, id uint64) *rand.Rand { return rand.New(newPCG(seed, id).source()) }

// newPCG is the start of newStream's source, for a user who needs a
// stream's draws by number (the scheduler's tie-breaks, pcgSeed.draw).
func newPCG(seed, id uint64) pcgSeed {
	a := splitmix64(seed ^ splitmix64(id))
	b := splitmix64(a ^ id<<1 ^ 0x5851f42d4c957f2d)
	return pcgSeed{hi: a, lo: b}
}

// pcgSeed is the state a math/rand/v2 PCG starts from (rand.NewPCG(hi,
// lo)). Its draws can be had by number, in any order (draw): the
// generator's state is an affine function of the number of steps taken,
// so a jump of n steps composes the precomputed jumps of n's set bits.
type pcgSeed struct{ hi, lo uint64 }

// source returns the PCG that starts at p.
func (p pcgSeed) source() *rand.PCG { return rand.NewPCG(p.hi, p.lo) }

// draw returns draw number n (from 1) of the stream that starts at p:
// what the n-th call of Uint64 on p.source() returns.
func (p pcgSeed) draw(n uint64) uint64 {
	s := u128{p.hi, p.lo}
	for j := 0; n != 0; j, n = j+1, n>>1 {
		if n&1 != 0 {
			s = pcgJumps[j].apply(s)
		}
	}
	return pcgOutput(s)
}

// u128 is a 128-bit unsigned number; arithmetic on it is modulo 2^128.
type u128 struct{ hi, lo uint64 }

func (a u128) mul(b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	return u128{hi + a.hi*b.lo + a.lo*b.hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// pcgJump is the map x -> mul*x + add of the PCG's state over some number
// of steps.
type pcgJump struct{ mul, add u128 }

func (f pcgJump) apply(x u128) u128 { return f.mul.mul(x).add(f.add) }

// pcgJumps[j] is the PCG state's jump of 2^j steps: the first is one step
// of math/rand/v2's PCG (its multiplier and increment), each next one the
// one before it applied twice.
var pcgJumps = func() (t [64]pcgJump) {
	t[0] = pcgJump{mul: u128{2549297995355413924, 4865540595714422341}, add: u128{6364136223846793005, 1442695040888963407}}
	for j := 1; j < len(t); j++ {
		f := t[j-1]
		t[j] = pcgJump{mul: f.mul.mul(f.mul), add: f.apply(f.add)}
	}
	return t
}()

// pcgOutput is the draw math/rand/v2's PCG makes from the state s it has
// stepped to (the DXSM permutation: two xorshifts, two multiplies).
func pcgOutput(s u128) uint64 {
	x := s.hi
	x ^= x >> 32
	x *= 0xda942042e4dd58b5
	x ^= x >> 48
	return x * (s.lo | 1)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// chance reports true with probability ppm parts per million, drawing
// exactly once.
func chance(r *rand.Rand, ppm int64) bool { return r.Int64N(1_000_000) < ppm }
