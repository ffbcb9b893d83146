package pop

import (
	"math/rand/v2"
	"testing"
)

// inflightCounts agrees with the map it replaced (an entry dropped once
// its count falls to 0 or below, a take from a missing entry ignored)
// under random adds, takes and drops, keys past any added one included.
func TestInflightCountsMatchMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c inflightCounts
	m := map[qkey]int64{}
	key := func() qkey { return qkey{uint32(rng.IntN(4)), int32(rng.IntN(12)) - 2} }
	for step := range 20000 {
		k := key()
		switch n := int64(1 + rng.IntN(5)); rng.IntN(4) {
		case 0, 1:
			if k.qid < 0 {
				continue // a pop stage's queue: never negative
			}
			c.add(k, n)
			if m[k] += n; m[k] <= 0 {
				delete(m, k)
			}
		case 2:
			c.sub(k, n)
			if v, ok := m[k]; ok {
				if v -= n; v <= 0 {
					delete(m, k)
				} else {
					m[k] = v
				}
			}
		default:
			c.drop(k)
			delete(m, k)
		}
		if k := key(); c.get(k) != m[k] {
			t.Fatalf("step %d: count of %v %d, the map's %d", step, k, c.get(k), m[k])
		}
		if step%1000 == 0 {
			seen := 0
			c.each(func(k qkey, n int64) {
				seen++
				if m[k] != n {
					t.Fatalf("step %d: each gives %v %d, the map %d", step, k, n, m[k])
				}
			})
			if seen != len(m) {
				t.Fatalf("step %d: each gives %d counts, the map holds %d", step, seen, len(m))
			}
		}
	}
	c.reset()
	c.each(func(k qkey, n int64) { t.Fatalf("after reset: %v %d", k, n) })
}
