package sim

// frontRun holds the near tasks that, when scheduled, came before all
// but a few (fewer than frontReach) of the run's own: a run sorted by the
// heap's order (time, tie-break, sequence), earliest first, in a ring.
// Filing a task here is a scan of the few tasks due before it and a shift
// of those, and taking the earliest moves nothing, where the heap sinks an
// entry through its levels for either. In the hot topic (~450 pending
// tasks) more than half the new tasks are due before every other and
// four in five before all but three, and the heap's pass down from the
// top is paid only by the rest; in the
// default scenario (~15 in near) two tasks in three land here. Tasks due
// later go to the heap as before. The heap and the run hold different
// tasks, each in order, and the queue takes whichever of their two
// earliest comes first: the same order as one heap.
//
// A task in the run has idx inFront, not its slot: filing a task moves
// the tasks it passes without writing to each (a store to another cache
// line a move), and remove, which is rare (the default scenario and the
// hot topic cancel only far tasks), finds the slot by a scan of the run.
type frontRun struct {
	e    [frontCap]heapEntry
	head int // the ring slot of the earliest task
	n    int // the number of tasks in the run
}

// Sizes of the run: a task is filed here if fewer than frontReach of the
// run's tasks precede it, and the run holds at most frontCap (a power of
// two), handing its latest to the heap to make room. A reach of 2, 4, 6
// or 8 measured 1044.3, 1043.1, 1044.4 and 1045.9 M instructions on the
// default scenario and 1109.7, 1108.9, 1109.0 and 1109.1 M on the hot
// topic's 3 virtual seconds (callgrind, before insert took the task
// itself), against 1046.6 and 1124.1 M with the heap alone. Once filing
// stopped writing the passed tasks' idx, a reach of 3 to 8 measured 981.0,
// 980.9, 980.4-980.6, 980.8, 981.4 and 981.8 M on the default scenario and
// 1047.2, 1046.7, 1045.6-1046.8, 1046.7, 1046.5 and 1046.1 M on the hot
// topic (whose runs of one binary vary by about 1 M).
const (
	frontReach = 5
	frontCap   = 32
	frontMask  = frontCap - 1
)

// inFront is the idx of a task in the run: above every heap position, so
// that an idx tells the run, the heap and far apart.
const inFront = 1 << 40

// within reports whether fewer than frontReach of the run's tasks
// precede t: one comparison, with the frontReach-th earliest.
func (f *frontRun) within(t *task) bool {
	if f.n < frontReach {
		return true
	}
	y := &f.e[(f.head+frontReach-1)&frontMask]
	return y.at > t.at || y.at == t.at && !tieLess(y.t, t) // y does not precede t
}

// insert files t, which within admitted, after the tasks that precede
// it, the run holding fewer than frontCap: the head moves one slot back,
// and the tasks that precede t move into the slot before theirs as the
// scan passes them (fewer than frontReach). The slots are masked where
// they index, so that the compiler sees them in range.
func (f *frontRun) insert(t *task) {
	at := t.at
	s := (f.head - 1) & frontMask
	f.head = s
	for range f.n {
		next := (s + 1) & frontMask
		y := &f.e[next]
		if y.at > at || y.at == at && !tieLess(y.t, t) { // y does not precede t
			break
		}
		f.e[s&frontMask] = *y
		s = next
	}
	f.e[s&frontMask] = heapEntry{at: at, t: t}
	t.idx = inFront
	f.n++
}

// first returns the entry of the run's earliest task; the run is not
// empty. The slot is masked, as everywhere, so that the compiler sees it
// in range.
func (f *frontRun) first() *heapEntry { return &f.e[f.head&frontMask] }

// pop takes out t, the earliest task, which first gave. The slot keeps
// its entry until it is written again: every task stays reachable from
// the scheduler's free list anyway.
func (f *frontRun) pop(t *task) {
	t.idx = -1
	f.head = (f.head + 1) & frontMask
	f.n--
}

// last takes out the latest task, to make room.
func (f *frontRun) last() *task {
	f.n--
	t := f.e[(f.head+f.n)&frontMask].t
	t.idx = -1
	return t
}

// remove takes out the task t, which waits in the run: the tasks before
// it move one slot on.
func (f *frontRun) remove(t *task) {
	k := 0
	for f.e[(f.head+k)&frontMask].t != t {
		k++
	}
	t.idx = -1
	for ; k > 0; k-- {
		d := (f.head + k) & frontMask
		f.e[d] = f.e[(d-1)&frontMask]
	}
	f.head = (f.head + 1) & frontMask
	f.n--
}
