package check

import (
	"fmt"

	"popsim/model"
)

// reviveUpperSlack is pop's store revive bound: it takes records with
// deadline < now - 50 ms, while the cache cleanup takes deadline <= now. A
// revive sooner than that after the deadline came from the cache, which
// holds only records made by pops.
const reviveUpperSlack = 50

// recordOf finds the record a revive-loop event is about, in recs then
// ghosts. vt > 0 is the record's deadline as the event reports it (EvRevive,
// EvReviveSkipped, EvReviveDropped); li >= 0 its location (the non-copy
// kinds). Without either, it is the first expired record in the broker's
// key order (deadline, topic, queue, offset). Among records with the same
// deadline, a revive within reviveUpperSlack of it picks a pop-made one.
func (c *Checker) recordOf(m *msgState, vt int64, li int32, nowMs int64) (i int, ghost bool) {
	fromCache := vt > 0 && nowMs-vt <= reviveUpperSlack
	for _, g := range [2]bool{false, true} {
		set := m.recs
		if g {
			set = m.ghosts
		}
		best := -1
		for j := range set {
			r := &set[j]
			if (vt > 0 && r.vt != vt) || (vt <= 0 && r.vt > nowMs) || (li >= 0 && r.loc != li) {
				continue
			}
			if best < 0 || fromCache && r.pop != set[best].pop && r.pop || (!fromCache || r.pop == set[best].pop) && recLess(m, r, &set[best]) {
				best = j
			}
		}
		if best >= 0 {
			return best, g
		}
	}
	return -1, false
}

func recLess(m *msgState, a, b *record) bool {
	if a.vt != b.vt {
		return a.vt < b.vt
	}
	la, lb := &m.locs[a.loc], &m.locs[b.loc]
	if la.topic != lb.topic {
		return la.topic < lb.topic
	}
	if la.queue != lb.queue {
		return la.queue < lb.queue
	}
	return la.offset < lb.offset
}

// takeRecord removes and returns the record recordOf finds.
func (c *Checker) takeRecord(m *msgState, vt int64, li int32, nowMs int64) (r record, ghost, ok bool) {
	i, ghost := c.recordOf(m, vt, li, nowMs)
	if i < 0 && vt > 0 {
		i = m.unswapRetry(vt)
	}
	switch {
	case i < 0:
		return record{}, false, false
	case ghost:
		r = m.ghosts[i]
		m.ghosts = append(m.ghosts[:i], m.ghosts[i+1:]...)
		return r, true, true
	}
	return m.takeRec(i), false, true
}

// unswapRetry: a revive names deadline vt, which a record had before the
// ledger applied an EvReviveRetried to it. The retry was its sibling's at
// the same location: move the new deadline there and return the record.
func (m *msgState) unswapRetry(vt int64) int {
	a := -1
	for i := range m.recs {
		if m.recs[i].retriedFrom == vt {
			a = i
			break
		}
	}
	if a < 0 {
		return -1
	}
	ra := &m.recs[a]
	for i := range m.recs {
		if rb := &m.recs[i]; i != a && rb.loc == ra.loc && rb.vt <= ra.retriedAt {
			rb.retriedFrom, rb.retriedAt, rb.vt = rb.vt, ra.retriedAt, ra.vt
			break
		}
	}
	ra.vt, ra.retriedFrom = vt, 0
	return a
}

// eventLoc is the location a revive-loop event names (-1 if none).
func eventLoc(m *msgState, e *model.Event) int32 {
	if e.Topic == "" {
		return -1
	}
	return m.findLoc(model.RetryFlagOf(e.Topic), e.Queue, e.Offset)
}

// onRevive: a retry copy was written. Its cause is decided now, from the
// story of the record that expired; its first delivery inherits it.
func (c *Checker) onRevive(e *model.Event) {
	m := c.touch(e, true)
	if m == nil || m.phantom {
		return
	}
	nowMs := e.At.Millis()
	l := loc{topic: e.Topic, flag: model.RetryFlagOf(e.Topic), queue: e.Queue, offset: e.Offset, seq: e.Seq, bornMs: nowMs, origin: -1}
	r, ghost, ok := c.takeRecord(m, e.Deadline, -1, nowMs)
	switch {
	case ok && r.vt > nowMs:
		l.cause = CauseUnexplained
		l.why = fmt.Sprintf("its retry copy was written at event #%d (%v) from a record whose lease ran until %s (from event #%d): revived early", e.Seq, e.At, msText(r.vt), r.seq)
	case ok && r.kindCause == CausePopLost:
		c.takeLostPop(m, e.Deadline, nowMs)
		l.cause, l.lineage = CausePopLost, r.lineage
	case ok:
		l.cause, l.why = c.classify(m, &r, ghost, e)
		l.lineage, l.origin = r.lineage, r.owner
	case c.lostPopRevived(m, e.Deadline, nowMs, &l):
		// A paused client's late delivery may still claim it.
		m.orphans = append(m.orphans, orphan{loc: int32(len(m.locs)), vt: e.Deadline, atMs: nowMs})
	case c.pausedPopRevived(m, e.Deadline, nowMs, &l):
		// The holder is paused: its delivery comes late and claims this.
		m.orphans = append(m.orphans, orphan{loc: int32(len(m.locs)), vt: e.Deadline, atMs: nowMs})
	default:
		l.cause = CauseUnexplained
		l.why = fmt.Sprintf("its retry copy was written at event #%d (%v) while no record of the message had expired%s (in flight: %s)", e.Seq, e.At, deadlineNote(e.Deadline), m.recsText())
		if e.Deadline > 0 {
			m.orphans = append(m.orphans, orphan{loc: int32(len(m.locs)), vt: e.Deadline, atMs: nowMs})
		}
	}
	m.addLoc(l)
	c.wake.arrival(e, m.topic, e.Queue, true)
}

