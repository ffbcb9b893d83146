package check

import (
	"fmt"
	"strings"

	"popsim/model"
)

// detailValue returns the value of key=value in a space-separated Detail.
func detailValue(detail, key string) (string, bool) {
	for _, f := range strings.Fields(detail) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func (c *Checker) onDeliver(e *model.Event) {
	c.rep.Deliveries++
	m := c.touch(e, true)
	if m == nil {
		m = c.newMsg(msgState{key: e.Msg, phantom: true, okFirst: -1, firstSeq: e.Seq})
		c.remember(m, e)
		c.setLive(m)
		c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("client %d got %s from %s/%d@%d, but no such message was ever produced", e.Client, e.Msg, e.Topic, e.Queue, e.Offset))
		return
	}
	if m.phantom {
		return
	}
	c.wake.served(m.topic)
	c.checkPresented(e, m)
	li := c.deliveryLoc(e, m)
	if e.Handle == "" {
		c.deliverPull(e, m, li)
		return
	}
	p := c.popOf(e, m)
	di := int32(len(m.dels))
	r := record{loc: li, handleVt: p.vt, vt: p.vt, owner: di, popMs: p.popMs, pop: true, seq: e.Seq}
	m.applyRetryOrphan(&r)
	cause, why := c.redeliveryCause(m, li, p.popMs)
	if !m.locs[li].popped && m.hasOrphan(r.vt) {
		cause, why = "", "" // the original pop, seen after the copy it left
	}
	lineage := m.locs[li].lineage
	if lineage == "" && (cause == CauseBrokerRestart || cause == CauseProducerRetry) {
		lineage = cause
	}
	c.checkLiveLeases(e, m, lineage, p.popMs)
	c.countRedelivery(e, m, li, cause, why, p.popMs)
	d := delivery{seq: e.Seq, client: e.Client, loc: li, cur: -1, cause: cause, dupCause: cause, lineage: lineage, vts: []int64{p.vt}}
	c.inheritDupCause(m, &d, m.locs[li].origin)
	r.lineage = lineage
	if !m.claimOrphan(r) {
		c.lateAmbiguity(m, li, &r)
		d.cur = m.addRec(r)
	}
	m.dels = append(m.dels, d)
}

// applyRetryOrphan: a failed revive of this delivery's record was seen
// before the delivery (its client was paused): the record is re-keyed.
func (m *msgState) applyRetryOrphan(r *record) {
	for i, o := range m.orphans {
		if o.retry && o.loc == r.loc && o.atMs >= r.vt {
			m.orphans = append(m.orphans[:i], m.orphans[i+1:]...)
			r.retriedFrom, r.retriedAt, r.vt = r.vt, o.atMs, o.vt
			return
		}
	}
}

// deliverPull: a Pull consumer's delivery (no handle, no lease).
func (c *Checker) deliverPull(e *model.Event, m *msgState, li int32) {
	cause, why, from := c.pullCause(e, m)
	lineage := m.locs[li].lineage
	if lineage == "" && cause == CauseRebalance {
		lineage = cause
	}
	c.countRedelivery(e, m, li, cause, why, e.At.Millis())
	d := delivery{seq: e.Seq, client: e.Client, loc: li, cur: -1, cause: cause, dupCause: cause, lineage: lineage, pull: true}
	c.inheritDupCause(m, &d, from)
	m.dels = append(m.dels, d)
}

// inheritDupCause: a retry the consumer asked for repeats the story of the
// delivery it retries, so a duplicate it causes is blamed on what brought
// the message back after its first success, never on reconsume_later.
func (c *Checker) inheritDupCause(m *msgState, d *delivery, from int32) {
	if d.cause == CauseReconsumeLater && from >= 0 && m.dels[from].dupCause != "" {
		d.dupCause = m.dels[from].dupCause
	}
}

func (c *Checker) countRedelivery(e *model.Event, m *msgState, li int32, cause, why string, popMs int64) {
	if cause == CauseUnexplained && !m.locs[li].bogus {
		c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("client %d got %s again from %s with no cause: %s", e.Client, m.key, m.locs[li].String(), why))
	}
	if cause != "" {
		c.rep.Redeliveries++
		c.rep.RedeliveriesByCause[cause]++
	}
	l := &m.locs[li]
	l.popped, l.guessed, l.popSeq, l.popMs = true, false, e.Seq, max(l.popMs, popMs)
}

