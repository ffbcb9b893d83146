package pop

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPollSetOrder drives a pollSet through head removals (which only
// advance head), removals from the middle, out-of-order inserts and the
// compaction of a full slice, checking the live order against a plain
// sorted slice after every step.
func TestPollSetOrder(t *testing.T) {
	var ps pollSet
	var want []*suspended
	id := uint64(0)
	add := func(expired int64) {
		id++
		s := &suspended{id: id, expired: expired}
		ps.insert(s)
		i, _ := slices.BinarySearchFunc(want, s, func(a, b *suspended) int {
			if suspendedLess(a, b) {
				return -1
			}
			return 1
		})
		want = slices.Insert(want, i, s)
	}
	del := func(i int) {
		ps.remove(want[i])
		want = slices.Delete(want, i, i+1)
	}
	check := func(step string) {
		t.Helper()
		if got := ps.live(); !slices.Equal(got, want) {
			t.Fatalf("%s: live set %d requests, want %d, or out of order", step, len(got), len(want))
		}
	}
	for round := range 50 {
		for j := range 7 {
			add(int64(round*10 + j))
		}
		add(int64(round * 5)) // expires before others: inserted in the middle
		check("insert")
		del(0)
		check("remove head")
		if len(want) > 3 {
			del(len(want) / 2)
			check("remove middle")
		}
		del(0)
		del(0)
		check("remove head twice")
	}
	for len(want) > 0 {
		del(0)
		check("drain")
	}
	if ps.head != 0 || len(ps.items) != 0 {
		t.Fatalf("empty set keeps head %d, %d items", ps.head, len(ps.items))
	}
}

// The polling heap keeps its order and every set's index through random
// parks on a few keys (mostly in expiry order, with ties and stragglers,
// some of which become their set's head) and removals (the earliest, or
// any request, as a wakeup takes it), and its Min is always the earliest
// of a plain list's requests by (expired, id). It fails when a straggler
// that became its set's head is not filed up, or a set whose head left
// is not filed down (checked).
func TestPollHeapMatchesList(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 13))
		p := newPolling()
		var ref []*suspended
		clock := int64(0)
		for step := range 2000 {
			switch k := r.IntN(10); {
			case k < 5 || len(ref) == 0:
				clock += int64(r.IntN(3))
				s := &suspended{id: uint64(step + 1), expired: clock + int64(r.IntN(2))*int64(r.IntN(50)) - int64(r.IntN(2)*r.IntN(40)),
					qk: qkey{pair: uint32(r.IntN(2)), qid: int32(r.IntN(3)) - 1}}
				ps := p.makeSet(s.qk)
				ps.insert(s)
				p.byTime.filed(ps, s)
				p.count++
				ref = append(ref, s)
			case k < 7:
				m, _ := p.byTime.Min()
				p.remove(m)
				ref = slices.DeleteFunc(ref, func(s *suspended) bool { return s == m })
			default:
				i := r.IntN(len(ref))
				p.remove(ref[i])
				ref = slices.Delete(ref, i, i+1)
			}
			if err := p.byTime.check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			m, ok := p.byTime.Min()
			if p.byTime.Len() != len(ref) || p.count != len(ref) || ok != (len(ref) > 0) {
				t.Fatalf("seed %d step %d: heap of %d, want %d", seed, step, p.byTime.Len(), len(ref))
			}
			if !ok {
				continue
			}
			want := slices.MinFunc(ref, func(a, b *suspended) int {
				return cmp.Or(cmp.Compare(a.expired, b.expired), cmp.Compare(a.id, b.id))
			})
			if m != want {
				t.Fatalf("seed %d step %d: min %d, want %d", seed, step, m.id, want.id)
			}
		}
	}
}
