package sim

import (
	"popsim/clock"
	"popsim/model"
)

// renewFault is an injected renewal at a chosen moment of a lease.
type renewFault struct {
	h      *held
	edge   int
	handle string // the handle at delivery (the after-revive edge keeps it)
	dl     int64  // the lease end it targets (ms)
}

// injectRenewals draws, per delivered message, which renewal edges to
// inject (famRenew):
//   - same deadline: right after delivery, renew for exactly the time left,
//     so the new record's deadline equals the old one (#10276);
//   - at expiry: the consumer holds the message past its deadline (its
//     processing is stretched) and renews so that the request reaches the
//     broker exactly at the deadline;
//   - after revive: a late renewal with the delivery's handle, 1-10 s after
//     the deadline, when the message was revived or acked.
func (s *sim) injectRenewals(c *consumer, h *held) {
	if s.live {
		return
	}
	r := s.faults.rng[famRenew]
	dl := h.handle.NextVisibleTime()
	for e := range s.faults.renew {
		st := &s.faults.renew[e]
		if !st.on || !chance(r, st.ppm) {
			continue
		}
		f := &renewFault{h: h, edge: e, handle: h.hstr, dl: dl}
		at := s.q.now()
		switch e {
		case renewSameDeadline:
			at = at.Add(clock.Duration(r.Int64N(int64(2 * clock.Millisecond))))
		case renewAtExpiry:
			at = max(clock.FromMillis(dl).Add(-2*clock.Millisecond), at)
			h.holdUntil = clock.FromMillis(dl).Add(clock.Duration(r.Int64N(int64(clock.Second))))
		case renewAfterRevive:
			at = max(clock.FromMillis(dl).Add(clock.Second+clock.Duration(r.Int64N(int64(9*clock.Second)))), at)
		}
		s.q.at(at, evFaultRenew, c.idx, c.epoch, f)
	}
}

// faultRenew sends an injected renewal.
func (s *sim) faultRenew(c *consumer, f *renewFault) {
	h := f.h
	// Decided during the safety phase, an injected renewal may still land
	// in the liveness phase: it is the consequence of an earlier fault.
	if f.edge != renewAfterRevive && h.finished {
		return
	}
	hstr, why := h.hstr, changeFault
	if f.edge == renewAfterRevive {
		hstr, why = f.handle, changeFaultStale
	}
	if c.kind == Simple {
		hd, _ := model.ParseReceiptHandle(hstr)
		if hd.IsExpired(c.nowMs(s)) {
			s.cov.hit("expired-handle-rejected")
			e := s.heldEvent(model.EvExpiredLocal, c, h, "renew")
			e.Handle = hstr
			s.emit(e)
			return
		}
	}
	s.cov.hit(s.faults.renew[f.edge].name)
	invisible, _ := c.popTimes()
	inv := invisible.Millis()
	cl := s.newCall(callChange, c)
	cl.h, cl.handle, cl.why, cl.edge = h, hstr, why, f.edge
	cl.invisibleMs = inv
	s.emit(model.Event{Kind: model.EvChangeSent, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: hstr, Deadline: inv, Detail: s.faults.renew[f.edge].name})
	if f.edge == renewAtExpiry {
		s.q.at(max(clock.FromMillis(f.dl), s.q.now()), evNetRequest, c.idx, c.epoch, cl)
		return
	}
	s.send(cl, 0)
}
