package pop

import (
	"popsim/model"
	"sort"
)

// names interns group and topic names, and (group, topic) pairs. Pair ids are
// dense and stable; rank gives each pair its position in the bytewise order
// of "group@topic@", so the index compares small integers and still sorts
// exactly as RocketMQ's byte key does. Pair 0 is a sentinel that sorts first.
type names struct {
	pairID map[[2]string]uint32
	pairs  []pairInfo // by id
	rank   []int32    // by id
	// last is the pair looked up most recently. A request, its acks and its
	// renewals name the same group and topic, and comparing two strings
	// (usually the same pointers) is much cheaper than hashing a [2]string.
	last   pairInfo
	lastID uint32
}

type pairInfo struct {
	group, topic string
	// retryV1 and retryV2 are the pair's retry topic names, built on first
	// use (retryTopics) so a pop does not build them again.
	retryV1, retryV2 string
	// retry holds, by version (retryV1, retryV2), the retry topic once it
	// exists and the pair of the group with it (retryTopic), so that a
	// pop finds them without hashing the names.
	retry [2]retryPair
}

// retryPair is a retry topic and the pair id of a group with it; while
// the topic does not exist, missing is the broker's count of topics plus
// one when a pop last found it missing (it cannot exist before a topic is
// created: retryTopic does not look it up again).
type retryPair struct {
	t       *topic
	pair    uint32
	missing int
}

// Retry topic versions, indexing pairInfo.retry.
const (
	retryV1 = 0
	retryV2 = 1
)

func newNames() *names {
	return &names{pairID: map[[2]string]uint32{}, pairs: []pairInfo{{}}, rank: []int32{-1}}
}

// pair returns the id of (group, topic), interning it if new.
func (n *names) pair(group, topic string) uint32 {
	if id, ok := n.lookup(group, topic); ok {
		return id
	}
	id := uint32(len(n.pairs))
	n.pairID[[2]string{group, topic}] = id
	n.pairs = append(n.pairs, pairInfo{group: group, topic: topic})
	n.rerank()
	return id
}

// retryTopics returns the V1 and V2 retry topic names of pair id.
func (n *names) retryTopics(id uint32) (v1, v2 string) {
	p := &n.pairs[id]
	if p.retryV1 == "" {
		p.retryV1, p.retryV2 = model.BuildPopRetryTopicV1(p.topic, p.group), model.BuildPopRetryTopicV2(p.topic, p.group)
	}
	return p.retryV1, p.retryV2
}

// lookup returns the id of an already-interned pair.
func (n *names) lookup(group, topic string) (uint32, bool) {
	if n.lastID != 0 && sameString(n.last.group, group) && n.last.topic == topic {
		return n.lastID, true
	}
	id, ok := n.pairID[[2]string{group, topic}]
	if ok {
		n.last, n.lastID = pairInfo{group: group, topic: topic}, id
	}
	return id, ok
}

// rerank recomputes ranks; the relative order of existing pairs never
// changes, so trees ordered by rank stay valid.
func (n *names) rerank() {
	ids := make([]uint32, 0, len(n.pairs)-1)
	for id := 1; id < len(n.pairs); id++ {
		ids = append(ids, uint32(id))
	}
	sort.Slice(ids, func(i, j int) bool { return n.keyString(ids[i]) < n.keyString(ids[j]) })
	n.rank = make([]int32, len(n.pairs))
	n.rank[0] = -1
	for r, id := range ids {
		n.rank[id] = int32(r)
	}
}

func (n *names) keyString(id uint32) string {
	p := n.pairs[id]
	return p.group + "@" + p.topic + "@"
}

// retryTopic returns the retry topic of version v (retryV1, retryV2) of
// pair id: its record, with the topic (its name is the topic's) and the
// pair of id's group with it, which it interns the first time it finds
// the topic; while the topic does not exist, nil. The record is valid
// until the next pair is interned. It is topicNamed and names.pair on
// the name, remembered: topics are never removed or replaced, and pair
// ids are stable. That the topic is missing is remembered too, until a
// topic is created (the default run's pops looked the V1 retry topic up
// 52 k times). Both remembered answers are taken before the name: a
// found topic's is its own (the one it was found by), and a missing one
// has none to give (default run: ~50 instructions a pop, where the name
// was taken first). Its caller on the checkpoint path takes a found
// topic's answer itself (retryFound): the call, which returned the name,
// topic and pair, cost 34 instructions a pop.
func (b *Broker) retryTopic(id uint32, v int) *retryPair {
	r := &b.names.pairs[id].retry[v]
	if r.t != nil {
		if invariants {
			v1, v2 := b.names.retryTopics(id)
			assertf(r.t.cfg.Name == [2]string{v1, v2}[v], "names: pair %d's retry topic V%d is %q, not its name", id, v+1, r.t.cfg.Name)
		}
		return r
	}
	n := len(b.topicOrder) + 1
	if r.missing == n {
		return nil
	}
	v1, v2 := b.names.retryTopics(id)
	name := v2
	if v == retryV1 {
		name = v1
	}
	t := b.topicNamed(name)
	if t == nil {
		r.missing = n
		return nil
	}
	pair := b.names.pair(b.names.pairs[id].group, name) // may grow pairs
	r = &b.names.pairs[id].retry[v]
	*r = retryPair{t: t, pair: pair}
	return r
}

// retryFound is retryTopic's answer when it found the topic before
// (nil otherwise, and always in the invariants build, whose retryTopic
// checks the answer): it inlines.
func (n *names) retryFound(id uint32, v int) *retryPair {
	if r := &n.pairs[id].retry[v]; r.t != nil && !invariants {
		return r
	}
	return nil
}
