package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"popsim/clock"
)

// TestFrontRunMatchesReference drives a frontRun through random filings
// (often at the same instant as others; file refuses some and hands the
// latest over when the run is full), takings of the earliest and
// removals, as pushNear, pop and remove do, and checks it after every
// step against a sorted list: the same tasks, in the same order, in the slots lo to lo+n-1, latest
// first. Phases of tasks that precede all others (a hot topic's) fill the
// run, so that file hands the latest over and moves lo up to the array's
// end, and compacts.
func TestFrontRunMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	var f frontRun
	var ref []*task // earliest first
	var seq uint64
	now := clock.Time(0)
	compacted := 0
	for step := range 200_000 {
		fill := step%20_000 < 4_000 // tasks that precede all others, as in a hot topic
		file := 6
		if fill {
			file = 8
		}
		switch op := r.IntN(10); {
		case op < file || len(ref) == 0: // file a task, as pushNear does
			seq++
			e := &task{at: now + clock.Time(r.IntN(6)), tie: testTie(r), seq: seq}
			if fill {
				e.at, e.tie = now, math.MaxUint64-seq
			}
			full, compacting := f.n == frontCap, f.lo+f.n == frontSpan
			spill := f.file(e)
			if spill == e {
				if e.idx == inFront {
					t.Fatalf("step %d: file refused a task and filed it", step)
				}
				k := slices.IndexFunc(ref, func(x *task) bool { return refLess(e, x) })
				if k < 0 {
					k = len(ref)
				}
				if k < frontReach {
					t.Fatalf("step %d: file refused a task %d tasks precede", step, k)
				}
				continue
			}
			if full {
				if spill != ref[len(ref)-1] || spill.queued() {
					t.Fatalf("step %d: file handed over %+v, want the latest %+v", step, spill, ref[len(ref)-1])
				}
				ref = ref[:len(ref)-1]
			} else if spill != nil {
				t.Fatalf("step %d: file handed over %+v from a run not full", step, spill)
			}
			if compacting {
				compacted++
			}
			k, _ := slices.BinarySearchFunc(ref, e, func(x, y *task) int {
				if refLess(x, y) {
					return -1
				}
				return 1
			})
			if k >= frontReach {
				t.Fatalf("step %d: within admitted a task %d tasks precede", step, k)
			}
			ref = slices.Insert(ref, k, e)
		case op < file+3: // take the earliest
			at, e := f.first()
			if e != ref[0] || at != e.at {
				t.Fatalf("step %d: first() = %v, %+v, want %+v", step, at, e, ref[0])
			}
			f.pop(e)
			now = e.at
			ref = ref[1:]
		default:
			k := r.IntN(len(ref))
			f.remove(ref[k])
			if ref[k].queued() {
				t.Fatalf("step %d: remove left the task queued", step)
			}
			ref = slices.Delete(ref, k, k+1)
		}
		if f.n != len(ref) || f.lo < 0 || f.lo+f.n > frontSpan {
			t.Fatalf("step %d: %d tasks from slot %d, want %d", step, f.n, f.lo, len(ref))
		}
		for k, e := range ref {
			s := f.lo + f.n - 1 - k
			if f.t[s] != e || f.at[s] != e.at || e.idx != inFront {
				t.Fatalf("step %d: slot %d holds %+v, want %+v", step, s, f.t[s], e)
			}
		}
	}
	if compacted == 0 {
		t.Fatal("the run never reached the array's end: compact is untested")
	}
}
