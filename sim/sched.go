package sim

import (
	"errors"
	"fmt"
	"reflect"

	"popsim/clock"
	"popsim/workload/pcg"
)

// Bounds the scheduler enforces. Hitting one is an error that names it.
var (
	// ErrEventBudget: more tasks were dispatched than Config.EventBudget.
	ErrEventBudget = errors.New("sim: event budget exhausted")
	// ErrTimeLimit: a task was due after the scheduler's virtual-time limit.
	ErrTimeLimit = errors.New("sim: virtual-time limit reached")
)

// taskKind is the type of a scheduler task. Tasks are the simulator's
// own work items on its timeline; the trace's events (model.Event) are
// what the run reports, and the two are never the same thing.
type taskKind uint8

const (
	tkStop taskKind = iota
	tkLiveness
	tkDrainCheck
	tkSample
	tkProduce     // a producer sends its next message
	tkPut         // the message reaches the engine
	tkEngine      // the engine's periodic work: who is the engine's timer
	tkNetRequest  // a request reaches the engine
	tkNetResponse // a response reaches its client
	tkTimeout     // a client gives up on a request
	tkPoll        // a consumer (re)issues its pop, receive or pull
	tkConsumeEnd  // a consumption ends
	tkClient      // a client's own timed work (its payload says which)
	tkCrash
	tkRestart
	tkPause
	tkResume
	tkSlow
	tkBrokerRestart
	tkScripted // tests: run a function at a virtual time
	tkBrokerStop
	tkBrokerDone // a request's service at the broker ends (the broker cost model)
	tkAdmin      // an admin's scheduled action (a request mode switch)
)

// payload is what a task carries: a request, a message in hand, a
// producer's message on its way, a client timer. Every payload is a
// pointer to one of the simulator's own types, so storing one in a task
// does not allocate (the invariants build checks it, at). It is the empty
// interface, not one with a marker method: a request reaches the wire as a
// Request, and converting one interface to another looks the method table
// up in the runtime's per-site cache (runtime.typeAssert when it misses),
// where converting it to the empty interface loads the type from the
// table it has.
type payload = any

// task is one scheduled occurrence. who is a consumer, producer or timer
// index, epoch the consumer incarnation it was scheduled for.
type task struct {
	at    clock.Time
	tie   uint64
	seq   uint64
	kind  taskKind
	who   int32
	epoch uint32
	p     payload
	idx   int // where it waits: inFront (in taskQueue.front), a position in near, farIdx(a position in far), or -1 once dispatched or cancelled
}

// taskHeap orders tasks by (virtual time, seeded tie-break, sequence).
// The tie-break shuffles simultaneous tasks deliberately, the sequence
// number makes the order total, so the dispatch order does not depend on
// how the heap arranges its array. It is a 4-ary min-heap written out for
// tasks (container/heap's interface calls cost more than the comparisons)
// whose entries carry the task's time, so that comparing two seldom loads
// the tasks (heapEntry); each task knows its position (idx) so that it can be
// cancelled. Four children a node halve the depth of a binary heap's, and
// with it the entries a push or a removal moves (each move writes the
// moved task's idx, a load from memory the heap's array does not share).
//
// pop leaves the top's slot open (taken), and the next push fills it and
// sinks from there: the loop takes a task and its handler mostly
// schedules the next (two pops in three in the default scenario and the
// hot topic), and one pass down the heap does what closing the hole and
// then pushing took.
type taskHeap struct {
	e     []heapEntry
	taken bool // e[0] is the open slot of the task pop took
}

// heapArity is the number of children of a taskHeap node: the children of
// i are heapArity*i+1 ... heapArity*i+heapArity, its parent (i-1)/heapArity.
const heapArity = 4

// heapEntry is a task and a copy of its time, the part of its order key
// that nearly always decides: two tasks seldom share an instant, and only
// then does a comparison load the tasks' tie-breaks and sequence numbers.
// Sixteen bytes an entry, so that the moves a push or a removal makes copy
// half of what a copy of the whole key would, and a node's four children
// span one cache line's worth.
type heapEntry struct {
	at clock.Time
	t  *task
}

func entryOf(t *task) heapEntry { return heapEntry{at: t.at, t: t} }

// len is the number of tasks in the heap.
func (h *taskHeap) len() int {
	if h.taken {
		return len(h.e) - 1
	}
	return len(h.e)
}

// less orders two entries: by time, then (tieLess) by tie-break and
// sequence number. One expression, not an if on the times: the compiler
// then branches on the one comparison of the times, where the if made it
// set a flag and test it again (default scenario: down 27.6 -> 24.3 M
// instructions).
func (h *taskHeap) less(a, b *heapEntry) bool {
	return a.at < b.at || a.at == b.at && tieLess(a.t, b.t)
}

