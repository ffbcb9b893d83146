package model

import (
	"strings"
	"unicode"
)

// The Java library behaviour RocketMQ's wire decoders rely on, so that a
// header popsim decodes is accepted or refused exactly as the broker and
// the proxy do.

// JavaSplit is Java's String.split with a one-character separator that is
// not a regular-expression metacharacter (RocketMQ splits receipt handles
// at " "): the pieces between separators, empty ones included, except that
// trailing empty pieces are dropped; a string without the separator is
// one piece (so "" is [""]), and a string of separators only is none.
func JavaSplit(s string, sep byte) []string {
	if strings.IndexByte(s, sep) < 0 {
		return []string{s}
	}
	parts := strings.Split(s, string(sep))
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	return parts[:n]
}

// ParseJavaLong is Java's Long.parseLong(s) (radix 10): an optional ASCII
// '+' or '-', then at least one decimal digit, within the range of a long.
// A digit is any character Character.digit(ch, 10) accepts: a Unicode
// decimal digit (general category Nd) in the Basic Multilingual Plane, as
// Java strings hold UTF-16 code units and a character outside the BMP is
// two surrogates, which are not digits. Go's Unicode tables stand in for
// the JVM's, which differ only in digit scripts added between versions.
func ParseJavaLong(s string) (int64, bool) {
	return parseJava(s, -1<<63, 1<<63-1)
}

// ParseJavaInt is Java's Integer.parseInt(s) (radix 10); see
// ParseJavaLong.
func ParseJavaInt(s string) (int32, bool) {
	v, ok := parseJava(s, -1<<31, 1<<31-1)
	return int32(v), ok
}

// parseJava parses s as Java does, within [lo, hi]: it accumulates
// negatively, as Java does, so the most negative value parses.
func parseJava(s string, lo, hi int64) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg, rest := false, s
	switch s[0] {
	case '-':
		neg, rest = true, s[1:]
	case '+':
		rest = s[1:]
	}
	if rest == "" {
		return 0, false
	}
	limit := -hi
	if neg {
		limit = lo
	}
	var acc int64 // negative
	for _, r := range rest {
		d, ok := javaDigit(r)
		if !ok || acc < limit/10 {
			return 0, false
		}
		acc *= 10
		if acc < limit+int64(d) {
			return 0, false
		}
		acc -= int64(d)
	}
	if neg {
		return acc, true
	}
	return -acc, true
}

// javaDigit is Character.digit(ch, 10) for a UTF-16 code unit: the value of
// a decimal digit in the BMP, else false.
func javaDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || r > 0xFFFF || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	// Nd characters come in runs of ten, 0 to 9 in order (a Unicode
	// stability guarantee), and every range of the table is a whole
	// number of runs.
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10, true
		}
	}
	return 0, false
}
