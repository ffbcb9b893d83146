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

// TestAppendDecAfterPrefix: after prefixes of every length up to 20 (the
// word stores of the short numbers reach back into the prefix from the
// number's end, when it ends 8 bytes or more into dst), with room to
// spare, AppendDec and AppendUdec keep the prefix byte for byte, write the
// number as strconv does, and write nothing past it (the spare room keeps
// its bytes).
func TestAppendDecAfterPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := []int64{0, 5, 9, 10, 99, 100, 12345, 1e7 - 1, 1e7, 1e8 - 1, 1e8, 1e12, 1e16 - 1, 1e16, math.MaxInt64, -1, -12345}
	for range 3000 {
		vs = append(vs, int64(r.Uint64()>>(1+r.UintN(63))))
	}
	var buf [64]byte
	for plen := 0; plen <= 20; plen++ {
		for _, v := range vs {
			for i := range buf {
				buf[i] = byte(0xa0 + i)
			}
			prefix := string(buf[:plen])
			for _, c := range []struct {
				f   func([]byte) []byte
				num string
			}{
				{func(d []byte) []byte { return AppendDec(d, v) }, strconv.FormatInt(v, 10)},
				{func(d []byte) []byte { return AppendUdec(d, uint64(v)) }, strconv.FormatUint(uint64(v), 10)},
			} {
				for i := plen; i < len(buf); i++ {
					buf[i] = byte(0xa0 + i)
				}
				if got := c.f(buf[:plen]); string(got) != prefix+c.num {
					t.Fatalf("prefix %d, %d: got %q, want %q", plen, v, got, prefix+c.num)
				}
				for i := plen + len(c.num); i < len(buf); i++ {
					if buf[i] != byte(0xa0+i) {
						t.Fatalf("prefix %d, %d: byte %d, past the number, was written", plen, v, i)
					}
				}
			}
		}
	}
}
