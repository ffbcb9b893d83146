package share

import (
	"popsim/clock"
	"popsim/model"
)

// cause is why a record leaves ACQUIRED; with the resulting state it
// decides the LeaseEnd.
type cause uint8

const (
	causeAck cause = iota
	causeTimeout
	causeSession
)

// change is one state transition of a transaction, with the state before
// it (Kafka's rollbackState).
type change struct {
	f          *inflight
	idx        int // -1: the whole batch
	old        recState
	end        LeaseEnd
	belowStart bool
}

// txn gathers the transitions of one acknowledgement, release or timeout
// of one share-partition: they are persisted together and then committed,
// or rolled back together.
type txn struct {
	changes  []change
	renewals []Renewal
}

func (c *change) rec() *recState {
	if c.idx < 0 {
		return &c.f.st
	}
	return &c.f.offsets[c.idx]
}

func (c *change) bounds() (int64, int64) {
	if c.idx < 0 {
		return c.f.first, c.f.last
	}
	off := c.f.first + int64(c.idx)
	return off, off
}

// endFor classifies a lease end.
func endFor(why cause, t AckType, to RecordState, belowStart bool) LeaseEnd {
	switch why {
	case causeAck:
		switch t {
		case AckAccept:
			return EndAccepted
		case AckRelease:
			if to == Available {
				return EndReleased
			}
			return EndReleasedAtLimit
		case AckReject:
			return EndRejected
		}
		return EndGap
	case causeTimeout:
		switch {
		case to == Available:
			return EndLockTimeout
		case belowStart:
			return EndLockTimeoutBelowStart
		}
		return EndLockTimeoutAtLimit
	}
	switch {
	case to == Available:
		return EndSessionClosed
	case belowStart:
		return EndSessionClosedBelowStart
	}
	return EndSessionClosedAtLimit
}

// move transitions an ACQUIRED record (idx >= 0) or batch (idx < 0) and
// records the change in tx.
func (sp *sharePartition) move(tx *txn, f *inflight, idx int, to RecordState, op countOp, why cause, t AckType, belowStart bool) {
	c := change{f: f, idx: idx, belowStart: belowStart}
	r := c.rec()
	c.old = *r
	if belowStart {
		to = Archived
	}
	if !transit(r, to, op, sp.maxDelivery, "") {
		panic("share: internal: illegal transition of an ACQUIRED record")
	}
	c.end = endFor(why, t, r.state, belowStart)
	tx.changes = append(tx.changes, c)
}

// rollback restores every change of tx, newest first (completeStateTransition(false)).
func (sp *sharePartition) rollback(tx *txn) {
	for i := len(tx.changes) - 1; i >= 0; i-- {
		c := &tx.changes[i]
		*c.rec() = c.old
	}
	tx.changes = tx.changes[:0]
}

// persist writes tx's new states with the current start offset. It returns
// the share coordinator's error, or None.
func (sp *sharePartition) persist(tx *txn) ErrorCode {
	if len(tx.changes) == 0 {
		return None
	}
	sp.b.stats.PersistWrites++
	if code := sp.b.writeFails(sp.key); code != None {
		sp.b.stats.PersistFailures++
		return code
	}
	ps := sp.b.persisted[sp.key]
	for i := range tx.changes {
		c := &tx.changes[i]
		first, last := c.bounds()
		r := c.rec()
		ps.set(first, last, r.state, r.count)
	}
	ps.setStart(sp.start)
	return None
}

// commit completes tx: lock timers of the records that left ACQUIRED are
// cancelled, and one lease event per record is returned in offset order.
func (sp *sharePartition) commit(tx *txn, now clock.Time, persistFailed bool) []LeaseEvent {
	n := int64(0)
	for i := range tx.changes {
		first, last := tx.changes[i].bounds()
		n += last - first + 1
	}
	out := make([]LeaseEvent, 0, n)
	for i := range tx.changes {
		c := &tx.changes[i]
		first, last := c.bounds()
		r := c.rec()
		sp.b.timers.del(timerKey{c.old.deadline, sp.id, first})
		for off := first; off <= last; off++ {
			e := LeaseEvent{Lease: c.old.lease + model.LeaseID(off-first), Group: sp.key.group, TopicPartition: sp.key.TopicPartition,
				Offset: off, Msg: msgID(sp.log.at(off)), Member: c.old.member, DeliveryCount: r.count, End: c.end, State: r.state,
				At: now, PersistFailed: persistFailed}
			sp.count(e.End)
			if toDLQ(e.End) {
				e.DLQ = sp.b.deadLetter(now, sp.key, off, sp.log.at(off), r.count, e.End)
			}
			out = append(out, e)
		}
		if r.state == Available {
			sp.findNext = true
		}
	}
	tx.changes = tx.changes[:0]
	return out
}

