package sim

import (
	"math/bits"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// renewFault is an injected renewal at a chosen moment of a lease. The
// client's kind sends it (timer): POP clients a changeInvisibleTime, the
// Kafka share consumer a RENEW, the SQS consumer a ChangeMessageVisibility.
type renewFault struct {
	w      work
	edge   int
	handle model.ReceiptHandle // POP: the handle at delivery (the after-revive edge keeps it)
	lease  model.LeaseID       // the lease at delivery
	dl     clock.Time          // the lease end it targets
	pin    int32               // its handle's pin until it fires (pins.go)
}

// injectRenewals draws, per delivered message, which renewal edges to
// inject (famRenew):
//   - same deadline: right after delivery, renew for exactly the time left,
//     so the new record's deadline equals the old one (#10276);
//   - at expiry: the consumer holds the message past its deadline (its
//     processing is stretched) and renews so that the request reaches the
//     engine exactly at the deadline;
//   - after revive: a late renewal with the delivery's handle, 1-10 s after
//     the deadline, when the message was revived or acked.
//
// A run whose renewal sites are all off (sim.renewOn false: the hot
// topic) returns at once, where it tested each site (hot-topic-500x500:
// 78 instructions a delivered message). Each site's chance is written out
// as in lost, and the rare injection is a call of its own, out of the
// loop (BenchmarkRunDefault: 1 405.8 -> 1 403.7 M instructions outside
// the runtime, callgrind). The test of renewOn inlines, and the sites'
// draws are a call of their own (drawRenewals): a run without renewal
// faults pays no call (hot topic: 576.5 -> 576.1 M; default 1 392.6 ->
// 1 392.4 M). lost's first test, inlined the same way, cost the default
// scenario 2.6 M more in its two callers than it saved the hot topic (1.7).
func (s *sim) injectRenewals(c *consumer, w work, dl clock.Time) {
	if s.renewOn {
		s.drawRenewals(c, w, dl)
	}
}

// drawRenewals is injectRenewals while renewal faults may fire. The
// sites are taken once (sites), not through s.faults at each test
// (BenchmarkRunDefault: drawRenewals 5.58 -> 4.92 M instructions,
// callgrind).
func (s *sim) drawRenewals(c *consumer, w work, dl clock.Time) {
	f := s.faults
	r, sites := f.rng[famRenew], &f.renew
	for e := range sites {
		st := &sites[e]
		if !st.on {
			continue
		}
		hi, lo := bits.Mul64(r.Uint64(), ppm) // chance, written out (lost)
		if lo < ppm {
			hi = r.Redraw(hi, lo, ppm)
		}
		if int64(hi) < st.ppm {
			s.injectRenewal(c, w, dl, e)
		}
	}
}

// injectRenewal injects a renewal fault of edge e on w, whose chance came
// up (injectRenewals).
func (s *sim) injectRenewal(c *consumer, w work, dl clock.Time, e int) {
	r, h := s.faults.rng[famRenew], w.base()
	h.pinned = true // the fault's task refers to w
	f := &renewFault{w: w, edge: e, lease: h.lease, dl: dl}
	if ph, ok := w.(*popHeld); ok {
		f.handle = ph.handle
		s.pins.add(&f.pin, h.handlePin(pinFault))
	}
	at := s.q.now()
	switch e {
	case renewSameDeadline:
		at = at.Add(clock.Duration(r.Int64N(int64(2 * clock.Millisecond))))
	case renewAtExpiry:
		at = max(dl.Add(-2*clock.Millisecond), at)
		h.holdUntil = dl.Add(clock.Duration(r.Int64N(int64(clock.Second))))
	case renewAfterRevive:
		at = max(dl.Add(clock.Second+clock.Duration(r.Int64N(int64(9*clock.Second)))), at)
	}
	s.q.at(at, tkClient, c.idx, c.epoch, f)
}

// faultRenew sends an injected renewal. A simple consumer's goes through
// its proxy, which may reject an expired handle.
func (s *sim) faultRenew(c *consumer, f *renewFault) {
	h := f.w.(*popHeld)
	s.pins.drop(&f.pin) // the renewal it sends, if any, pins the handle from here
	// Decided during the safety phase, an injected renewal may still land
	// in the liveness phase: it is the consequence of an earlier fault.
	if f.edge != renewAfterRevive && h.finished {
		return
	}
	handle, lease, why := h.handle, h.lease, changeFault
	if f.edge == renewAfterRevive {
		handle, lease, why = f.handle, f.lease, changeFaultStale
	}
	invisible := s.invisibleOf(c)
	req := pop.NewChangeInvisibleTimeRequest(c.g.name, h.msg.Topic, &handle, invisible)
	var entry uint64
	if sc, ok := c.cl.(*simpleConsumer); ok {
		r, t, ok := sc.change(s, h, handle, lease, invisible)
		if !ok {
			return
		}
		req, lease, entry = r, t.Lease, t.Entry
	}
	s.cov.hit(s.faults.renew[f.edge].name)
	r := s.newChange(c, h, h.msg.ID, req, lease, why, changeReason(why, f.edge))
	r.renewal = entry
	r.keepDeadline = f.edge == renewSameDeadline
	if f.edge == renewAtExpiry {
		s.sendAt(r, f.dl)
		return
	}
	s.send(r, 0)
}

// invisibleOf is the invisible time a POP consumer pops with.
func (s *sim) invisibleOf(c *consumer) clock.Duration {
	switch set := c.spec.Settings.(type) {
	case *SimpleSettings:
		return set.InvisibleTime
	case *PopPushSettings:
		return set.InvisibleTime
	}
	panic("sim: a renewal by a consumer that does not pop")
}
