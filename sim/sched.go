package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"popsim/clock"
)

// Bounds the scheduler enforces. Hitting one is an error that names it.
var (
	// ErrEventBudget: more events were dispatched than Config.EventBudget.
	ErrEventBudget = errors.New("sim: event budget exhausted")
	// ErrTimeLimit: an event was due after the scheduler's virtual-time limit.
	ErrTimeLimit = errors.New("sim: virtual-time limit reached")
)

// evKind is the type of a scheduler event (internal; trace events are
// model.Event).
type evKind uint8

const (
	evStop evKind = iota
	evLiveness
	evDrainCheck
	evSample
	evProduce // a producer sends its next message
	evPut     // the message reaches the broker
	evRevive
	evCacheCleanup
	evPollTick
	evNetRequest  // a request reaches the broker
	evNetResponse // a response reaches its client
	evTimeout     // a client gives up on a request
	evHoldCheck   // the broker's pull hold check (PullRequestHoldService)
	evPoll        // a consumer (re)issues its pop, receive or pull
	evConsumeEnd
	evRenew      // simple consumer auto-renew
	evFaultRenew // an injected renewal at a chosen moment
	evLocalRetry // pull consumer re-consumes a failed message
	evCommit     // pull consumer persists its offsets
	evCrash
	evRestart
	evPause
	evResume
	evSlow
	evBrokerRestart
	evScripted // tests: run a function at a virtual time
)

// event is one scheduled occurrence. who is a consumer or producer index,
// epoch the consumer incarnation it was scheduled for; p carries the
// payload (always a pointer, so storing it in the interface does not
// allocate).
type event struct {
	at    clock.Time
	tie   uint64
	seq   uint64
	kind  evKind
	who   int32
	epoch uint32
	p     any
	idx   int // position in the heap, -1 once dispatched or cancelled
}

// eventHeap orders events by (virtual time, seeded tie-break, sequence).
// The tie-break shuffles simultaneous events deliberately, the sequence
// number makes the order total, so the dispatch order does not depend on
// how the heap arranges its array. It is a binary min-heap written out for
// *event (container/heap's interface calls cost more than the comparisons);
// each event knows its position (idx) so that it can be cancelled.
type eventHeap []*event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return evLess(h[i], h[j]) }

func evLess(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

// push adds e.
func (h *eventHeap) push(e *event) {
	*h = append(*h, e)
	h.up(len(*h)-1, e)
}

// remove takes out the event at position i and returns it.
func (h *eventHeap) remove(i int) *event {
	old := *h
	n := len(old) - 1
	e := old[i]
	last := old[n]
	old[n] = nil
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
func (h eventHeap) up(j int, e *event) {
	for j > 0 {
		i := (j - 1) / 2
		p := h[i]
		if !evLess(e, p) {
			break
		}
		h[j], p.idx = p, j
		j = i
	}
	h[j], e.idx = e, j
}

// down moves e, to be placed at hole i, towards the leaves; it reports
// whether e went down.
func (h eventHeap) down(i int, e *event) bool {
	i0, n := i, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && evLess(h[r], h[c]) {
			c = r
		}
		if !evLess(h[c], e) {
			break
		}
		h[i], h[c].idx = h[c], i
		i = c
	}
	h[i], e.idx = e, i
	return i > i0
}

// scheduler is the simulator's only loop state: the event queue and the
// virtual clock, which nothing else advances.
type scheduler struct {
	clk        *clock.Virtual
	h          eventHeap
	tie        *rand.Rand
	seq        uint64
	dispatched int64
	maxEvents  int64
	maxTime    clock.Time
	free       []*event
}

func newScheduler(start clock.Time, tie *rand.Rand, maxEvents int64, maxTime clock.Time) *scheduler {
	return &scheduler{clk: clock.NewVirtual(start), tie: tie, maxEvents: maxEvents, maxTime: maxTime}
}

func (s *scheduler) now() clock.Time { return s.clk.Now() }

// at schedules an event and returns it (for cancel). Scheduling in the past
// is a simulator bug.
func (s *scheduler) at(t clock.Time, k evKind, who int32, epoch uint32, p any) *event {
	if t < s.clk.Now() {
		panic(fmt.Sprintf("sim: event %d scheduled at %v, before now %v", k, t, s.clk.Now()))
	}
	var e *event
	if n := len(s.free); n > 0 {
		e = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		e = new(event)
	}
	s.seq++
	*e = event{at: t, tie: s.tie.Uint64(), seq: s.seq, kind: k, who: who, epoch: epoch, p: p}
	s.h.push(e)
	return e
}

// after schedules an event d from now.
func (s *scheduler) after(d clock.Duration, k evKind, who int32, epoch uint32, p any) *event {
	return s.at(s.clk.Now().Add(d), k, who, epoch, p)
}

// cancel removes a pending event. seq is the sequence number the event had
// when it was scheduled: events are recycled, so a stale pointer whose
// event already fired (or was reused) is recognised and left alone.
func (s *scheduler) cancel(e *event, seq uint64) {
	if e == nil || e.seq != seq || e.idx < 0 {
		return
	}
	s.h.remove(e.idx)
	s.release(e)
}

// next removes the earliest event and advances the clock to it. It fails,
// naming the bound, when the event budget or the time limit is exceeded,
// and returns nil when the queue is empty.
func (s *scheduler) next() (*event, error) {
	if len(s.h) == 0 {
		return nil, nil
	}
	e := s.h[0]
	if e.at > s.maxTime {
		return nil, fmt.Errorf("%w: next event due at %v, after the limit %v", ErrTimeLimit, e.at, s.maxTime)
	}
	if s.dispatched >= s.maxEvents {
		return nil, fmt.Errorf("%w: %d events dispatched by %v (EventBudget = %d); raise it or shorten the run", ErrEventBudget, s.dispatched, s.clk.Now(), s.maxEvents)
	}
	s.h.remove(0)
	s.clk.AdvanceTo(e.at)
	s.dispatched++
	return e, nil
}

// release returns a dispatched event to the free list.
func (s *scheduler) release(e *event) {
	e.p = nil
	s.free = append(s.free, e)
}
