package sim

import (
	"math/rand/v2"
	"testing"
)

// TestPollTableMatchesMap drives a pollTable and a map with the same
// random puts, gets, deletes, takes and deleteIfs (ids from a small range, so
// that probe chains collide, wrap around the table and are broken by
// deletions) and checks that they agree after every step.
func TestPollTableMatchesMap(t *testing.T) {
	reqs := make([]*receiveReq, 8)
	for i := range reqs {
		reqs[i] = &receiveReq{maxAttempts: int32(i)}
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var tab pollTable
		ref := map[uint64]Request{}
		span := uint64(8 + rng.IntN(200))
		for step := range 3000 {
			id := rng.Uint64N(span)
			switch op := rng.IntN(10); {
			case op < 5:
				r := reqs[rng.IntN(len(reqs))]
				tab.put(id, r)
				ref[id] = r
			case op < 7:
				tab.del(id)
				delete(ref, id)
			case op < 9:
				if got, want := tab.take(id), ref[id]; got != want {
					t.Fatalf("seed %d step %d: take(%d) = %v, want %v", seed, step, id, got, want)
				}
				delete(ref, id)
			default:
				k := int32(rng.IntN(len(reqs)))
				drop := func(r Request) bool { return r.(*receiveReq).maxAttempts == k }
				tab.deleteIf(drop)
				for i, r := range ref {
					if drop(r) {
						delete(ref, i)
					}
				}
			}
			if tab.len() != len(ref) {
				t.Fatalf("seed %d step %d: %d entries, want %d", seed, step, tab.len(), len(ref))
			}
			for i := range span {
				if got, want := tab.get(i), ref[i]; got != want {
					t.Fatalf("seed %d step %d: get(%d) = %v, want %v", seed, step, i, got, want)
				}
			}
		}
	}
}
