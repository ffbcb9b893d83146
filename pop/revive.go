package pop

import "popsim/model"

// ReviveOutcome is what happened to one expired record.
type ReviveOutcome uint8

// Revive outcomes.
const (
	// Revived: a retry copy was written; the consumer will see the message again.
	Revived ReviveOutcome = iota
	// ReviveSkipped: the original message is gone (retention); counted as success.
	ReviveSkipped
	// ReviveRetried: the retry write failed; a new record with the backoff
	// interval and attemptTimes+1 replaces the old one.
	ReviveRetried
	// ReviveDropped: the write failed popReviveMaxAttemptTimes times and the
	// record was dropped: RocketMQ logs "message may be lost".
	ReviveDropped
)

// Revival is the fate of one record.
type Revival struct {
	Record  model.PopConsumerRecord
	Outcome ReviveOutcome
	// Copy is the retry message written (Revived only); its Topic and
	// QueueOffset locate it.
	Copy *model.Message
	// NextVisibilityTimeout is the new record's deadline (ReviveRetried only).
	NextVisibilityTimeout int64
	woken                 []Wakeup
}

// ReviveResult reports one pass of the revive loop.
type ReviveResult struct {
	Lower, Upper int64 // the scanned window [Lower, Upper) in ms
	Revivals     []Revival
	// FullPage means the page filled: RocketMQ runs the next pass at once
	// instead of sleeping ReviveIdleInterval.
	FullPage bool
	Woken    []Wakeup
}

// retryCopy builds the message written to the retry topic (spec 4.2).
func (b *Broker) retryCopy(orig *model.Message, group, recTopic string, popTime int64) *model.Message {
	cp := orig.Clone()
	cp.Topic = recTopic
	if !model.IsRetryTopic(recTopic) {
		cp.Topic = model.RetryTopic(group, recTopic, b.cfg.EnableRetryTopicV2)
	}
	cp.QueueID = 0
	if orig.ReconsumeTimes == 0 || orig.FirstPopTime == 0 {
		cp.FirstPopTime = popTime
	}
	cp.ReconsumeTimes = orig.ReconsumeTimes + 1
	b.ensureRetryTopic(cp.Topic, group)
	return cp
}

// ensureRetryTopic auto-creates a retry topic (1 read / 1 write queue, RW)
// and sets the group's commit offset on queue 0 to 0 when absent.
func (b *Broker) ensureRetryTopic(name, group string) {
	if _, ok := b.topics[name]; !ok {
		_ = b.CreateTopic(TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite})
	}
	s := b.offsets.at(qkey{b.names.pair(group, name), 0})
	if s.has&hasCommit == 0 {
		s.setCommit(0)
	}
}
