package proxy

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// RenewSchedule is RenewStrategyPolicy's renewal lengths by the number of
// renewals so far; the last one repeats.
var RenewSchedule = [...]clock.Duration{clock.Minute, 3 * clock.Minute, 5 * clock.Minute, 10 * clock.Minute, 30 * clock.Minute, 60 * clock.Minute}

// retryLevels is the CUSTOMIZED retry policy's delays in seconds ("1s 5s
// 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h").
var retryLevels = [...]int64{1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// RetryDelay is the group's CUSTOMIZED retry policy
// (nextDelayDuration(reconsumeTimes)): the delay at index reconsumeTimes
// + 2, capped at the last (2 h).
func RetryDelay(reconsumeTimes int32) clock.Duration {
	i := min(max(int(reconsumeTimes)+2, 0), len(retryLevels)-1)
	return clock.Duration(retryLevels[i]) * clock.Second
}

// managed is one handle the proxy renews while its message is processed
// (a MessageReceiptHandle of DefaultReceiptHandleManager).
type managed struct {
	id             uint64
	clientID       string
	group, topic   string // topic: the one the client was shown
	messageID      string
	msg            model.MsgID
	handle         model.ReceiptHandle
	lease          model.LeaseID
	reconsumeTimes int32
	received       clock.Time // consumeTimestamp: when it was registered
	renewTimes     int
	retries        int  // failed attempts since the last success
	inFlight       bool // a renewal was handed out and not reported yet
	last           bool // the renewal at RenewMaxTime was handed out: no more
	retryNow       bool // a failed attempt is due again at once
}

// Manage registers a received message for auto-renew
// (addReceiptHandle): its handle is renewed RenewAheadTime before each
// expiry until the client acks it (Ack), gives it up (Release) or goes
// away (Forget). A message already managed for the client and group is
// replaced, as the manager keys handles by message id.
func (p *Proxy) Manage(now clock.Time, clientID, group string, m *pop.PoppedMessage) {
	if i := p.find(clientID, group, m.Message.UniqKey); i >= 0 {
		p.remove(i)
	}
	p.nextID++
	p.managed = append(p.managed, managed{
		id: p.nextID, clientID: clientID, group: group, topic: m.Message.Topic, messageID: m.Message.UniqKey,
		msg: m.Message.ID, handle: m.Handle, lease: m.Lease, reconsumeTimes: m.Message.ReconsumeTimes, received: now,
	})
}

// Release stops renewing a message its client gave up without acking it
// (the handle is forgotten; its lease runs out).
func (p *Proxy) Release(clientID, group, messageID string) {
	if i := p.find(clientID, group, messageID); i >= 0 {
		p.remove(i)
	}
}

// Forget drops every handle of a client that went away.
func (p *Proxy) Forget(clientID string) {
	out := p.managed[:0]
	for _, m := range p.managed {
		if m.clientID != clientID {
			out = append(out, m)
		}
	}
	clear(p.managed[len(out):])
	p.managed = out
}

// Managed is the number of handles being renewed.
func (p *Proxy) Managed() int { return len(p.managed) }

func (p *Proxy) find(clientID, group, messageID string) int {
	for i := range p.managed {
		m := &p.managed[i]
		if m.messageID == messageID && m.clientID == clientID && m.group == group {
			return i
		}
	}
	return -1
}

func (p *Proxy) remove(i int) {
	n := len(p.managed) - 1
	copy(p.managed[i:], p.managed[i+1:])
	p.managed[n] = managed{}
	p.managed = p.managed[:n]
}

// due is when m is renewed next, ok false when nothing is due for it.
func (p *Proxy) due(m *managed) (clock.Time, bool) {
	switch {
	case m.inFlight || m.last:
		return 0, false
	case m.retryNow:
		return 0, true
	}
	return clock.FromMillis(m.handle.NextVisibleTime()).Add(-p.cfg.RenewAheadTime), true
}

// NextDue is when Tick has work next: the earliest renewal due.
func (p *Proxy) NextDue() (clock.Time, bool) {
	var at clock.Time
	found := false
	for i := range p.managed {
		if t, ok := p.due(&p.managed[i]); ok && (!found || t < at) {
			at, found = t, true
		}
	}
	return at, found
}

// Renewal is one auto-renewal Tick hands out, or a managed handle Tick
// found expired (Expired: it is dropped, nothing is sent).
type Renewal struct {
	ID        uint64
	ClientID  string
	Group     string
	MessageID string
	Msg       model.MsgID
	// Lease is the lease being renewed (its handle is the request's).
	Lease   model.LeaseID
	Request pop.ChangeInvisibleTimeRequest
	// Last: the renewal after RenewMaxTime, with the retry policy's delay;
	// no renewal follows it.
	Last    bool
	Expired bool
}

// Tick hands out the renewals due at now, in registration order, appended
// to dst: each handle due is renewed for RenewSchedule[renewTimes], or,
// RenewMaxTime after it was received, one last time for the retry
// policy's delay. A handle already expired is dropped instead (the
// renewal would be rejected as INVALID_RECEIPT_HANDLE). Report each
// renewal's outcome with Renewed or RenewFailed.
func (p *Proxy) Tick(now clock.Time, dst []Renewal) []Renewal {
	out := p.managed[:0]
	for _, m := range p.managed {
		if t, ok := p.due(&m); !ok || t > now {
			out = append(out, m)
			continue
		}
		r := Renewal{ID: m.id, ClientID: m.clientID, Group: m.group, MessageID: m.messageID, Msg: m.msg, Lease: m.lease}
		if !ValidHandle(now, &m.handle) {
			r.Expired = true
			dst = append(dst, r)
			continue
		}
		inv := RenewSchedule[min(m.renewTimes, len(RenewSchedule)-1)]
		if now.Sub(m.received) >= p.cfg.RenewMaxTime {
			inv, r.Last, m.last = RetryDelay(m.reconsumeTimes), true, true
		}
		m.inFlight, m.retryNow = true, false
		r.Request = pop.NewChangeInvisibleTimeRequest(m.group, m.topic, &m.handle, inv)
		dst = append(dst, r)
		out = append(out, m)
	}
	clear(p.managed[len(out):])
	p.managed = out
	return dst
}

// Renewed reports the broker's answer to renewal id: on SUCCESS the new
// handle replaces the old one and the next renewal is scheduled from it;
// any other code stops renewing the message. It reports whether the
// message was still managed (not acked, released or forgotten meanwhile).
func (p *Proxy) Renewed(id uint64, r *pop.ChangeInvisibleTimeResult) bool {
	i := p.byID(id)
	if i < 0 {
		return false
	}
	m := &p.managed[i]
	m.inFlight = false
	if r.Code != model.Success {
		p.remove(i)
		return true
	}
	m.retries = 0
	m.renewTimes++
	m.handle = r.Handle
	if r.Lease != 0 { // an orderly renewal that made no lease leaves the old one named
		m.lease = r.Lease
	}
	if m.last {
		p.remove(i)
	}
	return true
}

// RenewFailed reports that renewal id got no answer (an exception or a
// timeout): it is tried again at once, up to MaxRenewRetryTimes failed
// attempts in a row, with the handle the proxy has; the last renewal
// (after RenewMaxTime) is not tried again. It reports whether it will be
// tried again.
func (p *Proxy) RenewFailed(id uint64) bool {
	i := p.byID(id)
	if i < 0 {
		return false
	}
	m := &p.managed[i]
	m.inFlight = false
	m.retries++
	if m.retries >= p.cfg.MaxRenewRetryTimes || m.last {
		p.remove(i)
		return false
	}
	m.retryNow = true
	return true
}

func (p *Proxy) byID(id uint64) int {
	for i := range p.managed {
		if p.managed[i].id == id {
			return i
		}
	}
	return -1
}
