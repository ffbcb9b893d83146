package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRemoveWorkMatchesReference: removeWork, which finds a POP client's
// single message by pointer, removes the same work and keeps the same
// order as a plain search by interface equality, over mixes of every kind
// of work; batchOf tells batches apart as the batch assertion does.
func TestRemoveWorkMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	newWork := func() work {
		switch rng.IntN(3) {
		case 0:
			return new(popHeld)
		case 1:
			h := new(popHeld)
			return &pushBatch{hs: []*popHeld{h}, ms: []*held{&h.held}}
		}
		return new(pullHeld)
	}
	for range 200 {
		running := make([]work, 1+rng.IntN(6))
		for i := range running {
			running[i] = newWork()
		}
		for len(running) > 0 {
			w := running[rng.IntN(len(running))]
			if b, ok := batchOf(w); ok != isBatch(w) || ok && b != w {
				t.Fatalf("batchOf(%T) = %v, %v", w, b, ok)
			}
			if indexWork(running, newWork()) != -1 {
				t.Fatal("found work that is not running")
			}
			want := slices.DeleteFunc(slices.Clone(running), func(r work) bool { return r == w })
			running = removeWork(running, w)
			if !slices.Equal(running, want) {
				t.Fatalf("removeWork left %v, want %v", running, want)
			}
		}
	}
}

// isBatch is the reference for batchOf: the batch assertion itself.
func isBatch(w work) bool {
	_, ok := w.(batch)
	return ok
}

// TestWorkFastPathsAreTheInterface: baseOf, workPayload and workOf, which
// tell a POP client's single message by its concrete type, give what the
// work interface gives for every kind of work.
func TestWorkFastPathsAreTheInterface(t *testing.T) {
	h := new(popHeld)
	for _, w := range []work{new(popHeld), &pushBatch{hs: []*popHeld{h}, ms: []*held{&h.held}}, new(pullHeld), new(held)} {
		if got := baseOf(w); got != w.base() {
			t.Fatalf("baseOf(%T) = %p, want %p", w, got, w.base())
		}
		p := workPayload(w)
		if p != payload(w) {
			t.Fatalf("workPayload(%T) = %T %p, want the work itself", w, p, p)
		}
		if got := workOf(p); got != w {
			t.Fatalf("workOf(%T) = %T %p, want the work itself", w, got, got)
		}
	}
}
