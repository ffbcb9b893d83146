package workload

import (
	"strconv"
	"strings"

	"popsim/clock"
)

// ppmOne is a probability of one in parts per million.
const ppmOne = 1_000_000

// durUnits are the units fmtDur may print, largest first.
var durUnits = [...]struct {
	d    clock.Duration
	name string
}{
	{clock.Hour, "h"},
	{clock.Minute, "m"},
	{clock.Second, "s"},
	{clock.Millisecond, "ms"},
	{clock.Microsecond, "us"},
}

// fmtDur renders d in the largest unit that divides it exactly ("5ms",
// "90s", "1500us"): the canonical form, which clock.ParseDuration accepts.
func fmtDur(d clock.Duration) string {
	if d == 0 {
		return "0s"
	}
	for _, u := range durUnits {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	panic("workload: unreachable: every duration is a whole number of microseconds")
}

// parseDecimal parses an unsigned decimal such as "12", "0.5" or "0.000001"
// with at most maxFrac fractional digits and returns it as num/den with den
// a power of ten. Signs, exponents and more than 12 integer digits are
// rejected.
func parseDecimal(s string, maxFrac int) (num, den int64, ok bool) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") || len(frac) > maxFrac || len(whole) > 12 {
		return 0, 0, false
	}
	if !allDigits(whole) || !allDigits(frac) {
		return 0, 0, false
	}
	num, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	den = 1
	for range len(frac) {
		den *= 10
	}
	return num, den, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parsePPM parses a probability written as a decimal ("0.99", "1",
// "0.000001") into parts per million.
func parsePPM(s string) (int64, bool) {
	num, den, ok := parseDecimal(s, 6)
	if !ok || num > den {
		return 0, false
	}
	return num * (ppmOne / den), true
}

// fmtPPM renders parts per million as the shortest decimal probability:
// 990000 is "0.99", 1000000 is "1", 5 is "0.000005".
func fmtPPM(ppm int64) string {
	s := strconv.FormatInt(ppm/ppmOne, 10)
	frac := ppm % ppmOne
	if frac == 0 {
		return s
	}
	f := strconv.FormatInt(frac+ppmOne, 10)[1:] // six digits, zero-padded
	return s + "." + strings.TrimRight(f, "0")
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
