package pop

import (
	"popsim/clock"
	"popsim/model"
)

// ReviveOutcome is what happened to one expired record.
type ReviveOutcome uint8

// Revive outcomes.
const (
	// Revived: a retry copy was written; the consumer will see the message again.
	Revived ReviveOutcome = iota
	// ReviveSkipped: the original message is gone (retention); counted as success.
	ReviveSkipped
	// ReviveRetried: the retry write failed; a new record with the backoff
	// interval and attemptTimes+1 replaces the old one (FS: a re-put CK,
	// rePutTimes+1, a new lease).
	ReviveRetried
	// ReviveDropped: the write failed popReviveMaxAttemptTimes times and the
	// record was dropped: RocketMQ logs "message may be lost". FS: a CK
	// re-put 17 times with skipWhenCKRePutReachMaxTimes, or a re-put whose
	// write failed.
	ReviveDropped
	// ReviveAcked (FS): the revive service paired an ack message with the
	// lease's CK: the lease ends and nothing is written.
	ReviveAcked
	// ReviveLost (FS): the lease ends with no copy and no re-put: another
	// CK with the same merge key replaced its CK in the revive round, its
	// topic or group is gone, or (#10985) a failed read lost the retry.
	ReviveLost
)

// UnpairedAck says whether a checkpoint-path lease that revive ended
// without its ack (revived, skipped, re-put, dropped or lost) had an ack
// message pending: one whose answer named the lease Pending, the engine's
// promise that the round would pair it and skip the lease.
type UnpairedAck uint8

// Unpaired acks.
const (
	// AckPaired: the lease had no ack message pending (the usual case).
	AckPaired UnpairedAck = iota
	// AckCutOff: the ack message was in the revive queue, in the pull that
	// reviveScanTime cut off: a round that keeps finding messages stops
	// after reviveScanTime (10 s) without reading its last pull, and still
	// revives the checkpoints its deliver times allow. RocketMQ does this
	// by design, with default settings, to a late ack (written more than
	// ReviveGrace after its deadline) on a busy revive queue.
	AckCutOff
	// AckMissed: the round revived the lease although the ack message was
	// not in its way: it had not reached the revive queue yet
	// (Bugs.DelayLevelTimer's delay levels) or was read before the
	// checkpoint. By default the engine names no pending lease then: a
	// broken promise.
	AckMissed
)

func (u UnpairedAck) String() string {
	return [...]string{"", "ack-cut-off", "ack-missed"}[u]
}

// Location is where a message is stored.
type Location struct {
	Topic   string
	QueueID int32
	Offset  int64
}

// Revival is the fate of one expired lease.
type Revival struct {
	// Lease is the expired lease; Record is its in-flight record, in
	// RocketMQ's form (milliseconds, as stored).
	Lease  model.LeaseID
	Record model.PopConsumerRecord
	// Deadline is when the lease expired: the record's visibility timeout.
	Deadline clock.Time
	Outcome  ReviveOutcome
	// Msg, UniqKey and ReconsumeTimes describe the original message, read
	// by the revive; they are zero when it is gone (ReviveSkipped).
	Msg            model.MsgID
	UniqKey        string
	ReconsumeTimes int32
	// Copy locates the retry message written and CopyReconsumeTimes is its
	// reconsumeTimes (Revived only).
	Copy               Location
	CopyReconsumeTimes int32
	// NewLease is the re-inserted record's lease and NextDeadline its
	// deadline (ReviveRetried only); Replaced is a stored record with the
	// same key that the re-insert overwrote.
	NewLease     model.LeaseID
	NextDeadline clock.Time
	Replaced     model.LeaseID
	// Unpaired (FS): the lease ended here although an ack message the
	// engine had named it Pending in was written (AckPaired: none).
	Unpaired  UnpairedAck
	woken     []Wakeup
	pullWoken []PullWakeup
	failure   WriteFailure // the failed retry-copy write, if any
}

// ReviveResult reports one pass of the revive loop.
type ReviveResult struct {
	Lower, Upper clock.Time // the scanned window [Lower, Upper) of visibility timeouts
	Revivals     []Revival
	// FullPage means the page filled: RocketMQ runs the next pass at once
	// instead of sleeping ReviveIdleInterval.
	FullPage bool
	Woken    []Wakeup
	// PullWoken are held pulls on retry topics the retry messages woke.
	PullWoken []PullWakeup
	// Failures lists the retry-copy writes the faults failed, in order.
	Failures []WriteFailure
}

// retryCopy builds the message written to the retry topic (docs/rocketmq/kv-path.md §10.4).
// The copy shares orig's Body and Properties (the engine never modifies a
// stored message); it carries ORIGIN_GROUP (RocketMQ 5.4.0 on; not with
// Bugs.V1RetryNoPollWake, the releases before it).
func (b *Broker) retryCopy(orig *model.Message, group, recTopic string, popTime int64) model.Message {
	cp := *orig
	if !b.cfg.Bugs.V1RetryNoPollWake {
		cp.OriginGroup = group
	}
	cp.Topic = recTopic
	if !model.IsRetryTopic(recTopic) {
		cp.Topic = b.retryTopicName(group, recTopic)
	}
	cp.QueueID = 0
	if orig.ReconsumeTimes == 0 || orig.FirstPopTime == 0 {
		cp.FirstPopTime = popTime
	}
	cp.ReconsumeTimes = orig.ReconsumeTimes + 1
	b.ensureRetryTopic(cp.Topic, group)
	return cp
}

// retryTopicName is model.BuildPopRetryTopic(topic, group,
// EnableRetryTopicV2): the name names keeps for the pair when it is
// interned (a revived record's always is), so that a revival does not
// build the string again.
func (b *Broker) retryTopicName(group, topic string) string {
	id, ok := b.names.lookup(group, topic)
	if !ok {
		return model.BuildPopRetryTopic(topic, group, b.cfg.EnableRetryTopicV2)
	}
	v1, v2 := b.names.retryTopics(id)
	if b.cfg.EnableRetryTopicV2 {
		return v2
	}
	return v1
}

// ensureRetryTopic auto-creates a retry topic (1 read / 1 write queue, RW)
// and sets the group's commit offset on queue 0 to 0 when absent.
func (b *Broker) ensureRetryTopic(name, group string) {
	if _, ok := b.topics[name]; !ok {
		b.createTopic(TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite})
	}
	s := b.offsets.at(qkey{b.names.pair(group, name), 0})
	if s.has&hasCommit == 0 {
		s.setCommit(0)
	}
}
