package check

import (
	"fmt"

	"popsim/model"
)

// recordOf finds the record a revive-loop event is about, in recs then
// ghosts. vt > 0 is the record's deadline as the event reports it (EvRevive,
// EvReviveSkipped, EvReviveDropped); li >= 0 its location (the non-copy
// kinds). Without either, it is the first expired record in the broker's
// key order (deadline, topic, queue, offset).
func (c *Checker) recordOf(m *msgState, vt int64, li int32, nowMs int64) (i int, ghost bool) {
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
			if best < 0 || recLess(m, r, &set[best]) {
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
	l := loc{topic: e.Topic, flag: model.RetryFlagOf(e.Topic), queue: e.Queue, offset: e.Offset, seq: e.Seq, origin: -1}
	r, ghost, ok := c.takeRecord(m, e.Deadline, -1, nowMs)
	switch {
	case ok && r.vt > nowMs:
		l.cause = CauseUnexplained
		l.why = fmt.Sprintf("its retry copy was written at event #%d (%v) from a record whose lease ran until %s (from event #%d): revived early", e.Seq, e.At, msText(r.vt), r.seq)
	case ok:
		l.cause, l.why = c.classify(m, &r, ghost, e)
		l.lineage, l.origin = r.lineage, r.owner
	case c.explainLostPop(e.Deadline, nowMs):
		l.cause = CausePopLost
	default:
		l.cause = CauseUnexplained
		l.why = fmt.Sprintf("its retry copy was written at event #%d (%v) while no record of the message had expired%s (in flight: %s)", e.Seq, e.At, deadlineNote(e.Deadline), m.recsText())
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
	case d.cur != r.id || d.staleAck:
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
	m := c.touch(e, false)
	if m == nil || m.phantom {
		return
	}
	if i, ghost := c.recordOf(m, 0, eventLoc(m, e), e.At.Millis()); i >= 0 && !ghost {
		m.recs[i].vt = e.Deadline
	}
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
