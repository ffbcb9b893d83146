package ref

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"sort"

	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
)

var (
	idRE      = regexp.MustCompile("^[0-9A-Za-z!\"#$%&'()*+,./:;<=>?@\\[\\\\\\]^_`{|}~-]{1,128}$")
	batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
)

// ---- send ----

// SendMessage enqueues one message.
func (s *Service) SendMessage(now clock.Time, req *sqs.SendMessageRequest) sqs.SendMessageResult {
	s.begin(now)
	r := sqs.SendMessageResult{}
	q := s.queue(req.Queue)
	if q == nil {
		r.Err = noQueue(req.Queue)
	} else if d, err, _ := checkSend(q, req); err != nil {
		r.Err = err
	} else {
		r.Seq, r.Deduplicated, r.Original = s.send(q, req, d)
	}
	r.Effects = s.end()
	return r
}

func checkBatch(ids []string) *sqs.Error {
	if len(ids) == 0 {
		return errf(sqs.EmptyBatchRequest, "empty")
	}
	if len(ids) > sqs.MaxBatchEntries {
		return errf(sqs.TooManyEntriesInBatchRequest, "too many")
	}
	for i, id := range ids {
		if !batchIDRE.MatchString(id) {
			return errf(sqs.InvalidBatchEntryId, "bad id")
		}
		if slices.Contains(ids[:i], id) {
			return errf(sqs.BatchEntryIdsNotDistinct, "repeated")
		}
	}
	return nil
}

// SendMessageBatch enqueues up to 10 messages.
func (s *Service) SendMessageBatch(now clock.Time, req *sqs.SendMessageBatchRequest) sqs.SendMessageBatchResult {
	s.begin(now)
	r := sqs.SendMessageBatchResult{}
	q := s.queue(req.Queue)
	var ids []string
	size := 0
	var reqs []sqs.SendMessageRequest
	for _, e := range req.Entries {
		ids = append(ids, e.ID)
		size += len(e.MessageBody)
		reqs = append(reqs, sqs.SendMessageRequest{Queue: req.Queue, MsgID: e.MsgID, MessageBody: e.MessageBody, DelaySeconds: e.DelaySeconds,
			MessageGroupID: e.MessageGroupID, MessageDeduplicationID: e.MessageDeduplicationID})
	}
	switch {
	case q == nil:
		r.Err = noQueue(req.Queue)
	default:
		r.Err = checkBatch(ids)
	}
	if r.Err == nil && size > sqs.MaxBatchPayload {
		r.Err = errf(sqs.BatchRequestTooLong, "too long")
	}
	dedups := make([]string, len(reqs))
	errs := make([]*sqs.Error, len(reqs))
	if r.Err == nil {
		for i := range reqs {
			var whole bool
			dedups[i], errs[i], whole = checkSend(q, &reqs[i])
			if whole {
				r.Err = errs[i]
				break
			}
		}
	}
	if r.Err == nil {
		for i := range reqs {
			x := sqs.SendMessageBatchResultEntry{ID: ids[i], Err: errs[i]}
			if x.Err == nil {
				x.Seq, x.Deduplicated, x.Original = s.send(q, &reqs[i], dedups[i])
			}
			r.Entries = append(r.Entries, x)
		}
	}
	r.Effects = s.end()
	return r
}

