package check

import "slices"

// window maps dense ids (message ids, lease ids) to entries. Ids are
// handed out in increasing order, so the entries live in slots from the
// oldest id still held; forgetting a prefix releases its memory. A
// forgotten id reads as gone (different from never seen).
//
// The slots are kept in pages of winPage. One entry held for long (a
// message lost until the end of a run) keeps every id after it in the
// window; the pages in between whose every slot was forgotten share one
// page of gone markers (allGone) instead of holding their own, so the
// window's memory follows what it holds, not its span.
type window[T any] struct {
	base uint64 // the id of slot head
	// pages[k] holds slots k*winPage to (k+1)*winPage-1; slot head
	// (head < winPage) is the first in the window, slot n-1 the last.
	pages   []*winPageOf[T]
	head, n int
	gone    *T // the marker of a forgotten entry
	top     uint64
	// back holds entries that came back after their id's slot was released
	// (rare: a forgotten message a broker restart lends again).
	back map[uint64]*T
	// allGone is the shared page of a page whose slots were all forgotten
	// (made when first needed; never written); spare are released pages,
	// emptied, for the next ones needed.
	allGone *winPageOf[T]
	spare   []*winPageOf[T]
}

const (
	winShift = 10
	winPage  = 1 << winShift
	winMask  = winPage - 1
)

// winPageOf is a page of slots; gone counts those holding the gone marker.
type winPageOf[T any] struct {
	slots [winPage]*T
	gone  int
}

func newWindow[T any]() window[T] { return window[T]{base: 1, gone: new(T)} }

// span is the number of slots in the window.
func (w *window[T]) span() int { return w.n - w.head }

// get returns the entry, and whether the id was forgotten: below the
// window, one that came back (back), else forgotten (0 is never an id);
// past its end, never seen. It is short enough to be inlined at its
// callers.
func (w *window[T]) get(id uint64) (*T, bool) {
	if id < w.base {
		v := w.back[id]
		return v, v == nil && id != 0
	}
	if i := int(id-w.base) + w.head; i < w.n {
		if v := w.pages[i>>winShift].slots[i&winMask]; v != w.gone {
			return v, false
		}
		return nil, true
	}
	return nil, false
}

// put stores v under id, which must not be below the window.
func (w *window[T]) put(id uint64, v *T) {
	if !w.putNext(id, v) {
		w.putSlow(id, v)
	}
}

// putNext is put's common case: it stores v, and reports true, when id
// is the next one, whose slot, the window's end, lies in a page it has.
// It inlines (no call), so that the hot callers (a message's, a lease's
// put) call putSlow only for the rest. A slot at the end is nil (no
// page of gone markers holds it), and every id put before lies below it,
// top too.
func (w *window[T]) putNext(id uint64, v *T) bool {
	if i := int(id-w.base) + w.head; id >= w.base && i == w.n && i>>winShift < len(w.pages) {
		w.pages[i>>winShift].slots[i&winMask] = v
		w.n, w.top = i+1, id
		return true
	}
	return false
}

// putSlow is put's general case.
func (w *window[T]) putSlow(id uint64, v *T) {
	if id < w.base {
		if w.back == nil {
			w.back = map[uint64]*T{}
		}
		w.back[id] = v
		return
	}
	i := int(id-w.base) + w.head
	for i>>winShift >= len(w.pages) {
		w.pages = append(w.pages, w.newPage())
	}
	w.n = max(w.n, i+1)
	if p := w.pages[i>>winShift]; p != w.allGone && v != w.gone {
		// Mostly: an entry on a page of its own, written here without
		// set's cases (an entry makes no page all gone).
		x := &p.slots[i&winMask]
		if *x == w.gone {
			p.gone--
		}
		*x = v
	} else {
		w.set(i, v)
	}
	w.top = max(w.top, id)
}

// newPage is an empty page: a spare one, else a new one.
func (w *window[T]) newPage() *winPageOf[T] {
	if k := len(w.spare); k > 0 {
		p := w.spare[k-1]
		w.spare[k-1] = nil
		w.spare = w.spare[:k-1]
		return p
	}
	return new(winPageOf[T])
}

