package filter

import (
	"math"
	"testing"
)

// The java.lang behaviour the filters rely on, case by case.

func TestJavaParseInt(t *testing.T) {
	for _, c := range []struct {
		s    string
		bits int
		v    int64
		ok   bool
	}{
		{"0", 32, 0, true}, {"-0", 32, 0, true}, {"+7", 32, 7, true}, {"2147483647", 32, math.MaxInt32, true},
		{"-2147483648", 32, math.MinInt32, true}, {"2147483648", 32, 0, false}, {"-2147483649", 32, 0, false},
		{"9223372036854775807", 64, math.MaxInt64, true}, {"-9223372036854775808", 64, math.MinInt64, true},
		{"9223372036854775808", 64, 0, false}, {"", 32, 0, false}, {"+", 32, 0, false}, {"-", 32, 0, false},
		{"--1", 32, 0, false}, {"+-1", 32, 0, false}, {" 1", 32, 0, false}, {"1 ", 32, 0, false},
		{"1.0", 32, 0, false}, {"0x1", 32, 0, false}, {"1e3", 32, 0, false},
		{"\u0661\u0662", 32, 12, true}, // ARABIC-INDIC digits: Character.digit
		{"\u096712", 32, 112, true},    // DEVANAGARI ONE then ASCII
		{"\U0001D7D3", 32, 0, false},   // MATHEMATICAL BOLD DIGIT FIVE is a surrogate pair in Java
		{"\xff", 32, 0, false},         // invalid UTF-8
		{"\u00b2", 32, 0, false},       // SUPERSCRIPT TWO is not Nd
	} {
		v, ok := javaParseInt(c.s, c.bits)
		if v != c.v || ok != c.ok {
			t.Errorf("javaParseInt(%q, %d) = %d, %v; want %d, %v", c.s, c.bits, v, ok, c.v, c.ok)
		}
	}
}

func TestJavaParseDouble(t *testing.T) {
	for _, c := range []struct {
		s  string
		v  float64
		ok bool
	}{
		{"1", 1, true}, {" 1.5 ", 1.5, true}, {"\t-2\n", -2, true}, {"1.", 1, true}, {".5", 0.5, true},
		{"1e3", 1000, true}, {"1E+3", 1000, true}, {"1.e-1", 0.1, true}, {"5d", 5, true}, {"5F", 5, true},
		{"0x1.8p1", 3, true}, {"-0X1P-1", -0.5, true}, {"0x.8p1", 1, true}, {"0x1p3d", 8, true},
		{"Infinity", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true}, {"1e999", math.Inf(1), true},
		{"", 0, false}, {" ", 0, false}, {".", 0, false}, {"e5", 0, false}, {"1e", 0, false}, {"1e+", 0, false},
		{"1.5.5", 0, false}, {"1_0", 0, false}, {"inf", 0, false}, {"infinity", 0, false}, {"nan", 0, false},
		{"NaNd", 0, false}, {"Infinityd", 0, false}, {"0x1", 0, false}, {"0x1p", 0, false}, {"0xp1", 0, false},
		{"\uff15", 0, false}, {"1\u00a0", 0, false}, {"5dd", 0, false}, {"d", 0, false},
	} {
		v, ok := javaParseDouble(c.s)
		if ok != c.ok || ok && v != c.v {
			t.Errorf("javaParseDouble(%q) = %v, %v; want %v, %v", c.s, v, ok, c.v, c.ok)
		}
	}
	for _, s := range []string{"NaN", "+NaN", "-NaN"} {
		if v, ok := javaParseDouble(s); !ok || !math.IsNaN(v) {
			t.Errorf("javaParseDouble(%q) = %v, %v; want NaN", s, v, ok)
		}
	}
}

func TestJavaDoubleCompare(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	for _, c := range []struct {
		a, b float64
		want int
	}{
		{1, 2, -1}, {2, 1, 1}, {1, 1, 0}, {negZero, 0, -1}, {0, negZero, 1}, {nan, nan, 0},
		{nan, math.Inf(1), 1}, {math.Inf(-1), nan, -1},
	} {
		if got := javaDoubleCompare(c.a, c.b); got != c.want {
			t.Errorf("Double.compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "ab", -1}, {"", "", 0}, {"é", "é", 0},
		{"\uffff", "\U0001F600", 1},      // U+FFFF is above the high surrogate D83D
		{"\U0001F600", "\U0001F601", -1}, // same high surrogate, low surrogates ordered
		{"\U00010000", "\U0001F600", -1}, // D800 below D83D
	} {
		if got := CompareUTF16(c.a, c.b); got != c.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestJavaTrim(t *testing.T) {
	for in, want := range map[string]string{
		" a ": "a", "\x00a\x1f": "a", "\u00a0a": "\u00a0a", "a\u2003": "a\u2003", "\x7fa": "\x7fa", "": "",
	} {
		if got := javaTrim(in); got != want {
			t.Errorf("javaTrim(%q) = %q, want %q", in, got, want)
		}
	}
}
