package check

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestListAsSlice checks a list (client.held, client.pending) against
// the slice it replaced: entries pushed as hold and lend push them (or
// as their hot callers do: tryPush, then push when it finds no room),
// and appended as the slice's append did after its prune at 64 entries
// or more, keep the same entries, length and capacity, whatever the
// prune keeps.
func TestListAsSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l list[heldRef]
		// The slice lives on the heap, as a client's did: a local one
		// may grow from a buffer on the stack, to other capacities.
		heapRef = new([]heldRef)
		ref := heapRef
		if rapid.Bool().Draw(t, "room") {
			l.set(make([]heldRef, 0, listRoom))
			*ref = make([]heldRef, 0, listRoom)
		}
		ds := make([]delivery, 400)
		keep := rapid.SliceOfN(rapid.Bool(), len(ds), len(ds)).Draw(t, "keep")
		grows := rapid.Bool().Draw(t, "grows") // as pruneHeld (else as prunePending)
		try := rapid.Bool().Draw(t, "try")     // tryPush first
		prune := func(s []heldRef) []heldRef {
			out := s[:0]
			for _, r := range s {
				if keep[r.gen] {
					out = append(out, r)
				}
			}
			clear(s[len(out):])
			if grows && 2*len(out) >= cap(s) {
				out = slices.Grow(out, cap(s))
			}
			return out
		}
		for i := range rapid.IntRange(0, len(ds)).Draw(t, "n") {
			x := heldRef{&ds[i], uint32(i)}
			if len(*ref) >= 64 && len(*ref) == cap(*ref) {
				*ref = prune(*ref)
			}
			*ref = append(*ref, x)
			if !try || !l.tryPush(x) {
				l.push(x, prune)
			}
			if got := l.get(); len(got) != len(*ref) || cap(got) != cap(*ref) || !slices.Equal(got, *ref) {
				t.Fatalf("after %d entries the list has %d (room %d), the slice %d (room %d)", i+1, len(got), cap(got), len(*ref), cap(*ref))
			}
		}
	})
}

// heapRef holds TestListAsSlice's reference slice on the heap.
var heapRef *[]heldRef