// release returns page p, which the window no longer uses, to the spares.
func (w *window[T]) release(p *winPageOf[T]) {
	if p == w.allGone {
		return
	}
	clear(p.slots[:])
	p.gone = 0
	w.spare = append(w.spare, p)
}

// set writes slot i, keeping its page's count of gone markers; a page
// that becomes all gone is released for the shared one.
func (w *window[T]) set(i int, v *T) {
	k := i >> winShift
	p := w.pages[k]
	if p == w.allGone {
		if v == w.gone {
			return
		}
		p = w.newPage()
		for j := range p.slots {
			p.slots[j] = w.gone
		}
		p.gone = winPage
		w.pages[k] = p
	}
	x := &p.slots[i&winMask]
	if *x == w.gone {
		p.gone--
	}
	if v == w.gone {
		p.gone++
	}
	*x = v
	if p.gone == winPage {
		if w.allGone == nil {
			w.allGone = new(winPageOf[T])
			for j := range w.allGone.slots {
				w.allGone.slots[j] = w.gone
			}
			w.allGone.gone = winPage
		}
		w.pages[k] = w.allGone
		w.release(p)
	}
}

// forget marks id gone and releases the prefix of forgotten entries and of
// ids below seen that were never used.
func (w *window[T]) forget(id uint64, seen uint64) {
	if !(w.firstLive() && w.forgetPast(id)) {
		w.forgetSlow(id, seen)
	}
}

// firstLive reports whether the window's first slot holds an entry: then
// forgetting a later one releases nothing (forgetSlow releases from the
// first up to the first live one; the first is never gone between two
// calls). It is forget's common case's first test (a message held long
// keeps the window's first), inlined, beside forgetPast.
func (w *window[T]) firstLive() bool { return w.head < w.n && w.pages[0].slots[w.head] != nil }

// forgetPast is forget's common case, after firstLive: it marks id gone,
// and reports true, when id's slot is past the window's first and live
// (or unused), on a page that keeps others. It inlines (no call), so
// that the hot callers (a message's and its leases' forget) call
// forgetSlow only for the rest.
func (w *window[T]) forgetPast(id uint64) bool {
	if d := id - w.base; d != 0 && d < uint64(w.n-w.head) { // below the window, d is too large
		i := int(d) + w.head
		p := w.pages[i>>winShift]
		if x := &p.slots[i&winMask]; *x != w.gone && p.gone < winPage-1 {
			*x = w.gone
			p.gone++
			return true
		}
	}
	return false
}

// forgetSlow is forget's general case.
func (w *window[T]) forgetSlow(id uint64, seen uint64) {
	if id < w.base {
		delete(w.back, id)
		return
	}
	if i := int(id-w.base) + w.head; i < w.n {
		// Mostly a live slot on a page that keeps others: marked here,
		// without set's cases.
		p := w.pages[i>>winShift]
		if x := &p.slots[i&winMask]; p != w.allGone && *x != w.gone && p.gone < winPage-1 {
			*x = w.gone
			p.gone++
		} else {
			w.set(i, w.gone)
		}
	}
	for w.head < w.n {
		p := w.pages[0]
		if p == w.allGone {
			// Every slot of the page is gone (and the page lies wholly
			// below n): pass it at once.
			w.base += uint64(winPage - w.head)
			w.head = winPage
		} else {
			x := &p.slots[w.head]
			if *x == w.gone {
				p.gone--
			} else if *x != nil || w.base >= seen {
				break
			}
			*x = nil
			w.head++
			w.base++
		}
		if w.head == winPage {
			w.release(p)
			copy(w.pages, w.pages[1:])
			w.pages[len(w.pages)-1] = nil
			w.pages = w.pages[:len(w.pages)-1]
			w.head, w.n = 0, w.n-winPage
		}
	}
	if w.head == w.n && len(w.pages) > 0 {
		for _, p := range w.pages {
			w.release(p)
		}
		clear(w.pages)
		w.pages, w.head, w.n = w.pages[:0], 0, 0
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
	for i := w.head; i < w.n; i++ {
		if v := w.pages[i>>winShift].slots[i&winMask]; v != nil && v != w.gone {
			f(w.base+uint64(i-w.head), v)
		}
	}
}
