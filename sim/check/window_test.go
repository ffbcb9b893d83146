package check

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWindowPages drives the paged window and the contiguous one it
// replaced (refWindow, below) with the same puts and forgets, ids handed
// out mostly in order, most forgotten soon, some held for long (which
// keeps the window wide), some never used, some put again after they were
// forgotten: every id reads the same from both, and each lists the same
// entries.
func TestWindowPages(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		w, ref := newWindow[int](), newRefWindow[int]()
		var live []uint64
		type pin struct {
			id    uint64
			until int
		}
		var pins []pin // ids held for long: they keep the window wide
		next := uint64(1)
		// check compares the ids around the window's start and end and a
		// sample of the others.
		check := func(step int) {
			same := func(id uint64) {
				v, f := w.get(id)
				rv, rf := ref.get(id)
				if v != rv || f != rf {
					t.Fatalf("seed %d step %d: id %d reads (%v, %v), want (%v, %v)", seed, step, id, v, f, rv, rf)
				}
			}
			for id := ref.base - min(ref.base, 3); id < ref.base+2*winPage+3; id++ {
				same(id)
			}
			for id := next - min(next, winPage); id < next+3; id++ {
				same(id)
			}
			for range 300 {
				same(uint64(r.IntN(int(next + 3))))
			}
			checkWindowCounts(t, &w)
			if w.top != ref.top {
				t.Fatalf("seed %d step %d: top %d, want %d", seed, step, w.top, ref.top)
			}
		}
		for step := 0; step < 60000; step++ {
			switch k := r.IntN(100); {
			case k < 40: // a new id (sometimes skipping some)
				if r.IntN(500) == 0 {
					next += uint64(1 + r.IntN(3000))
				}
				v := new(int)
				w.put(next, v)
				ref.put(next, v)
				if r.IntN(400) == 0 {
					pins = append(pins, pin{next, step + 500 + r.IntN(8000)})
				} else {
					live = append(live, next)
				}
				next++
			case k < 88 && len(live) > 0: // forget one, the oldest mostly
				i := 0
				if r.IntN(8) == 0 {
					i = r.IntN(len(live))
				}
				id := live[i]
				live = slices.Delete(live, i, i+1)
				seen := next - 1
				if r.IntN(3) == 0 {
					seen = id
				}
				w.forget(id, seen)
				ref.forget(id, seen)
			case k < 90 && next > 1: // an old id comes back
				id := 1 + uint64(r.IntN(int(next-1)))
				if r.IntN(2) == 0 && next > ref.base {
					id = ref.base + uint64(r.IntN(int(next-ref.base)))
				}
				if _, f := ref.get(id); f {
					v := new(int)
					w.put(id, v)
					ref.put(id, v)
					live = append(live, id)
				}
			default:
				if len(live) > 0 && r.IntN(2) == 0 {
					id := live[r.IntN(len(live))]
					w.forget(id, next-1)
					ref.forget(id, next-1)
					live = slices.DeleteFunc(live, func(x uint64) bool { return x == id })
				}
			}
			for i := 0; i < len(pins); i++ {
				if pins[i].until <= step {
					w.forget(pins[i].id, next-1)
					ref.forget(pins[i].id, next-1)
					pins = slices.Delete(pins, i, i+1)
					i--
				}
			}
			if step%97 == 0 {
				check(step)
			}
		}
		check(-1)
		type kv struct {
			id uint64
			v  *int
		}
		var a, b []kv
		w.each(func(id uint64, v *int) { a = append(a, kv{id, v}) })
		ref.each(func(id uint64, v *int) { b = append(b, kv{id, v}) })
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d: each lists %d entries, want %d", seed, len(a), len(b))
		}
		if len(w.pages) > 0 && w.span() != len(ref.slots)-ref.head {
			t.Fatalf("seed %d: span %d, want %d", seed, w.span(), len(ref.slots)-ref.head)
		}
	}
}