// pullCause explains a Pull consumer's delivery (no handle, no lease): the
// same message again is a local retry after a failure, or a new owner
// starting from the committed offset after a crash or a rebalance.
func (c *Checker) pullCause(e *model.Event, m *msgState) (cause, why string, from int32) {
	var prev delivery
	switch {
	case len(m.dels) > 0:
		from = int32(len(m.dels) - 1)
		prev = m.dels[from]
	case m.inflated:
		from, prev = -1, delivery{client: m.lastClient, seq: m.lastSeq, state: consumeOK}
	default:
		return "", "", -1
	}
	switch {
	case prev.client == e.Client && prev.state == consumeFailed:
		return CauseReconsumeLater, "", from
	case c.crashedBetween(prev.client, prev.seq, e.Seq):
		return CauseConsumerCrash, "", from
	case c.rebalances[pullQueue{e.Topic, e.Queue}] > prev.seq:
		return CauseRebalance, "", from
	}
	return CauseUnexplained, fmt.Sprintf("it was pulled at event #%d by client %d, and since then that consumer neither failed it nor crashed and the queue was not rebalanced", prev.seq, prev.client), from
}

// checkPresented: the client must see the produced topic, never a retry
// topic (apache/rocketmq#11195). EvDeliver.Detail carries
// "topic=<presented topic>".
func (c *Checker) checkPresented(e *model.Event, m *msgState) {
	p, ok := detailValue(e.Detail, "topic")
	switch {
	case !ok:
		c.violate(InvPresentedTopic, e.Seq, m, fmt.Sprintf("the delivery of %s to client %d does not say which topic the client was shown: EvDeliver.Detail must carry topic=<presented topic>, got %q", m.key, e.Client, e.Detail))
	case p != m.topic && model.IsRetryTopic(p):
		c.violate(InvPresentedTopic, e.Seq, m, fmt.Sprintf("client %d was shown %s under the retry topic %s instead of its topic %s (the retry topic leaks to the client, apache/rocketmq#11195)", e.Client, m.key, p, m.topic))
	case p != m.topic:
		c.violate(InvPresentedTopic, e.Seq, m, fmt.Sprintf("client %d was shown %s under topic %s, but it was produced to %s", e.Client, m.key, p, m.topic))
	}
}

// deliveryLoc finds the location the delivery came from. An unknown location is a violation; it is added
// so that the lease can still be followed.
func (c *Checker) deliveryLoc(e *model.Event, m *msgState) int32 {
	flag := model.RetryFlagOf(e.Topic)
	li := m.findLoc(flag, e.Queue, e.Offset)
	if li >= 0 && (m.locs[li].topic == "" || m.locs[li].topic == e.Topic) {
		if m.locs[li].topic == "" {
			m.locs[li].topic = e.Topic
		}
		return li
	}
	l := loc{topic: e.Topic, flag: flag, queue: e.Queue, offset: e.Offset, seq: e.Seq, origin: -1}
	c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("client %d got %s from %s/%d@%d, but the message lives only at %s", e.Client, m.key, e.Topic, e.Queue, e.Offset, m.locsText()))
	l.cause, l.bogus = CauseUnexplained, true
	return m.addLoc(l)
}

// pop is when the broker popped a delivery and the deadline of the
// record it made: from the receipt handle (popTime, popTime +
// invisibleTime, the broker's key). The event itself is written when the
// client receives the message, which can be much later (a paused client).
type pop struct{ popMs, vt int64 }

func (c *Checker) popOf(e *model.Event, m *msgState) pop {
	h, err := model.ParseReceiptHandle(e.Handle)
	if err != nil {
		c.violate(InvBadHandle, e.Seq, m, fmt.Sprintf("client %d got %s with a receipt handle that does not parse: %v", e.Client, m.key, err))
		return pop{popMs: e.At.Millis(), vt: e.Deadline}
	}
	if h.RetryFlag != model.RetryFlagOf(e.Topic) || h.QueueID != e.Queue || h.QueueOffset != e.Offset {
		c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("client %d got %s from %s/%d@%d with a handle for retryFlag %d queue %d offset %d (%q)", e.Client, m.key, e.Topic, e.Queue, e.Offset, h.RetryFlag, h.QueueID, h.QueueOffset, e.Handle))
	}
	return pop{popMs: h.PopTime, vt: h.NextVisibleTime()}
}

