package sqs

import (
	"popsim/clock"
)

// ReceiveMessage receives up to MaxNumberOfMessages messages, each as a new
// lease. A short poll (wait 0) queries the servers its Sample selects and
// answers at once, possibly empty although messages exist; a long poll
// queries all servers, answers at once if it finds anything, and is parked
// otherwise (see ReceiveMessageResult). Before returning a message whose
// ApproximateReceiveCount already reached the queue's maxReceiveCount, the
// receive moves it to the dead-letter queue instead (an event) and goes on.
func (s *Service) ReceiveMessage(now clock.Time, req *ReceiveMessageRequest) ReceiveMessageResult {
	s.begin(now)
	r := ReceiveMessageResult{}
	q := s.byName[req.Queue]
	max, vt, wait, err := checkReceive(q, req)
	if err == nil {
		r.Messages, err = s.receive(q, req, max, vt, wait > 0)
	}
	r.Err = err
	if err == nil && len(r.Messages) == 0 && wait > 0 {
		p := s.park(q, req, max, vt, wait)
		r.Parked, r.PollID, r.WaitUntil = true, p.id, p.until
		// The receive's own dead-letter moves can have brought messages
		// into a FIFO scan window after it looked: try once more.
		s.markDirty(q)
	}
	if q != nil && err == nil {
		q.stats.ReceiveCalls++
		if len(r.Messages) == 0 && !r.Parked {
			q.stats.EmptyReceives++
		}
	}
	r.Effects = s.end()
	return r
}

// checkReceive validates a receive and returns its effective maximum,
// visibility timeout and wait.
func checkReceive(q *queue, req *ReceiveMessageRequest) (max, vt, wait int, err *Error) {
	if q == nil {
		return 0, 0, 0, errNoQueue(req.Queue)
	}
	max = req.MaxNumberOfMessages.or(1)
	vt = req.VisibilityTimeout.or(q.attrs.VisibilityTimeout)
	wait = req.WaitTimeSeconds.or(q.attrs.ReceiveMessageWaitTimeSeconds)
	switch {
	case max < 1 || max > MaxBatchEntries:
		err = errParamRange("MaxNumberOfMessages", max, 1, MaxBatchEntries)
	case vt < 0 || vt > MaxVisibilitySeconds:
		err = errParamRange("VisibilityTimeout", vt, 0, MaxVisibilitySeconds)
	case wait < 0 || wait > MaxWaitTimeSeconds:
		err = errParamRange("WaitTimeSeconds", wait, 0, MaxWaitTimeSeconds)
	case q.fifo() && req.ReceiveRequestAttemptID != "" && !validID(req.ReceiveRequestAttemptID):
		err = errBadID("ReceiveRequestAttemptId", req.ReceiveRequestAttemptID)
	}
	return max, vt, wait, err
}

// receive runs a validated receive.
func (s *Service) receive(q *queue, req *ReceiveMessageRequest, max, vt int, all bool) ([]Delivery, *Error) {
	id := req.ReceiveRequestAttemptID
	if q.fifo() && id != "" {
		if out, ok := s.retryAttempt(q, id, vt); ok {
			return out, nil
		}
	}
	if !q.fifo() && q.inflight >= s.cfg.StandardInFlightLimit {
		q.stats.OverLimit++
		return nil, newErr(OverLimit, "Too many messages in flight: the queue has %d, the limit is %d.", q.inflight, s.cfg.StandardInFlightLimit)
	}
	var out []Delivery // allocated by the first grant: most short polls find nothing
	if !q.fifo() && req.DuplicateSeq != 0 {
		if m := q.msgs[req.DuplicateSeq]; m != nil && m.state == stInFlight {
			out = append(make([]Delivery, 0, max), s.grant(q, m, vt))
			out[0].Duplicate = true
			q.stats.Duplicates++
		}
	}
	out = s.collectInto(out, q, req, max-len(out), vt, all)
	s.recordAttempt(q, id, out)
	return out, nil
}

// collect leases up to max available messages of q. all queries every
// server (long polls); otherwise the request's Sample chooses.
func (s *Service) collect(q *queue, req *ReceiveMessageRequest, max, vt int, all bool) []Delivery {
	return s.collectInto(nil, q, req, max, vt, all)
}

