package pop

// window tracks, per queue, which popped offsets are still owed an ack (or a
// revive). Its start is the smallest such offset: the commit offset the
// fixed broker converges to (apache/rocketmq#10949). It is volatile, like
// the pull offset.
type window struct {
	start, end int64 // offsets [start, end) are covered
	base       int64 // offset of bit 0 of pending[0]; multiple of 64
	pending    []uint64
}

// cover extends the window to [from, to), marking the given offsets pending
// and every other new offset done. A from beyond end skips a gap (offset
// correction); a from before start restarts the window (reset, restart).
func (w *window) cover(from, to int64, popped []int64) {
	if w.pending == nil || from < w.start || from > w.end {
		w.start, w.end, w.base = from, from, from&^63
		w.pending = w.pending[:0]
	}
	if to > w.end {
		w.end = to
	}
	for _, o := range popped {
		if o >= w.start && o < w.end {
			w.set(o)
		}
	}
	w.advance()
}

func (w *window) set(o int64) {
	i := int((o - w.base) >> 6)
	for len(w.pending) <= i {
		w.pending = append(w.pending, 0)
	}
	w.pending[i] |= 1 << uint((o-w.base)&63)
}

// done clears offset o and reports whether the start moved.
func (w *window) done(o int64) bool {
	if o < w.start || o >= w.end {
		return false
	}
	i := int((o - w.base) >> 6)
	if i < len(w.pending) {
		w.pending[i] &^= 1 << uint((o-w.base)&63)
	}
	if o != w.start {
		return false
	}
	w.advance()
	return true
}

func (w *window) isPending(o int64) bool {
	i := int((o - w.base) >> 6)
	return i < len(w.pending) && w.pending[i]&(1<<uint((o-w.base)&63)) != 0
}

func (w *window) advance() {
	for w.start < w.end && !w.isPending(w.start) {
		w.start++
	}
	k := 0 // words wholly below start, dropped by moving the rest down
	for w.start-w.base >= 64 && k < len(w.pending) {
		k++
		w.base += 64
	}
	if k > 0 { // in place, so the storage is reused rather than regrown
		w.pending = w.pending[:copy(w.pending, w.pending[k:])]
	}
	if len(w.pending) == 0 {
		w.base = w.start &^ 63
	}
}
