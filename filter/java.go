package filter

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reproduces the java.lang behaviour RocketMQ's filters rely on:
// String.hashCode, String.trim, String.compareTo, Integer/Long.valueOf,
// Double.valueOf and Double.compare.

// javaHashCode is String.hashCode over the UTF-16 code units of s (invalid
// UTF-8 counts as U+FFFD, as Java's decoder would give).
func javaHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaTrim is String.trim: it removes leading and trailing characters at or
// below U+0020 (spaces and ASCII control characters), and nothing else.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// CompareUTF16 orders strings by UTF-16 code unit, as String.compareTo
// (also pop's order of client ids and broker names).
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Unit(ra), utf16Unit(rb)
			if ua == ub { // same high surrogate
				return cmp3(int64(ra), int64(rb))
			}
			return cmp3(int64(ua), int64(ub))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp3(int64(len(a)), int64(len(b)))
}

// utf16Unit is the first UTF-16 code unit of r.
func utf16Unit(r rune) rune {
	if r > 0xFFFF {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// javaParseInt is Integer.parseInt (bits 32) or Long.parseLong (bits 64) in
// radix 10: an optional sign and at least one decimal digit, where a digit
// is any character of the Basic Multilingual Plane in Unicode category Nd
// (Character.digit); no spaces, no other characters, no overflow.
func javaParseInt(s string, bits int) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1 // largest positive value
	if neg {
		limit++
	}
	var v uint64
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return 0, false
		}
		if v > (limit-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// decimalDigit is Character.digit(c, 10) for a UTF-16 unit: the value of
// a Unicode decimal digit (category Nd) of the BMP. Unicode puts every run
// of Nd digits in blocks of ten starting at zero.
func decimalDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r > 0xFFFF || r < 0x80 {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10, true
		}
	}
	return 0, false
}

// javaParseDouble is Double.valueOf(String): the string is trimmed as by
// String.trim; then an optional sign and "NaN", "Infinity", a decimal
// number (digits with at most one '.', at least one digit, an optional
// exponent) or a hexadecimal one (0x digits [. digits] p exponent), either
// number with an optional f, F, d or D suffix.
func javaParseDouble(s string) (float64, bool) {
	s = javaTrim(s)
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	neg := len(body) < len(s) && s[0] == '-'
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 && strings.IndexByte("fFdD", body[n-1]) >= 0 {
		body = body[:n-1]
		s = s[:len(s)-1]
	}
	var ok bool
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		ok = isJavaHexFloat(body[2:])
	} else {
		ok = isJavaDecimalFloat(body)
	}
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRange(err) {
		return 0, false
	}
	return f, true
}

// isJavaDecimalFloat checks d* [. d*] [eE [+-] d+] with at least one
// mantissa digit.
func isJavaDecimalFloat(s string) bool {
	n := digits(s)
	mant := n
	if n < len(s) && s[n] == '.' {
		f := digits(s[n+1:])
		mant += f
		n += 1 + f
	}
	if mant == 0 {
		return false
	}
	if n < len(s) {
		e := exponentLen(s[n:])
		if e == 0 {
			return false
		}
		n += e
	}
	return n == len(s)
}

// isJavaHexFloat checks, after "0x", h+ [.] | h* . h+, then [pP] [+-] d+.
func isJavaHexFloat(s string) bool {
	n := hexDigits(s)
	mant := n
	if n < len(s) && s[n] == '.' {
		f := hexDigits(s[n+1:])
		mant += f
		n += 1 + f
	}
	if mant == 0 || n >= len(s) || s[n] != 'p' && s[n] != 'P' {
		return false
	}
	n++
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	d := digits(s[n:])
	return d > 0 && n+d == len(s)
}

func hexDigits(s string) int {
	n := 0
	for n < len(s) && (isDigit(s[n]) || s[n] >= 'a' && s[n] <= 'f' || s[n] >= 'A' && s[n] <= 'F') {
		n++
	}
	return n
}

// javaDoubleCompare is Double.compare: numeric order, with -0.0 below 0.0
// and NaN above everything and equal to itself.
func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ka, kb := doubleKey(a), doubleKey(b)
	return cmp3(ka, kb)
}

// doubleKey is Double.doubleToLongBits (every NaN is the canonical one).
func doubleKey(f float64) int64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}
