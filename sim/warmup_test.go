package sim

import (
	"testing"

	"popsim/clock"
)

// warmup: auto, 0s (none) and a duration read and write back the same,
// and a negative duration is refused naming what is allowed.
func TestWarmupText(t *testing.T) {
	for _, c := range []struct {
		in    string
		fixed clock.Duration
		auto  bool
	}{{"auto", 0, true}, {"0s", 0, false}, {"6s", 6 * clock.Second, false}} {
		var w Warmup
		if err := w.UnmarshalText([]byte(c.in)); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		d, fixed := w.Fixed()
		if fixed == c.auto || d != c.fixed || w.String() != c.in {
			t.Errorf("%s: got fixed=%v %v, %q", c.in, fixed, d, w.String())
		}
	}
	var w Warmup
	if err := w.UnmarshalText([]byte("-1s")); err == nil {
		t.Error("-1s accepted")
	}
}
