package scenarios

import (
	"math"
	"testing"
)

// ack-then-fail shows the application's side of at-least-once: about
// ack_then_fail (2 %) of the acked messages are counted acked but not
// done, none of them a violation (runBuiltinSeed fails on any), and
// without the outcome there are none. Shortened to 5 s (about 3 000
// messages, so 2 % is 60 ± 8 and the test allows 1.2 % to 2.8 %).
func TestAckThenFailBuiltin(t *testing.T) {
	short := []Override{{Path: "duration", Value: "5s"}, {Path: "warmup", Value: "500ms"}}
	for seed := uint64(1); seed <= 3; seed++ {
		sum := runBuiltinSeed(t, "ack-then-fail", seed, short...)
		frac := float64(sum.AckedNotDone) / float64(sum.Acked)
		if math.Abs(frac-0.02) > 0.008 {
			t.Errorf("seed %d: %d of %d acked messages acked, not done (%.2f %%): want about 2 %%", seed, sum.AckedNotDone, sum.Acked, 100*frac)
		}
	}
	sum := runBuiltinSeed(t, "ack-then-fail", 1, append(short, Override{Path: "consumers[0].outcomes", Value: "outcomes()"})...)
	if sum.AckedNotDone != 0 {
		t.Errorf("without ack_then_fail: %d acked, not done; want 0", sum.AckedNotDone)
	}
}
