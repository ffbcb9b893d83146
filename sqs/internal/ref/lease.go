package ref

import (
	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
)

// resolve parses a handle and finds its message (nil: gone).
func (s *Service) resolve(q *queue, handle string) (*message, model.LeaseID, *sqs.Error) {
	h, ok := sqs.ParseReceiptHandle(handle)
	if !ok || h.Queue != q.name || !h.Valid(s.cfg.HandleSalt) {
		return nil, 0, errf(sqs.ReceiptHandleIsInvalid, "bad handle")
	}
	m := q.find(h.Seq)
	if m != nil && h.Lease > m.lease {
		return nil, 0, errf(sqs.ReceiptHandleIsInvalid, "never issued")
	}
	return m, h.Lease, nil
}

// DeleteMessage deletes by handle.
func (s *Service) DeleteMessage(now clock.Time, req *sqs.DeleteMessageRequest) sqs.DeleteMessageResult {
	s.begin(now)
	r := sqs.DeleteMessageResult{}
	if q := s.queue(req.Queue); q == nil {
		r.Err = noQueue(req.Queue)
	} else {
		r.Deleted, r.Lease, r.Err = s.deleteOne(q, req.ReceiptHandle, sqs.InvalidParameterValue)
	}
	r.Effects = s.end()
	return r
}

// DeleteMessageBatch deletes up to 10 messages.
func (s *Service) DeleteMessageBatch(now clock.Time, req *sqs.DeleteMessageBatchRequest) sqs.DeleteMessageBatchResult {
	s.begin(now)
	r := sqs.DeleteMessageBatchResult{}
	q := s.queue(req.Queue)
	var ids []string
	for _, e := range req.Entries {
		ids = append(ids, e.ID)
	}
	if q == nil {
		r.Err = noQueue(req.Queue)
	} else {
		r.Err = checkBatch(ids)
	}
	if r.Err == nil {
		for _, e := range req.Entries {
			x := sqs.DeleteMessageBatchResultEntry{ID: e.ID}
			x.Deleted, x.Lease, x.Err = s.deleteOne(q, e.ReceiptHandle, sqs.ReceiptHandleIsInvalid)
			r.Entries = append(r.Entries, x)
		}
	}
	r.Effects = s.end()
	return r
}

// deleteOne: gone or (standard) stale deletes nothing; FIFO needs the live
// lease; standard handles expire 12 hours after their receive.
func (s *Service) deleteOne(q *queue, handle string, expiredCode sqs.Code) (bool, model.LeaseID, *sqs.Error) {
	m, lease, err := s.resolve(q, handle)
	if err != nil {
		return false, 0, err
	}
	if m == nil || !q.fifo() && lease != m.lease {
		q.stats.DeleteMisses++
		return false, lease, nil
	}
	if q.fifo() && (lease != m.lease || m.st != inflight) || !q.fifo() && s.now >= m.leasedAt.Add(secs(sqs.MaxVisibilitySeconds)) {
		return false, lease, errf(expiredCode, "expired")
	}
	e := sqs.Event{Kind: sqs.Deleted, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Ended: m.st == inflight}
	s.drop(q, m)
	q.stats.Deleted++
	s.event(e)
	return true, lease, nil
}

// ChangeMessageVisibility changes one visibility timeout.
func (s *Service) ChangeMessageVisibility(now clock.Time, req *sqs.ChangeMessageVisibilityRequest) sqs.ChangeMessageVisibilityResult {
	s.begin(now)
	r := sqs.ChangeMessageVisibilityResult{}
	if q := s.queue(req.Queue); q == nil {
		r.Err = noQueue(req.Queue)
	} else {
		r.Lease, r.Deadline, r.Ended, r.Err = s.changeOne(q, req.ReceiptHandle, req.VisibilityTimeout)
	}
	r.Effects = s.end()
	return r
}

// ChangeMessageVisibilityBatch changes up to 10 visibility timeouts.
func (s *Service) ChangeMessageVisibilityBatch(now clock.Time, req *sqs.ChangeMessageVisibilityBatchRequest) sqs.ChangeMessageVisibilityBatchResult {
	s.begin(now)
	r := sqs.ChangeMessageVisibilityBatchResult{}
	q := s.queue(req.Queue)
	var ids []string
	for _, e := range req.Entries {
		ids = append(ids, e.ID)
	}
	if q == nil {
		r.Err = noQueue(req.Queue)
	} else {
		r.Err = checkBatch(ids)
	}
	if r.Err == nil {
		for _, e := range req.Entries {
			x := sqs.ChangeVisibilityBatchResultEntry{ID: e.ID}
			x.Lease, x.Deadline, x.Ended, x.Err = s.changeOne(q, e.ReceiptHandle, e.VisibilityTimeout)
			r.Entries = append(r.Entries, x)
		}
	}
	r.Effects = s.end()
	return r
}

func (s *Service) changeOne(q *queue, handle string, vt int) (model.LeaseID, clock.Time, bool, *sqs.Error) {
	if vt < 0 || vt > sqs.MaxVisibilitySeconds {
		return 0, 0, false, errf(sqs.InvalidParameterValue, "range")
	}
	m, lease, err := s.resolve(q, handle)
	switch {
	case err != nil:
		return 0, 0, false, err
	case m == nil:
		return lease, 0, false, errf(sqs.InvalidParameterValue, "gone")
	case lease != m.lease:
		return lease, 0, false, errf(sqs.ReceiptHandleIsInvalid, "superseded")
	case m.st != inflight:
		return lease, 0, false, errf(sqs.MessageNotInflight, "not in flight")
	case s.now.Add(secs(vt)).Sub(m.leasedAt) > secs(sqs.MaxVisibilitySeconds):
		return lease, 0, false, errf(sqs.InvalidParameterValue, "total")
	}
	if vt == 0 {
		m.st, m.deadline = visible, s.now
		q.stats.MadeVisible++
		s.event(sqs.Event{Kind: sqs.MadeVisible, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Ended: true})
		return lease, s.now, true, nil
	}
	m.deadline, m.changed = s.now.Add(secs(vt)), true
	q.stats.Changed++
	s.event(sqs.Event{Kind: sqs.Changed, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: lease, Deadline: m.deadline})
	return lease, m.deadline, false, nil
}

// PurgeQueue deletes every message of a queue.
func (s *Service) PurgeQueue(now clock.Time, name string) sqs.PurgeQueueResult {
	s.begin(now)
	r := sqs.PurgeQueueResult{}
	q := s.queue(name)
	switch {
	case q == nil:
		r.Err = noQueue(name)
	case q.purged && s.now < q.purgedAt.Add(secs(sqs.PurgeIntervalSeconds)):
		r.Err = errf(sqs.PurgeQueueInProgress, "in progress")
	default:
		q.purged, q.purgedAt = true, s.now
		for _, m := range q.msgs {
			e := sqs.Event{Kind: sqs.Purged, Queue: q.name, Seq: m.seq, MsgID: m.id}
			if m.st == inflight {
				e.Lease, e.Ended = m.lease, true
			}
			s.event(e)
		}
		r.Purged = len(q.msgs)
		q.stats.Purged += len(q.msgs)
		q.msgs = nil
		q.dedup = nil
	}
	r.Effects = s.end()
	return r
}
