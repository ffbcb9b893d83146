package proxy

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// AckRequest is one entry of an AckMessageRequest: the message the client
// acks and the receipt handle it holds.
type AckRequest struct {
	ClientID  string
	Group     string
	Topic     string // the topic the client was shown
	MessageID string // UNIQ_KEY
	Handle    model.ReceiptHandle
	Lease     model.LeaseID // the handle's lease, for the caller's records
}

// Target is what an ack or a renewal goes to the broker with: the handle
// the proxy chose (the managed one when the message is auto-renewed) and
// its lease.
type Target struct {
	Handle model.ReceiptHandle
	Lease  model.LeaseID
	// Managed: the handle was the proxy's managed one, not the client's.
	Managed bool
	// Entry is the managed registration the handle came from (0 when the
	// client's own): one delivery of the message. Report a renewal's
	// answer for it with Changed.
	Entry uint64
}

// Ack checks an ack (AckMessageActivity, ConsumerProcessor.ackMessage):
// the managed handle of the message, if any, replaces the client's and
// stops being managed; an expired handle is INVALID_RECEIPT_HANDLE. On OK
// the pop.AckRequest is what to send the broker.
func (p *Proxy) Ack(now clock.Time, req *AckRequest) (pop.AckRequest, Target, Status) {
	var a pop.AckRequest
	t, st := p.AckInto(now, req, &a)
	return a, t, st
}

// AckInto is Ack writing the pop.AckRequest into dst, which it leaves as
// it was when the status is not OK: for a caller that keeps the request
// (a simulated client's recycled ack), where Ack's result is copied
// twice on its way there. The target is written in place (a named
// result) and dst by pop.AckRequest.SetFor: the handle, 72 bytes, is
// copied once into each.
func (p *Proxy) AckInto(now clock.Time, req *AckRequest, dst *pop.AckRequest) (t Target, st Status) {
	if i := p.find(req.ClientID, req.Group, req.MessageID); i >= 0 {
		m := &p.managed[i]
		t.Handle, t.Lease, t.Managed = m.handle, m.lease, true
		p.remove(i)
	} else {
		t.Handle, t.Lease = req.Handle, req.Lease
	}
	h := &t.Handle
	if st := validateHandle(now, h); !st.IsOK() {
		return t, st
	}
	dst.SetFor(req.Group, req.Topic, h)
	return t, statusOK
}

// AckMessage is Ack with the broker call: the whole AckMessage of one
// entry, for a driver with no network between proxy and broker.
func (p *Proxy) AckMessage(now clock.Time, req *AckRequest) (pop.AckResult, Status) {
	a, _, st := p.Ack(now, req)
	if !st.IsOK() {
		return pop.AckResult{}, st
	}
	r := p.at(&a.Handle).Ack(now, &a)
	return r, brokerStatus(r.Code, "ack")
}

// ChangeRequest is a ChangeInvisibleDurationRequest.
type ChangeRequest struct {
	ClientID      string
	Group         string
	Topic         string // the topic the client was shown
	MessageID     string
	Handle        model.ReceiptHandle
	Lease         model.LeaseID
	InvisibleTime clock.Duration
}

// Change checks a renewal (ChangeInvisibleDurationActivity): the invisible
// time must be 0..12 h; the managed handle of the message, if any,
// replaces the client's; an expired handle is INVALID_RECEIPT_HANDLE. On
// OK the pop request is what to send the broker; report a successful
// answer with Changed.
func (p *Proxy) Change(now clock.Time, req *ChangeRequest) (pop.ChangeInvisibleTimeRequest, Target, Status) {
	t := Target{Handle: req.Handle, Lease: req.Lease}
	if req.InvisibleTime < 0 || req.InvisibleTime > MaxChangeInvisibleTime {
		return pop.ChangeInvisibleTimeRequest{}, t, Status{Code: IllegalInvisibleTime, Message: "the invisibleTime must be between 0 and 12 hours"}
	}
	if i := p.find(req.ClientID, req.Group, req.MessageID); i >= 0 {
		m := &p.managed[i]
		t = Target{Handle: m.handle, Lease: m.lease, Managed: true, Entry: m.id}
	}
	if st := validateHandle(now, &t.Handle); !st.IsOK() {
		return pop.ChangeInvisibleTimeRequest{}, t, st
	}
	return pop.NewChangeInvisibleTimeRequest(req.Group, req.Topic, &t.Handle, req.InvisibleTime), t, statusOK
}

// Changed reports the broker's successful answer to a client's renewal
// that went out with the managed handle of registration entry (Target.
// Entry): if that registration is still managed, it is renewed from the
// new handle on (the fix of apache/rocketmq#9583). The answer never
// touches another registration of the message, such as a later delivery
// of it to the same client registered while the renewal was in flight:
// upstream takes the registration out when the renewal is sent, so its
// answer cannot reach one made later. Replacing the later delivery's
// handle with the stale one would send the client's ack with a handle the
// broker no longer matches (orderly: another pop's popTime).
func (p *Proxy) Changed(clientID, group, messageID string, entry uint64, r *pop.ChangeInvisibleTimeResult) {
	if r.Code != model.Success || entry == 0 {
		return
	}
	if i := p.find(clientID, group, messageID); i >= 0 && p.managed[i].id == entry {
		m := &p.managed[i]
		m.handle = r.Handle
		if r.Lease != 0 { // an orderly renewal that made no lease leaves the old one named
			m.lease = r.Lease
		}
	}
}

// ChangeInvisibleDuration is Change with the broker call, for a driver
// with no network between proxy and broker.
func (p *Proxy) ChangeInvisibleDuration(now clock.Time, req *ChangeRequest) (pop.ChangeInvisibleTimeResult, Status) {
	c, t, st := p.Change(now, req)
	if !st.IsOK() {
		return pop.ChangeInvisibleTimeResult{}, st
	}
	r := p.at(&c.Handle).ChangeInvisibleTime(now, &c)
	p.Changed(req.ClientID, req.Group, req.MessageID, t.Entry, &r)
	return r, brokerStatus(r.Code, "changeInvisibleDuration")
}

// validateHandle is ConsumerProcessor.validateReceiptHandle: an expired
// handle (nextVisibleTime <= now) never reaches the broker.
func validateHandle(now clock.Time, h *model.ReceiptHandle) Status {
	if h.IsExpired(now.Millis()) {
		return Status{Code: InvalidReceiptHandle, Message: "receipt handle is expired"}
	}
	return statusOK
}

// ValidHandle reports whether h would pass the proxy's expiry check at
// now.
func ValidHandle(now clock.Time, h *model.ReceiptHandle) bool { return validateHandle(now, h).IsOK() }
