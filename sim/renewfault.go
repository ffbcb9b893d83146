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
//   - same deadline: during the lease, renew for exactly the time left, so
//     the new record's deadline equals the old one (#10276);
//   - at expiry: the renewal reaches the broker exactly at the deadline;
//   - after revive: a late renewal with the delivery's handle, seconds after
//     the deadline, when the message was revived or acked.
func (s *sim) injectRenewals(c *consumer, h *held) {
	if s.live {
		return
	}
	r := s.plan.rng[famRenew]
	dl := h.handle.NextVisibleTime()
	nowMs := s.q.now().Millis()
	for e := range s.plan.renew {
		st := &s.plan.renew[e]
		if !st.on || !chance(r, st.ppm) {
			continue
		}
		f := &renewFault{h: h, edge: e, handle: h.hstr, dl: dl}
		var at clock.Time
		switch e {
		case renewSameDeadline:
			if dl-nowMs < 2 {
				continue
			}
			at = s.q.now().Add(clock.MillisDuration(r.Int64N((dl - nowMs) / 2)))
		case renewAtExpiry:
			// The send event schedules the arrival exactly at the deadline.
			at = max(clock.FromMillis(dl).Add(-2*clock.Millisecond), s.q.now())
		case renewAfterRevive:
			at = clock.FromMillis(dl).Add(clock.Second + clock.Duration(r.Int64N(int64(9*clock.Second))))
		}
		s.q.at(at, evFaultRenew, c.idx, c.epoch, f)
	}
}

// faultRenew sends an injected renewal.
func (s *sim) faultRenew(c *consumer, f *renewFault) {
	h := f.h
	if s.live || (f.edge != renewAfterRevive && h.finished) {
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
			s.emit(model.Event{Kind: model.EvExpiredLocal, Client: c.idx, Msg: h.key, Handle: hstr, Detail: "renew"})
			return
		}
	}
	s.cov.hit(s.plan.renew[f.edge].name)
	inv := c.spec.InvisibleTime.Millis()
	cl := s.newCall(callChange, c)
	cl.h, cl.handle, cl.why, cl.edge = h, hstr, why, f.edge
	cl.change = changeRequest(c.g.name, h, hstr, inv)
	s.emit(model.Event{Kind: model.EvChangeSent, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: hstr, Deadline: inv, Detail: s.plan.renew[f.edge].name})
	if f.edge == renewAtExpiry {
		s.q.at(max(clock.FromMillis(f.dl), s.q.now()), evNetRequest, c.idx, c.epoch, cl)
		return
	}
	s.send(cl, 0)
}
