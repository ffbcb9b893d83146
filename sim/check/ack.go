package check

import (
	"fmt"

	"popsim/model"
)

// lease resolves the handle of an ack or renew event to the message
// location it names and the client's latest delivery there (-1s when
// unknown). report makes an unknown one a violation.
func (c *Checker) lease(e *model.Event, m *msgState, report bool) (h model.ReceiptHandle, li, di int32, ok bool) {
	h, err := model.ParseReceiptHandle(e.Handle)
	if err != nil {
		if report {
			c.violate(InvBadHandle, e.Seq, m, fmt.Sprintf("%s from client %d for %s carries a receipt handle that does not parse: %v", e.Kind, e.Client, m.key, err))
		}
		return h, -1, -1, false
	}
	li = m.findLoc(h.RetryFlag, h.QueueID, h.QueueOffset)
	if li < 0 {
		if report {
			c.violate(InvAckLocation, e.Seq, m, fmt.Sprintf("%s from client %d names retryFlag %d queue %d offset %d, where %s does not live (it lives at %s)", e.Kind, e.Client, h.RetryFlag, h.QueueID, h.QueueOffset, m.key, m.locsText()))
		}
		return h, -1, -1, false
	}
	di = m.leaseOf(e.Client, li, h.NextVisibleTime())
	if di < 0 && report && e.Detail != proxyDetail && !m.inflated {
		c.violate(InvAckLocation, e.Seq, m, fmt.Sprintf("%s from client %d names %s of %s, which that client never received", e.Kind, e.Client, m.locs[li].String(), m.key))
	}
	return h, li, di, di >= 0
}

// proxyDetail marks an ack the proxy sends for a message it popped and
// never handed to the client (it went to the DLQ): the ack is the first the
// trace hears of that pop.
const proxyDetail = "proxy"

func (c *Checker) onAckSentOrLost(e *model.Event) {
	m := c.touch(e, false)
	if m == nil || m.phantom {
		return
	}
	h, li, di, ok := c.lease(e, m, false)
	if li >= 0 && !ok && e.Kind == model.EvAckSent && e.Detail == proxyDetail {
		c.proxyPop(e, m, li, h)
		return
	}
	if ok {
		if e.Kind == model.EvAckSent {
			m.dels[di].ackSent++
		} else {
			m.dels[di].ackLost = true
		}
	}
}

// proxyPop records the pop behind a proxy ack: the location is popped and
// the record exists until the ack deletes it.
func (c *Checker) proxyPop(e *model.Event, m *msgState, li int32, h model.ReceiptHandle) {
	l := &m.locs[li]
	l.popped, l.popSeq, l.popMs = true, e.Seq, max(l.popMs, h.PopTime)
	vt := h.NextVisibleTime()
	m.addRec(record{loc: li, handleVt: vt, vt: vt, owner: -1, lineage: l.lineage, popMs: h.PopTime, pop: true, seq: e.Seq})
}

// onAckDone handles an ack the broker processed (EvAckAccepted, or
// EvAckResponseLost: processed, answer lost). When both are reported for
// one ack they count once. A SUCCESS ack settles the message when its
// delivery was consumed successfully, even if it deleted nothing (a late
// ack): the retry copy will then be a duplicate.
func (c *Checker) onAckDone(e *model.Event) {
	m := c.touch(e, e.N == 1) // a forgotten lease's ack may still delete another's cached record
	if m == nil || m.phantom {
		return
	}
	h, li, di, ok := c.lease(e, m, e.Code == model.Success)
	if li < 0 {
		return
	}
	if !ok {
		// Not this client's lease, but the broker's delete still happened.
		if e.Code == model.Success {
			c.applyDelete(e, m, li, h.NextVisibleTime(), InvAckIgnored)
		}
		return
	}
	d := &m.dels[di]
	if d.lastAck.handle == e.Handle && d.lastAck.kind != e.Kind {
		d.lastAck = lastAck{}
		return // the other half of the same ack
	}
	d.lastAck = lastAck{kind: e.Kind, handle: e.Handle}
	d.ackDone++
	if e.Code != model.Success {
		d.ackRejected = true
		return
	}
	vt := h.NextVisibleTime()
	d.ackedVts = append(d.ackedVts, vt)
	if e.N == 0 {
		if cur := m.rec(d.cur); cur != nil && cur.handleVt != vt {
			d.staleAck = true // the newer record survives and will revive
		}
	}
	c.applyDelete(e, m, li, vt, InvAckIgnored)
	if d.state == consumeOK {
		c.settle(m, settledAck, "")
	}
	c.maybeForget(m, e.At.Millis())
}

