package check

import "slices"

// window maps dense ids (message ids, lease ids) to entries. Ids are
// handed out in increasing order, so the entries live in a slice from
// the oldest id still held; forgetting a prefix releases its memory. A
// forgotten id reads as gone (different from never seen).
type window[T any] struct {
	base  uint64 // the id of slots[head]
	slots []*T
	head  int
	gone  *T // the marker of a forgotten entry
	top   uint64
	// back holds entries that came back after their id's slot was released
	// (rare: a forgotten message a broker restart lends again).
	back map[uint64]*T
}

func newWindow[T any]() window[T] { return window[T]{base: 1, gone: new(T)} }

// get returns the entry, and whether the id was forgotten.
func (w *window[T]) get(id uint64) (v *T, forgotten bool) {
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
func (w *window[T]) put(id uint64, v *T) {
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
func (w *window[T]) forget(id uint64, seen uint64) {
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
func (w *window[T]) each(f func(id uint64, v *T)) {
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
