package pop

import "testing"

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
