package pop

import (
	"testing"

	"pgregory.net/rapid"
)

// The commit-queue table answers as a map does, through any sequence of
// sets (of keys it does not hold), deletes and lookups, keys absent or
// out of its rows included.
func TestCqTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var tab cqTable
		want := map[qkey]*commitQueue{}
		key := func(label string) qkey {
			return qkey{rapid.Uint32Range(0, 6).Draw(rt, label+"pair"), rapid.Int32Range(-2, 40).Draw(rt, label+"qid")}
		}
		for range rapid.IntRange(1, 200).Draw(rt, "ops") {
			k := key("")
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0:
				if want[k] == nil && k.qid >= 0 {
					cq := &commitQueue{key: k}
					tab.set(k, cq)
					want[k] = cq
				}
			case 1:
				tab.delete(k)
				delete(want, k)
			}
			if got := tab.get(k); got != want[k] {
				rt.Fatalf("get %v: %p, want %p", k, got, want[k])
			}
			if tab.len() != len(want) {
				rt.Fatalf("len %d, want %d", tab.len(), len(want))
			}
		}
		for k, cq := range want {
			if tab.get(k) != cq {
				rt.Fatalf("get %v: %p, want %p", k, tab.get(k), cq)
			}
		}
	})
}