// checkSend validates a send: body, size, delay, group, deduplication id.
func checkSend(q *queue, req *sqs.SendMessageRequest) (string, *sqs.Error, bool) {
	if len(req.MessageBody) == 0 {
		return "", errf(sqs.MissingParameter, "body"), false
	}
	if len(req.MessageBody) > q.attrs.MaximumMessageSize {
		return "", errf(sqs.InvalidParameterValue, "size"), false
	}
	if d := req.DelaySeconds; d.Set && (d.Value < 0 || d.Value > sqs.MaxDelaySeconds) {
		return "", errf(sqs.InvalidParameterValue, "delay"), false
	}
	if q.fifo() && req.DelaySeconds.Value != 0 {
		return "", errf(sqs.InvalidParameterValue, "fifo delay"), false
	}
	if q.fifo() && req.MessageGroupID == "" {
		return "", errf(sqs.MissingParameter, "group"), true
	}
	if req.MessageGroupID != "" && !idRE.MatchString(req.MessageGroupID) {
		return "", errf(sqs.InvalidParameterValue, "group id"), false
	}
	d := req.MessageDeduplicationID
	if !q.fifo() {
		if d != "" {
			return "", errf(sqs.InvalidParameterValue, "dedup on standard"), false
		}
		return "", nil, false
	}
	if d != "" && !idRE.MatchString(d) {
		return "", errf(sqs.InvalidParameterValue, "dedup id"), false
	}
	if d == "" {
		if !q.attrs.ContentBasedDeduplication {
			return "", errf(sqs.InvalidParameterValue, "no dedup id"), true
		}
		sum := sha256.Sum256(req.MessageBody)
		d = hex.EncodeToString(sum[:])
	}
	return d, nil, false
}

func (s *Service) send(q *queue, req *sqs.SendMessageRequest, dedupID string) (int64, bool, model.MsgID) {
	key := dedupID
	if q.fifo() {
		if q.attrs.DeduplicationScope == sqs.ScopeMessageGroup {
			key = req.MessageGroupID + "\x00" + dedupID
		}
		for _, d := range q.dedup {
			if d.key == key && s.now < d.at.Add(secs(sqs.DeduplicationSeconds)) {
				q.stats.Deduplicated++
				return d.seq, true, d.id
			}
		}
	}
	q.nextSeq++
	m := &message{seq: q.nextSeq, id: req.MsgID, body: req.MessageBody, groupID: req.MessageGroupID, sent: s.now, retainFrom: s.now, availableAt: s.now, st: visible}
	delay := q.attrs.DelaySeconds
	if !q.fifo() && req.DelaySeconds.Set {
		delay = req.DelaySeconds.Value
	}
	if delay > 0 {
		m.availableAt, m.st = s.now.Add(secs(delay)), delayed
	}
	if q.fifo() {
		m.dedupID = dedupID
		q.dedup = append(q.dedup, dedupRec{key: key, at: s.now, seq: m.seq, id: m.id})
	}
	q.msgs = append(q.msgs, m)
	q.stats.Sent++
	return m.seq, false, 0
}

// ---- receive ----

// ReceiveMessage receives messages.
func (s *Service) ReceiveMessage(now clock.Time, req *sqs.ReceiveMessageRequest) sqs.ReceiveMessageResult {
	s.begin(now)
	r := sqs.ReceiveMessageResult{}
	q := s.queue(req.Queue)
	var max, vt, wait int
	if q == nil {
		r.Err = noQueue(req.Queue)
	} else {
		max, vt, wait = 1, q.attrs.VisibilityTimeout, q.attrs.ReceiveMessageWaitTimeSeconds
		if req.MaxNumberOfMessages.Set {
			max = req.MaxNumberOfMessages.Value
		}
		if req.VisibilityTimeout.Set {
			vt = req.VisibilityTimeout.Value
		}
		if req.WaitTimeSeconds.Set {
			wait = req.WaitTimeSeconds.Value
		}
		switch {
		case max < 1 || max > 10, vt < 0 || vt > sqs.MaxVisibilitySeconds, wait < 0 || wait > sqs.MaxWaitTimeSeconds:
			r.Err = errf(sqs.InvalidParameterValue, "range")
		case q.fifo() && req.ReceiveRequestAttemptID != "" && !idRE.MatchString(req.ReceiveRequestAttemptID):
			r.Err = errf(sqs.InvalidParameterValue, "attempt id")
		}
	}
	if r.Err == nil {
		r.Messages, r.Err = s.receive(q, req, max, vt, wait > 0)
	}
	if r.Err == nil && len(r.Messages) == 0 && wait > 0 {
		s.lastPoll++
		p := &poll{id: s.lastPoll, req: *req, max: max, vt: vt, until: s.now.Add(secs(wait))}
		q.polls = append(q.polls, p)
		r.Parked, r.PollID, r.WaitUntil = true, p.id, p.until
	}
	if q != nil && r.Err == nil {
		q.stats.ReceiveCalls++
		if len(r.Messages) == 0 && !r.Parked {
			q.stats.EmptyReceives++
		}
	}
	r.Effects = s.end()
	return r
}

