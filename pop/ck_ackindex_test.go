package pop

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"popsim/model"
)

// A round's record of a CK answers IndexOfAck as the CK does, for any
// offset list (none, one offset or more, differences at the ends of the
// 32-bit range) and any acked offset, near the CK's or where the 32-bit
// narrowing of the difference wraps around (apache/rocketmq#11180).
func TestRoundCkIndexOfAck(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		diff := rapid.SampledFrom([]int32{0, 1, 5, -1, math.MaxInt32, math.MinInt32})
		ck := model.PopCheckPoint{StartOffset: rapid.Int64Range(0, 1<<40).Draw(rt, "start"), Num: 1}
		if n := rapid.IntRange(-1, 3).Draw(rt, "diffs"); n >= 0 {
			ck.QueueOffsetDiff = make([]int32, n)
			for i := range ck.QueueOffsetDiff {
				ck.QueueOffsetDiff[i] = rapid.OneOf(diff, rapid.Int32()).Draw(rt, "diff")
			}
		}
		var rc roundCk
		rc.ck = &ck
		rc.setAckIndex(&ck)
		if rc.one != (len(ck.QueueOffsetDiff) == 1) {
			rt.Fatalf("record of %d offsets kept as one: %v", len(ck.QueueOffsetDiff), rc.one)
		}
		near := rapid.Int64Range(-3, 3).Draw(rt, "near")
		for _, o := range []int64{ck.StartOffset + near, ck.StartOffset + 1<<32 + near, ck.StartOffset - 1<<32 + near,
			ck.StartOffset + int64(rapid.Int32().Draw(rt, "d")), rapid.Int64().Draw(rt, "any")} {
			if len(ck.QueueOffsetDiff) > 0 {
				o += int64(ck.QueueOffsetDiff[0]) * int64(rapid.IntRange(0, 1).Draw(rt, "onDiff"))
			}
			if got, want := rc.indexOfAck(o), ck.IndexOfAck(o); got != want {
				rt.Fatalf("offset %d of %+v: index %d, IndexOfAck %d", o, ck, got, want)
			}
		}
	})
}
