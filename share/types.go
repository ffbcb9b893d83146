package share

import (
	"fmt"
	"strconv"

	"popsim/clock"
	"popsim/model"
)

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's rendering, "topic-3".
func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

func tpLess(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// RecordState is SharePartition.RecordState with Kafka's ids.
type RecordState int8

// The record states. Only AVAILABLE, ACKNOWLEDGED and ARCHIVED are ever
// persisted; ACQUIRED lives in memory only.
const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

// String is Kafka's name of the state.
func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return "RecordState(" + strconv.Itoa(int(s)) + ")"
}

// Terminal reports whether s is ACKNOWLEDGED or ARCHIVED.
func (s RecordState) Terminal() bool { return s == Acknowledged || s == Archived }

// AckType is an acknowledgement type with its wire byte (AcknowledgeType;
// 0 is the GAP marker the client sends for offsets without a record).
type AckType int8

// The acknowledgement types.
const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4 // KIP-1222, ShareFetch/ShareAcknowledge v2
)

// String is Kafka's name of the type.
func (t AckType) String() string {
	switch t {
	case AckGap:
		return "GAP"
	case AckAccept:
		return "ACCEPT"
	case AckRelease:
		return "RELEASE"
	case AckReject:
		return "REJECT"
	case AckRenew:
		return "RENEW"
	}
	return "AckType(" + strconv.Itoa(int(t)) + ")"
}

// AcquireMode is ShareFetch v2's ShareAcquireMode (client config
// share.acquire.mode, KIP-1206).
type AcquireMode int8

// The acquire modes.
const (
	// BatchOptimized (batch_optimized, the default): MaxRecords is a soft
	// limit; whole log batches are acquired.
	BatchOptimized AcquireMode = 0
	// RecordLimit (record_limit): at most MaxRecords records are acquired;
	// the rest of the last batch stays AVAILABLE.
	RecordLimit AcquireMode = 1
)

func (m AcquireMode) String() string {
	if m == RecordLimit {
		return "record_limit"
	}
	return "batch_optimized"
}

// LeaseEnd says how a lease (one acquisition of one record) ended.
type LeaseEnd uint8

// How leases end. The state the record is in afterwards is in
// LeaseEvent.State.
const (
	// EndAccepted: ACCEPT; the record is ACKNOWLEDGED.
	EndAccepted LeaseEnd = iota + 1
	// EndReleased: RELEASE; the record is AVAILABLE again.
	EndReleased
	// EndReleasedAtLimit: RELEASE of a record whose delivery count reached
	// the limit; it is ARCHIVED.
	EndReleasedAtLimit
	// EndRejected: REJECT; the record is ARCHIVED.
	EndRejected
	// EndGap: a GAP acknowledgement; the record is ARCHIVED.
	EndGap
	// EndLockTimeout: the acquisition lock expired; the record is AVAILABLE.
	EndLockTimeout
	// EndLockTimeoutAtLimit: the lock expired at the delivery limit; ARCHIVED.
	EndLockTimeoutAtLimit
	// EndLockTimeoutBelowStart: the lock expired on a record the log start
	// offset has passed; ARCHIVED.
	EndLockTimeoutBelowStart
	// EndSessionClosed: the owner's share session ended (final epoch or
	// connection close); the record is AVAILABLE.
	EndSessionClosed
	// EndSessionClosedAtLimit: as EndSessionClosed at the delivery limit;
	// ARCHIVED.
	EndSessionClosedAtLimit
	// EndSessionClosedBelowStart: as EndSessionClosed for a record the log
	// start offset has passed; ARCHIVED.
	EndSessionClosedBelowStart
	// EndLostAtRestart: the broker restarted; the in-memory lock is gone and
	// the record comes back from the persisted state.
	EndLostAtRestart
)

var leaseEndNames = [...]string{"", "accepted", "released", "released-at-limit", "rejected", "gap",
	"lock-timeout", "lock-timeout-at-limit", "lock-timeout-below-start", "session-closed", "session-closed-at-limit", "session-closed-below-start", "lost-at-restart"}

func (e LeaseEnd) String() string {
	if int(e) < len(leaseEndNames) && e != 0 {
		return leaseEndNames[e]
	}
	return "LeaseEnd(" + strconv.Itoa(int(e)) + ")"
}

