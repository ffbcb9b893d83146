package clock

import (
	"fmt"
	"strconv"
	"time"
)

// Time is a virtual instant: microseconds since the Unix epoch.
type Time int64

// Duration is a span of virtual time in microseconds.
type Duration int64

// Units of Duration.
const (
	Microsecond Duration = 1
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
	Minute               = 60 * Second
	Hour                 = 60 * Minute
)

// Epoch is where simulations start by default: 2024-01-01T00:00:00Z. A
// realistic epoch keeps popTime values and receipt handles looking like the
// ones a real broker produces.
const Epoch Time = 1704067200 * Time(Second)

// Clock reads the current time.
type Clock interface {
	Now() Time
}

// FromMillis converts epoch milliseconds (RocketMQ's unit) to a Time.
func FromMillis(ms int64) Time { return Time(ms * int64(Millisecond)) }

// Millis returns t in epoch milliseconds, rounded down.
func (t Time) Millis() int64 { return floorMillis(int64(t)) }

// Add returns t+d.
func (t Time) Add(d Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Before reports whether t is strictly before u.
func (t Time) Before(u Time) bool { return t < u }

// String renders t as seconds and microseconds since Epoch, e.g.
// "T+12.000345s", which is what traces and scripted tests print.
func (t Time) String() string {
	return "T+" + Duration(t-Epoch).String()
}

// Millis returns d in milliseconds, rounded down.
func (d Duration) Millis() int64 { return floorMillis(int64(d)) }

// Seconds returns d as floating-point seconds (for reports only).
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// MillisDuration converts a millisecond count to a Duration.
func MillisDuration(ms int64) Duration { return Duration(ms) * Millisecond }

// String renders d exactly as seconds with microsecond digits, e.g. "1.5s",
// "0.000250s", "-3s".
func (d Duration) String() string {
	neg := d < 0
	u := int64(d)
	if neg {
		u = -u
	}
	sec, frac := u/int64(Second), u%int64(Second)
	s := strconv.FormatInt(sec, 10)
	if frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s + "s"
}

// ParseDuration parses a Go duration string ("30s", "1m30s", "250ms",
// "100us") into a Duration. Sub-microsecond precision is an error, not a
// silent truncation.
func ParseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a number with a unit such as 250ms, 30s or 2m", s)
	}
	if d%time.Microsecond != 0 {
		return 0, fmt.Errorf("invalid duration %q: the resolution is one microsecond", s)
	}
	return Duration(d / time.Microsecond), nil
}

// MarshalText renders d in the largest unit that divides it exactly
// ("250ms", "90s", "2m", "1500us"; "0s"): the form configuration files and
// reports use, which ParseDuration and UnmarshalText accept. String is the
// trace form.
func (d Duration) MarshalText() ([]byte, error) {
	if d < 0 {
		b, err := (-d).MarshalText()
		return append([]byte{'-'}, b...), err
	}
	if d == 0 {
		return []byte("0s"), nil
	}
	for _, u := range textUnits {
		if d%u.d == 0 {
			return append(strconv.AppendInt(nil, int64(d/u.d), 10), u.name...), nil
		}
	}
	panic("clock: unreachable: every duration is a whole number of microseconds")
}

// textUnits are MarshalText's units, largest first; each is appended
// after the count.
var textUnits = [...]struct {
	d    Duration
	name string
}{{Hour, "h"}, {Minute, "m"}, {Second, "s"}, {Millisecond, "ms"}, {Microsecond, "us"}}

// UnmarshalText parses a configuration duration: ParseDuration's form, and
// never negative (a setting is a span, a bound or a period).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%q: want a duration of zero or more", b)
	}
	*d = v
	return nil
}

// Std converts d to a time.Duration (for formatting and flags).
func (d Duration) Std() time.Duration { return time.Duration(d) * time.Microsecond }

// floorMillis returns a/1000 rounded down. A count of zero or more is
// divided as unsigned, which by a constant is a multiply and two shifts
// with no sign fix-up and no remainder to test (every virtual instant is
// after the epoch, and every span a Millis is asked of is positive); a
// negative one is truncated towards zero and, unless exact, taken one
// down.
func floorMillis(a int64) int64 {
	if a >= 0 {
		return int64(uint64(a) / uint64(Millisecond))
	}
	q := a / int64(Millisecond)
	if q*int64(Millisecond) != a {
		q--
	}
	return q
}

// Virtual is the simulator's clock. It starts at a given instant and only
// moves forward.
type Virtual struct {
	now Time
}

// NewVirtual returns a virtual clock reading start.
func NewVirtual(start Time) *Virtual { return &Virtual{now: start} }

// Now returns the current virtual time.
func (v *Virtual) Now() Time { return v.now }

// AdvanceTo moves the clock to t. Moving backwards is a scheduler bug and
// panics with both instants.
func (v *Virtual) AdvanceTo(t Time) {
	if t < v.now {
		panic(fmt.Sprintf("clock: virtual time moved backwards from %v to %v", v.now, t))
	}
	v.now = t
}

// Advance moves the clock forward by d, which must not be negative.
func (v *Virtual) Advance(d Duration) { v.AdvanceTo(v.now.Add(d)) }

// Real reads the wall clock, as a monotonic offset from the moment it was
// created, in the same units as virtual time. Benchmarks and serve/ only.
type Real struct {
	base  time.Time
	start Time
}

// NewReal returns a wall clock whose Now starts at the current Unix time.
func NewReal() *Real {
	b := time.Now()
	return &Real{base: b, start: Time(b.UnixMicro())}
}

// Now returns the current wall-clock time; it never moves backwards.
func (r *Real) Now() Time { return r.start + Time(time.Since(r.base)/time.Microsecond) }
