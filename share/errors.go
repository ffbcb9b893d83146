package share

import "strconv"

// ErrorCode is a Kafka protocol error code (org.apache.kafka.common.protocol.Errors)
// with Kafka's numeric value. Results carry it instead of a Go error: a bad
// request is an answer, not a failure of the engine.
type ErrorCode int16

// The error codes the share-group engine answers with, by Kafka's names and
// numbers.
const (
	UnknownServerError        ErrorCode = -1
	None                      ErrorCode = 0
	OffsetOutOfRange          ErrorCode = 1
	UnknownTopicOrPartition   ErrorCode = 3
	NotLeaderOrFollower       ErrorCode = 6
	CoordinatorLoadInProgress ErrorCode = 14
	CoordinatorNotAvailable   ErrorCode = 15
	NotCoordinator            ErrorCode = 16
	UnknownMemberID           ErrorCode = 25
	InvalidRequest            ErrorCode = 42
	GroupIDNotFound           ErrorCode = 69
	FencedLeaderEpoch         ErrorCode = 74
	GroupMaxSizeReached       ErrorCode = 81
	FencedMemberEpoch         ErrorCode = 110
	InvalidRecordState        ErrorCode = 121
	ShareSessionNotFound      ErrorCode = 122
	InvalidShareSessionEpoch  ErrorCode = 123
	FencedStateEpoch          ErrorCode = 124
	ShareSessionLimitReached  ErrorCode = 133
)

var errorNames = map[ErrorCode]string{
	UnknownServerError:        "UNKNOWN_SERVER_ERROR",
	None:                      "NONE",
	UnknownTopicOrPartition:   "UNKNOWN_TOPIC_OR_PARTITION",
	NotLeaderOrFollower:       "NOT_LEADER_OR_FOLLOWER",
	CoordinatorLoadInProgress: "COORDINATOR_LOAD_IN_PROGRESS",
	CoordinatorNotAvailable:   "COORDINATOR_NOT_AVAILABLE",
	NotCoordinator:            "NOT_COORDINATOR",
	UnknownMemberID:           "UNKNOWN_MEMBER_ID",
	InvalidRequest:            "INVALID_REQUEST",
	GroupIDNotFound:           "GROUP_ID_NOT_FOUND",
	FencedLeaderEpoch:         "FENCED_LEADER_EPOCH",
	GroupMaxSizeReached:       "GROUP_MAX_SIZE_REACHED",
	FencedMemberEpoch:         "FENCED_MEMBER_EPOCH",
	InvalidRecordState:        "INVALID_RECORD_STATE",
	ShareSessionNotFound:      "SHARE_SESSION_NOT_FOUND",
	InvalidShareSessionEpoch:  "INVALID_SHARE_SESSION_EPOCH",
	FencedStateEpoch:          "FENCED_STATE_EPOCH",
	ShareSessionLimitReached:  "SHARE_SESSION_LIMIT_REACHED",
}

// String returns Kafka's constant name and number, e.g. "INVALID_RECORD_STATE(121)".
func (e ErrorCode) String() string {
	n, ok := errorNames[e]
	if !ok {
		n = "UNKNOWN"
	}
	return n + "(" + strconv.Itoa(int(e)) + ")"
}

// Known reports whether e is one of the codes above.
func (e ErrorCode) Known() bool { _, ok := errorNames[e]; return ok }

// persisterError maps an error code returned by the share coordinator for a
// WriteShareGroupState or ReadShareGroupState call to the error the client
// sees, as SharePartition.fetchPersisterError does followed by
// Errors.forException: coordinator trouble becomes COORDINATOR_NOT_AVAILABLE,
// a fenced epoch becomes NOT_LEADER_OR_FOLLOWER, a missing group or
// partition keeps its code, anything else is UNKNOWN_SERVER_ERROR.
func persisterError(code ErrorCode) ErrorCode {
	switch code {
	case NotCoordinator, CoordinatorNotAvailable, CoordinatorLoadInProgress:
		return CoordinatorNotAvailable
	case GroupIDNotFound, UnknownTopicOrPartition:
		return code
	case FencedLeaderEpoch, FencedStateEpoch:
		return NotLeaderOrFollower
	}
	return UnknownServerError
}