// redeliveryCause explains a delivery: "" for the first one.
func (c *Checker) redeliveryCause(m *msgState, li int32, popMs int64) (cause, why string) {
	l := &m.locs[li]
	if l.guessed { // when (and whether) the lost response took it is a guess
		l.popMs = 0
		if !c.restartBetween(0, popMs) {
			l.popped, l.guessed = false, false // it took another location
		}
	}
	switch {
	case l.popped && c.restartBetween(l.popMs, popMs):
		return CauseBrokerRestart, ""
	case l.popped:
		return CauseUnexplained, fmt.Sprintf("%s was already popped (at %s, seen at event #%d) and the broker did not restart between that pop and this one (at %s), so the pop offset went back", l.String(), msText(l.popMs), l.popSeq, msText(popMs))
	case len(m.dels) == 0 && !m.inflated && (l.cause == "" || l.cause == CauseProducerRetry):
		return "", ""
	case l.cause == CauseAckLost && l.origin >= 0 && !m.dels[l.origin].ackLost && m.dels[l.origin].ackSent <= m.dels[l.origin].ackDone:
		return CauseLeaseExpiry, "" // the ack was late, not lost
	case l.cause != "":
		return l.cause, l.why
	}
	for i := range m.locs {
		if m.locs[i].lineage == CauseProducerRetry {
			return CauseProducerRetry, ""
		}
	}
	return CauseUnexplained, fmt.Sprintf("the produced location %s was popped only after other deliveries", l.String())
}

// checkLiveLeases: no delivery inside another live lease of the same
// line. Extra lines (renew after revive, stale handle, broker restart,
// producer retry) may overlap anything: they are duplicates by design.
// The check is at the broker's pop time: a lease is live then when its
// record was made earlier and ends later.
func (c *Checker) checkLiveLeases(e *model.Event, m *msgState, lineage string, popMs int64) {
	if lineage != "" {
		return
	}
	for i := range m.recs {
		r := &m.recs[i]
		if r.vt <= popMs || r.popMs > popMs || r.lineage != "" {
			continue
		}
		holder := "an unknown client"
		if r.owner >= 0 {
			holder = fmt.Sprintf("client %d", m.dels[r.owner].client)
		}
		c.violate(InvConcurrentLease, e.Seq, m, fmt.Sprintf("client %d got %s, popped at %s, while the lease of %s on %s (record from event #%d) was live until %s, not acked and not released", e.Client, m.key, msText(popMs), holder, m.locs[r.loc].String(), r.seq, msText(r.vt)))
		return
	}
}

// lateAmbiguity: an ack or renew that the ledger applied here after this
// pop was made, but before its delivery was seen, may have deleted this
// pop's cached record (the cache deletes by offset) and left the one the
// ledger removed: that one comes back as a ghost, and both are uncertain.
func (c *Checker) lateAmbiguity(m *msgState, li int32, r *record) {
	l := &m.locs[li]
	if l.delMs == 0 || l.delMs < r.popMs {
		return
	}
	cause := r.lineage
	if cause == "" {
		cause = CauseBrokerRestart
	}
	if !m.hasGhost(li, l.delVt) {
		m.ghosts = append(m.ghosts, record{loc: li, handleVt: l.delVt, vt: l.delVt, owner: -1, fuzzy: true, fuzzCause: cause, popMs: r.popMs, seq: r.seq})
	}
	r.fuzzy, r.fuzzCause = true, cause
	l.delMs = 0
}

func (m *msgState) hasOrphan(vt int64) bool {
	for _, o := range m.orphans {
		if !o.retry && o.vt == vt {
			return true
		}
	}
	return false
}

// claimOrphan: the record this delivery made was revived before the
// delivery was seen (its client was paused past the lease). The copy it
// left is explained by the lease running out; no record remains.
func (m *msgState) claimOrphan(r record) bool {
	for i, o := range m.orphans {
		if o.retry || o.vt != r.vt {
			continue
		}
		m.orphans = append(m.orphans[:i], m.orphans[i+1:]...)
		l := &m.locs[o.loc]
		if !l.popped {
			l.cause, l.why, l.origin, l.lineage = CauseLeaseExpiry, "", r.owner, r.lineage
		}
		return true
	}
	return false
}
