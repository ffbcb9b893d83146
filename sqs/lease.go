package sqs

import (
	"slices"

	"popsim/clock"
	"popsim/model"
)

// maxTotalVisibility is the longest a message may stay invisible counted
// from the receive: 12 hours.
const maxTotalVisibility = MaxVisibilitySeconds * clock.Second

// DeleteMessage deletes a message by receipt handle. What a handle that is
// not the current lease's does (see the package documentation):
//
//   - malformed, forged or another queue's: ReceiptHandleIsInvalid;
//   - the message is gone (deleted, moved, expired, purged): success,
//     Deleted false;
//   - standard queue, not the message's latest handle: success, Deleted
//     false ("the request succeeds, but the message will not be deleted");
//   - standard queue, latest handle, lease already expired: deleted (also
//     when the message is visible again), unless the receive was 12 hours
//     ago or more: the handle has expired (InvalidParameterValue);
//   - FIFO queue, handle whose lease ended: InvalidParameterValue, "The
//     receipt handle has expired."
func (s *Service) DeleteMessage(now clock.Time, req *DeleteMessageRequest) DeleteMessageResult {
	s.begin(now)
	r := DeleteMessageResult{}
	if q := s.byName[req.Queue]; q == nil {
		r.Err = errNoQueue(req.Queue)
	} else {
		r.Deleted, r.Lease, r.Err = s.deleteOne(q, req.ReceiptHandle, false)
	}
	r.Effects = s.end()
	return r
}

// DeleteMessageBatch deletes up to 10 messages. Entry errors are as for
// DeleteMessage, except that an expired handle is ReceiptHandleIsInvalid
// ("The receipt handle has expired.") as AWS reports it per entry.
func (s *Service) DeleteMessageBatch(now clock.Time, req *DeleteMessageBatchRequest) DeleteMessageBatchResult {
	s.begin(now)
	r := DeleteMessageBatchResult{}
	q := s.byName[req.Queue]
	ids := make([]string, len(req.Entries))
	for i := range req.Entries {
		ids[i] = req.Entries[i].ID
	}
	switch {
	case q == nil:
		r.Err = errNoQueue(req.Queue)
	default:
		r.Err = checkBatch("DeleteMessageBatchRequestEntry", ids)
	}
	if r.Err == nil {
		r.Entries = make([]DeleteMessageBatchResultEntry, len(req.Entries))
		for i, e := range req.Entries {
			x := &r.Entries[i]
			x.ID = e.ID
			x.Deleted, x.Lease, x.Err = s.deleteOne(q, e.ReceiptHandle, true)
		}
	}
	r.Effects = s.end()
	return r
}

// resolve checks a handle's syntax, tag and queue and finds its message
// (nil when gone). A lease newer than the message's latest was never
// issued for it: the handle is invalid.
func (s *Service) resolve(q *queue, handle string) (*message, model.LeaseID, *Error) {
	h, ok := ParseReceiptHandle(handle)
	if !ok || h.Queue != q.name || !h.Valid(s.cfg.HandleSalt) {
		return nil, 0, errBadHandle(handle)
	}
	m := q.msgs[h.Seq]
	if m != nil && h.Lease > m.lease {
		return nil, 0, errBadHandle(handle)
	}
	return m, h.Lease, nil
}

func expired(handle string, batch bool) *Error {
	if batch {
		return newErr(ReceiptHandleIsInvalid, "The receipt handle has expired.")
	}
	return errExpiredHandle(handle)
}

func (s *Service) deleteOne(q *queue, handle string, batch bool) (bool, model.LeaseID, *Error) {
	m, lease, err := s.resolve(q, handle)
	if err != nil {
		return false, 0, err
	}
	if m == nil || (!q.fifo() && lease != m.lease) {
		q.stats.DeleteMisses++
		return false, lease, nil
	}
	switch {
	case q.fifo() && (lease != m.lease || m.state != stInFlight):
		return false, lease, expired(handle, batch)
	case !q.fifo() && s.now >= m.leasedAt.Add(maxTotalVisibility):
		return false, lease, expired(handle, batch)
	}
	e := Event{Kind: Deleted, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Ended: m.state == stInFlight}
	s.remove(q, m)
	q.stats.Deleted++
	s.event(e)
	return true, lease, nil
}

// ChangeMessageVisibility sets the visibility timeout of the message a
// receipt handle leased, counted from now; 0 makes it visible at once and
// ends the lease. The total since the receive may not pass 12 hours. A
// handle of an earlier receive is ReceiptHandleIsInvalid, the latest
// handle after its lease ended is MessageNotInflight, a handle of a
// message that is gone is InvalidParameterValue.
func (s *Service) ChangeMessageVisibility(now clock.Time, req *ChangeMessageVisibilityRequest) ChangeMessageVisibilityResult {
	s.begin(now)
	r := ChangeMessageVisibilityResult{}
	if q := s.byName[req.Queue]; q == nil {
		r.Err = errNoQueue(req.Queue)
	} else {
		r.Lease, r.Deadline, r.Ended, r.Err = s.changeOne(q, req.ReceiptHandle, req.VisibilityTimeout)
	}
	r.Effects = s.end()
	return r
}

