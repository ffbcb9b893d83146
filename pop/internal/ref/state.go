package ref

import (
	"sort"

	"popsim/pop"
)

// State is pop.Broker.State: built from the reference's own plain data.
func (b *Broker) State() pop.State {
	st := pop.State{InFlight: b.inFlight(), Cached: b.cached(), SuspendedPolls: len(b.polls),
		LastLease: b.lastLease, WriteOrdinal: b.writes, Faults: b.faults, Stats: b.stats}
	st.Faults.Writes = append([]pop.WriteFault(nil), b.faults.Writes...)
	st.Checkpoint = b.checkpointState()
	st.Order = b.orderState()
	st.NextPollExpiry, st.HasPollExpiry = b.NextPollExpiry()
	st.PullHolds = len(b.holds)
	st.NextHoldCheck, st.HasHoldCheck = b.NextHoldCheck()
	for _, name := range b.order {
		t := b.topics[name]
		ts := pop.TopicState{Config: t.cfg}
		for i, q := range t.queues {
			ts.Queues = append(ts.Queues, pop.QueueState{QueueID: int32(i), MinOffset: q.min, MaxOffset: q.max()})
		}
		st.Topics = append(st.Topics, ts)
	}
	for _, g := range b.groups {
		st.Groups = append(st.Groups, g)
	}
	sort.Slice(st.Groups, func(i, j int) bool { return st.Groups[i].Name < st.Groups[j].Name })
	keys := map[qk]bool{}
	for _, m := range []map[qk]int64{b.commit, b.pull, b.reset} {
		for k := range m {
			keys[k] = true
		}
	}
	for k := range keys {
		st.Offsets = append(st.Offsets, b.ConsumerOffsets(k.group, k.topic, k.qid))
	}
	sort.Slice(st.Offsets, func(i, j int) bool {
		a, c := st.Offsets[i], st.Offsets[j]
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Topic != c.Topic {
			return a.Topic < c.Topic
		}
		return a.QueueID < c.QueueID
	})
	return st
}

// ConsumerOffsets is one queue's commit, pull and pending reset offsets, -1
// where absent.
func (b *Broker) ConsumerOffsets(group, name string, qid int32) pop.OffsetState {
	k := qk{group, name, qid}
	o := pop.OffsetState{Group: group, Topic: name, QueueID: qid, Commit: -1, Pull: -1, Reset: -1}
	if v, ok := b.commit[k]; ok {
		o.Commit = v
	}
	if v, ok := b.pull[k]; ok {
		o.Pull = v
	}
	if v, ok := b.reset[k]; ok {
		o.Reset = v
	}
	return o
}
