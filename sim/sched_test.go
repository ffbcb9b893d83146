package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/clock"
)

func TestSchedulerOrdersByTimeThenTieThenSeq(t *testing.T) {
	s := newScheduler(clock.Epoch, newStream(7, streamTie), 1000, clock.Epoch.Add(clock.Hour))
	for i := 0; i < 50; i++ {
		s.after(clock.Duration(i%5)*clock.Millisecond, tkScripted, int32(i), 0, nil)
	}
	var prev *task
	n := 0
	for {
		e, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		n++
		if prev != nil {
			if e.at < prev.at {
				t.Fatalf("task at %v dispatched after one at %v", e.at, prev.at)
			}
			if e.at == prev.at && e.tie < prev.tie {
				t.Fatalf("same-time tasks out of tie-break order: %d after %d", e.tie, prev.tie)
			}
		}
		if s.now() != e.at {
			t.Fatalf("clock %v, task at %v: the scheduler must advance the clock to the task", s.now(), e.at)
		}
		c := *e
		prev = &c
		s.release(e)
	}
	if n != 50 {
		t.Fatalf("dispatched %d tasks, want 50", n)
	}
}

// With equal tie-breaks the sequence number decides: scheduling order.
func TestSchedulerEqualTieUsesSequence(t *testing.T) {
	var h taskHeap
	a := entryOf(&task{at: 5, tie: 9, seq: 2})
	b := entryOf(&task{at: 5, tie: 9, seq: 1})
	c := entryOf(&task{at: 5, tie: 3, seq: 3})
	if !h.less(&b, &a) || h.less(&a, &b) {
		t.Fatal("equal time and tie: the lower sequence number must come first")
	}
	if !h.less(&c, &b) {
		t.Fatal("equal time: the lower tie-break must come first, whatever the sequence")
	}
}

func TestSchedulerSameSeedSameOrder(t *testing.T) {
	order := func(seed uint64) []int32 {
		s := newScheduler(clock.Epoch, newStream(seed, streamTie), 1000, clock.Epoch.Add(clock.Hour))
		for i := 0; i < 20; i++ {
			s.after(clock.Millisecond, tkScripted, int32(i), 0, nil)
		}
		var out []int32
		for e, _ := s.next(); e != nil; e, _ = s.next() {
			out = append(out, e.who)
		}
		return out
	}
	a, b, c := order(1), order(1), order(2)
	same := func(x, y []int32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatalf("same seed, different order: %v vs %v", a, b)
	}
	if same(a, c) {
		t.Fatalf("seeds 1 and 2 ordered 20 simultaneous tasks identically (%v): the tie-break is not seeded", a)
	}
}

