package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"popsim/clock"
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
// producer's message on its way, a client timer. The set is closed (the
// method is unexported) and every payload is a pointer, so storing one
// in a task does not allocate.
type payload interface{ payload() }

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
	idx   int // where it waits: a position in taskQueue.near, farIdx(a position in far), or -1 once dispatched or cancelled
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
type taskHeap []heapEntry

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

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return entryLess(&h[i], &h[j]) }

func entryLess(a, b *heapEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return tieLess(a.t, b.t)
}

// tieLess orders two tasks due at the same instant: by tie-break, then
// by sequence number.
func tieLess(a, b *task) bool {
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

// push adds e.
func (h *taskHeap) push(e *task) {
	*h = append(*h, heapEntry{})
	h.up(len(*h)-1, entryOf(e))
}

// remove takes out the task at position i and returns it. The hole it
// leaves sinks to a leaf along its least children, one comparison among
// them a level and none against the entry that fills it, the heap's last,
// which then rises from there: it came from the bottom and seldom rises
// far (Floyd's removal; a sift down from i compares it at every level).
func (h *taskHeap) remove(i int) *task {
	old := *h
	n := len(old) - 1
	e := old[i].t
	last := old[n]
	old[n] = heapEntry{}
	*h = old[:n]
	if i != n {
		h.up(h.sink(i), last)
	}
	e.idx = -1
	return e
}

// sink moves the hole at i down to a leaf, filling it from its least
// child at every level, and returns the leaf's position.
func (h taskHeap) sink(i int) int {
	n := len(h)
	for {
		c := heapArity*i + 1
		if c >= n {
			return i
		}
		m := c
		if c+3 < n { // all four children: a tournament of two pairs
			k := h[c : c+4 : c+4]
			a, b := 0, 2
			if entryLess(&k[1], &k[0]) {
				a = 1
			}
			if entryLess(&k[3], &k[2]) {
				b = 3
			}
			if entryLess(&k[b], &k[a]) {
				a = b
			}
			m += a
		} else {
			for k := c + 1; k < n; k++ {
				if entryLess(&h[k], &h[m]) {
					m = k
				}
			}
		}
		h[i] = h[m]
		h[i].t.idx = i
		i = m
	}
}

// up moves e, to be placed at hole j, towards the root.
func (h taskHeap) up(j int, e heapEntry) {
	for j > 0 {
		i := (j - 1) / heapArity
		if !entryLess(&e, &h[i]) {
			break
		}
		h[j] = h[i]
		h[j].t.idx = j
		j = i
	}
	h[j], e.t.idx = e, j
}

// scheduler is the simulator's only loop state: the task queue and the
// virtual clock, which nothing else advances.
type scheduler struct {
	clk        *clock.Virtual
	q          taskQueue
	tie        *rand.PCG
	seq        uint64
	dispatched int64
	maxTasks   int64
	maxTime    clock.Time
	free       []*task
}

func newScheduler(start clock.Time, tie *rand.PCG, maxTasks int64, maxTime clock.Time) *scheduler {
	return &scheduler{clk: clock.NewVirtual(start), q: newTaskQueue(start, farWindow), tie: tie, maxTasks: maxTasks, maxTime: maxTime}
}

func (s *scheduler) now() clock.Time { return s.clk.Now() }

// at schedules a task and returns it (for cancel). Scheduling in the past
// is a simulator bug.
func (s *scheduler) at(t clock.Time, k taskKind, who int32, epoch uint32, p payload) *task {
	if t < s.clk.Now() {
		panic(fmt.Sprintf("sim: task %d scheduled at %v, before now %v", k, t, s.clk.Now()))
	}
	e := takeFree(&s.free)
	if e == nil {
		e = new(task)
	}
	s.seq++
	*e = task{at: t, tie: s.tie.Uint64(), seq: s.seq, kind: k, who: who, epoch: epoch, p: p}
	s.q.push(e)
	return e
}

// after schedules a task d from now.
func (s *scheduler) after(d clock.Duration, k taskKind, who int32, epoch uint32, p payload) *task {
	return s.at(s.clk.Now().Add(d), k, who, epoch, p)
}

// cancel removes a pending task. seq is the sequence number the task had
// when it was scheduled: tasks are recycled, so a stale pointer whose
// task already fired (or was reused) is recognised and left alone.
func (s *scheduler) cancel(e *task, seq uint64) {
	if e == nil || e.seq != seq || !e.queued() {
		return
	}
	s.q.remove(e)
	s.release(e)
}

// next removes the earliest task and advances the clock to it. It fails,
// naming the bound, when the task budget (EventBudget) or the time limit is exceeded,
// and returns nil when the queue is empty.
func (s *scheduler) next() (*task, error) {
	e := s.q.peek()
	if e == nil {
		return nil, nil
	}
	if e.at > s.maxTime {
		return nil, fmt.Errorf("%w: next task due at %v, after the limit %v", ErrTimeLimit, e.at, s.maxTime)
	}
	if s.dispatched >= s.maxTasks {
		return nil, fmt.Errorf("%w: %d tasks dispatched by %v (EventBudget = %d); raise it or shorten the run", ErrEventBudget, s.dispatched, s.clk.Now(), s.maxTasks)
	}
	s.q.pop()
	s.clk.AdvanceTo(e.at)
	s.dispatched++
	return e, nil
}

// release returns a dispatched task to the free list.
func (s *scheduler) release(e *task) {
	e.p = nil
	s.free = append(s.free, e)
}