// Delivery is one record handed to a member: one new lease.
type Delivery struct {
	Lease model.LeaseID
	Group string
	TopicPartition
	Offset int64
	// Msg is the stored record (shared: callers must not modify it). Its ID
	// is the simulator's model.MsgID, unchanged on every delivery.
	Msg           *model.Message
	DeliveryCount int32
	Member        string
	// Deadline is when the acquisition lock expires unless renewed.
	Deadline clock.Time
}

func (d Delivery) String() string {
	return fmt.Sprintf("lease=%d %s/%s@%d msg=%d count=%d member=%s deadline=%v", d.Lease, d.Group, d.TopicPartition, d.Offset, msgID(d.Msg), d.DeliveryCount, d.Member, d.Deadline)
}

func msgID(m *model.Message) model.MsgID {
	if m == nil {
		return 0
	}
	return m.ID
}

// LeaseEvent reports the end of one lease.
type LeaseEvent struct {
	Lease model.LeaseID
	Group string
	TopicPartition
	Offset        int64
	Msg           model.MsgID
	Member        string
	DeliveryCount int32
	End           LeaseEnd
	// State is the record's state after the lease ended.
	State RecordState
	// At is when the lease ended (the now of the call that ended it).
	At clock.Time
	// PersistFailed: the share-group state write for this transition failed
	// (lock timeouts and restarts apply anyway; see docs/share.md).
	PersistFailed bool
	// DLQ is the copy written to the group's dead-letter topic, nil if none.
	DLQ *model.Message
}

func (e LeaseEvent) String() string {
	s := fmt.Sprintf("lease=%d %s %s/%s@%d msg=%d member=%s count=%d -> %v", e.Lease, e.End, e.Group, e.TopicPartition, e.Offset, e.Msg, e.Member, e.DeliveryCount, e.State)
	if e.PersistFailed {
		s += " persist-failed"
	}
	if e.DLQ != nil {
		s += fmt.Sprintf(" dlq=%s-%d@%d", e.DLQ.Topic, e.DLQ.QueueID, e.DLQ.QueueOffset)
	}
	return s
}

// Renewal reports a RENEW: the same lease with a new lock deadline.
type Renewal struct {
	Lease model.LeaseID
	Group string
	TopicPartition
	Offset   int64
	Msg      model.MsgID
	Member   string
	Deadline clock.Time
}

func (r Renewal) String() string {
	return fmt.Sprintf("lease=%d renewed %s/%s@%d msg=%d member=%s deadline=%v", r.Lease, r.Group, r.TopicPartition, r.Offset, r.Msg, r.Member, r.Deadline)
}

// AcquiredRecords is one acquired range as the ShareFetch response carries it.
type AcquiredRecords struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int32
}

// AckBatch acknowledges offsets FirstOffset..LastOffset. Types holds one
// type for the whole range or one per offset.
type AckBatch struct {
	FirstOffset, LastOffset int64
	Types                   []AckType
}

// PartitionAcks are the acknowledgements for one partition, in increasing
// offset order.
type PartitionAcks struct {
	TopicPartition
	Batches []AckBatch
}

// PartitionError is the outcome for one partition.
type PartitionError struct {
	TopicPartition
	Err ErrorCode
}

// ProduceRequest appends one record batch to a partition.
type ProduceRequest struct {
	TopicPartition
	// Records are kept by the broker (they must not be modified afterwards).
	// Produce sets Topic, QueueID (the partition), QueueOffset and
	// StoreTimestamp; ID, UniqKey, Tags, Body ... are the producer's.
	Records []*model.Message
}

// ProduceResult is the outcome of a produce.
type ProduceResult struct {
	Err                    ErrorCode
	BaseOffset, LastOffset int64
}

// HeartbeatRequest is ShareGroupHeartbeat.
type HeartbeatRequest struct {
	GroupID string
	// MemberID is chosen by the client (KIP-1082); it must not be empty.
	MemberID string
	// MemberEpoch: 0 joins (or rejoins), -1 leaves, otherwise the epoch the
	// member last received.
	MemberEpoch int32
	// SubscribedTopicNames: nil keeps the current subscription; required
	// when joining.
	SubscribedTopicNames []string
}