// collectInto is collect appending to out.
func (s *Service) collectInto(out []Delivery, q *queue, req *ReceiveMessageRequest, max, vt int, all bool) []Delivery {
	limit := s.cfg.StandardInFlightLimit
	if q.fifo() {
		limit = s.cfg.FifoInFlightLimit
	}
	n := len(out) + min(max, limit-q.inflight)
	if n <= len(out) {
		return out
	}
	mask := s.sampleMask(req.Sample, all)
	if q.fifo() {
		return s.collectFifo(out, q, n, vt, mask)
	}
	for len(out) < n {
		seq := int64(-1)
		for i, t := range q.vis {
			if mask&(1<<uint(i)) == 0 {
				continue
			}
			if v, ok := t.Min(); ok && (seq < 0 || v < seq) {
				seq = v
			}
		}
		if seq < 0 {
			break
		}
		m := q.msgs[seq]
		if s.redriveDue(q, m) {
			s.redrive(q, m)
			continue
		}
		out = appendGrant(out, s.grant(q, m, vt), n)
	}
	return out
}

// appendGrant appends d to out, giving a nil out room for n deliveries.
func appendGrant(out []Delivery, d Delivery, n int) []Delivery {
	if out == nil {
		out = make([]Delivery, 0, n)
	}
	return append(out, d)
}

// sampleMask returns the servers a receive queries.
func (s *Service) sampleMask(sample uint64, all bool) uint64 {
	full := ^uint64(0)
	if s.cfg.Servers < 64 {
		full = 1<<uint(s.cfg.Servers) - 1
	}
	if all || sample&full == 0 {
		return full
	}
	return sample & full
}

// collectFifo leases messages of a FIFO queue until out holds n: group by group, in
// the order of each group's first message, as many consecutive messages of
// a group as possible before the next group. A group with a message in
// flight is skipped; a group stops at its first delayed message. Only the
// first FifoScanWindow stored messages are looked at.
func (s *Service) collectFifo(out []Delivery, q *queue, n, vt int, mask uint64) []Delivery {
	threshold := s.fifoThreshold(q)
	pivot := &group{}
	for len(out) < n {
		var g *group
		q.ready.Ascend(pivot, func(x *group) bool {
			if x.head > threshold {
				return false
			}
			if mask&(1<<uint(x.server)) != 0 {
				g = x
				return false
			}
			return true
		})
		if g == nil {
			break
		}
		pivot = &group{head: g.head + 1}
		out = s.drain(q, g, out, n, vt, threshold)
	}
	return out
}

// fifoThreshold is the position of the last message inside the scan
// window.
func (s *Service) fifoThreshold(q *queue) int64 {
	if q.live.Len() <= s.cfg.FifoScanWindow {
		return 1<<63 - 1
	}
	t, _ := q.live.GetAt(s.cfg.FifoScanWindow - 1)
	return t
}

// drain leases consecutive messages of group g from its first one.
func (s *Service) drain(q *queue, g *group, out []Delivery, n, vt int, threshold int64) []Delivery {
	next := memberKey{g.ord, 0}
	for len(out) < n {
		var m *message
		q.members.Ascend(next, func(k memberKey) bool {
			if k.g == g.ord {
				m = q.msgs[k.seq]
			}
			return false
		})
		if m == nil || m.state != stVisible || m.seq > threshold {
			break
		}
		next = memberKey{g.ord, m.seq + 1}
		if s.redriveDue(q, m) {
			s.redrive(q, m)
			continue
		}
		out = appendGrant(out, s.grant(q, m, vt), n)
	}
	return out
}

// grant leases m (visible, or in flight for a duplicate) for vt seconds.
func (s *Service) grant(q *queue, m *message, vt int) Delivery {
	if m.state == stInFlight {
		s.event(Event{Kind: Superseded, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: m.lease, Ended: true})
	}
	s.leave(q, m)
	s.lastLease++
	if m.receiveCount == 0 {
		m.firstReceive = s.now
	}
	m.receiveCount++
	m.lease, m.leasedAt, m.changed = s.lastLease, s.now, false
	m.deadline = s.now.Add(clock.Duration(vt) * clock.Second)
	s.enter(q, m, stInFlight)
	q.stats.Received++
	return s.delivery(q, m)
}

