package pcg

import "math/bits"

// The 128-bit linear congruential step of PCG: state = state*mul + inc
// (mod 2^128), with the multiplier and increment of the PCG reference
// implementation (O'Neill, pcg-cpp), written as high and low words.
const (
	mulHi uint64 = 0x2360ed051fc65da4
	mulLo uint64 = 0x4385df649fccf645
	incHi uint64 = 0x5851f42d4c957f2d
	incLo uint64 = 0x14057b7ef767814f
)

// dxsmMul is the 64-bit multiplier of the DXSM ("double xorshift
// multiply") output function.
const dxsmMul uint64 = 0xda942042e4dd58b5

// Rand is a PCG-DXSM stream: the 128-bit state (hi, lo). Its zero value is
// the stream of seeds (0, 0). Not safe for concurrent use.
type Rand struct{ hi, lo uint64 }

// New returns the stream that rand.NewPCG(seed1, seed2) starts.
func New(seed1, seed2 uint64) *Rand { return &Rand{hi: seed1, lo: seed2} }

// Seed restarts r as the stream New(seed1, seed2) starts.
func (r *Rand) Seed(seed1, seed2 uint64) { r.hi, r.lo = seed1, seed2 }

// Uint64 advances the state one step and returns the DXSM mix of the new
// state: the high word, xor-shifted, multiplied, xor-shifted again and
// multiplied by the low word made odd.
func (r *Rand) Uint64() uint64 {
	hi, lo := bits.Mul64(r.lo, mulLo)
	hi += r.hi*mulLo + r.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c) // an add with carry, where hi += incHi + c took four instructions
	r.hi, r.lo = hi, lo
	hi ^= hi >> 32
	hi *= dxsmMul
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// Uint64N returns a uniform draw from [0, n), n > 0 (it panics
// otherwise), as math/rand/v2's Rand.Uint64N does.
func (r *Rand) Uint64N(n uint64) uint64 {
	if n == 0 {
		panic("pcg: Uint64N of 0")
	}
	return r.below(n)
}

// Int64N returns a uniform draw from [0, n), n > 0 (it panics otherwise).
func (r *Rand) Int64N(n int64) int64 {
	if n <= 0 {
		panic("pcg: Int64N of a bound <= 0")
	}
	return int64(r.below(uint64(n)))
}

// IntN returns a uniform draw from [0, n), n > 0 (it panics otherwise).
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("pcg: IntN of a bound <= 0")
	}
	return int(r.below(uint64(n)))
}

// Int32N returns a uniform draw from [0, n), n > 0 (it panics otherwise).
func (r *Rand) Int32N(n int32) int32 {
	if n <= 0 {
		panic("pcg: Int32N of a bound <= 0")
	}
	return int32(r.below(uint64(n)))
}

// Uint32 returns the high 32 bits of a draw.
func (r *Rand) Uint32() uint32 { return uint32(r.Uint64() >> 32) }

// Float64 returns a uniform draw from [0, 1): the low 53 bits of a draw
// over 2^53.
func (r *Rand) Float64() float64 { return float64(r.Uint64()<<11>>11) / (1 << 53) }

// below returns a uniform draw from [0, n), n > 0, by Lemire's multiply
// and reject: a power of two masks one draw; any other n takes the high
// word of draw·n, and redraws (rejects) only while the low word falls
// below 2^64 mod n, which the cheap test lo < n rules out nearly always.
// The first draw is taken before the power-of-two test, so that the
// common path holds one copy of Uint64, and the rare path is written in
// (not called), so that below calls nothing and needs no stack frame.
func (r *Rand) below(n uint64) uint64 {
	x := r.Uint64()
	if n&(n-1) == 0 {
		return x & (n - 1)
	}
	hi, lo := bits.Mul64(x, n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Redraw ends a draw from [0, n), n not a power of two, whose first draw x
// gave hi, lo = bits.Mul64(x, n) with lo < n: below's rare path, for a
// caller that takes the first draw itself, as below does, where below is a
// call (the draw then inlines, and a constant n needs no power-of-two
// test):
//
//	hi, lo := bits.Mul64(r.Uint64(), n)
//	if lo < n {
//		hi = r.Redraw(hi, lo, n)
//	}
func (r *Rand) Redraw(hi, lo, n uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(r.Uint64(), n)
	}
	return hi
}
