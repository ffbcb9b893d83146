package sim

import (
	"popsim/clock"
	"popsim/model"
)

// Engine is the seam between the simulator's core and a broker
// implementation: the only way the core drives an engine. An engine
// adapter (engine_rocketmq.go for package pop) wraps one engine and turns
// everything each call did into trace events after the engine returns, in
// the contract's order (docs/trace.md), and into effects for the core (a
// request answered, a timer to arm), which the core carries out in order.
//
// Every method takes now (virtual time) and runs to completion; none
// schedules anything itself.
type Engine interface {
	// Start arms the engine's periodic work (effects of kind armTimer).
	Start(now clock.Time, out *Outcome)
	// Store stores producer's message m (m.ID is set) and reports whether
	// the engine took it.
	Store(now clock.Time, producer int32, m *model.Message, out *Outcome) bool
	// Serve serves one request that reached the engine. The engine writes
	// its answer into the request and reports it answered (now, or later
	// from another call when it parks the request for long polling).
	Serve(now clock.Time, r Request, out *Outcome)
	// Tick runs the periodic work of one of the engine's timers, armed by
	// an earlier effect; the work re-arms its timer through out.
	Tick(now clock.Time, timer int32, out *Outcome)
	// Disconnect: a client's connection closed (its process crashed). The
	// engine drops what it held for it; parked requests are never answered.
	Disconnect(now clock.Time, client *consumer, out *Outcome)
	// Restart: the engine loses its volatile state (a broker restart).
	Restart(now clock.Time, out *Outcome)
	// SetFaults hands the engine its fault injection as data, before the
	// calls it applies to; failures come back in the calls' results.
	SetFaults(f EngineFaults)
	// Status reports the engine's in-flight leases and, when positions is
	// true, every queue a group consumes: how far it has consumed and
	// committed (quiescence, the commit trace, the end-of-run lags).
	Status(positions bool, dst []Position) (inFlight int, pos []Position)
	// CheckInvariants is the engine's structural self-check.
	CheckInvariants() error
}

// EngineFaults is the fault injection an engine takes as data. Seed and
// the engine's own write ordinals decide each failure.
type EngineFaults struct {
	Seed uint64
	// RedeliveryWritePPM fails the writes an engine makes to bring a
	// message back (RocketMQ: the retry-topic copies of revive; Kafka: the
	// share coordinator's state writes), in parts per million.
	RedeliveryWritePPM int64
	// DuplicatePPM: an SQS standard receive also returns a copy of a
	// message in flight, in parts per million of receives.
	DuplicatePPM int64
	// LockBusyPPM: a receive finds the engine's lock held by a concurrent
	// request (RocketMQ: the pop's group@topic or queue lock), in parts per
	// million.
	LockBusyPPM int64
	// RedeliveryReadPPM fails the reads an engine makes of a message to
	// bring it back (RocketMQ's checkpoint path: revive's reads), in parts
	// per million; an engine that reads none ignores it.
	RedeliveryReadPPM int64
}

// Position is one queue a group consumes: its end, how far the group has
// consumed it and its commit offset (-1: none).
type Position struct {
	Group, Topic string
	Queue        int32
	Max          int64 // the queue's end (next offset to write)
	Consumed     int64 // the group's read position (-1: none yet)
	Commit       int64 // the group's committed offset (-1: none)
	// Durable is the committed offset that survives a broker restart: the
	// engine never lends a place below it again (-1: none). It trails
	// Commit when the engine's state write failed (Kafka's share-group
	// state) and the checker forgets places only below it.
	Durable int64
}

// Lag is how far the group's read position is behind the queue's end.
func (p *Position) Lag() int64 { return p.Max - max(p.Consumed, 0) }

// CommitLag is how far the commit offset is behind the queue's end.
func (p *Position) CommitLag() int64 { return p.Max - max(p.Commit, 0) }

// Request is a client's request to an engine: the core carries it over
// the network (loss, latency, the client's timeout) and hands it to
// Engine.Serve; the engine writes its answer into it. The concrete types
// belong to the engine adapter and the clients that speak it; the core
// sees only their common part.
type Request interface {
	payload
	base() *reqBase
	// lost fills e with the trace event for the loss of the request (why
	// = request, client-gone) or its answer (response, timeout, late), and
	// reports whether that loss is traced. e is the tracer's slot
	// (sim.event): lost must trace nothing itself.
	lost(e *model.Event, why model.Reason) bool
}