func (s *Service) receive(q *queue, req *sqs.ReceiveMessageRequest, max, vt int, all bool) ([]sqs.Delivery, *sqs.Error) {
	id := req.ReceiveRequestAttemptID
	if q.fifo() && id != "" {
		if out, ok := s.retry(q, id, vt); ok {
			return out, nil
		}
	}
	if !q.fifo() && q.count(inflight) >= s.cfg.StandardInFlightLimit {
		q.stats.OverLimit++
		return nil, errf(sqs.OverLimit, "over limit")
	}
	var out []sqs.Delivery
	if !q.fifo() && req.DuplicateSeq != 0 {
		if m := q.find(req.DuplicateSeq); m != nil && m.st == inflight {
			d := s.grant(q, m, vt)
			d.Duplicate = true
			out = append(out, d)
			q.stats.Duplicates++
		}
	}
	out = append(out, s.collect(q, req, max-len(out), vt, all)...)
	s.recordAttempt(q, id, out)
	return out, nil
}

func (s *Service) sampled(server int, sample uint64, all bool) bool {
	full := ^uint64(0)
	if s.cfg.Servers < 64 {
		full = 1<<uint(s.cfg.Servers) - 1
	}
	if all || sample&full == 0 {
		return true
	}
	return sample&(1<<uint(server)) != 0
}

func (s *Service) collect(q *queue, req *sqs.ReceiveMessageRequest, max, vt int, all bool) []sqs.Delivery {
	limit := s.cfg.StandardInFlightLimit
	if q.fifo() {
		limit = s.cfg.FifoInFlightLimit
	}
	n := min(max, limit-q.count(inflight))
	if n <= 0 {
		return nil
	}
	if q.fifo() {
		return s.collectFifo(q, req, n, vt, all)
	}
	var cands []*message
	for _, m := range q.msgs {
		if m.st == visible && s.sampled(int(m.seq%int64(s.cfg.Servers)), req.Sample, all) {
			cands = append(cands, m)
		}
	}
	var out []sqs.Delivery
	for _, m := range cands { // q.msgs is in position order
		if len(out) == n {
			break
		}
		if s.redriveDue(q, m) {
			s.redrive(q, m)
			continue
		}
		out = append(out, s.grant(q, m, vt))
	}
	return out
}

func (s *Service) collectFifo(q *queue, req *sqs.ReceiveMessageRequest, n, vt int, all bool) []sqs.Delivery {
	threshold := int64(1<<63 - 1)
	if len(q.msgs) > s.cfg.FifoScanWindow {
		threshold = q.msgs[s.cfg.FifoScanWindow-1].seq
	}
	// Groups with nothing in flight whose first message is visible, by
	// that message's position.
	type ready struct {
		id   string
		head int64
	}
	var groups []ready
	seen := map[string]bool{}
	for _, m := range q.msgs {
		if seen[m.groupID] {
			continue
		}
		seen[m.groupID] = true
		blocked := false
		for _, x := range q.msgs {
			if x.groupID == m.groupID && x.st == inflight {
				blocked = true
			}
		}
		if !blocked && m.st == visible && m.seq <= threshold && s.sampled(groupServer(m.groupID, s.cfg.Servers), req.Sample, all) {
			groups = append(groups, ready{m.groupID, m.seq})
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].head < groups[j].head })
	var out []sqs.Delivery
	for _, g := range groups {
		var members []*message
		for _, m := range q.msgs {
			if m.groupID == g.id {
				members = append(members, m)
			}
		}
		for _, m := range members {
			if len(out) == n || m.st != visible || m.seq > threshold {
				break
			}
			if s.redriveDue(q, m) {
				s.redrive(q, m)
				continue
			}
			out = append(out, s.grant(q, m, vt))
		}
		if len(out) == n {
			break
		}
	}
	return out
}

