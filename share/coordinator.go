package share

import (
	"slices"
	"sort"
	"strconv"

	"popsim/clock"
)

// group is a share group as the group coordinator keeps it (KIP-848
// protocol with share-group rules). It survives a restart: the coordinator
// reloads it from __consumer_offsets.
type group struct {
	id      string
	epoch   int32
	members map[string]*member
	// assignedMeta renders the subscribed topics' partition counts the
	// target assignment was computed for.
	assignedMeta string
}

type member struct {
	id     string
	epoch  int32
	topics []string // subscription, sorted
	// assignment is the target assignment, effective at once (share groups
	// need no revocation handshake); sent is what the member last received.
	assignment, sent []TopicPartition
	deadline         clock.Time // session timeout
}

// memberIDs returns the member ids in order.
func (g *group) memberIDs() []string { return sortedKeys(g.members) }

// Heartbeat is ShareGroupHeartbeat.
func (b *Broker) Heartbeat(now clock.Time, req HeartbeatRequest) HeartbeatResult {
	b.stats.Heartbeats++
	res := HeartbeatResult{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	if req.GroupID == "" || req.MemberID == "" || len(req.MemberID) > 36 || req.MemberEpoch < -1 ||
		req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0 {
		res.Err = InvalidRequest
		return res
	}
	gc := b.GroupConfig(req.GroupID)
	res.HeartbeatIntervalMs = gc.HeartbeatIntervalMs
	g := b.groups[req.GroupID]
	var m *member
	bump := false
	if g != nil {
		m = g.members[req.MemberID]
	}
	switch {
	case req.MemberEpoch == -1:
		if m == nil {
			res.Err = UnknownMemberID
			return res
		}
		b.removeMember(g, m.id)
		res.MemberEpoch = -1
		return res
	case req.MemberEpoch == 0:
		if g == nil {
			g = &group{id: req.GroupID, members: map[string]*member{}}
			b.groups[req.GroupID] = g
		}
		if m == nil {
			if int32(len(g.members)) >= b.cfg.MaxSize {
				res.Err = GroupMaxSizeReached
				return res
			}
			m = &member{id: req.MemberID}
			g.members[m.id] = m
			bump = true
		}
		m.sent = nil // a (re)joining member gets its assignment
	case m == nil:
		res.Err = UnknownMemberID
		return res
	case req.MemberEpoch != m.epoch:
		res.Err = FencedMemberEpoch
		return res
	}
	if req.SubscribedTopicNames != nil {
		if topics := sortedSet(req.SubscribedTopicNames); !slices.Equal(topics, m.topics) {
			m.topics = topics
			bump = true
		}
	}
	if meta := b.subscribedMeta(g); meta != g.assignedMeta {
		g.assignedMeta = meta // subscribed topic metadata changed
		bump = true
	}
	if bump {
		g.epoch++
		b.reassign(g)
	}
	m.epoch = g.epoch
	m.deadline = now.Add(clock.MillisDuration(int64(gc.SessionTimeoutMs)))
	res.MemberEpoch = m.epoch
	res.Assignment = slices.Clone(m.assignment)
	res.AssignmentChanged = m.sent == nil || !slices.Equal(m.sent, m.assignment)
	m.sent = slices.Clone(m.assignment)
	return res
}

// subscribedMeta renders the partition counts of the group's subscribed
// topics that exist; a change bumps the group epoch.
func (b *Broker) subscribedMeta(g *group) string {
	set := map[string]bool{}
	for _, m := range g.members { // a set: order does not matter
		for _, t := range m.topics {
			set[t] = true
		}
	}
	var s []byte
	for _, t := range sortedKeys(set) {
		if n := b.Partitions(t); n > 0 {
			s = append(s, t...)
			s = append(s, ':')
			s = strconv.AppendInt(s, int64(n), 10)
			s = append(s, ' ')
		}
	}
	return string(s)
}

// reassign computes the target assignment with the simple assignor and
// initializes the share-group state of newly assigned partitions
// (InitializeShareGroupState, start offset -1).
func (b *Broker) reassign(g *group) {
	var ms []AssignMember
	parts := map[string]int32{}
	for _, id := range g.memberIDs() {
		m := g.members[id]
		am := AssignMember{ID: id, Current: m.assignment}
		for _, t := range m.topics {
			if n := b.Partitions(t); n > 0 {
				am.Topics = append(am.Topics, t)
				parts[t] = n
			}
		}
		ms = append(ms, am)
	}
	target := SimpleAssign(ms, parts)
	for id, m := range g.members { // every member updated; order does not matter
		m.assignment = target[id]
	}
	for _, t := range sortedKeys(parts) {
		for p := int32(0); p < parts[t]; p++ {
			k := spKey{g.id, TopicPartition{t, p}}
			if b.persisted[k] == nil {
				b.persisted[k] = newPersistedState()
			}
		}
	}
}

// removeMember drops a member from its group (leave or session timeout)
// and rebalances. Its acquired records are not touched: they are released
// when its share session ends or their locks expire (docs/share.md).
func (b *Broker) removeMember(g *group, id string) {
	delete(g.members, id)
	g.epoch++
	g.assignedMeta = b.subscribedMeta(g)
	b.reassign(g)
}

// expireMembers removes every member whose session deadline passed, in
// (group, member) order.
func (b *Broker) expireMembers(now clock.Time) []MemberExpiry {
	var out []MemberExpiry
	for _, gid := range sortedKeys(b.groups) {
		g := b.groups[gid]
		for _, id := range g.memberIDs() {
			if g.members[id].deadline <= now {
				out = append(out, MemberExpiry{Group: gid, Member: id, At: now})
				b.removeMember(g, id)
				b.stats.MembersExpired++
			}
		}
	}
	return out
}

// nextMemberDeadline returns the earliest member session deadline.
func (b *Broker) nextMemberDeadline() (clock.Time, bool) {
	var best clock.Time
	found := false
	for _, g := range b.groups { // a minimum: order does not matter
		for _, m := range g.members {
			if !found || m.deadline < best {
				best, found = m.deadline, true
			}
		}
	}
	return best, found
}

// MemberState describes one group member.
type MemberState struct {
	ID              string
	Epoch           int32
	Topics          []string
	Assignment      []TopicPartition
	SessionDeadline clock.Time
}

// GroupState describes one share group.
type GroupState struct {
	ID      string
	Epoch   int32
	Members []MemberState // by ID
}

// Groups returns every share group, by ID.
func (b *Broker) Groups() []GroupState {
	var out []GroupState
	for _, gid := range sortedKeys(b.groups) {
		g := b.groups[gid]
		gs := GroupState{ID: gid, Epoch: g.epoch}
		for _, id := range g.memberIDs() {
			m := g.members[id]
			gs.Members = append(gs.Members, MemberState{ID: id, Epoch: m.epoch, Topics: slices.Clone(m.topics),
				Assignment: slices.Clone(m.assignment), SessionDeadline: m.deadline})
		}
		out = append(out, gs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
