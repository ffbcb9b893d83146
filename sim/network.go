package sim

import (
	"fmt"
	"math/bits"
	"unsafe"

	"popsim/clock"
	"popsim/model"
)

// lossKind is a request type with its own loss faults; the order matches
// lossKinds (the configuration's LossSpec).
type lossKind uint8

const (
	lossPop lossKind = iota // pops and receives
	lossAck
	lossChange // changeInvisibleTime
	lossPull
	// lossNone: requests no loss fault applies to (a Kafka consumer's
	// heartbeats to its group coordinator).
	lossNone lossKind = 255
)

// The network between clients and the engine: a request reaches the
// engine after a request latency unless it is lost; the engine's answer
// reaches the client after a response latency unless it is lost; a client
// that set a timeout gives up when it passes.

// send puts a request on the wire: it reaches the engine after a request
// latency; with timeout > 0 the client gives up after it.
func (s *sim) send(r Request, timeout clock.Duration) {
	p, b := wire(r)
	s.q.after(s.reqLat.Sample(s.netRng), tkNetRequest, b.c.idx, b.epoch, p)
	if timeout > 0 {
		b.timer = s.q.after(timeout, tkTimeout, b.c.idx, b.epoch, p)
		b.timerSeq = b.timer.seq
	}
}

// wire is r as the payload of its network tasks, and its common part:
// the request itself, which a payload (the empty interface) holds as it
// is, and its reqBase, which every request type embeds as its first field
// (TestReqBaseFirst), so that it lies at the address the interface holds.
// That is one load, where a switch on the commonest types (a push
// consumer's pops and acks) and a call of base through the interface for
// the others cost 16 instructions a request in the default scenario and
// 25 in the hot topic, whose simple consumers' receives missed both cases.
// The invariants build checks the address against base's.
func wire(r Request) (payload, *reqBase) {
	b := (*reqBase)((*[2]unsafe.Pointer)(unsafe.Pointer(&r))[1]) // the interface's data word
	if invariantsOn && b != r.base() {
		panic(fmt.Sprintf("sim: %T does not embed reqBase first", r))
	}
	return r, b
}

// sendAt puts a request on the wire so that it reaches the engine exactly
// at t (an injected renewal timed to a lease's end); with timeout > 0 the
// client gives up that long after t.
func (s *sim) sendAt(r Request, t clock.Time, timeout ...clock.Duration) {
	b := r.base()
	t = max(t, s.q.now())
	s.q.at(t, tkNetRequest, b.c.idx, b.epoch, r)
	if len(timeout) > 0 && timeout[0] > 0 {
		b.timer = s.q.at(t.Add(timeout[0]), tkTimeout, b.c.idx, b.epoch, r)
		b.timerSeq = b.timer.seq
	}
}

// lost decides whether a request (response=false) or an answer of kind k
// is lost. Faults are off in the liveness phase. Its first test, of
// sim.lossOn, stands for the test of the liveness phase it made among the
// site's: a run whose loss sites are all off (the hot topic) answers
// there, without looking the site up. The site's chance is written out
// (chance's draw, Int64N(ppm): the draw inlines and the constant bound
// needs no power-of-two test), where a call of the bounded draw took
// 10 more instructions a request and answer (BenchmarkRunDefault: 1 408.9
// -> 1 405.8 M instructions outside the runtime, callgrind).
func (s *sim) lost(k lossKind, response bool) bool {
	if !s.lossOn || k == lossNone {
		return false
	}
	st := &s.faults.loss[k][0]
	if response {
		st = &s.faults.loss[k][1]
	}
	if !st.on || st.ppm == 0 {
		return false
	}
	r := s.faults.rng[famLoss]
	hi, lo := bits.Mul64(r.Uint64(), ppm)
	if lo < ppm {
		hi = r.Redraw(hi, lo, ppm)
	}
	if int64(hi) >= st.ppm {
		return false
	}
	s.cov.hit(st.name)
	return true
}

// atEngine is a request arriving at the engine. A request from a client
// incarnation that has crashed meanwhile arrives on a closed connection and
// is dropped: a broker does not serve (or park) a dead channel.
func (s *sim) atEngine(r Request) {
	liveReq(r, "the network")
	_, b := wire(r)
	switch {
	case b.epoch != b.c.epoch:
		s.lostOnWay(r, model.RClientGone)
	case s.lost(b.loss, false):
		s.lostOnWay(r, model.RRequest)
	case len(s.brks) > 0:
		s.brks[b.broker].request(r) // it waits for a thread and a core; the broker recycles it
		return
	default:
		s.eng.Serve(s.q.now(), r, &s.out)
		s.settle(&s.out)
	}
	// nothing refers to it once it was served; the usual requests, an ack
	// and a pop or receive (its client recycles it), are told by their
	// concrete type (asserting recyclable looks it up in the runtime's
	// per-site cache)
	switch r := r.(type) {
	case *ackReq:
		r.recycle(s)
	case *popReq, *receiveReq:
	case recyclable:
		r.recycle(s)
	}
}

