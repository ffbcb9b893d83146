package pop

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"popsim/model"
)

// dropFront keeps the rest in order, and a commit queue that empties as
// fast as it fills keeps one array.
func TestDropFront(t *testing.T) {
	ws := make([]*wrapper, 0, 4)
	for i := range 4 {
		ws = append(ws, &wrapper{next: int64(i)})
	}
	base := &ws[:1][0]
	ws = dropFront(ws, 3) // one left: moved to the front
	if len(ws) != 1 || ws[0].next != 3 || &ws[:1][0] != base || ws[:2][1] != nil {
		t.Fatalf("after dropping 3 of 4: %d left, array moved %v", len(ws), &ws[:1][0] != base)
	}
	for i := 4; i < 7; i++ {
		ws = append(ws, &wrapper{next: int64(i)})
	}
	if &ws[:1][0] != base {
		t.Fatal("refilling to the old length reallocated")
	}
	ws = dropFront(ws, 1) // three left, more than went: sliced
	if len(ws) != 3 || ws[0].next != 4 || ws[2].next != 6 {
		t.Fatalf("after dropping 1: %v wrappers, first %d", len(ws), ws[0].next)
	}
}

// The buffer's remembered commit queue (queueOf) never outlives its
// mapping: after a queue is cleared its key has no latest offset until a
// new wrapper makes a new queue, whatever key was asked for in between.
func TestCommitQueueOfAfterClear(t *testing.T) {
	f := newCkBuffer(&mkTable{})
	ck := &model.PopCheckPoint{PopTime: 1}
	k1, k2 := qkey{pair: 1, qid: 0}, qkey{pair: 1, qid: 1}
	put := func(k qkey, next int64) { f.enqueue(&wrapper{ck: ck, lock: k, next: next}) }
	put(k1, 10)
	put(k2, 20)
	put(k1, 11)
	if f.latest(k1) != 11 || f.latest(k2) != 20 || f.queueLen(k1) != 2 || f.latest(k1) != 11 {
		t.Fatalf("latest %d and %d, %d wrappers of k1", f.latest(k1), f.latest(k2), f.queueLen(k1))
	}
	f.clearQueue(k1)
	if f.latest(k1) != -1 || f.queueLen(k1) != 0 || f.latest(k2) != 20 {
		t.Fatalf("after clearing k1: latest %d (%d wrappers), k2's %d", f.latest(k1), f.queueLen(k1), f.latest(k2))
	}
	put(k1, 12)
	if f.latest(k1) != 12 || f.queueLen(k1) != 1 || len(f.corder) != 2 || f.commits.get(k1) == nil {
		t.Fatalf("after a new wrapper of k1: latest %d (%d wrappers), %d queues", f.latest(k1), f.queueLen(k1), len(f.corder))
	}
}

// dropFront is slices.Delete(ws, 0, n) for the elements it keeps, and
// leaves no reference behind them in its array: for any length and n.
func TestDropFrontIsDelete(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l := rapid.IntRange(0, 12).Draw(rt, "len")
		n := rapid.IntRange(0, l).Draw(rt, "n")
		ws := make([]*wrapper, l, l+rapid.IntRange(0, 3).Draw(rt, "spare"))
		for i := range ws {
			ws[i] = &wrapper{next: int64(i)}
		}
		want := slices.Clone(ws[n:])
		arr := ws[:cap(ws)]
		got := dropFront(ws, n)
		if !slices.Equal(got, want) {
			rt.Fatalf("dropFront(%d of %d) kept %d wrappers, not the last %d in order", n, l, len(got), len(want))
		}
		held := 0
		for _, w := range arr {
			if w != nil {
				held++
			}
		}
		if held != len(want) {
			rt.Fatalf("dropFront(%d of %d): the array holds %d wrappers, %d kept", n, l, held, len(want))
		}
	})
}