func TestSchedulerTaskBudget(t *testing.T) {
	s := newScheduler(clock.Epoch, newStream(1, streamTie), 3, clock.Epoch.Add(clock.Hour))
	for i := 0; i < 5; i++ {
		s.after(clock.Duration(i), tkScripted, 0, 0, nil)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.next(); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	_, err := s.next()
	if !errors.Is(err, ErrEventBudget) {
		t.Fatalf("the 4th task with a budget of 3: err = %v, want ErrEventBudget", err)
	}
}

func TestSchedulerTimeLimit(t *testing.T) {
	s := newScheduler(clock.Epoch, newStream(1, streamTie), 100, clock.Epoch.Add(clock.Second))
	s.after(2*clock.Second, tkScripted, 0, 0, nil)
	if _, err := s.next(); !errors.Is(err, ErrTimeLimit) {
		t.Fatalf("task past the limit: err = %v, want ErrTimeLimit", err)
	}
}

func TestSchedulerCancel(t *testing.T) {
	s := newScheduler(clock.Epoch, newStream(1, streamTie), 100, clock.Epoch.Add(clock.Hour))
	a := s.after(clock.Second, tkScripted, 1, 0, nil)
	aSeq := a.seq
	s.after(2*clock.Second, tkScripted, 2, 0, nil)
	s.cancel(a, aSeq)
	e, _ := s.next()
	if e == nil || e.who != 2 {
		t.Fatalf("after cancelling task 1, dispatched %+v, want task 2", e)
	}
	s.release(e)
	// a was recycled into a new task: a stale cancel must not touch it.
	b := s.after(clock.Second, tkScripted, 3, 0, nil)
	s.cancel(a, aSeq)
	if e, _ := s.next(); e != b {
		t.Fatalf("a stale cancel removed a recycled task")
	}
}

// TestStreamIsMathRandPCG checks that every stream draws what rand.New
// over math/rand/v2's PCG of its seed words draws, for the bounded draws
// the simulator makes (a run's trace rests on these values).
func TestStreamIsMathRandPCG(t *testing.T) {
	for _, id := range []uint64{streamTie, streamNetwork, streamFault0 + 3, streamConsumer + 7} {
		for seed := uint64(0); seed < 20; seed++ {
			got, want := newStream(seed, id), rand.New(rand.NewPCG(streamSeeds(seed, id)))
			for i := range 200 {
				var g, w int64
				switch i % 4 {
				case 0:
					g, w = int64(got.Uint64()), int64(want.Uint64())
				case 1:
					g, w = got.Int64N(1_000_000), want.Int64N(1_000_000)
				case 2:
					g, w = int64(got.IntN(3+i)), int64(want.IntN(3+i))
				case 3:
					g, w = int64(got.Float64()*(1<<53)), int64(want.Float64()*(1<<53))
				}
				if g != w {
					t.Fatalf("stream %d of seed %d, draw %d: got %d, want %d", id, seed, i, g, w)
				}
			}
		}
	}
}

func TestStreamsAreIndependent(t *testing.T) {
	a, b := newStream(1, streamNetwork), newStream(1, streamTie)
	if a.Uint64() == b.Uint64() {
		t.Fatal("two streams of one seed start with the same draw")
	}
	c, d := newStream(1, streamNetwork), newStream(1, streamNetwork)
	for i := 0; i < 10; i++ {
		if c.Uint64() != d.Uint64() {
			t.Fatal("one stream of one seed is not reproducible")
		}
	}
}

// TestSchedulerMatchesReference drives the scheduler with random
// schedules, cancellations and dispatches and checks every dispatch
// against a plain list of the pending tasks: the earliest by (time,
// tie-break, sequence) comes out, whatever shape the queue has, and the
// queue keeps its order (checkQueue). The list's tie-breaks are the draws
// of math/rand/v2's PCG over the tie stream's seed words, in scheduling
// order.
func TestSchedulerMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := 0; round < 20; round++ {
		s := newScheduler(clock.Epoch, newStream(uint64(round), streamTie), 1<<30, clock.Epoch.Add(clock.Hour))
		ties := rand.NewPCG(streamSeeds(uint64(round), streamTie))
		type ref struct {
			e   *task
			seq uint64
			key task // at, tie and seq
		}
		var pending []ref
		for step := 0; step < 3000; step++ {
			switch op := r.IntN(10); {
			case op < 5 || len(pending) == 0: // schedule, often at the same instant as others
				d := clock.Duration(r.IntN(4)) * clock.Millisecond
				if r.IntN(4) == 0 {
					d = clock.Duration(r.Int64N(int64(clock.Second)))
				}
				e := s.after(d, tkScripted, int32(step), 0, nil)
				pending = append(pending, ref{e, e.seq, task{at: e.at, tie: ties.Uint64(), seq: e.seq}})
			case op < 7: // cancel a pending task (and, harmlessly, a stale one)
				k := r.IntN(len(pending))
				s.cancel(pending[k].e, pending[k].seq)
				s.cancel(pending[k].e, pending[k].seq)
				pending = append(pending[:k], pending[k+1:]...)
			default:
				best := 0
				for k := range pending {
					if refLess(&pending[k].key, &pending[best].key) {
						best = k
					}
				}
				want := pending[best].e
				got, err := s.next()
				if err != nil || got != want {
					t.Fatalf("round %d step %d: next() = %p (%v), want %p", round, step, got, err, want)
				}
				pending = append(pending[:best], pending[best+1:]...)
				s.release(got)
			}
			if s.q.len() != len(pending) {
				t.Fatalf("round %d step %d: the queue holds %d tasks, %d pending", round, step, s.q.len(), len(pending))
			}
			if err := checkQueue(&s.q); err != nil {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
		}
	}
}

// checkQueue reports where q breaks its invariants: near a heap whose
// tasks know their positions and are due before the horizon, front a run
// in order whose tasks know they are in it and are due before the horizon,
// far's tasks due at or after it and knowing their positions.
func checkQueue(q *taskQueue) error {
	h := &q.near
	for i := range h.e {
		if i == 0 && h.taken {
			continue // the open slot pop left: its task may be scheduled anew
		}
		x := &h.e[i]
		parent := (i - 1) / heapArity
		if x.t.idx != i || x.at != x.t.at || (i > 0 && !(parent == 0 && h.taken) && refLess(x.t, h.e[parent].t)) {
			return fmt.Errorf("near position %d is out of order or misplaced", i)
		}
		if x.at >= q.horizon {
			return fmt.Errorf("near holds a task due at %v, not before the horizon %v", x.at, q.horizon)
		}
	}
	f := &q.front
	if f.n < 0 || f.n > frontCap || f.lo < 0 || f.lo+f.n > frontSpan {
		return fmt.Errorf("front holds %d tasks from slot %d", f.n, f.lo)
	}
	for k := range f.n { // the earliest first
		s := f.lo + f.n - 1 - k
		if x := f.t[s]; x.idx != inFront || f.at[s] != x.at || (k > 0 && !refLess(f.t[s+1], x)) {
			return fmt.Errorf("front's task %d (slot %d) is out of order or misplaced", k, s)
		}
		if f.at[s] >= q.horizon {
			return fmt.Errorf("front holds a task due at %v, not before the horizon %v", f.at[s], q.horizon)
		}
	}
	for i, e := range q.far {
		if e.idx != farIdx(i) || e.at < q.horizon {
			return fmt.Errorf("far position %d holds a task marked %d, due at %v (horizon %v)", i, e.idx, e.at, q.horizon)
		}
	}
	return nil
}

// TestTaskQueueMatchesReference drives task queues with windows of a few
// sizes (a window of 1 moves the horizon at nearly every step) through
// random pushes, removals and pops, and checks every pop against a plain
// list of the waiting tasks and the queue's invariants after each step.
func TestTaskQueueMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, window := range []clock.Duration{1, 3, 50, 1000} {
		for _, soon := range []bool{false, true} {
			testTaskQueue(t, r, window, soon)
		}
	}
}

