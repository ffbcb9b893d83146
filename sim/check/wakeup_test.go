package check

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"popsim/model"
)

// oblQueue must behave as the slice it replaces, consumed from its front:
// the same obligations out in the order they went in, whatever the mix
// of pushes and pops (runs of each, so that the ring wraps, fills and
// doubles with its head anywhere).
func TestOblQueueMatchesSlice(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var q oblQueue
		var ref []obligation
		next := model.MsgID(1)
		for step := 0; step < 20000; step++ {
			if burst := r.IntN(40); r.IntN(2) == 0 {
				for range burst {
					o := obligation{msg: next, seq: int64(next) * 3}
					next++
					*q.add() = o
					ref = append(ref, o)
				}
			} else {
				for ; burst > 0 && len(ref) > 0; burst-- {
					if got := *q.first(); got != ref[0] {
						t.Fatalf("seed %d step %d: first %+v, want %+v", seed, step, got, ref[0])
					}
					q.pop()
					ref = ref[1:]
				}
			}
			if q.n != len(ref) || len(q.ring)&(len(q.ring)-1) != 0 {
				t.Fatalf("seed %d step %d: %d held in a ring of %d, want %d held in a power of two", seed, step, q.n, len(q.ring), len(ref))
			}
		}
	}
}

// arrival writes an obligation's six fields one by one into the slot add
// gives it, and parked a pollReq's five into its slot (a slot keeps what
// it held before): a field added to either must be written there too.
func TestInPlaceFields(t *testing.T) {
	if n := reflect.TypeFor[obligation]().NumField(); n != 6 {
		t.Fatalf("obligation has %d fields; arrival writes 6", n)
	}
	// And parked a pollReq's five.
	if n := reflect.TypeFor[pollReq]().NumField(); n != 5 {
		t.Fatalf("pollReq has %d fields; parked writes 5", n)
	}
}