func (s *Service) grant(q *queue, m *message, vt int) sqs.Delivery {
	if m.st == inflight {
		s.event(sqs.Event{Kind: sqs.Superseded, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: m.lease, Ended: true})
	}
	s.lastLease++
	if m.receiveCount == 0 {
		m.firstReceive = s.now
	}
	m.receiveCount++
	m.lease, m.leasedAt, m.changed, m.st = s.lastLease, s.now, false, inflight
	m.deadline = s.now.Add(secs(vt))
	q.stats.Received++
	return s.delivery(q, m)
}

func (s *Service) delivery(q *queue, m *message) sqs.Delivery {
	return sqs.Delivery{MsgID: m.id, Queue: q.name, Seq: m.seq, Lease: m.lease,
		ReceiptHandle: sqs.NewReceiptHandle(s.cfg.HandleSalt, q.name, m.seq, m.lease).String(),
		Deadline:      m.deadline, ReceiveCount: m.receiveCount, FirstReceive: m.firstReceive, Sent: m.sent, Body: m.body,
		MessageGroupID: m.groupID, MessageDeduplicationID: m.dedupID, DeadLetterSource: m.dlqSource}
}

func (s *Service) redriveDue(q *queue, m *message) bool {
	return q.attrs.RedrivePolicy != nil && m.receiveCount >= q.attrs.RedrivePolicy.MaxReceiveCount
}

func (s *Service) redrive(q *queue, m *message) {
	d := q.dlq
	s.drop(q, m)
	d.nextSeq++
	c := &message{seq: d.nextSeq, id: m.id, body: m.body, groupID: m.groupID, dedupID: m.dedupID, sent: m.sent,
		retainFrom: m.sent, availableAt: s.now, receiveCount: m.receiveCount, firstReceive: m.firstReceive, st: visible, dlqSource: q.name}
	if d.fifo() {
		c.retainFrom = s.now
	}
	d.msgs = append(d.msgs, c)
	q.stats.Redriven++
	d.stats.DeadLettered++
	s.event(sqs.Event{Kind: sqs.Redriven, Queue: q.name, Seq: m.seq, MsgID: m.id, To: d.name, ToSeq: c.seq})
}

func (s *Service) retry(q *queue, id string, vt int) ([]sqs.Delivery, bool) {
	i := slices.IndexFunc(q.attempts, func(a attemptRec) bool { return a.id == id })
	if i < 0 {
		return nil, false
	}
	a := q.attempts[i]
	valid := s.now < a.at.Add(secs(sqs.AttemptIDSeconds))
	for j, seq := range a.seqs {
		m := q.find(seq)
		if m == nil || m.lease != a.leases[j] || m.st != inflight || m.changed {
			valid = false
		}
	}
	if !valid {
		q.attempts = slices.Delete(q.attempts, i, i+1)
		return nil, false
	}
	var out []sqs.Delivery
	for _, seq := range a.seqs {
		m := q.find(seq)
		m.deadline = s.now.Add(secs(vt))
		d := s.delivery(q, m)
		d.Retry = true
		out = append(out, d)
	}
	q.stats.AttemptRetries++
	return out, true
}

func (s *Service) recordAttempt(q *queue, id string, out []sqs.Delivery) {
	if !q.fifo() || id == "" || len(out) == 0 {
		return
	}
	q.attempts = slices.DeleteFunc(q.attempts, func(a attemptRec) bool { return a.id == id })
	a := attemptRec{id: id, at: s.now}
	for _, d := range out {
		a.seqs = append(a.seqs, d.Seq)
		a.leases = append(a.leases, d.Lease)
	}
	q.attempts = append(q.attempts, a)
}
