package check

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// Options configure a Checker.
type Options struct {
	Seed   uint64
	Replay string // the command that replays this run, copied into every violation
	// WakeupSlack is how long a message that became visible may wait while a
	// matching pop request is suspended (default 100ms when 0).
	WakeupSlack clock.Duration
	// MaxViolations caps the violations kept per invariant (default 100 when
	// 0). The rest are counted in Report.Suppressed, never dropped silently.
	MaxViolations int
}

// DefaultWakeupSlack is Options.WakeupSlack when it is 0.
const DefaultWakeupSlack = 100 * clock.Millisecond

// DefaultMaxViolations is Options.MaxViolations when it is 0.
const DefaultMaxViolations = 100

// Final is what the simulator knows at the end of the liveness phase.
type Final struct {
	CommitLag []QueueLag // per group/topic/queue: maxOffset - commitOffset at the end of the liveness phase
	Drained   bool       // the simulator reached quiescence within its drain budget
}

// QueueLag is one queue's consumer lag.
type QueueLag struct {
	Group, Topic string
	Queue        int32
	Lag          int64
}

// Report is the ledger and every violation. Produced = Acked + DLQ +
// Dropped + Lost always holds.
type Report struct {
	Produced, Acked, DLQ, Dropped, Lost, Deliveries, Duplicates int64
	DuplicatesByCause, DroppedByPolicy                          map[string]int64
	Violations                                                  []model.Violation

	// Redeliveries counts deliveries after a message's first, by cause
	// (duplicates are the redeliveries the business logic saw twice).
	Redeliveries        int64
	RedeliveriesByCause map[string]int64
	// Suppressed counts violations beyond Options.MaxViolations, by invariant.
	Suppressed map[string]int64
	// PeakTracked is the largest number of messages held in full at once
	// (settled messages are kept only as small tombstones).
	PeakTracked int
}

// Checker is the at-least-once ledger of one consumer group. It reads the
// trace and owns no simulator state. Not safe for concurrent use.
type Checker struct {
	opt Options
	// keys holds every UNIQ_KEY seen: its live entry, or its tombstone's
	// index in tombSlab (one map, so a new key costs one lookup and a
	// forget no insert). live counts the live entries. A tombstone's
	// locations live in tombLocs (append-only), tombFree lists slab slots
	// inflate emptied.
	keys     map[string]keyRef
	live     int
	tombSlab slab[tomb]
	tombLocs slab[tombLoc]
	tombFree []int32
	restarts []int64 // times (ms) of the broker restarts, ascending
	// crashes holds, per client, the Seq of every EvCrash, ascending.
	crashes map[int32][]int64
	// rebalances holds, per queue, the Seq of its latest EvRebalance.
	rebalances map[pullQueue]int64
	asks       map[int32]popAsk // the latest pop request per client
	lostPops   []lostPop
	wake       wakeup
	rep        Report

	viol   []model.Violation
	perInv map[string]int

	lastSeq     int64
	lastAt      clock.Time
	seen        bool
	done        bool
	sweep       []*msgState     // settled messages waiting to be forgotten
	histFree    [][]model.Event // history buffers of forgotten messages, for reuse
	msgFree     []*msgState     // forgotten entries no list points at, for reuse
	sinceSweep  int
	sweepPeriod int
}

// New returns a Checker.
func New(o Options) *Checker {
	if o.WakeupSlack == 0 {
		o.WakeupSlack = DefaultWakeupSlack
	}
	if o.MaxViolations <= 0 {
		o.MaxViolations = DefaultMaxViolations
	}
	return &Checker{
		opt:         o,
		keys:        map[string]keyRef{},
		crashes:     map[int32][]int64{},
		rebalances:  map[pullQueue]int64{},
		asks:        map[int32]popAsk{},
		wake:        newWakeup(o.WakeupSlack),
		perInv:      map[string]int{},
		sweepPeriod: 4096,
		rep: Report{
			DuplicatesByCause:   map[string]int64{},
			DroppedByPolicy:     map[string]int64{},
			RedeliveriesByCause: map[string]int64{},
			Suppressed:          map[string]int64{},
		},
	}
}