// classify tells why record r expired without being deleted, at the
// revive event e.
func (c *Checker) classify(m *msgState, r *record, ghost bool, e *model.Event) (cause, why string) {
	switch {
	case r.kindCause != "":
		return r.kindCause, ""
	case ghost && r.fuzzCause != "":
		return r.fuzzCause, ""
	case r.owner < 0:
		return CauseLeaseExpiry, ""
	}
	d := &m.dels[r.owner]
	switch {
	case r.superseded || d.staleAck && d.cur == r.id:
		return CauseStaleHandle, ""
	case !ghost && !c.uncertain(r) && r.vt == r.handleVt && d.acked(r.handleVt):
		return CauseUnexplained, fmt.Sprintf("client %d's lease on %s (record from event #%d) was acked with its current handle, yet the record revived at event #%d", d.client, m.locs[r.loc].String(), r.seq, e.Seq)
	case d.state == consumeFailed:
		return CauseReconsumeLater, ""
	case c.crashedBetween(d.client, d.seq, e.Seq):
		return CauseConsumerCrash, ""
	case d.ackLost || d.ackSent > d.ackDone:
		return CauseAckLost, ""
	case d.ackRejected:
		return CauseAckRejected, ""
	case d.expiredAt > 0 && d.expiredAt < r.handleVt:
		return CauseClockSkew, ""
	}
	return CauseLeaseExpiry, ""
}

// onReviveRetried: the retry write failed and the record comes back at
// EvReviveRetried.Deadline.
func (c *Checker) onReviveRetried(e *model.Event) {
	m := c.touch(e, true) // a record of a forgotten message will come back
	if m == nil || m.phantom {
		return
	}
	nowMs, li := e.At.Millis(), eventLoc(m, e)
	if i, ghost := c.recordOf(m, 0, li, nowMs); i >= 0 {
		if ghost { // the broker still had it after all
			r := m.ghosts[i]
			m.ghosts = append(m.ghosts[:i], m.ghosts[i+1:]...)
			r.fuzzy, r.kindCause = false, firstOf(r.fuzzCause, CauseBrokerRestart)
			r.lineage = firstOf(r.lineage, r.kindCause)
			m.recs = append(m.recs, r)
			i = len(m.recs) - 1
		}
		r := &m.recs[i]
		r.retriedFrom, r.retriedAt, r.vt = r.vt, nowMs, e.Deadline
		return
	}
	switch p, ok := c.mayBeLostPop(m, nowMs); {
	case li < 0:
	case ok:
		// The record of a lost pop response: from now on a known one. Its
		// window is taken when it revives, by its exact deadline.
		line := markLostPop(m, p)
		m.addRec(record{loc: li, owner: -1, vt: e.Deadline, kindCause: CausePopLost, lineage: line, popMs: p.popLo, seq: e.Seq})
	default:
		// Perhaps a pop whose delivery comes late (a paused client).
		m.orphans = append(m.orphans, orphan{loc: li, vt: e.Deadline, retry: true, atMs: nowMs})
	}
}

// pausedPopRevived: a revive of a record no delivery made yet, explained by
// a paused client's open pop request; l is the copy being written.
func (c *Checker) pausedPopRevived(m *msgState, vt, nowMs int64, l *loc) bool {
	p, ok := c.pausedPop(vt, nowMs)
	if ok {
		l.cause, l.lineage = CauseLeaseExpiry, markLostPop(m, p)
	}
	return ok
}

// lostPopRevived: a revive of a record no delivery made, explained by a
// lost pop response; l is the copy being written.
func (c *Checker) lostPopRevived(m *msgState, vt, nowMs int64, l *loc) bool {
	p, ok := c.takeLostPop(m, vt, nowMs)
	if ok {
		l.cause, l.lineage = CausePopLost, markLostPop(m, p)
	}
	return ok
}

// onReviveGone: the record is gone without a copy: dropped after
// popReviveMaxAttemptTimes ("message may be lost") or skipped because the
// message left the store. Unless the message is settled or can still come
// back, it is lost now.
func (c *Checker) onReviveGone(e *model.Event) {
	m := c.touch(e, false)
	if m == nil || m.phantom {
		return
	}
	nowMs := e.At.Millis()
	c.takeRecord(m, e.Deadline, eventLoc(m, e), nowMs)
	if m.settled == unsettled && !m.lostReported && !c.canComeBack(m, nowMs) {
		m.lostReported = true
		what := "the broker dropped its last in-flight record after popReviveMaxAttemptTimes failed revives (\"message may be lost\")"
		if e.Kind == model.EvReviveSkipped {
			what = "the revive found the message gone from the store"
		}
		c.violate(InvLost, e.Seq, m, fmt.Sprintf("%s is lost: %s; it was never acked, sent to the DLQ or dropped by a named policy, and no copy or record can bring it back", m.key, what))
	}
	c.maybeForget(m, nowMs)
}

func deadlineNote(vt int64) string {
	if vt <= 0 {
		return ""
	}
	return " with deadline " + msText(vt)
}
