package share

import (
	"slices"
	"sort"
)

// PersistedBatch is one state batch of the share coordinator's record for
// a share-partition (ShareSnapshotValue.StateBatches).
type PersistedBatch struct {
	FirstOffset, LastOffset int64
	State                   RecordState
	DeliveryCount           int32
}

// persistedState is what the share coordinator keeps for one
// share-partition in __share_group_state: it survives a restart. Batches
// are sorted, never overlap, never lie below StartOffset, and adjacent
// batches with the same state and count are merged.
type persistedState struct {
	stateEpoch int32
	// startOffset is -1 until the first write: the leader then resolves
	// share.auto.offset.reset each time it loads the share-partition.
	startOffset int64
	batches     []PersistedBatch
}

func newPersistedState() *persistedState { return &persistedState{startOffset: -1} }

// set records first..last as (state, count), replacing what overlapped.
func (ps *persistedState) set(first, last int64, state RecordState, count int32) {
	bs := ps.batches
	i := sort.Search(len(bs), func(i int) bool { return bs[i].LastOffset >= first })
	j := i
	for j < len(bs) && bs[j].FirstOffset <= last {
		j++
	}
	var buf [5]PersistedBatch
	mid := buf[:0]
	if i < j && bs[i].FirstOffset < first {
		mid = append(mid, PersistedBatch{bs[i].FirstOffset, first - 1, bs[i].State, bs[i].DeliveryCount})
	}
	mid = append(mid, PersistedBatch{first, last, state, count})
	if i < j && bs[j-1].LastOffset > last {
		mid = append(mid, PersistedBatch{last + 1, bs[j-1].LastOffset, bs[j-1].State, bs[j-1].DeliveryCount})
	}
	if i > 0 {
		i--
		mid = append([]PersistedBatch{bs[i]}, mid...)
	}
	if j < len(bs) {
		mid = append(mid, bs[j])
		j++
	}
	ps.batches = slices.Replace(bs, i, j, coalesce(mid)...)
}

// coalesce merges adjacent batches with the same state and count.
func coalesce(bs []PersistedBatch) []PersistedBatch {
	out := bs[:0]
	for _, b := range bs {
		if n := len(out); n > 0 && out[n-1].LastOffset+1 == b.FirstOffset && out[n-1].State == b.State && out[n-1].DeliveryCount == b.DeliveryCount {
			out[n-1].LastOffset = b.LastOffset
			continue
		}
		out = append(out, b)
	}
	return out
}

// setStart records a new start offset and drops the state below it, as the
// share coordinator does when it applies a write.
func (ps *persistedState) setStart(start int64) {
	ps.startOffset = start
	i := sort.Search(len(ps.batches), func(i int) bool { return ps.batches[i].LastOffset >= start })
	ps.batches = ps.batches[i:]
	if len(ps.batches) > 0 && ps.batches[0].FirstOffset < start {
		ps.batches[0].FirstOffset = start
	}
}
