package pop

import (
	"slices"
	"testing"
)

// TestPollSetOrder drives a pollSet through head removals (which only
// advance head), removals from the middle, out-of-order inserts and the
// compaction of a full slice, checking the live order against a plain
// sorted slice after every step.
func TestPollSetOrder(t *testing.T) {
	var ps pollSet
	var want []*suspended
	id := uint64(0)
	add := func(expired int64) {
		id++
		s := &suspended{id: id, expired: expired}
		ps.insert(s)
		i, _ := slices.BinarySearchFunc(want, s, func(a, b *suspended) int {
			if suspendedLess(a, b) {
				return -1
			}
			return 1
		})
		want = slices.Insert(want, i, s)
	}
	del := func(i int) {
		ps.remove(want[i])
		want = slices.Delete(want, i, i+1)
	}
	check := func(step string) {
		t.Helper()
		if got := ps.live(); !slices.Equal(got, want) {
			t.Fatalf("%s: live set %d requests, want %d, or out of order", step, len(got), len(want))
		}
	}
	for round := range 50 {
		for j := range 7 {
			add(int64(round*10 + j))
		}
		add(int64(round * 5)) // expires before others: inserted in the middle
		check("insert")
		del(0)
		check("remove head")
		if len(want) > 3 {
			del(len(want) / 2)
			check("remove middle")
		}
		del(0)
		del(0)
		check("remove head twice")
	}
	for len(want) > 0 {
		del(0)
		check("drain")
	}
	if ps.head != 0 || len(ps.items) != 0 {
		t.Fatalf("empty set keeps head %d, %d items", ps.head, len(ps.items))
	}
}