func (sp *sharePartition) count(e LeaseEnd) {
	s := &sp.b.stats
	switch e {
	case EndAccepted:
		s.Accepted++
	case EndReleased:
		s.Released++
	case EndRejected:
		s.Rejected++
	case EndLockTimeout:
		s.LockTimeouts++
	case EndSessionClosed:
		s.SessionReleases++
	default:
		s.Archived++
	}
}

// toDLQ reports whether a lease end copies the record to the group's
// dead-letter topic (KIP-1191): a rejection or the delivery limit.
func toDLQ(e LeaseEnd) bool {
	switch e {
	case EndRejected, EndReleasedAtLimit, EndLockTimeoutAtLimit, EndSessionClosedAtLimit:
		return true
	}
	return false
}

// acknowledge is SharePartition.acknowledge: all batches of one partition
// of one request succeed together or not at all. RENEWs take effect at
// once and are not rolled back (Kafka reschedules the timer in place).
func (sp *sharePartition) acknowledge(now clock.Time, member string, batches []AckBatch) (ErrorCode, []LeaseEvent, []Renewal) {
	tx := &txn{}
	err := None
	for i := range batches {
		ab := &batches[i]
		if ab.LastOffset < sp.start {
			continue // already archived
		}
		lo, hi, e := sp.ackRange(ab)
		if e == None {
			e = sp.ackBatches(tx, now, member, ab, lo, hi)
		}
		if e != None {
			err = e
			break
		}
	}
	if err != None {
		sp.rollback(tx)
		return err, nil, tx.renewals
	}
	if code := sp.persist(tx); code != None {
		sp.rollback(tx)
		return persisterError(code), nil, tx.renewals
	}
	events := sp.commit(tx, now, false)
	sp.advance()
	return None, events, tx.renewals
}

// ackRange is fetchSubMapForAcknowledgementBatch: the cached batches the
// request batch touches, cache[lo..hi].
func (sp *sharePartition) ackRange(ab *AckBatch) (int, int, ErrorCode) {
	lo := sp.floor(ab.FirstOffset)
	if lo < 0 {
		if !(ab.FirstOffset < sp.start && ab.LastOffset >= sp.start) {
			return 0, 0, InvalidRecordState // batch record not found
		}
		if lo = sp.floor(sp.start); lo < 0 {
			return 0, 0, InvalidRecordState
		}
	}
	hi := sp.floor(ab.LastOffset)
	if sp.cache[hi].last < ab.FirstOffset || ab.LastOffset > sp.cache[hi].last {
		return 0, 0, InvalidRequest // offsets past the acquired records
	}
	return lo, hi, None
}

// ackBatches is acknowledgeBatchRecords over cache[lo..hi].
func (sp *sharePartition) ackBatches(tx *txn, now clock.Time, member string, ab *AckBatch, lo, hi int) ErrorCode {
	for i := lo; i <= hi; i++ {
		f := sp.cache[i]
		if f.last < sp.start {
			continue
		}
		if !f.split() && (f.st.member == "" || f.st.member != member) {
			return InvalidRecordState // not acquired, or not by this member
		}
		full := f.first >= ab.FirstOffset && f.last <= ab.LastOffset
		startMoved := f.first < sp.start && f.last >= sp.start
		var e ErrorCode
		if !full || f.split() || len(ab.Types) > 1 || startMoved {
			if !f.split() {
				if f.st.state != Acquired {
					return InvalidRecordState
				}
				sp.splitBatch(f)
			}
			e = sp.ackOffsets(tx, now, member, ab, f)
		} else {
			e = sp.ackWhole(tx, now, ab.Types[0], f)
		}
		if e != None {
			return e
		}
	}
	return None
}

func (sp *sharePartition) ackOffsets(tx *txn, now clock.Time, member string, ab *AckBatch, f *inflight) ErrorCode {
	for i := range f.offsets {
		off := f.first + int64(i)
		if off < ab.FirstOffset || off < sp.start {
			continue
		}
		if off > ab.LastOffset {
			break
		}
		o := &f.offsets[i]
		if o.state != Acquired || o.member != member {
			return InvalidRecordState
		}
		t := ab.Types[0]
		if len(ab.Types) > 1 {
			t = ab.Types[off-ab.FirstOffset]
		}
		if t == AckRenew {
			sp.renew(tx, now, o, off, off)
			continue
		}
		sp.move(tx, f, i, ackState(t), countKeep, causeAck, t, false)
	}
	return None
}

