package sim

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestDrawMatchesPCG checks pcgSeed.draw against math/rand/v2's PCG run
// step by step: every one of the first 2000 draws of 64 seeds and ids,
// then, for one stream, draws up to the millionth and past 2^20.
func TestDrawMatchesPCG(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		for _, id := range []uint64{streamTie, streamNetwork, streamFault0 + 3, streamProducer + 5, streamConsumer, streamSDKRetry + 7, 0, ^uint64(0)} {
			p := newPCG(seed, id)
			src := p.source()
			for n := uint64(1); n <= 2000; n++ {
				if want, got := src.Uint64(), p.draw(n); got != want {
					t.Fatalf("seed %d id %d: draw(%d) = %#x, the PCG's draw %d is %#x", seed, id, n, got, n, want)
				}
			}
		}
	}
	p := newPCG(42, streamTie)
	src := p.source()
	r := rand.New(rand.NewPCG(3, 4))
	for n := uint64(1); n <= 1<<20+5; n++ {
		want := src.Uint64()
		if n&(n-1) == 0 || n%997 == 0 || r.IntN(500) == 0 || n > 1<<20-3 {
			if got := p.draw(n); got != want {
				t.Fatalf("draw(%d) = %#x, the PCG's draw %d is %#x", n, got, n, want)
			}
		}
	}
}

// TestU128MatchesBig checks u128's arithmetic against math/big modulo
// 2^128 on random operands, edge values among them.
func TestU128MatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mod := new(big.Int).Lsh(big.NewInt(1), 128)
	toBig := func(a u128) *big.Int {
		return new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(a.hi), 64), new(big.Int).SetUint64(a.lo))
	}
	word := func() uint64 {
		switch r.IntN(4) {
		case 0:
			return ^uint64(0) - uint64(r.IntN(3))
		case 1:
			return uint64(r.IntN(3))
		}
		return r.Uint64()
	}
	for i := 0; i < 20000; i++ {
		a, b := u128{word(), word()}, u128{word(), word()}
		sum := new(big.Int).Mod(new(big.Int).Add(toBig(a), toBig(b)), mod)
		prod := new(big.Int).Mod(new(big.Int).Mul(toBig(a), toBig(b)), mod)
		if got := toBig(a.add(b)); got.Cmp(sum) != 0 {
			t.Fatalf("%v + %v = %v, want %v", a, b, got, sum)
		}
		if got := toBig(a.mul(b)); got.Cmp(prod) != 0 {
			t.Fatalf("%v * %v = %v, want %v", a, b, got, prod)
		}
	}
}
