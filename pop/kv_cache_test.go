package pop

import (
	"math/rand/v2"
	"slices"
	"testing"

	"popsim/model"
)

// TestOffsetRecsMatchesSortedMap drives offsetRecs (tombstones, squeezes,
// find's guesses) and a plain map with random sets and deletes, mostly in
// runs of consecutive offsets with gaps, as pops and acks make them, and
// checks every answer and the live records in order after each step.
func TestOffsetRecsMatchesSortedMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 31))
		var q offsetRecs
		ref := map[int64]model.LeaseID{}
		next, lease := int64(0), model.LeaseID(0)
		for step := range 1500 {
			var o int64
			switch r := rng.IntN(10); {
			case r < 4: // a pop's next offset, sometimes past a gap
				o, next = next, next+1+int64(rng.IntN(4)/3)*int64(rng.IntN(5))
			case r < 5: // anywhere, a replacement or a hole filled
				o = rng.Int64N(next + 2)
			default: // an ack: near the front mostly, or anywhere
				o = rng.Int64N(next + 1)
				if len(ref) > 0 && rng.IntN(2) == 0 {
					o = slices.Sorted(func(yield func(int64) bool) {
						for k := range ref {
							if !yield(k) {
								return
							}
						}
					})[rng.IntN(min(len(ref), 3))]
				}
			}
			if rng.IntN(10) < 4 {
				lease++
				prev, replaced := q.Set(&rec{recKey: recKey{offset: o}, lease: lease})
				want, had := ref[o]
				if replaced != had || prev != want {
					t.Fatalf("seed %d step %d: Set(%d) replaced %v (lease %d), want %v (lease %d)", seed, step, o, replaced, prev, had, want)
				}
				ref[o] = lease
			} else {
				l := q.Delete(o)
				if want := ref[o]; l != want {
					t.Fatalf("seed %d step %d: Delete(%d) = lease %d, want %d", seed, step, o, l, want)
				}
				delete(ref, o)
			}
			checkOffsetRecs(t, &q, ref, seed, step)
		}
	}
}

// checkOffsetRecs compares q's live records, length and minimum with ref.
func checkOffsetRecs(t *testing.T, q *offsetRecs, ref map[int64]model.LeaseID, seed uint64, step int) {
	t.Helper()
	var got []int64
	q.Scan(func(o int64, r rec) bool {
		if r.offset != o || ref[o] != r.lease {
			t.Fatalf("seed %d step %d: record at %d is %+v, want lease %d", seed, step, o, r, ref[o])
		}
		got = append(got, o)
		return true
	})
	want := make([]int64, 0, len(ref))
	for o := range ref {
		want = append(want, o)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) || q.Len() != len(want) {
		t.Fatalf("seed %d step %d: live offsets %v (Len %d), want %v", seed, step, got, q.Len(), want)
	}
	if m, ok := q.Min(); ok != (len(want) > 0) || ok && m != want[0] {
		t.Fatalf("seed %d step %d: Min %d %v, want %v", seed, step, m, ok, want)
	}
}