func (sp *sharePartition) ackWhole(tx *txn, now clock.Time, t AckType, f *inflight) ErrorCode {
	if f.st.state != Acquired {
		return InvalidRecordState
	}
	if t == AckRenew {
		sp.renew(tx, now, &f.st, f.first, f.last)
		return None
	}
	sp.move(tx, f, -1, ackState(t), countKeep, causeAck, t, false)
	return None
}

// ackState maps an acknowledgement type to the record state it asks for.
func ackState(t AckType) RecordState {
	switch t {
	case AckAccept:
		return Acknowledged
	case AckRelease:
		return Available
	}
	return Archived // REJECT and GAP
}

// renew restarts the lock of an ACQUIRED record or batch from now
// (KIP-1222): same lease, same state and count, new deadline.
func (sp *sharePartition) renew(tx *txn, now clock.Time, r *recState, first, last int64) {
	sp.b.timers.del(timerKey{r.deadline, sp.id, first})
	r.deadline = now.Add(sp.lockDur)
	sp.b.timers.add(timerKey{r.deadline, sp.id, first})
	for off := first; off <= last; off++ {
		tx.renewals = append(tx.renewals, Renewal{Lease: r.lease + model.LeaseID(off-first), Group: sp.key.group,
			TopicPartition: sp.key.TopicPartition, Offset: off, Msg: msgID(sp.log.at(off)), Member: r.member, Deadline: r.deadline})
	}
	sp.b.stats.Renewals += last - first + 1
}

// release is releaseAcquiredRecords(member): the member's share session
// ended, so its ACQUIRED records become AVAILABLE (ARCHIVED at the limit or
// below the start offset), the delivery count kept (KAFKA-19972). If the
// write fails the release is rolled back, as in Kafka, and the records
// stay acquired until their locks expire.
func (sp *sharePartition) release(now clock.Time, member string) []LeaseEvent {
	op := countKeep
	if sp.b.cfg.Bugs.DecrementDeliveryCountOnSessionRelease {
		op = countDec
	}
	tx := &txn{}
	for _, f := range sp.cache {
		if !f.split() && f.st.state == Acquired && f.st.member == member && f.first < sp.start && f.last >= sp.start {
			sp.splitBatch(f)
		}
		if f.split() {
			for i := range f.offsets {
				if o := &f.offsets[i]; o.state == Acquired && o.member == member {
					sp.move(tx, f, i, Available, op, causeSession, 0, f.first+int64(i) < sp.start)
				}
			}
			continue
		}
		if f.st.state == Acquired && f.st.member == member {
			sp.move(tx, f, -1, Available, op, causeSession, 0, f.last < sp.start)
		}
	}
	if len(tx.changes) == 0 {
		return nil
	}
	if code := sp.persist(tx); code != None {
		sp.rollback(tx)
		if sp.orphans == nil {
			sp.orphans = map[string]bool{}
		}
		sp.orphans[member] = true
		return nil
	}
	events := sp.commit(tx, now, false)
	sp.advance()
	return events
}

// expire is releaseAcquisitionLockOnTimeout for the due timers of this
// share-partition (keys in deadline order). The transition stands even if
// its write fails ("we will still go ahead with the state transition").
// It returns the events and, aligned with them, the expired deadlines.
func (sp *sharePartition) expire(now clock.Time, keys []timerKey) ([]LeaseEvent, []clock.Time) {
	tx := &txn{}
	for _, k := range keys {
		f := sp.cache[sp.floor(k.first)]
		if f.split() {
			i := int(k.first - f.first)
			sp.move(tx, f, i, Available, countKeep, causeTimeout, 0, k.first < sp.start)
			continue
		}
		if f.first < sp.start && f.last >= sp.start {
			sp.splitBatch(f)
			for i := range f.offsets {
				if f.offsets[i].state == Acquired {
					sp.move(tx, f, i, Available, countKeep, causeTimeout, 0, f.first+int64(i) < sp.start)
				}
			}
			continue
		}
		sp.move(tx, f, -1, Available, countKeep, causeTimeout, 0, f.last < sp.start)
	}
	var deadlines []clock.Time
	for i := range tx.changes {
		c := &tx.changes[i]
		first, last := c.bounds()
		for off := first; off <= last; off++ {
			deadlines = append(deadlines, c.old.deadline)
		}
	}
	failed := sp.persist(tx) != None
	events := sp.commit(tx, now, failed)
	sp.advance()
	return events, deadlines
}