// testTaskQueue is one run of TestTaskQueueMatchesReference. With soon,
// most tasks are due within 4 of now, the earliest of all, and pushes
// outnumber the rest, so that front fills and hands its latest to near.
func testTaskQueue(t *testing.T, r *rand.Rand, window clock.Duration, soon bool) {
	q := newTaskQueue(0, window)
	var waiting []*task
	seq := uint64(0)
	now := clock.Time(0)
	for step := 0; step < 20000; step++ {
		push := 5
		if soon && step%4000 < 2000 {
			push = 7
		}
		switch op := r.IntN(10); {
		case op < push || len(waiting) == 0:
			seq++
			e := &task{at: now + clock.Time(r.IntN(200)), tie: testTie(r), seq: seq}
			if soon && r.IntN(8) != 0 {
				e.at = now + clock.Time(r.IntN(4))
			}
			if r.IntN(8) == 0 { // a task due much later, as a timeout is
				e.at += 10_000
			}
			q.push(e)
			waiting = append(waiting, e)
		case op < push+2:
			k := r.IntN(len(waiting))
			q.remove(waiting[k])
			if waiting[k].queued() {
				t.Fatalf("window %d step %d: a removed task is still marked queued", window, step)
			}
			waiting = append(waiting[:k], waiting[k+1:]...)
		default:
			best := 0
			for k := range waiting {
				if refLess(waiting[k], waiting[best]) {
					best = k
				}
			}
			if got := q.peek(); got != waiting[best] {
				t.Fatalf("window %d step %d: peek() = %+v, want %+v", window, step, got, waiting[best])
			}
			if q.pop(waiting[best]); waiting[best].queued() {
				t.Fatalf("window %d step %d: pop() left %+v queued", window, step, waiting[best])
			}
			now = waiting[best].at
			waiting = append(waiting[:best], waiting[best+1:]...)
		}
		if q.len() != len(waiting) {
			t.Fatalf("window %d step %d: the queue holds %d tasks, want %d", window, step, q.len(), len(waiting))
		}
		if err := checkQueue(&q); err != nil {
			t.Fatalf("window %d step %d: %v", window, step, err)
		}
	}
	for len(waiting) > 0 { // drain: pops across horizon moves
		waiting = waiting[:len(waiting)-1]
		e := q.peek()
		if e == nil {
			t.Fatalf("window %d: the queue ran empty with %d tasks waiting", window, len(waiting)+1)
		}
		q.pop(e)
	}
	if q.peek() != nil {
		t.Fatalf("window %d: the queue holds a task after all were taken", window)
	}
}

// testTie draws a tie-break for the queue tests: small ones, which tie
// often, so that the sequence number decides, and random ones.
func testTie(r *rand.Rand) uint64 {
	if r.IntN(2) == 0 {
		return uint64(r.IntN(3))
	}
	return r.Uint64()
}

// refLess is the reference order of tasks whose tie-breaks are set: by
// time, tie-break, sequence number.
func refLess(a, b *task) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

// TestRunStopsAtTheTaskBudget checks the loop's own take (sim.loop takes
// its tasks without next): a run past its budget fails with
// ErrEventBudget after exactly EventBudget tasks.
func TestRunStopsAtTheTaskBudget(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EventBudget = 2000
	_, err := Run(cfg, RunOptions{})
	if !errors.Is(err, ErrEventBudget) {
		t.Fatalf("a default run with a budget of 2000 tasks: err = %v, want ErrEventBudget", err)
	}
	if want := "2000 tasks dispatched"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %q, want it to say %q", err, want)
	}
}
