package pop

import (
	"fmt"

	"popsim/model"
)

// The client side of ConsumerOffsetManager (ConsumerManageProcessor): a
// Pull consumer commits and reads its group's offsets in the broker, in
// the same offsetTable POP uses.

// UpdateConsumerOffsetRequest is UpdateConsumerOffsetRequestHeader.
type UpdateConsumerOffsetRequest struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	CommitOffset  int64
}

// UpdateConsumerOffsetResult is the response.
type UpdateConsumerOffsetResult struct {
	Code   model.ResponseCode
	Remark string
}

// UpdateConsumerOffset is UPDATE_CONSUMER_OFFSET: it stores the group's
// commit offset for the queue. While an admin reset is pending (and
// server-side reset is on) the update is ignored, with SUCCESS, as
// upstream. popsim refuses a queue id outside the topic's queues and a
// negative offset with INVALID_PARAMETER (upstream stores them).
func (b *Broker) UpdateConsumerOffset(req *UpdateConsumerOffsetRequest) UpdateConsumerOffsetResult {
	fail := func(code model.ResponseCode, format string, args ...any) UpdateConsumerOffsetResult {
		return UpdateConsumerOffsetResult{Code: code, Remark: fmt.Sprintf(format, args...)}
	}
	if _, ok := b.groups[req.ConsumerGroup]; !ok {
		return fail(model.SubscriptionGroupNotExist, "Group %s not exist!", req.ConsumerGroup)
	}
	if b.topicNamed(req.Topic) == nil {
		return fail(model.TopicNotExist, "Topic %s not exist!", req.Topic)
	}
	if b.queue(req.Topic, req.QueueID) == nil {
		return fail(model.InvalidParameter, "queueId %d of topic %s does not exist", req.QueueID, req.Topic)
	}
	if req.CommitOffset < 0 {
		return fail(model.InvalidParameter, "commitOffset %d: want >= 0", req.CommitOffset)
	}
	s := b.offsets.at(qkey{b.names.pair(req.ConsumerGroup, req.Topic), req.QueueID})
	if b.cfg.UseServerSideResetOffset && s.has&hasReset != 0 {
		return UpdateConsumerOffsetResult{Code: model.Success, Remark: "Offset has been previously reset"}
	}
	b.storeCommit(s, req.CommitOffset)
	return UpdateConsumerOffsetResult{Code: model.Success}
}

// QueryConsumerOffsetRequest is QueryConsumerOffsetRequestHeader.
// NoZeroIfNotFound is setZeroIfNotFound=false (the header's default, null,
// means true).
type QueryConsumerOffsetRequest struct {
	ConsumerGroup    string
	Topic            string
	QueueID          int32
	NoZeroIfNotFound bool
}

// QueryConsumerOffsetResult is the response: Offset when SUCCESS.
type QueryConsumerOffsetResult struct {
	Code   model.ResponseCode
	Remark string
	Offset int64
}

// QueryConsumerOffset is QUERY_CONSUMER_OFFSET: the group's commit offset
// (a pending admin reset when server-side reset is on). Without one it
// answers 0 while the queue still holds offset 0 (unless
// NoZeroIfNotFound), else QUERY_NOT_FOUND: the client then starts where
// its consumeFromWhere says.
func (b *Broker) QueryConsumerOffset(req *QueryConsumerOffsetRequest) QueryConsumerOffsetResult {
	o := int64(-1)
	if s := b.slotOf(req.ConsumerGroup, req.Topic, req.QueueID); s != nil {
		o = s.queryOffset(b.cfg.UseServerSideResetOffset)
	}
	if o >= 0 {
		return QueryConsumerOffsetResult{Code: model.Success, Offset: o}
	}
	q := b.queue(req.Topic, req.QueueID)
	switch {
	case req.NoZeroIfNotFound:
		return QueryConsumerOffsetResult{Code: model.QueryNotFound, Remark: "Not found, do not set to zero, maybe this group boot first", Offset: -1}
	case q != nil && q.min <= 0 && q.at(0) != nil:
		return QueryConsumerOffsetResult{Code: model.Success, Offset: 0}
	}
	return QueryConsumerOffsetResult{Code: model.QueryNotFound, Remark: "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first", Offset: -1}
}
