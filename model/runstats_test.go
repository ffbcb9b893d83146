package model

import "testing"

// A warm-up cut renders what was cut, in ms below a second, says when
// the rule cut nothing, and carries the rule's warning.
func TestWarmupCutString(t *testing.T) {
	for _, c := range []struct {
		w    WarmupCut
		want string
	}{
		{WarmupCut{}, "none recorded"},
		{WarmupCut{Rule: "MSER-5", AtMs: 12400, Messages: 1240, Of: 31000}, "MSER-5 truncated the first 12.4 s (1240 messages, 4.0 %)"},
		{WarmupCut{Rule: "MSER-5", AtMs: 40, Messages: 40, Of: 30058}, "MSER-5 truncated the first 40 ms (40 messages, 0.1 %)"},
		{WarmupCut{Rule: "MSER-5", Of: 140514}, "MSER-5 found no start-up transient: nothing cut (140514 messages measured)"},
		{WarmupCut{Rule: "fixed", AtMs: 3000, Messages: 2900, Of: 30000}, "fixed warm-up: the first 3.0 s (2900 messages, 9.7 %)"},
		{WarmupCut{Rule: "MSER-5", AtMs: 9000, Messages: 500, Of: 1000, Failed: true, Note: "the run is too short"},
			"MSER-5 truncated the first 9.0 s (500 messages, 50.0 %); warning: the run is too short"},
	} {
		if got := c.w.String(); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.w, got, c.want)
		}
	}
}