// cacheAmbiguous: the broker's cache deletes by offset, so when a
// pop-made record other than recs[i] sits at li, the cache may have held
// that one and deleted it instead.
func (m *msgState) cacheAmbiguous(li int32, i int) bool {
	for j := range m.recs {
		if j != i && m.recs[j].loc == li && m.recs[j].pop {
			return true
		}
	}
	return false
}

// applyDelete mirrors the broker's delete of the record named by a handle
// (vt at li): N=1 deleted one, N=0 deleted nothing. The broker's cache
// deletes by offset only, so with several records at one location the
// ledger cannot tell which went: they all become uncertain and the one
// removed is kept as a ghost that may still revive.
func (c *Checker) applyDelete(e *model.Event, m *msgState, li int32, vt int64, inv string) {
	i := m.findRec(li, vt)
	if e.N == 0 {
		switch {
		case i < 0 || m.recs[i].vt != m.recs[i].handleVt:
			// Nothing by that key: already gone, or re-keyed by a failed revive.
		case c.uncertain(&m.recs[i]):
			m.takeRec(i) // the broker says it is gone: lost with the cache
		case inv == "":
		default:
			r := &m.recs[i]
			c.violate(inv, e.Seq, m, fmt.Sprintf("%s from client %d was accepted with n=0, but the record it names (%s until %s, from event #%d) was in flight: the broker kept a record it should have deleted, so %s will come back", e.Kind, e.Client, m.locs[li].String(), msText(r.vt), r.seq, m.key))
		}
		return
	}
	if i < 0 {
		i = m.firstAt(li)
	}
	if i < 0 {
		return
	}
	m.locs[li].delMs, m.locs[li].delVt = e.At.Millis(), m.recs[i].vt
	if !m.cacheAmbiguous(li, i) {
		m.takeRec(i)
		return
	}
	cause := ""
	for j := range m.recs {
		if r := &m.recs[j]; r.loc == li && cause == "" {
			cause = r.lineage
		}
	}
	for j := range m.recs {
		if r := &m.recs[j]; r.loc == li {
			r.fuzzy, r.fuzzCause = true, cause
		}
	}
	m.ghosts = append(m.ghosts, m.takeRec(i))
}

func (c *Checker) onChangeSentOrLost(e *model.Event) {
	m := c.touch(e, false)
	if m == nil || m.phantom {
		return
	}
	_, _, di, ok := c.lease(e, m, false)
	if !ok {
		return
	}
	d := &m.dels[di]
	if e.Kind == model.EvChangeSent {
		h, _ := model.ParseReceiptHandle(e.Handle)
		d.pending = append(d.pending, pendingRenew{vt: h.NextVisibleTime(), seq: e.Seq, h: e.Handle})
		return
	}
	for i, p := range d.pending { // a lost request: it will never be answered
		if p.h == e.Handle {
			d.pending = append(d.pending[:i], d.pending[i+1:]...)
			return
		}
	}
}

