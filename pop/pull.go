package pop

import (
	"fmt"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// The broker's side of classic Pull consumption (PullMessageProcessor,
// PullRequestHoldService and the pull half of ConsumerOffsetManager). It
// is shared by both POP paths: a pull reads the same store, takes the same
// pending admin reset and writes the same pullOffsetTable and offsetTable
// that POP uses, which is what lets a live group switch between them.

// PullRequest is PullMessageRequestHeader with its sysFlag bits as fields.
// popsim keeps no consumer registry, so the subscription always travels in
// the request (FLAG_SUBSCRIPTION). Pull never modifies the request.
type PullRequest struct {
	ClientID      string // the consumer's channel, for traces
	ConsumerGroup string
	Topic         string
	QueueID       int32
	QueueOffset   int64 // where to read from
	MaxMsgNums    int32 // the broker returns at most 32 (maxTransferCountOnMessageInMemory)
	// CommitOffset is the client's consumed offset, stored as the group's
	// commit offset when HasCommitOffset (FLAG_COMMIT_OFFSET) and the
	// request is served as it arrives (not when re-run after a hold).
	CommitOffset    int64
	HasCommitOffset bool
	// Suspend (FLAG_SUSPEND) lets the broker hold a request that finds
	// nothing for SuspendTimeout (suspendTimeoutMillis), until a message
	// arrives on its queue; it is truncated to milliseconds.
	Suspend        bool
	SuspendTimeout clock.Duration
	ExpressionType string // "" or "TAG"
	Subscription   string // "*", "tagA || tagB"
}

// PullStatus is the client's PullStatus for a response, plus popsim's
// PullSuspended (held: no response yet) and PullError (an error code).
type PullStatus uint8

// Pull statuses.
const (
	PullFound         PullStatus = iota // SUCCESS
	PullNoNewMsg                        // PULL_NOT_FOUND
	PullNoMatchedMsg                    // PULL_RETRY_IMMEDIATELY
	PullOffsetIllegal                   // PULL_OFFSET_MOVED: restart from NextBeginOffset
	PullSuspended
	PullError
)

func (s PullStatus) String() string {
	return [...]string{"FOUND", "NO_NEW_MSG", "NO_MATCHED_MSG", "OFFSET_ILLEGAL", "SUSPENDED", "ERROR"}[s]
}

// PullResult is the pull response. The caller owns it: Pull overwrites it
// and reuses Messages' storage (and each message's Body and Properties).
// Nothing in it refers to the broker's memory.
type PullResult struct {
	Code model.ResponseCode
	// Remark is the store's read status by its RocketMQ name (FOUND,
	// NO_MATCHED_MESSAGE, OFFSET_TOO_SMALL, OFFSET_OVERFLOW_ONE,
	// OFFSET_OVERFLOW_BADLY, NO_MESSAGE_IN_QUEUE, OFFSET_RESET), as upstream
	// sets it, or the reason for an error code.
	Remark string
	Status PullStatus
	// HoldID identifies a held request (Status == PullSuspended); it comes
	// back as a PullWakeup.
	HoldID uint64
	// NextBeginOffset is where the client pulls next; MinOffset and
	// MaxOffset are the queue's bounds.
	NextBeginOffset, MinOffset, MaxOffset int64
	// Messages are copies of the messages read, in offset order.
	Messages []model.Message
}

// Pull serves a pull request as it arrives from a client
// (PullMessageProcessor.processRequest with brokerAllowSuspend): a read of
// up to MaxMsgNums messages matching the subscription from QueueOffset. A
// request that finds nothing (PULL_NOT_FOUND) with Suspend set is held
// (PullRequestHoldService): the result has Status PullSuspended and the
// request comes back as a PullWakeup when a message arrives on its queue
// or its suspend time is up; the driver then calls RerunPull.
func (b *Broker) Pull(now clock.Time, req *PullRequest, res *PullResult) {
	b.touch(now.Millis())
	b.pull(now, req, res, true)
}

// RerunPull re-runs a held pull the broker handed back
// (executeRequestWhenWakeup: brokerAllowSuspend false). It answers whatever
// it finds, PULL_NOT_FOUND included, never holds again and does not store
// the request's commit offset.
func (b *Broker) RerunPull(now clock.Time, req *PullRequest, res *PullResult) {
	b.touch(now.Millis())
	b.pull(now, req, res, false)
}

func (b *Broker) pull(now clock.Time, req *PullRequest, res *PullResult, allowSuspend bool) {
	*res = PullResult{Messages: res.Messages[:0]}
	q, f, ok := b.validatePull(req, res)
	if !ok {
		return
	}
	b.stats.PullRequests++
	k := qkey{b.names.pair(req.ConsumerGroup, req.Topic), req.QueueID}
	s := b.offsets.at(k)
	// queryThenEraseResetOffset: a pending admin reset is taken (erased)
	// whether or not server-side reset is on, and answered when it is.
	if v, reset := s.takeReset(); reset && b.cfg.UseServerSideResetOffset {
		res.Code, res.Remark, res.NextBeginOffset = model.PullOffsetMoved, "OFFSET_RESET", v
		res.MinOffset, res.MaxOffset = q.min, q.maxOffset()
	} else {
		b.readPull(q, f, req, res)
	}
	b.commitPull(k, req, res, allowSuspend)
	switch res.Code {
	case model.PullNotFound:
		res.Status = PullNoNewMsg
		if allowSuspend && req.Suspend {
			res.Status, res.HoldID = PullSuspended, b.holds.hold(now.Millis(), req, f)
		}
	case model.PullRetryImmediately:
		res.Status = PullNoMatchedMsg
	case model.PullOffsetMoved:
		res.Status = PullOffsetIllegal
	}
}

// validatePull applies processRequest's checks in RocketMQ's order.
func (b *Broker) validatePull(req *PullRequest, res *PullResult) (*queue, *pfilter.Filter, bool) {
	g := b.groups[req.ConsumerGroup]
	t := b.topicNamed(req.Topic)
	fail := func(code model.ResponseCode, format string, args ...any) (*queue, *pfilter.Filter, bool) {
		res.Code, res.Status, res.Remark = code, PullError, fmt.Sprintf(format, args...)
		return nil, nil, false
	}
	switch {
	case !b.cfg.Readable:
		return fail(model.NoPermission, "the broker[%s] pulling message is forbidden", b.cfg.BrokerIP1)
	case g == nil:
		return fail(model.SubscriptionGroupNotExist, "subscription group [%s] does not exist, %s", req.ConsumerGroup, faqSuggestion)
	case !g.ConsumeEnable:
		return fail(model.NoPermission, "subscription group no permission, %s", req.ConsumerGroup)
	case t == nil:
		return fail(model.TopicNotExist, "topic[%s] not exist, apply first please! %s", req.Topic, faqSuggestion)
	case t.cfg.Perm&PermRead == 0:
		return fail(model.NoPermission, "the topic[%s] pulling message is forbidden", req.Topic)
	case req.QueueID < 0 || req.QueueID >= t.cfg.ReadQueueNums:
		return fail(model.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]", req.QueueID, req.Topic, t.cfg.ReadQueueNums, req.ClientID)
	}
	f, err := pfilter.Parse(req.ExpressionType, req.Subscription)
	if err != nil {
		return fail(model.SubscriptionParseFailed, "parse the consumer's subscription failed")
	}
	if f.Kind() == pfilter.SQL92 && !b.cfg.EnablePropertyFilter {
		return fail(model.SystemError, "The broker does not support consumer to filter message by %s", pfilter.TypeSQL92)
	}
	return t.queues[req.QueueID], f, true
}

// readPull is the store read and composeResponseHeader's status mapping.
func (b *Broker) readPull(q *queue, f *pfilter.Filter, req *PullRequest, res *PullResult) {
	n := int(min(max(req.MaxMsgNums, 1), maxTransferCount))
	var r getResult
	q.get(&r, req.QueueOffset, n, int64(req.MaxMsgNums), f, b.scratch.msgs)
	b.countRead(&r)
	res.Remark, res.NextBeginOffset, res.MinOffset, res.MaxOffset = r.status.String(), r.nextBegin, r.min, r.max
	switch r.status {
	case getFound:
		res.Code = model.Success
		for _, m := range r.msgs {
			i := len(res.Messages)
			if i < cap(res.Messages) {
				res.Messages = res.Messages[:i+1]
			} else {
				res.Messages = append(res.Messages, model.Message{})
			}
			copyMessage(&res.Messages[i], m)
		}
		b.stats.Pulled += int64(len(r.msgs))
	case getNoMatchedMessage, getMessageWasRemoving:
		res.Code = model.PullRetryImmediately
	case getNoMessageInQueue, getNoMatchedLogicQueue:
		res.Code = model.PullNotFound
		if req.QueueOffset != 0 {
			res.Code = model.PullOffsetMoved
		}
	case getOffsetFoundNull, getOffsetOverflowOne:
		res.Code = model.PullNotFound
	default: // OFFSET_OVERFLOW_BADLY, OFFSET_TOO_SMALL
		res.Code = model.PullOffsetMoved
	}
	clear(r.msgs)
	b.scratch.msgs = r.msgs[:0]
}

// commitPull is tryCommitOffset: the pull offset always becomes the next
// begin offset (commitPullOffset, the same pullOffsetTable POP reads), and
// the client's commit offset is stored when the request carries one and is
// served as it arrives.
func (b *Broker) commitPull(k qkey, req *PullRequest, res *PullResult, allowSuspend bool) {
	s := b.offsets.at(k)
	s.pull, s.has = res.NextBeginOffset, s.has|hasPull
	if allowSuspend && req.HasCommitOffset && req.CommitOffset >= 0 {
		b.storeCommit(s, req.CommitOffset)
	}
}

// storeCommit is ConsumerOffsetManager.commitOffset from a client (a pull's
// FLAG_COMMIT_OFFSET or UPDATE_CONSUMER_OFFSET): the value as given.
func (b *Broker) storeCommit(s *slot, v int64) { s.setCommit(v) }