// tieLess orders two tasks due at the same instant: by tie-break, then
// by sequence number.
func tieLess(a, b *task) bool {
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

// push adds t: into the slot pop left open, sinking from the top, or as
// a new leaf rising from the bottom (in one function, not a call of its
// own for the leaf: the default scenario's near heap grows on two pushes
// in three).
func (h *taskHeap) push(t *task) {
	if h.taken {
		h.taken = false
		h.down(0, entryOf(t))
		return
	}
	h.e = append(h.e, heapEntry{})
	h.up(len(h.e)-1, entryOf(t))
}

// first returns the earliest task without taking it out, or nil when the
// heap is empty. It closes a slot pop left open.
func (h *taskHeap) first() *task {
	if h.taken {
		h.close()
	}
	if len(h.e) == 0 {
		return nil
	}
	return h.e[0].t
}

// pop takes out t, the earliest task, which first returned, and leaves its
// slot open for the next push (or first, or remove) to fill.
func (h *taskHeap) pop(t *task) {
	t.idx = -1
	h.taken = true
}

// remove takes out the waiting task t.
func (h *taskHeap) remove(t *task) {
	if h.taken { // positions move as the open slot closes: read t.idx after
		h.close()
	}
	h.cut(t.idx)
	t.idx = -1
}

// close closes the slot pop left open: the heap's last entry fills it,
// sinking from the top (cut(0), written out so that first inlines). The
// slot past the end keeps its entry: the scheduler keeps every task it
// made (scheduler.free), so the stale pointer keeps nothing alive.
func (h *taskHeap) close() {
	h.taken = false
	n := len(h.e) - 1
	last := h.e[n]
	h.e = h.e[:n]
	if n > 0 {
		h.down(0, last)
	}
}

// cut closes position i of a heap with no open slot (remove closes it
// first): the heap's last entry fills it, sinking from there or, if it
// does not sink, rising.
func (h *taskHeap) cut(i int) {
	n := len(h.e) - 1
	last := h.e[n]
	h.e = h.e[:n] // the slot keeps its entry, as in close
	if i != n && h.down(i, last) == i {
		h.up(i, last)
	}
}

// down places x, to be placed at hole i, below the entries that precede
// it: it moves the hole down while the least of its children precedes x,
// and returns where x lands. The least of four children is found by a
// tournament of two pairs.
func (h *taskHeap) down(i int, x heapEntry) int {
	e := h.e
	for {
		c := heapArity*i + 1
		if c >= len(e) {
			break
		}
		m := c
		if c+3 < len(e) {
			k := e[c : c+4 : c+4]
			a, b := 0, 2
			if h.less(&k[1], &k[0]) {
				a = 1
			}
			if h.less(&k[3], &k[2]) {
				b = 3
			}
			if h.less(&k[b], &k[a]) {
				a = b
			}
			m += a
		} else {
			for k := c + 1; k < len(e); k++ {
				if h.less(&e[k], &e[m]) {
					m = k
				}
			}
		}
		if !h.less(&e[m], &x) {
			break
		}
		e[i] = e[m]
		e[i].t.idx = i
		i = m
	}
	e[i], x.t.idx = x, i
	return i
}

// up moves x, to be placed at hole j, towards the root.
func (h *taskHeap) up(j int, x heapEntry) {
	e := h.e
	for j > 0 {
		i := (j - 1) / heapArity
		if !h.less(&x, &e[i]) {
			break
		}
		e[j] = e[i]
		e[j].t.idx = j
		j = i
	}
	e[j], x.t.idx = x, j
}

// scheduler is the simulator's only loop state: the task queue and the
// virtual clock, which nothing else advances.
type scheduler struct {
	// clock is virtual time: only start moves it, to the task it takes. A
	// clock.Virtual's check that time never moves back, which at makes
	// moot, put start over the inlining budget (cost 137 against 60).
	clock      clock.Time
	q          taskQueue
	tie        pcg.Rand // the stream newScheduler was given, held by value: one load less a draw
	seq        uint64
	dispatched int64
	maxTasks   int64
	maxTime    clock.Time
	// free holds the dispatched and cancelled tasks, for at to reuse. at
	// takes from its end without clearing the slot (takeFree clears it):
	// the scheduler never lets go of a task it made, so a stale pointer past
	// free's length keeps alive nothing that is not alive anyway.
	free []*task
}

// newScheduler returns a scheduler whose clock reads start, which draws
// its tie-breaks from a copy of tie (tie itself does not advance) and
// fails past maxTasks tasks or maxTime.
func newScheduler(start clock.Time, tie *pcg.Rand, maxTasks int64, maxTime clock.Time) *scheduler {
	return &scheduler{clock: start, q: newTaskQueue(start, farWindow), tie: *tie, maxTasks: maxTasks, maxTime: maxTime}
}

func (s *scheduler) now() clock.Time { return s.clock }

// at schedules a task and returns it (for cancel). Scheduling in the past
// is a simulator bug.
func (s *scheduler) at(t clock.Time, k taskKind, who int32, epoch uint32, p payload) *task {
	if t < s.clock {
		panic(fmt.Sprintf("sim: task %d scheduled at %v, before now %v", k, t, s.clock))
	}
	if invariantsOn && p != nil && reflect.TypeOf(p).Kind() != reflect.Pointer {
		panic(fmt.Sprintf("sim: task %d carries a %T, not a pointer: storing it allocates", k, p))
	}
	var e *task
	if n := len(s.free); n > 0 { // takeFree, without clearing the slot
		e = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		e = new(task)
	}
	s.seq++
	// Field by field: idx is the queue's to set. The arguments first, the
	// tie-break's draw last: the draw's arithmetic then has the registers
	// the arguments held, where it made the compiler keep the payload on
	// the stack and load it back (callgrind: scheduler.at 35.86 -> 34.82 M
	// instructions in the default scenario).
	e.at, e.kind, e.who, e.epoch, e.p, e.seq = t, k, who, epoch, p, s.seq
	e.tie = s.tie.Uint64()
	if t < s.q.horizon { // s.q.push(e) and pushNear, written out to save two calls a task
		if x := s.q.front.file(e); x != nil {
			s.q.near.push(x)
		}
	} else {
		s.q.pushFar(e)
	}
	return e
}

// after schedules a task d from now.
func (s *scheduler) after(d clock.Duration, k taskKind, who int32, epoch uint32, p payload) *task {
	return s.at(s.clock.Add(d), k, who, epoch, p)
}

// cancel removes a pending task. seq is the sequence number the task had
// when it was scheduled: tasks are recycled, so a stale pointer whose
// task already fired (or was reused) is recognised and left alone.
// It inlines (the removal is drop's): a call fewer a cancelled task.
func (s *scheduler) cancel(e *task, seq uint64) {
	if e != nil && e.seq == seq && e.queued() {
		s.drop(e)
	}
}

// drop removes the waiting task e and keeps it for reuse (cancel). Not
// inlined: inside cancel it would put cancel over the inlining budget.
//
//go:noinline
func (s *scheduler) drop(e *task) {
	s.q.remove(e)
	s.release(e)
}

// next removes the earliest task and advances the clock to it. It fails,
// naming the bound, when the task budget (EventBudget) or the time limit is exceeded,
// and returns nil when the queue is empty. The loop takes its tasks with
// the same pieces written out (sim.loop): peek's first step and start.
func (s *scheduler) next() (*task, error) {
	e := s.q.peek()
	if e == nil {
		return nil, nil
	}
	if !s.start(e) {
		return nil, s.bound(e)
	}
	return e, nil
}

// start takes out e, the earliest task, and advances the clock to it, or
// reports false, taking nothing, when a bound keeps e from running
// (bound names it). It inlines: the loop pays no call for it.
func (s *scheduler) start(e *task) bool {
	if e.at > s.maxTime || s.dispatched >= s.maxTasks {
		return false
	}
	if invariantsOn && e.at < s.clock {
		panic(fmt.Sprintf("sim: task %d due at %v taken at %v: the clock moved back", e.kind, e.at, s.clock))
	}
	s.q.pop(e)
	s.clock = e.at
	s.dispatched++
	return true
}

// bound is next's error for a task e that a bound keeps from running:
// due after the time limit, or past the task budget.
func (s *scheduler) bound(e *task) error {
	if e.at > s.maxTime {
		return fmt.Errorf("%w: next task due at %v, after the limit %v", ErrTimeLimit, e.at, s.maxTime)
	}
	return fmt.Errorf("%w: %d tasks dispatched by %v (EventBudget = %d); raise it or shorten the run", ErrEventBudget, s.dispatched, s.clock, s.maxTasks)
}

// release returns a dispatched or cancelled task to the free list. It
// keeps its payload until at reuses it: a store less a task, and what it
// keeps alive is at most a payload for each task of the queue's peak
// (default scenario: 2.3 M instructions a run, 6 a task).
func (s *scheduler) release(e *task) {
	s.free = append(s.free, e)
}