// checkWindowCounts checks what the fast paths (putNext, firstLive,
// forgetPast) rely on and keep: each page's count of gone markers, the
// window's first slot never gone, nil slots from its end on.
func checkWindowCounts[T any](t *testing.T, w *window[T]) {
	t.Helper()
	for k, p := range w.pages {
		n := 0
		for j, v := range p.slots {
			switch i := k<<winShift + j; {
			case v == w.gone:
				n++
			case i >= w.n && v != nil:
				t.Fatalf("slot %d past the window's end %d holds an entry", i, w.n)
			}
		}
		if n != p.gone {
			t.Fatalf("page %d holds %d gone markers, counts %d", k, n, p.gone)
		}
	}
	if w.head < w.n && w.pages[0].slots[w.head] == w.gone {
		t.Fatalf("the window's first slot %d is gone", w.head)
	}
}

// A window kept wide by one old entry holds pages only for what it holds.
func TestWindowPinnedSpan(t *testing.T) {
	w := newWindow[int]()
	w.put(1, new(int)) // held to the end
	for id := uint64(2); id <= 100000; id++ {
		w.put(id, new(int))
		if id > 2 {
			w.forget(id-1, id)
		}
		if id%1000 == 0 {
			checkWindowCounts(t, &w)
		}
	}
	real := 0
	for _, p := range w.pages {
		if p != w.allGone {
			real++
		}
	}
	if w.span() < 99000 || real > 3 {
		t.Fatalf("span %d, %d pages of their own (of %d)", w.span(), real, len(w.pages))
	}
}

// refWindow is the contiguous window the paged one replaced, kept as the
// reference of its behaviour.

// window maps dense ids (message ids, lease ids) to entries. Ids are
// handed out in increasing order, so the entries live in a slice from
// the oldest id still held; forgetting a prefix releases its memory. A
// forgotten id reads as gone (different from never seen).
type refWindow[T any] struct {
	base  uint64 // the id of slots[head]
	slots []*T
	head  int
	gone  *T // the marker of a forgotten entry
	top   uint64
	// back holds entries that came back after their id's slot was released
	// (rare: a forgotten message a broker restart lends again).
	back map[uint64]*T
}

func newRefWindow[T any]() refWindow[T] { return refWindow[T]{base: 1, gone: new(T)} }

// get returns the entry, and whether the id was forgotten.
func (w *refWindow[T]) get(id uint64) (v *T, forgotten bool) {
	if id < w.base {
		if v = w.back[id]; v != nil {
			return v, false
		}
		return nil, id != 0
	}
	i := int(id-w.base) + w.head
	if i >= len(w.slots) {
		return nil, false
	}
	if v = w.slots[i]; v == w.gone {
		return nil, true
	}
	return v, false
}

// put stores v under id, which must not be below the window.
func (w *refWindow[T]) put(id uint64, v *T) {
	if id < w.base {
		if w.back == nil {
			w.back = map[uint64]*T{}
		}
		w.back[id] = v
		return
	}
	i := int(id-w.base) + w.head
	for i >= len(w.slots) {
		w.slots = append(w.slots, nil)
	}
	w.slots[i] = v
	w.top = max(w.top, id)
}

// forget marks id gone and releases the prefix of forgotten entries and of
// ids below seen that were never used.
func (w *refWindow[T]) forget(id uint64, seen uint64) {
	if id < w.base {
		delete(w.back, id)
		return
	}
	i := int(id-w.base) + w.head
	if i < len(w.slots) {
		w.slots[i] = w.gone
	}
	for w.head < len(w.slots) && (w.slots[w.head] == w.gone || w.slots[w.head] == nil && w.base < seen) {
		w.slots[w.head] = nil
		w.head++
		w.base++
	}
	if w.head == len(w.slots) {
		w.slots, w.head = w.slots[:0], 0
	} else if w.head >= 1024 && 2*w.head >= len(w.slots) {
		n := copy(w.slots, w.slots[w.head:])
		clear(w.slots[n:])
		w.slots, w.head = w.slots[:n], 0
	}
}

// each calls f for every live entry, in id order.
func (w *refWindow[T]) each(f func(id uint64, v *T)) {
	if len(w.back) > 0 {
		ids := make([]uint64, 0, len(w.back))
		for id := range w.back { // collected, then sorted
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			f(id, w.back[id])
		}
	}
	for i := w.head; i < len(w.slots); i++ {
		if v := w.slots[i]; v != nil && v != w.gone {
			f(w.base+uint64(i-w.head), v)
		}
	}
}
