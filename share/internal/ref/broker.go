package ref

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
)

type key struct {
	group string
	share.TopicPartition
}

func less(a, b key) bool {
	if a.group != b.group {
		return a.group < b.group
	}
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

type skey struct{ group, member string }

// plog is a partition log: every record ever produced (recs[i] at offset
// i), the start offset, and the produced batches.
type plog struct {
	start   int64
	recs    []*model.Message
	batches [][2]int64
}

func (l *plog) end() int64 { return int64(len(l.recs)) }

func (l *plog) msg(off int64) model.MsgID {
	if off < 0 || off >= l.end() {
		return 0
	}
	return l.recs[off].ID
}

// batchOf returns the produced batch holding off.
func (l *plog) batchOf(off int64) ([2]int64, bool) {
	for _, b := range l.batches {
		if b[0] <= off && off <= b[1] {
			return b, true
		}
	}
	return [2]int64{}, false
}

type member struct {
	epoch            int32
	topics           []string
	assignment, sent []share.TopicPartition
	deadline         clock.Time
}

type group struct {
	epoch   int32
	members map[string]*member
	meta    string
}

// pstate is the share coordinator's record: a start offset (-1 before the
// first write), a state epoch and one entry per written offset.
type pstate struct {
	start  int64
	epoch  int32
	states map[int64]prec
}

type prec struct {
	state share.RecordState
	count int32
}

// Broker is the reference broker.
type Broker struct {
	cfg       share.Config
	groupCfgs map[string]share.GroupConfig
	topics    map[string][]*plog
	groups    map[string]*group
	sps       map[key]*sp
	persisted map[key]*pstate
	sessions  map[skey]int32
	nextLease model.LeaseID
	faults    []share.PersisterFault
	stats     share.Stats
}

// New builds an empty reference broker.
func New(cfg share.Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Broker{cfg: cfg, groupCfgs: map[string]share.GroupConfig{}, topics: map[string][]*plog{}, groups: map[string]*group{},
		sps: map[key]*sp{}, persisted: map[key]*pstate{}, sessions: map[skey]int32{}, nextLease: 1}, nil
}

// Stats returns the counters.
func (b *Broker) Stats() share.Stats { return b.stats }

// NextLease is the next lease id.
func (b *Broker) NextLease() model.LeaseID { return b.nextLease }

// CreateTopic adds a topic.
func (b *Broker) CreateTopic(name string, partitions int32) error {
	ok := name != "" && len(name) <= 249 && name != "." && name != ".."
	for _, c := range []byte(name) {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if !ok || partitions < 1 || partitions > 10000 || b.topics[name] != nil {
		return fmt.Errorf("ref: bad topic %q/%d", name, partitions)
	}
	ps := make([]*plog, partitions)
	for i := range ps {
		ps[i] = &plog{}
	}
	b.topics[name] = ps
	return nil
}

// Partitions returns the partition count, -1 when absent.
func (b *Broker) Partitions(name string) int32 {
	if ps, ok := b.topics[name]; ok {
		return int32(len(ps))
	}
	return -1
}

func (b *Broker) log(tp share.TopicPartition) *plog {
	ps := b.topics[tp.Topic]
	if tp.Partition < 0 || int(tp.Partition) >= len(ps) {
		return nil
	}
	return ps[tp.Partition]
}

// LogStartOffset returns the log start, -1 when absent.
func (b *Broker) LogStartOffset(tp share.TopicPartition) int64 {
	if l := b.log(tp); l != nil {
		return l.start
	}
	return -1
}

// LogEndOffset returns the log end, -1 when absent.
func (b *Broker) LogEndOffset(tp share.TopicPartition) int64 {
	if l := b.log(tp); l != nil {
		return l.end()
	}
	return -1
}

// Record returns a visible record.
func (b *Broker) Record(tp share.TopicPartition, off int64) *model.Message {
	if l := b.log(tp); l != nil && off >= l.start && off < l.end() {
		return l.recs[off]
	}
	return nil
}

func appendTo(now clock.Time, l *plog, tp share.TopicPartition, msgs []*model.Message) int64 {
	base := l.end()
	for i, m := range msgs {
		m.Topic, m.QueueID, m.QueueOffset, m.StoreTimestamp = tp.Topic, tp.Partition, base+int64(i), now.Millis()
		l.recs = append(l.recs, m)
	}
	l.batches = append(l.batches, [2]int64{base, l.end() - 1})
	return base
}

// Produce appends a batch.
func (b *Broker) Produce(now clock.Time, req share.ProduceRequest) share.ProduceResult {
	l := b.log(req.TopicPartition)
	if l == nil {
		return share.ProduceResult{Err: share.UnknownTopicOrPartition, BaseOffset: -1, LastOffset: -1}
	}
	if len(req.Records) == 0 || slices.Contains(req.Records, nil) {
		return share.ProduceResult{Err: share.InvalidRequest, BaseOffset: -1, LastOffset: -1}
	}
	base := appendTo(now, l, req.TopicPartition, req.Records)
	b.stats.Produced += int64(len(req.Records))
	return share.ProduceResult{BaseOffset: base, LastOffset: l.end() - 1}
}

// DeleteRecords moves the log start offset.
func (b *Broker) DeleteRecords(tp share.TopicPartition, off int64) error {
	l := b.log(tp)
	if l == nil || off < 0 || off > l.end() {
		return fmt.Errorf("ref: bad delete records %v %d", tp, off)
	}
	if off > l.start {
		l.start = off
	}
	return nil
}

// GroupConfig returns a group's configuration, inherited keys resolved.
func (b *Broker) GroupConfig(g string) share.GroupConfig {
	gc, ok := b.groupCfgs[g]
	if !ok {
		gc = b.cfg.Group
	}
	if gc.RecordLockDurationMs == 0 {
		gc.RecordLockDurationMs = b.cfg.RecordLockDurationMs
	}
	if gc.DeliveryCountLimit == 0 {
		gc.DeliveryCountLimit = b.cfg.DeliveryCountLimit
	}
	if gc.PartitionMaxRecordLocks == 0 {
		gc.PartitionMaxRecordLocks = b.cfg.PartitionMaxRecordLocks
	}
	if gc.HeartbeatIntervalMs == 0 {
		gc.HeartbeatIntervalMs = b.cfg.HeartbeatIntervalMs
	}
	if gc.SessionTimeoutMs == 0 {
		gc.SessionTimeoutMs = b.cfg.SessionTimeoutMs
	}
	return gc
}

// SetGroupConfig sets a group's configuration before it exists.
func (b *Broker) SetGroupConfig(g string, gc share.GroupConfig) error {
	if g == "" || b.groups[g] != nil {
		return fmt.Errorf("ref: cannot configure group %q", g)
	}
	if err := b.cfg.ValidateGroup(gc); err != nil {
		return err
	}
	b.groupCfgs[g] = gc
	return nil
}

// SetPersisterFault installs, replaces or clears a write fault.
func (b *Broker) SetPersisterFault(f share.PersisterFault) {
	if f.Err == share.None {
		f.Err = share.UnknownServerError
	}
	var out []share.PersisterFault
	for _, x := range b.faults {
		if x.Group != f.Group || x.Topic != f.Topic || x.Partition != f.Partition {
			out = append(out, x)
		}
	}
	if f.Count != 0 {
		out = append(out, f)
	}
	b.faults = out
}

// fault consumes one matching fault and returns its code, or None.
func (b *Broker) fault(k key) share.ErrorCode {
	for i := range b.faults {
		f := &b.faults[i]
		if f.Count != 0 && f.Group == k.group && (f.Topic == "" || f.Topic == k.Topic) && (f.Partition < 0 || f.Partition == k.Partition) {
			if f.Count > 0 {
				f.Count--
			}
			return f.Err
		}
	}
	return share.None
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (b *Broker) spKeys() []key {
	var out []key
	for k := range b.sps {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// ---- group coordinator ----

func (b *Broker) meta(g *group) string {
	set := map[string]bool{}
	for _, m := range g.members {
		for _, t := range m.topics {
			set[t] = true
		}
	}
	s := ""
	for _, t := range sortedKeys(set) {
		if n := b.Partitions(t); n > 0 {
			s += t + ":" + strconv.Itoa(int(n)) + " "
		}
	}
	return s
}

func (b *Broker) reassign(gid string, g *group) {
	var ms []share.AssignMember
	parts := map[string]int32{}
	for _, id := range sortedKeys(g.members) {
		m := g.members[id]
		am := share.AssignMember{ID: id, Current: m.assignment}
		for _, t := range m.topics {
			if n := b.Partitions(t); n > 0 {
				am.Topics = append(am.Topics, t)
				parts[t] = n
			}
		}
		ms = append(ms, am)
	}
	target := share.SimpleAssign(ms, parts)
	for id, m := range g.members {
		m.assignment = target[id]
	}
	for t, n := range parts {
		for p := int32(0); p < n; p++ {
			k := key{gid, share.TopicPartition{Topic: t, Partition: p}}
			if b.persisted[k] == nil {
				b.persisted[k] = &pstate{start: -1, states: map[int64]prec{}}
			}
		}
	}
}

// Heartbeat is ShareGroupHeartbeat.
func (b *Broker) Heartbeat(now clock.Time, req share.HeartbeatRequest) share.HeartbeatResult {
	b.stats.Heartbeats++
	res := share.HeartbeatResult{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	if req.GroupID == "" || req.MemberID == "" || len(req.MemberID) > 36 || req.MemberEpoch < -1 || req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0 {
		res.Err = share.InvalidRequest
		return res
	}
	gc := b.GroupConfig(req.GroupID)
	res.HeartbeatIntervalMs = gc.HeartbeatIntervalMs
	g := b.groups[req.GroupID]
	var m *member
	if g != nil {
		m = g.members[req.MemberID]
	}
	bump := false
	switch {
	case req.MemberEpoch == -1:
		if m == nil {
			res.Err = share.UnknownMemberID
			return res
		}
		b.remove(req.GroupID, g, req.MemberID)
		res.MemberEpoch = -1
		return res
	case req.MemberEpoch == 0:
		if g == nil {
			g = &group{members: map[string]*member{}}
			b.groups[req.GroupID] = g
		}
		if m == nil {
			if int32(len(g.members)) >= b.cfg.MaxSize {
				res.Err = share.GroupMaxSizeReached
				return res
			}
			m = &member{}
			g.members[req.MemberID] = m
			bump = true
		}
		m.sent = nil
	case m == nil:
		res.Err = share.UnknownMemberID
		return res
	case req.MemberEpoch != m.epoch:
		res.Err = share.FencedMemberEpoch
		return res
	}
	if req.SubscribedTopicNames != nil {
		ts := slices.Compact(slices.Sorted(slices.Values(req.SubscribedTopicNames)))
		if !slices.Equal(ts, m.topics) {
			m.topics = ts
			bump = true
		}
	}
	if mt := b.meta(g); mt != g.meta {
		g.meta = mt
		bump = true
	}
	if bump {
		g.epoch++
		b.reassign(req.GroupID, g)
	}
	m.epoch = g.epoch
	m.deadline = now.Add(clock.MillisDuration(int64(gc.SessionTimeoutMs)))
	res.MemberEpoch = m.epoch
	res.Assignment = slices.Clone(m.assignment)
	res.AssignmentChanged = m.sent == nil || !slices.Equal(m.sent, m.assignment)
	m.sent = slices.Clone(m.assignment)
	return res
}

func (b *Broker) remove(gid string, g *group, id string) {
	delete(g.members, id)
	g.epoch++
	g.meta = b.meta(g)
	b.reassign(gid, g)
}

// Groups describes the groups.
func (b *Broker) Groups() []share.GroupState {
	var out []share.GroupState
	for _, gid := range sortedKeys(b.groups) {
		g := b.groups[gid]
		gs := share.GroupState{ID: gid, Epoch: g.epoch}
		for _, id := range sortedKeys(g.members) {
			m := g.members[id]
			gs.Members = append(gs.Members, share.MemberState{ID: id, Epoch: m.epoch, Topics: slices.Clone(m.topics),
				Assignment: slices.Clone(m.assignment), SessionDeadline: m.deadline})
		}
		out = append(out, gs)
	}
	return out
}

// Sessions describes the share sessions.
func (b *Broker) Sessions() []share.SessionState {
	var out []share.SessionState
	for k, e := range b.sessions {
		out = append(out, share.SessionState{Group: k.group, Member: k.member, Epoch: e})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Member < out[j].Member
	})
	return out
}

// NextDeadline is the earliest lock or member session deadline.
func (b *Broker) NextDeadline() (clock.Time, bool) {
	var best clock.Time
	found := false
	consider := func(t clock.Time) {
		if !found || t < best {
			best, found = t, true
		}
	}
	for _, g := range b.groups {
		for _, m := range g.members {
			consider(m.deadline)
		}
	}
	for _, s := range b.sps {
		for _, r := range s.recs {
			if r.state == share.Acquired {
				consider(r.deadline)
			}
		}
	}
	return best, found
}
