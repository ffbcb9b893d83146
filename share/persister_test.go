package share

import "testing"

// DurableStart walks the persisted batches from the persisted start offset
// over terminal, contiguous ones, stops at a gap or a non-terminal batch,
// and never passes the cached SPSO.
func TestDurableStart(t *testing.T) {
	acked := func(a, b int64) PersistedBatch {
		return PersistedBatch{FirstOffset: a, LastOffset: b, State: Acknowledged}
	}
	cases := []struct {
		name   string
		st     SharePartitionState
		expect int64
	}{
		{"never written", SharePartitionState{PersistedStartOffset: -1, Loaded: true, SPSO: 5}, -1},
		{"written start, no batches", SharePartitionState{PersistedStartOffset: 3, Loaded: true, SPSO: 3}, 3},
		{"terminal run up to the cached SPSO", SharePartitionState{PersistedStartOffset: 0, Loaded: true, SPSO: 10,
			PersistedBatches: []PersistedBatch{acked(0, 4), {FirstOffset: 5, LastOffset: 9, State: Archived, DeliveryCount: 5}}}, 10},
		{"an archive whose write failed: the record is AVAILABLE on disk", SharePartitionState{PersistedStartOffset: 0, Loaded: true, SPSO: 1,
			PersistedBatches: []PersistedBatch{{FirstOffset: 0, LastOffset: 0, State: Available, DeliveryCount: 1}}}, 0},
		{"a gap reloads as AVAILABLE", SharePartitionState{PersistedStartOffset: 0, Loaded: true, SPSO: 8,
			PersistedBatches: []PersistedBatch{acked(0, 2), acked(4, 7)}}, 3},
		{"never past the cached SPSO", SharePartitionState{PersistedStartOffset: 0, Loaded: true, SPSO: 2,
			PersistedBatches: []PersistedBatch{acked(0, 6)}}, 2},
		{"not loaded: the persisted view alone", SharePartitionState{PersistedStartOffset: 2,
			PersistedBatches: []PersistedBatch{acked(0, 1), acked(2, 6)}}, 7},
	}
	for _, c := range cases {
		if got := c.st.DurableStart(); got != c.expect {
			t.Errorf("%s: DurableStart = %d, want %d", c.name, got, c.expect)
		}
	}
}