// lostOnWay traces r lost before the engine had it (why: its client is
// gone, or the request was lost); a renewal's handle is pinned no more
// (pins.go), as the engine serves it never.
func (s *sim) lostOnWay(r Request, why model.Reason) {
	s.traceLost(r, why)
	if cr, ok := r.(*changeReq); ok {
		s.pins.drop(&cr.pin)
	}
}

// liveReq panics, with the invariants build tag, when r is a request its
// client recycled (a push consumer's pop, livePop, or batch ack).
func liveReq(r Request, where string) {
	if !invariantsOn {
		return
	}
	switch r := r.(type) {
	case *popReq:
		livePop(r, where)
	case *batchAckReq:
		if r.freed {
			panic("sim: a recycled batch ack used by " + where)
		}
	}
}

// recyclable is a request that nothing refers to once the engine served
// it (an ack: no answer goes back, no timer), so it can be reused.
type recyclable interface{ recycle(s *sim) }

// traceLost traces the loss of r or its answer, once: its own event, then
// those of what it carried (a Kafka ShareFetch's acknowledgements). The
// request writes its event in the tracer's slot (sim.event; lost traces
// nothing itself), where an event of its own, handed to lost through the
// interface, was allocated on the heap.
func (s *sim) traceLost(r Request, why model.Reason) {
	b := r.base()
	if b.reported {
		return
	}
	b.reported = true
	e := s.event(0)
	e.Client = b.c.idx
	if r.lost(e, why) {
		s.emitSlot()
	}
	if cr, ok := r.(carrier); ok {
		cr.lostMore(s, why)
	}
}

// carrier is a request that carries acknowledgements besides its own
// purpose (a Kafka ShareFetch, a ShareAcknowledge): their loss is traced
// after the request's own.
type carrier interface {
	lostMore(s *sim, why model.Reason)
}

// respond sends the engine's answer back: it is lost, or it reaches the
// client after a response latency (when the client waits for it).
func (s *sim) respond(r Request) {
	liveReq(r, "an answer")
	p, b := wire(r)
	if s.lost(b.loss, true) {
		s.traceLost(r, model.RResponse)
		return
	}
	if b.reply {
		s.q.after(s.respLat.Sample(s.netRng), tkNetResponse, b.c.idx, b.epoch, p)
	}
}

// atClient is an answer arriving at its client. A push consumer's pop,
// the commonest answer, goes to popResponse directly, where the client's
// reply took a dynamic call and a type switch (BenchmarkRunDefault:
// 1 399.8 -> 1 398.6 M instructions outside the runtime, callgrind; hot
// topic, whose receives pay the one type test, 577.67 -> 577.73 M).
func (s *sim) atClient(t *task) {
	r := request(t.p)
	liveReq(r, "an answer's arrival")
	_, b := wire(r)
	c := b.c
	if b.epoch != c.epoch || !c.alive {
		s.traceLost(r, model.RClientGone)
		return
	}
	if s.q.now() < c.pauseUntil {
		s.q.at(c.pauseUntil, t.kind, t.who, t.epoch, t.p)
		return
	}
	if b.done {
		s.lateAnswer(r)
		return
	}
	b.done = true
	// A timeout task still pending is cancelled and forgotten (timer
	// nil). One a pause moved (clientTask re-schedules a client's tasks
	// at the pause's end) is no longer the one timer names and cannot be
	// cancelled: it fires, finds r done and does nothing, but it still
	// refers to r, so timer stays set and r must not be reused
	// (recyclePop).
	if t := b.timer; t != nil && t.seq == b.timerSeq && t.queued() {
		s.q.cancel(t, b.timerSeq)
		b.timer = nil
	}
	if pr, ok := r.(*popReq); ok { // only a push consumer makes pops
		c.cl.(*pushConsumer).popResponse(s, pr)
		return
	}
	c.cl.reply(s, r)
}

// lateAnswer is an answer reaching a client that gave up on it.
func (s *sim) lateAnswer(r Request) {
	e := s.event(0)
	e.Client = r.base().c.idx
	if r.lost(e, model.RLate) {
		s.cov.hit("late-response")
		s.emitSlot()
	}
}

// timeout is the client giving up on a request it has no answer for.
func (s *sim) timeout(c *consumer, r Request) {
	liveReq(r, "a timeout")
	b := r.base()
	if b.done {
		return
	}
	b.done = true
	s.cov.hit("client-timeout")
	c.cl.timeout(s, r)
}
