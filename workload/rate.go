package workload

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"popsim/clock"
)

// Rate is an exact message rate: Count messages every Per. Rates are kept as
// a ratio of integers rather than a float so that ConstantRate places
// arrivals exactly (3/s is three arrivals in every second, forever) and so
// that String round-trips through ParseRate.
type Rate struct {
	Count int64          // messages per period, 0 to 1e9
	Per   clock.Duration // the period, 1us to 1h
}

// Bounds on Rate.
const (
	maxRateCount = 1_000_000_000
	maxRatePer   = clock.Hour
)

// PerSecond returns a rate of n messages per second.
func PerSecond(n int64) Rate { return Rate{Count: n, Per: clock.Second} }

// MessagesPerSecond returns the rate as a float, for reports only.
func (r Rate) MessagesPerSecond() float64 {
	return float64(r.Count) * float64(clock.Second) / float64(r.Per)
}

// meanGap returns the mean inter-arrival gap in microseconds.
func (r Rate) meanGap() float64 { return float64(r.Per) / float64(r.Count) }

// perMicro returns the rate in messages per microsecond.
func (r Rate) perMicro() float64 { return float64(r.Count) / float64(r.Per) }

// String returns the canonical form: "1000/s", "5/ms", "1/m", or
// "5/2s" when the period is not a single unit.
func (r Rate) String() string {
	count := fmt.Sprint(r.Count)
	for _, u := range durUnits {
		if r.Per == u.d {
			return count + "/" + u.name
		}
	}
	return count + "/" + fmtDur(r.Per)
}

// ParseRate parses "N/s", "N/ms", "N/m", "N/h", "N/us" or "N/<duration>"
// ("5/100ms"). N is an unsigned decimal with at most six fractional digits;
// "0.5/s" becomes 1/2s. Zero is accepted here; the processes that need a
// positive rate say so.
func ParseRate(s string) (Rate, error) {
	r, err := parseRate(s)
	if err != nil {
		return Rate{}, fmt.Errorf("workload: rate %s: %v", quote(s), err)
	}
	return r, r.check("rate", true)
}

// parseRate parses a rate without checking its count; errors carry no
// prefix.
func parseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("want N/s, N/ms, N/m or N/<duration>, e.g. 1000/s")
	}
	n, den, ok := parseDecimal(num, 6)
	if !ok {
		return Rate{}, fmt.Errorf("count %s: want an unsigned decimal with at most 6 fractional digits", quote(num))
	}
	per, err := parseRateUnit(unit)
	if err != nil {
		return Rate{}, err
	}
	g := gcd(n, den)
	r := Rate{Count: n / g, Per: per * clock.Duration(den/g)}
	if r.Per > maxRatePer {
		return Rate{}, fmt.Errorf("nonzero rate below 1/h: want 0 or at least 1/h")
	}
	return r, nil
}

// parseRateUnit parses the period of a rate: a bare unit ("s") or a
// duration ("100ms"), between 1us and 1h.
func parseRateUnit(unit string) (clock.Duration, error) {
	if unit != "" && (unit[0] < '0' || unit[0] > '9') && unit[0] != '.' {
		unit = "1" + unit
	}
	per, err := clock.ParseDuration(unit)
	if err != nil {
		return 0, fmt.Errorf("period %s: want a unit (us, ms, s, m, h) or a duration such as 100ms", quote(unit))
	}
	if per < clock.Microsecond || per > maxRatePer {
		return 0, fmt.Errorf("period %s out of range: want 1us to 1h", fmtDur(per))
	}
	return per, nil
}

// check validates r for the named field; allowZero permits a zero count.
func (r Rate) check(field string, allowZero bool) error {
	if r.Per < clock.Microsecond || r.Per > maxRatePer {
		return fmt.Errorf("workload: %s period %s out of range: want 1us to 1h", field, fmtDur(r.Per))
	}
	if r.Count < 0 || (r.Count == 0 && !allowZero) {
		want := "> 0"
		if allowZero {
			want = ">= 0"
		}
		return fmt.Errorf("workload: %s %s out of range: want %s", field, r, want)
	}
	if r.Count > maxRateCount {
		return fmt.Errorf("workload: %s %s out of range: want at most %d per period", field, r, maxRateCount)
	}
	return nil
}

// quote quotes user input for an error message, shortened to 64 bytes.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
