package sim

import "popsim/clock"

// frontRun holds the near tasks that, when scheduled, came before all
// but a few (fewer than frontReach) of the run's own: a run sorted by the
// heap's order (time, tie-break, sequence), in an array, latest first.
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
	// The run, latest first: slots lo to lo+n-1 hold the tasks and their
	// times from the latest to the earliest, so that filing a task moves
	// the few it follows one slot up and taking the earliest moves
	// nothing; handing the latest to the heap moves lo. The times and the
	// tasks are two arrays, not one of heapEntry: a slot's address is
	// then the array's plus eight times the slot, one addressing mode,
	// where sixteen-byte entries took a shift as well. With the ring's
	// masking gone as well, a task passed costs 15 instructions where it
	// cost 20 (default scenario: insert 11.21 -> 9.46 M instructions,
	// callgrind).
	at [frontSpan]clock.Time
	t  [frontSpan]*task
	lo int // the slot of the latest task
	n  int // the number of tasks in the run
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
//
// The run lies in an array of frontSpan slots, twice frontCap: a filed
// task takes the slot above the earliest, and when that is past the end
// (last moved lo up once per slot since) compact moves the run to slot 0,
// at most once in frontSpan-frontCap filings.
const (
	frontReach = 5
	frontCap   = 32
	frontSpan  = 2 * frontCap
	spanMask   = frontSpan - 1 // masks slots where they index, so that the compiler sees them in range
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
	y := (f.lo + f.n - frontReach) & spanMask
	return f.at[y] > t.at || f.at[y] == t.at && !tieLess(f.t[y], t) // y does not precede t
}

// file files t if fewer than frontReach of the run's tasks precede it
// (within), after the tasks that precede it, and returns the task the
// heap is to take instead: t itself if the run refused it, the run's
// latest if the run was full (the tasks that precede t are fewer than
// frontReach, so the latest is not one of them), else nil. The tasks that
// precede t move one slot up as the scan passes them, and t takes the
// slot the last of them left. One call with the test and the handover,
// where pushNear tested within and then called insert: a call fewer a
// filed task (callgrind: BenchmarkRunDefault 1 551.7 -> 1 550.8 M
// instructions, hot topic 637.95 -> 637.06 M).
func (f *frontRun) file(t *task) (spill *task) {
	if !f.within(t) {
		return t
	}
	if f.n == frontCap {
		spill = f.last()
	}
	at := t.at
	i := f.lo + f.n // the slot above the earliest
	if i == frontSpan {
		f.compact()
		i = f.n
	}
	for lo := f.lo; i > lo; {
		y := (i - 1) & spanMask
		if f.at[y] > at || f.at[y] == at && !tieLess(f.t[y], t) { // y does not precede t
			break
		}
		x := i & spanMask
		f.at[x], f.t[x] = f.at[y], f.t[y]
		i = y
	}
	i &= spanMask
	f.at[i], f.t[i] = at, t
	t.idx = inFront
	f.n++
	return spill
}

// compact moves the run to slot 0, for file to file a task above it. A
// loop, not copy: file, where it inlines, then calls no runtime.memmove
// (nor typedslicecopy) and needs no stack frame of its own, only the
// frame pointer its write barriers want (BenchmarkRunDefault: 1 392.4 ->
// 1 391.2 M instructions outside the runtime, hot topic 576.1 -> 575.6 M,
// callgrind).
func (f *frontRun) compact() {
	for i := range f.n {
		f.at[i&spanMask], f.t[i&spanMask] = f.at[(f.lo+i)&spanMask], f.t[(f.lo+i)&spanMask]
	}
	f.lo = 0
}

// first returns the run's earliest task and its time; the run is not
// empty.
func (f *frontRun) first() (clock.Time, *task) {
	y := (f.lo + f.n - 1) & spanMask
	return f.at[y], f.t[y]
}

// earlier returns the run's earliest task if the run has one that comes
// before e or e is nil, else e: the earlier of the run's first and near's
// (peek). It inlines.
func (f *frontRun) earlier(e *task) *task {
	if f.n > 0 {
		if at, x := f.first(); e == nil || at < e.at || at == e.at && tieLess(x, e) {
			return x
		}
	}
	return e
}

// pop takes out t, the earliest task, which first gave. The slot keeps
// its task until it is written again: every task stays reachable from
// the scheduler's free list anyway.
func (f *frontRun) pop(t *task) {
	t.idx = -1
	f.n--
}

// last takes out the latest task, to make room.
func (f *frontRun) last() *task {
	t := f.t[f.lo&spanMask]
	f.lo++
	f.n--
	t.idx = -1
	return t
}

// remove takes out the task t, which waits in the run: the tasks after
// it move one slot up.
func (f *frontRun) remove(t *task) {
	k := f.lo
	for f.t[k&spanMask] != t {
		k++
	}
	t.idx = -1
	for ; k > f.lo; k-- {
		d := k & spanMask
		f.at[d], f.t[d] = f.at[(d-1)&spanMask], f.t[(d-1)&spanMask]
	}
	f.lo++
	f.n--
}
