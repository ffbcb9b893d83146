package sqs

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"popsim/clock"
	"popsim/model"
)

// validID reports whether s is what MessageGroupId,
// MessageDeduplicationId and ReceiveRequestAttemptId may hold: 1 to 128
// letters, digits and punctuation, which together are every printable
// ASCII character but the space (0x21 to 0x7E). A loop, not a regexp: a
// FIFO consumer's every receive carries an attempt id.
func validID(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// batchIDRE is what a batch entry Id may hold.
var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// SendMessage enqueues one message. On a FIFO queue a deduplication id
// (given, or the SHA-256 of the body with ContentBasedDeduplication) seen
// within the last 5 minutes makes the send succeed without enqueuing
// anything (Deduplicated).
func (s *Service) SendMessage(now clock.Time, req *SendMessageRequest) SendMessageResult {
	s.begin(now)
	r := SendMessageResult{}
	if q := s.byName[req.Queue]; q == nil {
		r.Err = errNoQueue(req.Queue)
	} else if key, err, _ := s.checkSend(q, req); err != nil {
		r.Err = err
	} else {
		r.Seq, r.Deduplicated, r.Original = s.send(q, req, key)
	}
	r.Effects = s.end()
	return r
}

// SendMessageBatch enqueues up to 10 messages, in entry order. Malformed
// batches, and FIFO entries without a message group or deduplication id,
// fail the whole request; other entry errors fail only their entry.
func (s *Service) SendMessageBatch(now clock.Time, req *SendMessageBatchRequest) SendMessageBatchResult {
	s.begin(now)
	r := SendMessageBatchResult{}
	q := s.byName[req.Queue]
	if q == nil {
		r.Err = errNoQueue(req.Queue)
		r.Effects = s.end()
		return r
	}
	ids := make([]string, len(req.Entries))
	size := 0
	for i := range req.Entries {
		ids[i] = req.Entries[i].ID
		size += len(req.Entries[i].MessageBody)
	}
	r.Err = checkBatch("SendMessageBatchRequestEntry", ids)
	if r.Err == nil && size > MaxBatchPayload {
		r.Err = newErr(BatchRequestTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", MaxBatchPayload, size)
	}
	reqs := make([]SendMessageRequest, len(req.Entries))
	keys := make([]string, len(req.Entries))
	errs := make([]*Error, len(req.Entries))
	for i := range req.Entries {
		if r.Err != nil {
			break
		}
		e := &req.Entries[i]
		reqs[i] = SendMessageRequest{Queue: req.Queue, MsgID: e.MsgID, MessageBody: e.MessageBody, DelaySeconds: e.DelaySeconds,
			MessageGroupID: e.MessageGroupID, MessageDeduplicationID: e.MessageDeduplicationID}
		var whole bool
		keys[i], errs[i], whole = s.checkSend(q, &reqs[i])
		if whole {
			r.Err = errs[i]
		}
	}
	if r.Err == nil {
		r.Entries = make([]SendMessageBatchResultEntry, len(req.Entries))
		for i := range req.Entries {
			x := &r.Entries[i]
			x.ID, x.Err = ids[i], errs[i]
			if x.Err == nil {
				x.Seq, x.Deduplicated, x.Original = s.send(q, &reqs[i], keys[i])
			}
		}
	}
	r.Effects = s.end()
	return r
}

// checkBatch validates a batch's entry ids (count, syntax, distinctness).
func checkBatch(entryName string, ids []string) *Error {
	switch {
	case len(ids) == 0:
		return newErr(EmptyBatchRequest, "There should be at least one %s in the request.", entryName)
	case len(ids) > MaxBatchEntries:
		return newErr(TooManyEntriesInBatchRequest, "Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, len(ids))
	}
	for i, id := range ids {
		if !batchIDRE.MatchString(id) {
			return newErr(InvalidBatchEntryId, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long. Got %q.", id)
		}
		for _, prev := range ids[:i] {
			if prev == id {
				return newErr(BatchEntryIdsNotDistinct, "Id %s repeated.", id)
			}
		}
	}
	return nil
}

// checkSend validates a send against queue q and returns its effective
// FIFO deduplication id (given, or the body's SHA-256 in hex). whole
// reports an error that fails a whole batch.
func (s *Service) checkSend(q *queue, req *SendMessageRequest) (dedupID string, err *Error, whole bool) {
	fifo := q.fifo()
	switch n := len(req.MessageBody); {
	case n == 0:
		return "", newErr(MissingParameter, "The request must contain the parameter MessageBody."), false
	case n > q.attrs.MaximumMessageSize:
		return "", newErr(InvalidParameterValue, "One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", q.attrs.MaximumMessageSize), false
	}
	if d := req.DelaySeconds; d.Set && (d.Value < 0 || d.Value > MaxDelaySeconds) {
		return "", errParamRange("DelaySeconds", d.Value, 0, MaxDelaySeconds), false
	}
	if fifo && req.DelaySeconds.Value != 0 {
		return "", errWrongQueueType("DelaySeconds", req.DelaySeconds.String()), false
	}
	switch g := req.MessageGroupID; {
	case fifo && g == "":
		return "", newErr(MissingParameter, "The request must contain the parameter MessageGroupId."), true
	case g != "" && !validID(g):
		return "", errBadID("MessageGroupId", g), false
	}
	d := req.MessageDeduplicationID
	switch {
	case !fifo && d != "":
		return "", errWrongQueueType("MessageDeduplicationId", d), false
	case !fifo:
		return "", nil, false
	case d != "" && !validID(d):
		return "", errBadID("MessageDeduplicationId", d), false
	case d == "" && !q.attrs.ContentBasedDeduplication:
		return "", newErr(InvalidParameterValue, "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"), true
	case d == "":
		sum := sha256.Sum256(req.MessageBody)
		d = hex.EncodeToString(sum[:])
	}
	return d, nil, false
}

func errWrongQueueType(param, v string) *Error {
	return newErr(InvalidParameterValue, "Value %s for parameter %s is invalid. Reason: The request include parameter that is not valid for this queue type.", v, param)
}

func errBadID(param, v string) *Error {
	return newErr(InvalidParameterValue, "Value %s for parameter %s is invalid. Reason: %s can only include alphanumeric and punctuation characters. 1 to 128 in length.", v, param, param)
}

// send enqueues a validated message (or folds it into a FIFO duplicate).
// With DeduplicationScope messageGroup a deduplication id counts within its
// message group only.
func (s *Service) send(q *queue, req *SendMessageRequest, dedupID string) (seq int64, dup bool, orig model.MsgID) {
	key := dedupID
	if q.fifo() {
		if q.attrs.DeduplicationScope == ScopeMessageGroup {
			key = req.MessageGroupID + "\x00" + dedupID
		}
		s.expireDedup(q)
		if e, ok := q.dedup[key]; ok {
			q.stats.Deduplicated++
			return e.seq, true, e.id
		}
	}
	q.nextSeq++
	m := &message{seq: q.nextSeq, id: req.MsgID, body: req.MessageBody, groupID: req.MessageGroupID, sent: s.now, retainFrom: s.now, availableAt: s.now}
	if q.fifo() {
		m.dedupID = dedupID
		q.dedup[key] = dedupEntry{at: s.now, seq: m.seq, id: m.id}
		q.dedupLog = append(q.dedupLog, dedupRef{at: s.now, key: key})
	}
	delay := req.DelaySeconds.or(q.attrs.DelaySeconds)
	if q.fifo() {
		delay = q.attrs.DelaySeconds
	}
	st := stVisible
	if delay > 0 {
		m.availableAt = s.now.Add(clock.Duration(delay) * clock.Second)
		st = stDelayed
	}
	q.stats.Sent++
	s.store(q, m, st)
	return m.seq, false, 0
}

// expireDedup forgets deduplication ids older than 5 minutes.
func (s *Service) expireDedup(q *queue) {
	n := 0
	for _, ref := range q.dedupLog {
		if s.now < ref.at.Add(DeduplicationSeconds*clock.Second) {
			break
		}
		if e, ok := q.dedup[ref.key]; ok && e.at == ref.at {
			delete(q.dedup, ref.key)
		}
		n++
	}
	q.dedupLog = q.dedupLog[n:]
}
