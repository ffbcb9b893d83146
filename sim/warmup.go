package sim

import (
	"errors"
	"strings"

	"popsim/clock"
)

// Warmup is the start of a run left out of its measurements. Its zero
// value, WarmupAuto ("auto", the default), lets the data decide: the
// MSER-5 rule on the measured end-to-end latencies finds where the initial
// transient ends, and the run reports what it cut. A positive duration is
// a fixed warm-up: messages produced before it are not measured.
type Warmup clock.Duration

// WarmupAuto is "warmup: auto"; WarmupNone is "warmup: 0s", a fixed
// warm-up of nothing: every message is measured.
const (
	WarmupAuto Warmup = 0
	WarmupNone Warmup = -1
)

// FixedWarmup returns a fixed warm-up of d (d >= 0).
func FixedWarmup(d clock.Duration) Warmup {
	if d == 0 {
		return WarmupNone
	}
	return Warmup(d)
}

// Fixed returns the fixed warm-up, and false for auto.
func (w Warmup) Fixed() (clock.Duration, bool) {
	if w == WarmupNone {
		return 0, true
	}
	return clock.Duration(w), w != WarmupAuto
}

// String is the text form: "auto", or a duration such as "6s".
func (w Warmup) String() string {
	b, _ := w.MarshalText()
	return string(b)
}

// MarshalText implements encoding.TextMarshaler.
func (w Warmup) MarshalText() ([]byte, error) {
	if w == WarmupAuto {
		return []byte("auto"), nil
	}
	d, _ := w.Fixed()
	return d.MarshalText()
}

// UnmarshalText implements encoding.TextUnmarshaler: "auto" or a
// duration (0s: measure every message).
func (w *Warmup) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "auto" {
		*w = WarmupAuto
		return nil
	}
	d, err := clock.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New(strings.TrimSpace(s) + ": want auto (MSER-5 finds the warm-up in the data) or a duration such as 6s (0s: none)")
	}
	*w = FixedWarmup(d)
	return nil
}
