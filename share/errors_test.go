package share

import "testing"

func TestErrorCodeNames(t *testing.T) {
	for code, want := range map[ErrorCode]string{InvalidRecordState: "INVALID_RECORD_STATE(121)", None: "NONE(0)",
		ShareSessionLimitReached: "SHARE_SESSION_LIMIT_REACHED(133)", ErrorCode(999): "UNKNOWN(999)"} {
		if got := code.String(); got != want {
			t.Errorf("%d: %q, want %q", code, got, want)
		}
	}
}

// TestPersisterErrorMapping pins how a share coordinator error reaches the
// client (SharePartition.fetchPersisterError, then Errors.forException).
func TestPersisterErrorMapping(t *testing.T) {
	for in, want := range map[ErrorCode]ErrorCode{
		NotCoordinator: CoordinatorNotAvailable, CoordinatorNotAvailable: CoordinatorNotAvailable,
		CoordinatorLoadInProgress: CoordinatorNotAvailable, GroupIDNotFound: GroupIDNotFound,
		UnknownTopicOrPartition: UnknownTopicOrPartition, FencedLeaderEpoch: NotLeaderOrFollower,
		FencedStateEpoch: NotLeaderOrFollower, UnknownServerError: UnknownServerError, InvalidRequest: UnknownServerError,
	} {
		if got := persisterError(in); got != want {
			t.Errorf("%v -> %v, want %v", in, got, want)
		}
	}
}