// reqBase is what the core needs of every request.
type reqBase struct {
	c     *consumer
	epoch uint32
	// broker is the broker the request goes to (its index in the route;
	// always 0 with one broker).
	broker int32
	loss   lossKind // which loss faults apply
	// reply: the client waits for the answer (RocketMQ's acks and
	// RECONSUME_LATER renewals are fire and forget: their answer is only
	// traced, or its loss; the SQS client waits to retry).
	reply    bool
	done     bool // the client got the answer or gave up
	reported bool // its loss was already traced
	timer    *task
	timerSeq uint64
}

func (b *reqBase) base() *reqBase { return b }

// Outcome is what an engine call left for the core to do, in order: the
// requests it answered and the timers it wants armed. The core reuses it.
type Outcome struct {
	fx []effect
	// timers are the core's engine timers (sim.timers) once it armed one
	// (armEngineTimer), nil before and in an Outcome of its own: arm
	// leaves out what they already cover.
	timers *[]engineTimer
}

type effect struct {
	r     Request // answered (nil: a timer)
	timer int32
	at    clock.Time
}

// answered reports that r has its answer.
func (o *Outcome) answered(r Request) { o.fx = append(o.fx, effect{r: r}) }

// arm asks for the engine's timer to fire at t (unless it is armed for
// an earlier time already). A timer the core has armed for t or earlier
// is left out here (covered), as armEngineTimer would leave it when the
// effect is carried out: until then it stays armed (only its own task
// disarms it, engineTick, never between an engine call and its effects)
// and its time can only come earlier. Most arms are those: the
// checkpoint path re-arms its tick after every request, the KV path its
// poll expiry after every park.
func (o *Outcome) arm(timer int32, t clock.Time) {
	if o.timers != nil && covered(*o.timers, timer, t) {
		return
	}
	o.fx = append(o.fx, effect{timer: timer, at: t})
}

// covered reports whether timer is armed for t or earlier in ts.
func covered(ts []engineTimer, timer int32, t clock.Time) bool {
	return int(timer) < len(ts) && ts[timer].armed && ts[timer].at <= t
}

// engineTimer is the core's state of one engine timer.
type engineTimer struct {
	armed bool
	at    clock.Time
}

// settle carries out an engine call's effects, in order, and empties out.
// Effects may append more (an answer's loss is traced, a response
// scheduled), so the list is walked by index. Each effect is emptied as
// it is taken, by nil-ing its request, its only pointer: one store in the
// same pass, where clear calls the runtime (memclrHasPointers, ~50
// instructions a settle) and a second pass walks the list again.
func (s *sim) settle(out *Outcome) {
	for i := 0; i < len(out.fx); i++ {
		f := &out.fx[i]
		if r := f.r; r != nil {
			f.r = nil
			s.respond(r)
			continue
		}
		s.armEngineTimer(f.timer, f.at)
	}
	out.fx = out.fx[:0]
}

// armEngineTimer schedules the engine's timer at t, unless an earlier
// firing is already armed (which then supersedes this one). It shows the
// core's outcome the timers (Outcome.arm), which have one armed from
// here on.
func (s *sim) armEngineTimer(id int32, t clock.Time) {
	for int(id) >= len(s.timers) {
		s.timers = append(s.timers, engineTimer{})
	}
	s.out.timers = &s.timers
	tm := &s.timers[id]
	t = max(t, s.q.now())
	if tm.armed && tm.at <= t {
		return
	}
	tm.armed, tm.at = true, t
	s.q.at(t, tkEngine, id, 0, nil)
}

// engineTick runs an engine timer's task unless a later arming superseded
// it.
func (s *sim) engineTick(id int32, at clock.Time) {
	tm := &s.timers[id]
	if !tm.armed || at != tm.at {
		return
	}
	tm.armed = false
	var brk *broker
	if len(s.brks) > 0 {
		brk = s.brks[id/rmqTimers%int32(len(s.brks))] // the cluster's broker-b timers are b×rmqTimers+k
		brk.snapshot()
	}
	s.eng.Tick(s.q.now(), id, &s.out)
	s.settle(&s.out)
	if brk != nil {
		brk.ticked()
	}
}

// engineCounters is an engine that reports its own work counters for the
// run summary (model.Summary.EngineCounters), by name.
type engineCounters interface {
	Counters() map[string]int64
}
