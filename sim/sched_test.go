package sim

import (
	"errors"
	"math/rand/v2"
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
	h := taskHeap{}
	a := &task{at: 5, tie: 9, seq: 2}
	b := &task{at: 5, tie: 9, seq: 1}
	c := &task{at: 5, tie: 3, seq: 3}
	h = append(h, entryOf(a), entryOf(b), entryOf(c))
	if !h.Less(1, 0) || h.Less(0, 1) {
		t.Fatal("equal time and tie: the lower sequence number must come first")
	}
	if !h.Less(2, 1) {
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
// tie-break, sequence) comes out, whatever shape the heap has, and every
// pending task knows its position in the heap.
func TestSchedulerMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := 0; round < 20; round++ {
		s := newScheduler(clock.Epoch, newStream(uint64(round), streamTie), 1<<30, clock.Epoch.Add(clock.Hour))
		type ref struct {
			e   *task
			seq uint64
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
				pending = append(pending, ref{e, e.seq})
			case op < 7: // cancel a pending task (and, harmlessly, a stale one)
				k := r.IntN(len(pending))
				s.cancel(pending[k].e, pending[k].seq)
				s.cancel(pending[k].e, pending[k].seq)
				pending = append(pending[:k], pending[k+1:]...)
			default:
				best := 0
				for k := range pending {
					a, b := pending[k].e, pending[best].e
					if entryLess(&heapEntry{at: a.at, t: a}, &heapEntry{at: b.at, t: b}) {
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
			if len(s.h) != len(pending) {
				t.Fatalf("round %d step %d: heap holds %d tasks, %d pending", round, step, len(s.h), len(pending))
			}
			for i := range s.h {
				if s.h[i].t.idx != i || (i > 0 && entryLess(&s.h[i], &s.h[(i-1)/heapArity])) {
					t.Fatalf("round %d step %d: heap position %d is out of order or misplaced", round, step, i)
				}
			}
		}
	}
}