// HeartbeatResult is the ShareGroupHeartbeat response.
type HeartbeatResult struct {
	Err                 ErrorCode
	MemberID            string
	MemberEpoch         int32
	HeartbeatIntervalMs int32
	// Assignment is the member's current assignment, sorted.
	Assignment []TopicPartition
	// AssignmentChanged: Kafka sends the assignment only on join or when it
	// changed; this says whether it would have.
	AssignmentChanged bool
}

// ShareFetchRequest is ShareFetch (v2).
type ShareFetchRequest struct {
	GroupID, MemberID string
	// ShareSessionEpoch: 0 opens a session (replacing any), -1 closes it
	// (acknowledgements only), otherwise the session's current epoch.
	ShareSessionEpoch int32
	// MaxRecords is the per-request record limit (max.poll.records);
	// BatchSize splits newly acquired ranges (ShareFetch v1 BatchSize).
	MaxRecords, BatchSize int32
	AcquireMode           AcquireMode
	// IsRenewAck must be set when Acks hold a RENEW; such a request fetches
	// nothing and must have MaxRecords == 0.
	IsRenewAck bool
	// Partitions to fetch from, in the client's order (the broker rotates
	// them by session epoch).
	Partitions []TopicPartition
	// Acks are piggy-backed acknowledgements, applied before the fetch.
	Acks []PartitionAcks
}

// ShareFetchResult is the ShareFetch response plus what the engine did.
type ShareFetchResult struct {
	// Err is the top-level error; when set nothing else happened.
	Err ErrorCode
	// Partitions holds the fetch outcome per requested partition, in the
	// order the broker visited them.
	Partitions []PartitionFetch
	// AckErrors holds the outcome of the piggy-backed acknowledgements per
	// partition, in request order.
	AckErrors []PartitionError
	// Deliveries lists every record acquired, in grant (lease) order.
	Deliveries []Delivery
	// Ended lists leases the acknowledgements (and a final-epoch session
	// close) ended; Renewed the RENEWs applied.
	Ended   []LeaseEvent
	Renewed []Renewal
	// AcquisitionLockTimeoutMs is the group's lock duration.
	AcquisitionLockTimeoutMs int32
}

// PartitionFetch is the fetch outcome for one partition.
type PartitionFetch struct {
	TopicPartition
	Err      ErrorCode
	Acquired []AcquiredRecords
}

// ShareAcknowledgeRequest is ShareAcknowledge (v2).
type ShareAcknowledgeRequest struct {
	GroupID, MemberID string
	// ShareSessionEpoch: the session's current epoch, or -1 to close it
	// after acknowledging. 0 is INVALID_SHARE_SESSION_EPOCH.
	ShareSessionEpoch int32
	IsRenewAck        bool
	Acks              []PartitionAcks
}

// ShareAcknowledgeResult is the ShareAcknowledge response plus what the
// engine did.
type ShareAcknowledgeResult struct {
	Err                      ErrorCode
	Partitions               []PartitionError
	Ended                    []LeaseEvent
	Renewed                  []Renewal
	AcquisitionLockTimeoutMs int32
}

// MemberExpiry reports a member removed because its session timed out.
type MemberExpiry struct {
	Group, Member string
	At            clock.Time
}

// TickResult is what a periodic call did.
type TickResult struct {
	// Ended are the lock timeouts, ordered by (deadline, group, topic,
	// partition, offset).
	Ended []LeaseEvent
	// Expired are members whose group session timed out, by (group, member).
	Expired []MemberExpiry
}

// SessionCloseResult is what closing a share session (connection close)
// did.
type SessionCloseResult struct {
	Err   ErrorCode
	Ended []LeaseEvent
}

// RestartResult lists what a broker restart dropped.
type RestartResult struct {
	// Lost are the leases that were live: their locks were in memory only.
	Lost []LeaseEvent
	// Sessions is how many share sessions were dropped.
	Sessions int
}

// PersisterFault makes WriteShareGroupState calls for matching
// share-partitions fail with Err (the share coordinator's error code).
type PersisterFault struct {
	Group     string
	Topic     string
	Partition int32 // -1: every partition of Topic ("" Topic: every topic)
	// Count: n > 0 fails the next n matching writes, -1 all of them, 0
	// clears the fault.
	Count int
	Err   ErrorCode
}
