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
	idx   int // position in the heap, -1 once dispatched or cancelled
}

// taskHeap orders tasks by (virtual time, seeded tie-break, sequence).
// The tie-break shuffles simultaneous tasks deliberately, the sequence
// number makes the order total, so the dispatch order does not depend on
// how the heap arranges its array. It is a binary min-heap written out for
// tasks (container/heap's interface calls cost more than the comparisons)
// whose entries carry the task's order key, so that comparing two does not
// load the tasks; each task knows its position (idx) so that it can be
// cancelled.
type taskHeap []heapEntry

// heapEntry is a task and its order key (a copy of its at, tie and seq).
type heapEntry struct {
	at  clock.Time
	tie uint64
	seq uint64
	t   *task
}

func entryOf(t *task) heapEntry { return heapEntry{at: t.at, tie: t.tie, seq: t.seq, t: t} }

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return entryLess(&h[i], &h[j]) }

func entryLess(a, b *heapEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
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

// remove takes out the task at position i and returns it.
func (h *taskHeap) remove(i int) *task {
	old := *h
	n := len(old) - 1
	e := old[i].t
	last := old[n]
	old[n] = heapEntry{}
	*h = old[:n]
	if i != n {
		if !h.down(i, last) {
			h.up(i, last)
		}
	}
	e.idx = -1
	return e
}

// up moves e, to be placed at hole j, towards the root.
func (h taskHeap) up(j int, e heapEntry) {
	for j > 0 {
		i := (j - 1) / 2
		if !entryLess(&e, &h[i]) {
			break
		}
		h[j] = h[i]
		h[j].t.idx = j
		j = i
	}
	h[j], e.t.idx = e, j
}

// down moves e, to be placed at hole i, towards the leaves; it reports
// whether e went down.
func (h taskHeap) down(i int, e heapEntry) bool {
	i0, n := i, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && entryLess(&h[r], &h[c]) {
			c = r
		}
		if !entryLess(&h[c], &e) {
			break
		}
		h[i] = h[c]
		h[i].t.idx = i
		i = c
	}
	h[i], e.t.idx = e, i
	return i > i0
}

// scheduler is the simulator's only loop state: the task queue and the
// virtual clock, which nothing else advances.
type scheduler struct {
	clk        *clock.Virtual
	h          taskHeap
	tie        *rand.Rand
	seq        uint64
	dispatched int64
	maxTasks   int64
	maxTime    clock.Time
	free       []*task
}

func newScheduler(start clock.Time, tie *rand.Rand, maxTasks int64, maxTime clock.Time) *scheduler {
	return &scheduler{clk: clock.NewVirtual(start), tie: tie, maxTasks: maxTasks, maxTime: maxTime}
}

func (s *scheduler) now() clock.Time { return s.clk.Now() }

// at schedules a task and returns it (for cancel). Scheduling in the past
// is a simulator bug.
func (s *scheduler) at(t clock.Time, k taskKind, who int32, epoch uint32, p payload) *task {
	if t < s.clk.Now() {
		panic(fmt.Sprintf("sim: task %d scheduled at %v, before now %v", k, t, s.clk.Now()))
	}
	var e *task
	if n := len(s.free); n > 0 {
		e = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		e = new(task)
	}
	s.seq++
	*e = task{at: t, tie: s.tie.Uint64(), seq: s.seq, kind: k, who: who, epoch: epoch, p: p}
	s.h.push(e)
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
	if e == nil || e.seq != seq || e.idx < 0 {
		return
	}
	s.h.remove(e.idx)
	s.release(e)
}

// next removes the earliest task and advances the clock to it. It fails,
// naming the bound, when the task budget (EventBudget) or the time limit is exceeded,
// and returns nil when the queue is empty.
func (s *scheduler) next() (*task, error) {
	if len(s.h) == 0 {
		return nil, nil
	}
	e := s.h[0].t
	if e.at > s.maxTime {
		return nil, fmt.Errorf("%w: next task due at %v, after the limit %v", ErrTimeLimit, e.at, s.maxTime)
	}
	if s.dispatched >= s.maxTasks {
		return nil, fmt.Errorf("%w: %d tasks dispatched by %v (EventBudget = %d); raise it or shorten the run", ErrEventBudget, s.dispatched, s.clk.Now(), s.maxTasks)
	}
	s.h.remove(0)
	s.clk.AdvanceTo(e.at)
	s.dispatched++
	return e, nil
}

// release returns a dispatched task to the free list.
func (s *scheduler) release(e *task) {
	e.p = nil
	s.free = append(s.free, e)
}
