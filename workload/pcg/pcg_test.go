package pcg

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// bounds are the n the bounded draws are checked with: small, powers of
// two and their neighbours, the run's own (1e6 ppm, microsecond spans),
// and large n whose rejection path (lo < 2^64 mod n) is taken often.
var bounds = []uint64{
	1, 2, 3, 5, 7, 10, 64, 100, 1000, 1_000_000, 1<<20 + 1, 30_000_001,
	1<<31 - 1, 1 << 31, 1<<32 + 7, 1<<53 - 1, 1 << 62, 1<<63 - 1, 1 << 63,
	1<<63 + 1, 3 << 62, math.MaxUint64 - 1, math.MaxUint64,
}

// seeds returns the seed pairs the differential tests run: the zero state,
// small seeds and words from a splitmix-like walk.
func seeds() [][2]uint64 {
	out := [][2]uint64{{0, 0}, {1, 2}, {math.MaxUint64, math.MaxUint64}, {0, 1}, {1, 0}}
	x := uint64(0x243f6a8885a308d3)
	for range 60 {
		x += 0x9e3779b97f4a7c15
		a := x * 0xbf58476d1ce4e5b9
		x += 0x9e3779b97f4a7c15
		out = append(out, [2]uint64{a ^ a>>31, x ^ x>>29})
	}
	return out
}

// TestMatchesMathRand draws, for each seed pair, the same sequence of
// mixed calls from a Rand (a bounded draw also written out with Redraw,
// as the simulator's hot sites write it) and from rand.New(rand.NewPCG(...)), and
// requires every value to agree: the calls interleave so that a draw
// count off by one anywhere (a rejection redrawn differently, a power of
// two drawn twice) shows in every value after it.
func TestMatchesMathRand(t *testing.T) {
	for _, s := range seeds() {
		got, want := New(s[0], s[1]), rand.New(rand.NewPCG(s[0], s[1]))
		for i := range 4000 {
			n := bounds[i%len(bounds)]
			var g, w uint64
			switch i % 8 {
			case 0:
				g, w = got.Uint64(), want.Uint64()
			case 1:
				g, w = got.Uint64N(n), want.Uint64N(n)
			case 2:
				m := int64(n>>1) | 1
				g, w = uint64(got.Int64N(m)), uint64(want.Int64N(m))
			case 3:
				m := int(n>>1) | 1
				g, w = uint64(got.IntN(m)), uint64(want.IntN(m))
			case 4:
				m := int32(n>>33) | 1
				g, w = uint64(got.Int32N(m)), uint64(want.Int32N(m))
			case 5:
				g, w = uint64(got.Uint32()), uint64(want.Uint32())
			case 6:
				g, w = math.Float64bits(got.Float64()), math.Float64bits(want.Float64())
			case 7: // the draw written out with Redraw, of an n not a power of two
				m := max(n|1, 3)
				hi, lo := bits.Mul64(got.Uint64(), m)
				if lo < m {
					hi = got.Redraw(hi, lo, m)
				}
				g, w = hi, want.Uint64N(m)
			}
			if g != w {
				t.Fatalf("seed %v, draw %d (kind %d, n %d): got %d, want %d", s, i, i%8, n, g, w)
			}
		}
	}
}

// TestRejectionTaken checks that the differential test reaches the
// redraw path: for n just above 2^63 about half the first draws are
// rejected, so a stream that never redraws would disagree at once.
func TestRejectionTaken(t *testing.T) {
	r, n := New(5, 6), uint64(1<<63+1)
	redraws := 0
	for range 1000 {
		x := *r
		_, lo := bits.Mul64(x.Uint64(), n)
		if lo < -n%n {
			redraws++
		}
		r.Uint64N(n)
	}
	if redraws < 300 {
		t.Fatalf("%d first draws of 1000 rejected for n = 2^63+1, want about half", redraws)
	}
}

// TestSourceSharesState checks that rand.New over a Rand draws from the
// Rand's own state: draws through either continue one stream.
func TestSourceSharesState(t *testing.T) {
	r, ref := New(7, 8), rand.New(rand.NewPCG(7, 8))
	wrapped := rand.New(r)
	for i := range 100 {
		var g uint64
		if i%2 == 0 {
			g = math.Float64bits(wrapped.NormFloat64())
			if w := math.Float64bits(ref.NormFloat64()); g != w {
				t.Fatalf("draw %d through rand.New: got %x, want %x", i, g, w)
			}
			continue
		}
		if g, w := r.Uint64(), ref.Uint64(); g != w {
			t.Fatalf("draw %d direct: got %d, want %d", i, g, w)
		}
	}
}

// TestSeed checks that Seed restarts a stream as New starts it.
func TestSeed(t *testing.T) {
	r := New(1, 2)
	r.Uint64()
	r.Seed(3, 4)
	if g, w := r.Uint64(), New(3, 4).Uint64(); g != w {
		t.Fatalf("after Seed(3, 4): got %d, want %d", g, w)
	}
}

// TestBadBoundsPanic checks the bounded draws reject an empty range as
// math/rand/v2 does.
func TestBadBoundsPanic(t *testing.T) {
	r := New(1, 1)
	for name, f := range map[string]func(){
		"Uint64N(0)": func() { r.Uint64N(0) },
		"Int64N(0)":  func() { r.Int64N(0) },
		"IntN(-1)":   func() { r.IntN(-1) },
		"Int32N(0)":  func() { r.Int32N(0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}