// ChangeMessageVisibilityBatch changes up to 10 visibility timeouts; entry
// errors are as for ChangeMessageVisibility.
func (s *Service) ChangeMessageVisibilityBatch(now clock.Time, req *ChangeMessageVisibilityBatchRequest) ChangeMessageVisibilityBatchResult {
	s.begin(now)
	r := ChangeMessageVisibilityBatchResult{}
	q := s.byName[req.Queue]
	ids := make([]string, len(req.Entries))
	for i := range req.Entries {
		ids[i] = req.Entries[i].ID
	}
	switch {
	case q == nil:
		r.Err = errNoQueue(req.Queue)
	default:
		r.Err = checkBatch("ChangeMessageVisibilityBatchRequestEntry", ids)
	}
	if r.Err == nil {
		r.Entries = make([]ChangeVisibilityBatchResultEntry, len(req.Entries))
		for i, e := range req.Entries {
			x := &r.Entries[i]
			x.ID = e.ID
			x.Lease, x.Deadline, x.Ended, x.Err = s.changeOne(q, e.ReceiptHandle, e.VisibilityTimeout)
		}
	}
	r.Effects = s.end()
	return r
}

func (s *Service) changeOne(q *queue, handle string, vt int) (model.LeaseID, clock.Time, bool, *Error) {
	if vt < 0 || vt > MaxVisibilitySeconds {
		return 0, 0, false, errParamRange("VisibilityTimeout", vt, 0, MaxVisibilitySeconds)
	}
	m, lease, err := s.resolve(q, handle)
	switch {
	case err != nil:
		return 0, 0, false, err
	case m == nil:
		return lease, 0, false, newErr(InvalidParameterValue, "Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", handle)
	case lease != m.lease:
		return lease, 0, false, errSupersededHandle(handle)
	case m.state != stInFlight:
		return lease, 0, false, newErr(MessageNotInflight, "The message referred to by receipt handle %s is not in flight: its visibility timeout ended at %v.", handle, m.deadline)
	}
	deadline := s.now.Add(clock.Duration(vt) * clock.Second)
	if deadline.Sub(m.leasedAt) > maxTotalVisibility {
		return lease, 0, false, newErr(InvalidParameterValue, "Value %d for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [%d seconds]", vt, MaxVisibilitySeconds)
	}
	s.leave(q, m)
	if vt == 0 {
		m.deadline = s.now
		s.enter(q, m, stVisible)
		q.stats.MadeVisible++
		s.event(Event{Kind: MadeVisible, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Ended: true})
		return lease, s.now, true, nil
	}
	m.deadline, m.changed = deadline, true
	s.enter(q, m, stInFlight)
	q.stats.Changed++
	s.event(Event{Kind: Changed, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Deadline: deadline})
	return lease, deadline, false, nil
}

// PurgeQueue deletes every message of the queue (visible, delayed and in
// flight) and forgets a FIFO queue's deduplication ids. SQS takes up to 60
// seconds to finish; the engine deletes at once. A second purge within 60
// seconds fails with PurgeQueueInProgress.
func (s *Service) PurgeQueue(now clock.Time, queue string) PurgeQueueResult {
	s.begin(now)
	r := PurgeQueueResult{}
	q := s.byName[queue]
	switch {
	case q == nil:
		r.Err = errNoQueue(queue)
	case q.hasPurged && s.now < q.purgedAt.Add(PurgeIntervalSeconds*clock.Second):
		r.Err = newErr(PurgeQueueInProgress, "Only one PurgeQueue operation on %s is allowed every %d seconds.", q.name, PurgeIntervalSeconds)
	default:
		q.hasPurged, q.purgedAt = true, s.now
		r.Purged = s.purge(q)
	}
	r.Effects = s.end()
	return r
}

func (s *Service) purge(q *queue) int {
	seqs := make([]int64, 0, len(q.msgs))
	for seq := range q.msgs {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		m := q.msgs[seq]
		e := Event{Kind: Purged, Queue: q.name, Seq: m.seq, MsgID: m.id}
		if m.state == stInFlight {
			e.Lease, e.Ended = m.lease, true
		}
		s.remove(q, m)
		s.event(e)
	}
	q.stats.Purged += len(seqs)
	if q.fifo() {
		clear(q.dedup)
		q.dedupLog = q.dedupLog[:0]
	}
	return len(seqs)
}
