package model

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// Decimal integers as strconv.AppendInt(dst, v, 10) writes them, for the
// numbers every revive-topic message and pop answer carries (CK and ack
// bodies, unique ids, merge keys, offset infos): the digits are counted
// first and written in pairs straight into dst's spare room, without
// strconv's buffer and copy.

// AppendDec is strconv.AppendInt(dst, v, 10). Inlined: a digit alone
// (a retry flag, a queue's id, an offset near a queue's start), with room
// for it, is stored without a call; the rest go to appendDecCall.
func AppendDec(dst []byte, v int64) []byte {
	if uint64(v) < 10 && len(dst) < cap(dst) {
		return append(dst, byte('0'+v))
	}
	return appendDecCall(dst, v)
}

// dec8 is x's eight digits (x < 1e8, leading zeros included) as the
// little-endian uint64 of their bytes, computed in lanes of one word:
// x splits into two 4-digit halves (32-bit lanes, the high half first in
// memory), each into two 2-digit parts (16-bit lanes), each into its two
// digits (bytes). The multiplications by 10486/2**20 and 103/2**10 divide
// by 100 and 10 exactly in the lanes' ranges (below 10000 and 100).
func dec8(x uint64) uint64 {
	v := x/10000 | x%10000<<32
	h := (v * 10486 >> 20) & 0x0000007f0000007f
	v = h | (v-h*100)<<16
	t := (v * 103 >> 10) & 0x000f000f000f000f
	v = t | (v-t*10)<<8
	return v | 0x3030303030303030
}

// decPairs[i] is i's two digits ("00" to "99") as a little-endian uint16.
var decPairs = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()

// decPow10[i] is 10**i.
var decPow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decDigits is the number of decimal digits of u (1 for 0).
func decDigits(u uint64) int {
	// bits.Len64(u)*1233>>12 is floor(log10(2**len)): the count when u
	// is below 10**n, one less (n++ below) when u is at or above it
	n := uint(bits.Len64(u)*1233) >> 12 // at most 19
	if u >= decPow10[n%20] {
		n++
	}
	return int(max(n, 1))
}

// AppendUdec is strconv.AppendUint(dst, u, 10).
func AppendUdec(dst []byte, u uint64) []byte {
	if int64(u) < 0 { // 19 or 20 digits
		return strconv.AppendUint(dst, u, 10)
	}
	return appendDecCall(dst, int64(u))
}

// appendDecCall is AppendDec past its inlined case: a negative v is
// strconv's; the rest are written here, where AppendDec's merge keys
// took a call of AppendUdec as well.
func appendDecCall(dst []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	u := uint64(v)
	n := decDigits(u)
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst, make([]byte, n)...)
	} else {
		dst = dst[:l+n]
	}
	b := dst[l:]
	if n > 8 && n <= 16 { // a time in ms, an id: two words of eight digits
		q := u / 1e8
		k := n - 8 // q's digits: dec8's, less its 8-k leading zeros (its low bytes)
		binary.LittleEndian.PutUint64(b[:8], dec8(q)>>(8*(8-k)))
		binary.LittleEndian.PutUint64(b[k:n], dec8(u-q*1e8))
		return dst
	}
	i := uint(n)
	for u >= 1e8 { // the last eight digits at once
		q := u / 1e8
		i -= 8
		binary.LittleEndian.PutUint64(b[i:], dec8(u-q*1e8))
		u = q
	}
	lo := uint32(u)
	for lo >= 100 {
		i -= 2
		p := decPairs[lo%100]
		lo /= 100
		_ = b[i+1]
		b[i], b[i+1] = byte(p), byte(p>>8)
	}
	if lo >= 10 { // i is 2
		p := decPairs[lo]
		_ = b[1]
		b[0], b[1] = byte(p), byte(p>>8)
	} else {
		b[0] = byte('0' + lo) // i is 1
	}
	return dst
}
