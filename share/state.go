package share

import (
	"slices"
	"sort"

	"popsim/clock"
	"popsim/model"
)

// RecordInfo is one cached record of a share-partition.
type RecordInfo struct {
	Offset        int64
	State         RecordState
	DeliveryCount int32
	// Member, Lease and Deadline are set exactly when the record is ACQUIRED.
	Member   string
	Lease    model.LeaseID
	Deadline clock.Time
}

// SharePartitionState describes one share-partition: every (group,
// topic-partition) whose share-group state was initialized.
type SharePartitionState struct {
	Group string
	TopicPartition
	// Loaded: the leader holds its cached state (false before the first
	// fetch and after a restart until the next one).
	Loaded bool
	// SPSO, SPEO and NextFetchOffset are the leader's startOffset,
	// endOffset and nextFetchOffset (valid when Loaded). Kafka's endOffset
	// is the last cached offset, or the next offset to fetch when the cache
	// is empty (then SPSO == SPEO).
	SPSO, SPEO, NextFetchOffset int64
	// Window is SPEO-SPSO+1 when anything is cached, else 0: what
	// group.share.partition.max.record.locks limits.
	Window int64
	// Cached records by state, counting only offsets >= SPSO.
	Available, Acquired, Acknowledged, Archived int64
	// AcquiredBelowStart counts ACQUIRED records the log start offset
	// passed (they end at lock timeout, archived).
	AcquiredBelowStart           int64
	LogStartOffset, LogEndOffset int64
	// Quiescent: loaded and every record up to the log end is terminal
	// (SPSO >= the log end offset, nothing acquired).
	Quiescent bool
	// The share coordinator's record: start offset (-1 before the first
	// write), state epoch and state batches.
	PersistedStartOffset int64
	PersistedStateEpoch  int32
	PersistedBatches     []PersistedBatch
}

// DurableStart is the first offset a restart could lend again: a reload
// starts at the persisted start offset and skips the persisted batches that
// are terminal (ACKNOWLEDGED or ARCHIVED) and contiguous from there, while a
// gap reloads as AVAILABLE. It is never past the cached SPSO, and -1 before
// the first write. The cached SPSO runs ahead of it when a write that ended
// the front records failed: a restart takes that advance back.
func (s *SharePartitionState) DurableStart() int64 {
	if s.PersistedStartOffset < 0 {
		return -1
	}
	off := s.PersistedStartOffset
	for _, b := range s.PersistedBatches {
		if b.LastOffset < off {
			continue
		}
		if b.FirstOffset > off || !b.State.Terminal() {
			break
		}
		off = b.LastOffset + 1
	}
	if s.Loaded {
		off = min(off, s.SPSO)
	}
	return off
}

// State describes every share-partition, by (group, topic, partition).
func (b *Broker) State() []SharePartitionState {
	keys := make([]spKey, 0, len(b.persisted))
	for k := range b.persisted { // collected, then sorted
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	out := make([]SharePartitionState, 0, len(keys))
	for _, k := range keys {
		out = append(out, b.spState(k))
	}
	return out
}

// SharePartition describes one share-partition; ok is false when its
// share-group state was never initialized.
func (b *Broker) SharePartition(groupID string, tp TopicPartition) (SharePartitionState, bool) {
	k := spKey{groupID, tp}
	if b.persisted[k] == nil {
		return SharePartitionState{}, false
	}
	return b.spState(k), true
}

func (b *Broker) spState(k spKey) SharePartitionState {
	ps := b.persisted[k]
	l := b.log(k.TopicPartition)
	s := SharePartitionState{Group: k.group, TopicPartition: k.TopicPartition, LogStartOffset: l.start, LogEndOffset: l.end(),
		PersistedStartOffset: ps.startOffset, PersistedStateEpoch: ps.stateEpoch, PersistedBatches: slices.Clone(ps.batches)}
	sp := b.sps[k]
	if sp == nil {
		return s
	}
	s.Loaded = true
	s.SPSO, s.SPEO, s.Window = sp.start, sp.end, sp.numInFlight()
	s.NextFetchOffset = sp.peekNextFetchOffset()
	for _, r := range sp.records() {
		switch {
		case r.State == Acquired && r.Offset < sp.start:
			s.AcquiredBelowStart++
		case r.Offset < sp.start:
		case r.State == Available:
			s.Available++
		case r.State == Acquired:
			s.Acquired++
		case r.State == Acknowledged:
			s.Acknowledged++
		default:
			s.Archived++
		}
	}
	s.Quiescent = sp.start >= l.end() && s.Acquired == 0 && s.AcquiredBelowStart == 0
	return s
}

// peekNextFetchOffset is nextFetchOffset without updating the flag.
func (sp *sharePartition) peekNextFetchOffset() int64 {
	saved := sp.findNext
	off := sp.nextFetchOffset()
	sp.findNext = saved
	return off
}

// Records returns a share-partition's cached records in offset order
// (none when it is not loaded).
func (b *Broker) Records(groupID string, tp TopicPartition) []RecordInfo {
	if sp := b.sps[spKey{groupID, tp}]; sp != nil {
		return sp.records()
	}
	return nil
}

func (sp *sharePartition) records() []RecordInfo {
	var out []RecordInfo
	for _, f := range sp.cache {
		for off := f.first; off <= f.last; off++ {
			r := f.st
			lease := r.lease
			if f.split() {
				r = f.offsets[off-f.first]
				lease = r.lease
			} else if r.state == Acquired {
				lease += model.LeaseID(off - f.first)
			}
			out = append(out, RecordInfo{Offset: off, State: r.state, DeliveryCount: r.count, Member: r.member, Lease: lease, Deadline: r.deadline})
		}
	}
	return out
}

// Batches returns a share-partition's cached batches as offset ranges, and
// whether each is tracked per offset (for tests of batch alignment).
func (b *Broker) Batches(groupID string, tp TopicPartition) []CachedBatch {
	sp := b.sps[spKey{groupID, tp}]
	if sp == nil {
		return nil
	}
	out := make([]CachedBatch, len(sp.cache))
	for i, f := range sp.cache {
		out[i] = CachedBatch{FirstOffset: f.first, LastOffset: f.last, PerOffset: f.split()}
	}
	return out
}

// CachedBatch is one in-flight batch of the cached state.
type CachedBatch struct {
	FirstOffset, LastOffset int64
	PerOffset               bool
}

// SessionState describes one share session.
type SessionState struct {
	Group, Member string
	Epoch         int32
}

// Sessions returns the open share sessions, by (group, member).
func (b *Broker) Sessions() []SessionState {
	var out []SessionState
	for k, s := range b.sessions { // collected, then sorted
		out = append(out, SessionState{Group: k.group, Member: k.member, Epoch: s.epoch})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Member < out[j].Member
	})
	return out
}
