package model

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendUdecMatchesStrconv: every digit count, at the edges of its
// powers of ten and at random inside, into a slice with room to spare and
// into one without (the growth path), keeping what dst held.
func TestAppendUdecMatchesStrconv(t *testing.T) {
	vs := []uint64{0, 1, 9, 10, 99, 100, 1e8 - 1, 1e8, 1e8 + 1, 1e16 - 1, 1e16, math.MaxUint32, math.MaxInt64, math.MaxUint64}
	for p := uint64(1); p <= 1e19; p *= 10 {
		vs = append(vs, p-1, p, p+1, 2*p-1, 5*p)
		if p == 1e19 {
			break
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		vs = append(vs, r.Uint64()>>r.UintN(64))
	}
	roomy := make([]byte, 0, 64)
	for _, v := range vs {
		want := "ab" + strconv.FormatUint(v, 10)
		for _, dst := range [][]byte{append(roomy[:0], "ab"...), []byte("ab")} {
			if got := string(AppendUdec(dst, v)); got != want {
				t.Fatalf("AppendUdec(%q, %d) = %q, want %q", dst, v, got, want)
			}
		}
		if v <= math.MaxInt64 {
			for _, s := range []int64{int64(v), -int64(v)} {
				want := "ab" + strconv.FormatInt(s, 10)
				if got := string(AppendDec([]byte("ab"), s)); got != want {
					t.Fatalf("AppendDec(%d) = %q, want %q", s, got, want)
				}
			}
		}
	}
	if got := string(AppendDec(nil, math.MinInt64)); got != strconv.FormatInt(math.MinInt64, 10) {
		t.Fatalf("AppendDec(MinInt64) = %q", got)
	}
}

// TestDecDigits: the digit count at each power of ten and one below.
func TestDecDigits(t *testing.T) {
	if n := decDigits(0); n != 1 {
		t.Fatalf("decDigits(0) = %d, want 1", n)
	}
	p := uint64(1)
	for d := 1; d <= 20; d++ {
		if n := decDigits(p); n != d {
			t.Fatalf("decDigits(%d) = %d, want %d", p, n, d)
		}
		if n := decDigits(p - 1); p > 1 && n != d-1 {
			t.Fatalf("decDigits(%d) = %d, want %d", p-1, n, d-1)
		}
		if d < 20 {
			p *= 10
		}
	}
	if n := decDigits(math.MaxUint64); n != 20 {
		t.Fatalf("decDigits(MaxUint64) = %d, want 20", n)
	}
}

// TestDec8: the eight-digit lanes against digit by digit division, on
// every value below 1e5, a stride through the rest, and each digit
// position's edges.
func TestDec8(t *testing.T) {
	check := func(x uint64) {
		got := dec8(x)
		y := x
		for k := 7; k >= 0; k-- {
			if d := byte(got >> (8 * k)); d != byte('0'+y%10) {
				t.Fatalf("dec8(%d) = %#x: byte %d is %q, want %q", x, got, k, d, byte('0'+y%10))
			}
			y /= 10
		}
	}
	for x := uint64(0); x < 1e5; x++ {
		check(x)
	}
	for x := uint64(1e5); x < 1e8; x += 13 {
		check(x)
	}
	for p := uint64(1); p < 1e8; p *= 10 {
		for _, x := range []uint64{p - 1, p, p + 1, 9 * p, 10*p - 1} {
			if x < 1e8 {
				check(x)
			}
		}
	}
}