// onChangeAccepted follows a renew: a new record (the new handle's
// deadline) and, with N=1, the old one deleted. A renew whose old record is
// gone (revived or acked) makes an extra record (renew_after_revive); one
// that renews a handle older than the lease's latest makes an extra record
// too (stale_handle).
func (c *Checker) onChangeAccepted(e *model.Event) {
	m := c.touch(e, true)
	if m == nil || m.phantom {
		return
	}
	if e.Code != model.Success {
		c.renewRejected(e, m)
		return
	}
	h, err := model.ParseReceiptHandle(e.Handle)
	if err != nil {
		c.violate(InvBadHandle, e.Seq, m, fmt.Sprintf("the renewed receipt handle of %s for client %d does not parse: %v", m.key, e.Client, err))
		return
	}
	li := m.findLoc(h.RetryFlag, h.QueueID, h.QueueOffset)
	if li < 0 {
		c.violate(InvAckLocation, e.Seq, m, fmt.Sprintf("a renew for client %d names retryFlag %d queue %d offset %d, where %s does not live (it lives at %s)", e.Client, h.RetryFlag, h.QueueID, h.QueueOffset, m.key, m.locsText()))
		return
	}
	di, ambiguous := m.renewOf(e.Client, li, h.NextVisibleTime())
	if di < 0 && !m.inflated {
		c.violate(InvAckLocation, e.Seq, m, fmt.Sprintf("a renew for client %d names %s of %s, which that client never received", e.Client, m.locs[li].String(), m.key))
	}
	c.renewed(e, m, li, di, h, ambiguous)
}

// renewed applies an accepted renew: the new record, on the line of the
// record it renews unless it is an extra one, and the old record deleted
// (N=1) or, if it stays, superseded.
func (c *Checker) renewed(e *model.Event, m *msgState, li, di int32, h model.ReceiptHandle, ambiguous bool) {
	oldVt := c.renewedVt(m, di)
	kind := c.renewKind(m, li, di, oldVt)
	lineage := kind
	if i := m.findRec(li, oldVt); kind == "" && oldVt >= 0 && i >= 0 {
		lineage = m.recs[i].lineage // a renew continues the line it renews
	} else if kind == "" && di >= 0 {
		lineage = m.dels[di].lineage
	}
	inv := InvRenewIgnored
	if ambiguous {
		inv = "" // which lease this answer was for is a guess: do not judge it
	}
	if e.N == 1 || oldVt >= 0 {
		c.applyDelete(e, m, li, oldVt, inv)
	}
	if i := m.findRec(li, oldVt); oldVt >= 0 && i >= 0 && kind == "" {
		m.recs[i].superseded = true
	}
	vt := h.NextVisibleTime()
	id := m.addRec(record{loc: li, handleVt: vt, vt: vt, owner: di, kindCause: kind, lineage: lineage, popMs: h.PopTime, seq: e.Seq})
	if di >= 0 {
		m.dels[di].cur = id
		m.dels[di].vts = append(m.dels[di].vts, vt)
	}
}

// renewRejected: the broker refused the renew (no new handle); it is no
// longer pending. The event names the lease by Topic/Queue/Offset.
func (c *Checker) renewRejected(e *model.Event, m *msgState) {
	if e.Topic == "" {
		return
	}
	if li := m.findLoc(model.RetryFlagOf(e.Topic), e.Queue, e.Offset); li >= 0 {
		di, _ := m.renewOf(e.Client, li, -1)
		c.renewedVt(m, di)
	}
}

// renewedVt is the deadline of the handle the renew was sent with (the
// oldest unanswered EvChangeSent of the lease), else the lease's latest.
func (c *Checker) renewedVt(m *msgState, di int32) int64 {
	if di < 0 {
		return -1
	}
	d := &m.dels[di]
	if len(d.pending) > 0 {
		p := d.pending[0]
		d.pending = d.pending[1:]
		return p.vt
	}
	if r := m.rec(d.cur); r != nil {
		return r.handleVt
	}
	return -1
}

// renewKind tells whether a renew made an extra record. It replaces the
// lease's record only when that record is still there under the old key;
// otherwise the lease had moved on to a newer handle (stale_handle) or its
// record was revived, re-keyed by a failed revive, or acked, or the lease
// is long forgotten (renew_after_revive). With N=1 such a renew deleted
// another lease's record at the location (the cache deletes by offset).
func (c *Checker) renewKind(m *msgState, li, di int32, oldVt int64) string {
	if i := m.findRec(li, oldVt); di >= 0 && oldVt >= 0 && i >= 0 && m.recs[i].vt == m.recs[i].handleVt {
		return "" // still there under its key (with N=0: renew-ignored, or lost with the cache)
	}
	if di >= 0 {
		if cur := m.rec(m.dels[di].cur); cur != nil && cur.handleVt != oldVt {
			return CauseStaleHandle
		}
	}
	return CauseRenewAfterRevive
}