func (s *Service) delivery(q *queue, m *message) Delivery {
	return Delivery{
		MsgID: m.id, Queue: q.name, Seq: m.seq, Lease: m.lease,
		ReceiptHandle: NewReceiptHandle(s.cfg.HandleSalt, q.name, m.seq, m.lease).String(),
		Deadline:      m.deadline, ReceiveCount: m.receiveCount, FirstReceive: m.firstReceive, Sent: m.sent,
		Body: m.body, MessageGroupID: m.groupID, MessageDeduplicationID: m.dedupID, DeadLetterSource: m.dlqSource,
	}
}

// ---- redrive ----

func (s *Service) redriveDue(q *queue, m *message) bool {
	p := q.attrs.RedrivePolicy
	return p != nil && m.receiveCount >= p.MaxReceiveCount
}

// redrive moves m from q to q's dead-letter queue. The copy keeps the
// message id, body, group, counts and timestamps; a standard copy keeps its
// enqueue time for retention, a FIFO copy restarts it ("Setting-up
// dead-letter queue retention in Amazon SQS").
func (s *Service) redrive(q *queue, m *message) {
	d := q.dlq
	s.remove(q, m)
	d.nextSeq++
	c := &message{seq: d.nextSeq, id: m.id, body: m.body, groupID: m.groupID, dedupID: m.dedupID,
		sent: m.sent, retainFrom: m.sent, availableAt: s.now, receiveCount: m.receiveCount, firstReceive: m.firstReceive, dlqSource: q.name}
	if d.fifo() {
		c.retainFrom = s.now
	}
	q.stats.Redriven++
	d.stats.DeadLettered++
	s.event(Event{Kind: Redriven, Queue: q.name, Seq: m.seq, MsgID: m.id, To: d.name, ToSeq: c.seq})
	s.store(d, c, stVisible)
}

// ---- ReceiveRequestAttemptId ----

// retryAttempt answers a FIFO receive whose attempt id was used within the
// last 5 minutes, if every message it returned is still in flight under
// that receive's lease and none had its visibility changed: the same
// deliveries, with the visibility timeout restarted now.
func (s *Service) retryAttempt(q *queue, id string, vt int) ([]Delivery, bool) {
	s.expireAttempts(q)
	a := q.attempts[id]
	if a == nil {
		return nil, false
	}
	for _, l := range a.leases {
		m := q.msgs[l.seq]
		if m == nil || m.lease != l.lease || m.state != stInFlight || m.changed {
			delete(q.attempts, id)
			return nil, false
		}
	}
	out := make([]Delivery, len(a.leases))
	for i, l := range a.leases {
		m := q.msgs[l.seq]
		s.leave(q, m)
		m.deadline = s.now.Add(clock.Duration(vt) * clock.Second)
		s.enter(q, m, stInFlight)
		out[i] = s.delivery(q, m)
		out[i].Retry = true
	}
	q.stats.AttemptRetries++
	return out, true
}

func (s *Service) recordAttempt(q *queue, id string, out []Delivery) {
	if !q.fifo() || id == "" || len(out) == 0 {
		return
	}
	s.expireAttempts(q)
	a := &attempt{at: s.now, leases: make([]attemptLease, len(out))}
	for i, d := range out {
		a.leases[i] = attemptLease{seq: d.Seq, lease: d.Lease}
	}
	q.attempts[id] = a
	q.attemptLg = append(q.attemptLg, attemptRef{at: s.now, id: id})
}

// expireAttempts forgets attempt ids older than 5 minutes.
func (s *Service) expireAttempts(q *queue) {
	n := 0
	for _, ref := range q.attemptLg {
		if s.now < ref.at.Add(AttemptIDSeconds*clock.Second) {
			break
		}
		if a, ok := q.attempts[ref.id]; ok && a.at == ref.at {
			delete(q.attempts, ref.id)
		}
		n++
	}
	q.attemptLg = q.attemptLg[n:]
}