// Observe takes every trace event, in order. Safety invariants are checked
// here, at the event that breaks them.
func (c *Checker) Observe(e *model.Event) {
	if c.done {
		panic("check: Observe after Finish")
	}
	c.checkOrder(e)
	c.wake.expire(c, e.At)
	c.dispatch(e)
	c.lastSeq, c.lastAt, c.seen = e.Seq, e.At, true
	if c.live > c.rep.PeakTracked {
		c.rep.PeakTracked = c.live
	}
	if c.sinceSweep++; c.sinceSweep >= c.sweepPeriod {
		c.runSweep(e.At.Millis())
	}
}

func (c *Checker) checkOrder(e *model.Event) {
	if !c.seen {
		return
	}
	if e.Seq <= c.lastSeq || e.At < c.lastAt {
		c.violate(InvTraceOrder, e.Seq, nil, fmt.Sprintf("event #%d at %v follows event #%d at %v: sequence numbers must grow and time must not go back", e.Seq, e.At, c.lastSeq, c.lastAt))
	}
}

// dispatch is the one switch over event kinds. A FIFO order check would
// hook into onDeliver (per queue: the offsets handed out must not pass an
// un-acked offset of the same queue) with its state next to the ledger's.
func (c *Checker) dispatch(e *model.Event) {
	switch e.Kind {
	case model.EvProduce:
		c.onProduce(e)
	case model.EvPopRequest, model.EvPopSuspended, model.EvPopResponse, model.EvPopLost:
		c.wake.onPop(e)
		switch e.Kind {
		case model.EvPopRequest:
			c.onPopAsked(e)
		case model.EvPopResponse:
			c.onPopAnswered(e)
		case model.EvPopLost:
			c.onPopLost(e)
		}
	case model.EvDeliver:
		c.onDeliver(e)
	case model.EvConsumeStart, model.EvConsumeEnd, model.EvExpiredLocal:
		c.onConsume(e)
	case model.EvAckSent, model.EvAckLost:
		c.onAckSentOrLost(e)
	case model.EvAckAccepted, model.EvAckResponseLost:
		c.onAckDone(e)
	case model.EvChangeSent, model.EvChangeLost:
		c.onChangeSentOrLost(e)
	case model.EvChangeAccepted:
		c.onChangeAccepted(e)
	case model.EvRevive:
		c.onRevive(e)
	case model.EvReviveRetried:
		c.onReviveRetried(e)
	case model.EvReviveSkipped, model.EvReviveDropped:
		c.onReviveGone(e)
	case model.EvDLQ, model.EvDrop:
		c.onSettleEvent(e)
	case model.EvCrash:
		c.crashes[e.Client] = append(c.crashes[e.Client], e.Seq)
		c.onCrashAsk(e)
		c.wake.forgetClient(e.Client)
	case model.EvRebalance:
		c.rebalances[pullQueue{e.Topic, e.Queue}] = e.Seq
	case model.EvPause, model.EvResume:
		c.wake.pause(e.Client, e.Kind == model.EvPause)
	case model.EvBrokerRestart:
		c.restarts = append(c.restarts, e.At.Millis())
		c.wake.reset()
	default:
		// Producer failures, pauses, phases, cache flushes and pull-consumer
		// events carry no ledger obligation; they appear in message
		// histories when they name a message.
		if e.Msg != "" {
			c.touch(e, false)
		}
	}
}

// Violations returns the violations found so far.
func (c *Checker) Violations() []model.Violation {
	return append([]model.Violation(nil), c.viol...)
}

// Tracked is the number of messages held in full (not as tombstones).
func (c *Checker) Tracked() int { return c.live }

// Finish runs the liveness checks and closes the ledger. The Checker takes
// no more events afterwards.
func (c *Checker) Finish(f Final) Report {
	if c.done {
		panic("check: Finish called twice")
	}
	c.done = true
	if !f.Drained {
		c.violate(InvNoDrain, c.lastSeq, nil, fmt.Sprintf("the simulator did not reach quiescence within its drain budget (trace ends at %v, event #%d)", c.lastAt, c.lastSeq))
	}
	for _, q := range f.CommitLag {
		if q.Lag != 0 {
			c.violate(InvCommitLag, c.lastSeq, nil, fmt.Sprintf("group %s topic %s queue %d: maxOffset - commitOffset = %d after the liveness phase, want 0 (the commit offset does not converge once the consumers drained)", q.Group, q.Topic, q.Queue, q.Lag))
		}
	}
	c.finishLedger()
	r := c.rep
	r.Violations = c.Violations()
	return r
}
