package pop

import (
	"math"
	"math/rand/v2"
	"testing"

	"popsim/model"
)

// TestAppendOffsetInfosIsModels checks appendOffsetInfos, which writes the
// two headers' common prefix once, against model.AppendOffsetInfo entry by
// entry: the same bytes for every retry flag, queue ids and offsets of
// every length (signs included), onto empty and non-empty headers.
func TestAppendOffsetInfosIsModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 13))
	nums := []int64{0, 1, 9, 10, 99, 100, 12345, 99999999, 100000000, 1 << 40, math.MaxInt64, -1, -10, math.MinInt64}
	pick := func() int64 {
		if rng.IntN(2) == 0 {
			return nums[rng.IntN(len(nums))]
		}
		return rng.Int64N(1 << uint(rng.IntN(62)+1))
	}
	for i := range 2000 {
		var got, want PopResult
		for range rng.IntN(3) + 1 { // a pop's stages, one entry each
			flag := model.RetryType(rng.IntN(3))
			qid := int32(pick())
			if rng.IntN(4) == 0 {
				qid = int32(rng.Int64N(math.MaxInt32)) - math.MaxInt32/2
			}
			start := pick()
			msgs := make([]*model.Message, rng.IntN(33))
			offs := make([]int64, len(msgs))
			for j := range msgs {
				offs[j] = pick()
				msgs[j] = &model.Message{QueueOffset: offs[j]}
			}
			if len(msgs) > 0 && rng.IntN(2) == 0 { // the common case: the first message at the start offset
				offs[0], msgs[0].QueueOffset = start, start
			}
			got.appendOffsetInfos(flag, qid, start, msgs)
			want.StartOffsetInfo = model.AppendOffsetInfo(want.StartOffsetInfo, model.OffsetInfo{RetryFlag: flag, QueueID: qid, Offsets: []int64{start}})
			want.MsgOffsetInfo = model.AppendOffsetInfo(want.MsgOffsetInfo, model.OffsetInfo{RetryFlag: flag, QueueID: qid, Offsets: offs})
		}
		if string(got.StartOffsetInfo) != string(want.StartOffsetInfo) || string(got.MsgOffsetInfo) != string(want.MsgOffsetInfo) {
			t.Fatalf("case %d: got start %q msg %q, want start %q msg %q", i, got.StartOffsetInfo, got.MsgOffsetInfo, want.StartOffsetInfo, want.MsgOffsetInfo)
		}
	}
}
