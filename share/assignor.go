package share

import (
	"math"
	"slices"
	"sort"
)

// AssignMember is one member as the assignor sees it.
type AssignMember struct {
	ID string
	// Topics are the subscribed topics that exist.
	Topics []string
	// Current is the member's current assignment.
	Current []TopicPartition
}

// SimpleAssign is Kafka's share-group SimpleAssignor (4.1+: the
// Simple{Homogeneous,Heterogeneous}AssignmentBuilder): balance first, then
// stickiness. With M members and P partitions each partition gets
// desiredSharing = ceil(M/P) members, and each member about
// desiredSharing*P/M partitions; so with more members than partitions
// several members share a partition. When all members subscribe to the
// same topics the partitions of all topics are balanced together;
// otherwise each topic is balanced among its own subscribers.
//
// Kafka iterates Java hash maps and sets; here members go in ID order and
// partitions in (topic, partition) order, so the balance and stickiness
// are Kafka's but the tie-breaking may differ (docs/share.md). partitions
// gives each topic's partition count. The result maps every member ID to
// its sorted assignment.
func SimpleAssign(members []AssignMember, partitions map[string]int32) map[string][]TopicPartition {
	ms := slices.Clone(members)
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	out := make(map[string][]TopicPartition, len(ms))
	if len(ms) == 0 {
		return out
	}
	old := make([]map[TopicPartition]bool, len(ms))
	for i, m := range ms {
		old[i] = map[TopicPartition]bool{}
		for _, tp := range m.Current {
			old[i][tp] = true
		}
	}
	final := make([]map[TopicPartition]bool, len(ms))
	for i := range final {
		final[i] = map[TopicPartition]bool{}
	}
	if homogeneous(ms) {
		var targets []TopicPartition
		for _, t := range sortedSet(ms[0].Topics) {
			for p := int32(0); p < partitions[t]; p++ {
				targets = append(targets, TopicPartition{t, p})
			}
		}
		idx := make([]int, len(ms))
		for i := range idx {
			idx[i] = i
		}
		if len(targets) > 0 {
			newBuilder(idx, targets, old, final, len(ms)).homogeneous()
		}
	} else {
		topics := map[string][]int{}
		for i, m := range ms {
			for _, t := range sortedSet(m.Topics) {
				topics[t] = append(topics[t], i)
			}
		}
		for _, t := range sortedKeys(topics) {
			var targets []TopicPartition
			for p := int32(0); p < partitions[t]; p++ {
				targets = append(targets, TopicPartition{t, p})
			}
			if len(targets) == 0 {
				continue
			}
			oldT := make([]map[TopicPartition]bool, len(ms))
			for i := range ms {
				oldT[i] = map[TopicPartition]bool{}
				for tp := range old[i] {
					if tp.Topic == t {
						oldT[i][tp] = true
					}
				}
			}
			newBuilder(topics[t], targets, oldT, final, len(ms)).heterogeneous()
		}
	}
	for i, m := range ms {
		tps := make([]TopicPartition, 0, len(final[i]))
		for tp := range final[i] { // collected, then sorted
			tps = append(tps, tp)
		}
		sort.Slice(tps, func(a, b int) bool { return tpLess(tps[a], tps[b]) })
		out[m.ID] = tps
	}
	return out
}

func homogeneous(ms []AssignMember) bool {
	first := sortedSet(ms[0].Topics)
	for _, m := range ms[1:] {
		if !slices.Equal(first, sortedSet(m.Topics)) {
			return false
		}
	}
	return true
}

func sortedSet(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return slices.Compact(out)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m { // collected, then sorted
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// builder computes one assignment: members (indices into the group, in
// order) over targets (in order).
type builder struct {
	members        []int
	targets        []TopicPartition
	valid          map[TopicPartition]bool
	old, final     []map[TopicPartition]bool
	byPartition    map[TopicPartition][]int // sorted member indices
	desiredSharing int
	desired        []int // per group member index
}

func newBuilder(members []int, targets []TopicPartition, old, final []map[TopicPartition]bool, groupSize int) *builder {
	b := &builder{members: members, targets: targets, old: old, final: final,
		valid: map[TopicPartition]bool{}, byPartition: map[TopicPartition][]int{}, desired: make([]int, groupSize)}
	for _, tp := range targets {
		b.valid[tp] = true
	}
	m, p := len(members), len(targets)
	b.desiredSharing = (m + p - 1) / p
	// Kafka computes this in double precision; so do we, to round alike.
	precise := float64(b.desiredSharing*p) / float64(m)
	for k, mi := range members {
		b.desired[mi] = int(math.Ceil(float64(precise*float64(k+1)))) - int(math.Ceil(float64(precise*float64(k))))
	}
	return b
}

func (b *builder) add(m int, tp TopicPartition) {
	b.final[m][tp] = true
	ms := b.byPartition[tp]
	if i, found := slices.BinarySearch(ms, m); !found {
		b.byPartition[tp] = slices.Insert(ms, i, m)
	}
}

func (b *builder) remove(m int, tp TopicPartition) {
	delete(b.final[m], tp)
	ms := b.byPartition[tp]
	if i, found := slices.BinarySearch(ms, m); found {
		b.byPartition[tp] = slices.Delete(ms, i, i+1)
	}
}

// sortedOf returns member m's partitions among the targets, in order.
func (b *builder) sortedOf(m int) []TopicPartition {
	var out []TopicPartition
	for _, tp := range b.targets {
		if b.final[m][tp] {
			out = append(out, tp)
		}
	}
	return out
}

// keepOld carries over each member's current partitions that are still
// assignable (revokeUnassignablePartitions).
func (b *builder) keepOld(members []int) {
	for _, m := range members {
		for _, tp := range b.targets {
			if b.old[m][tp] && b.valid[tp] {
				b.add(m, tp)
			}
		}
	}
}

func (b *builder) count(m int) int {
	n := 0
	for _, tp := range b.targets {
		if b.final[m][tp] {
			n++
		}
	}
	return n
}

// homogeneous is SimpleHomogeneousAssignmentBuilder.build.
func (b *builder) homogeneous() {
	all := make([]int, len(b.old))
	for i := range all {
		all[i] = i
	}
	b.keepOld(all)
	var unfilled, overfilled []int
	for _, m := range all {
		switch n := b.count(m); {
		case n < b.desired[m]:
			unfilled = append(unfilled, m)
		case n > b.desired[m]:
			overfilled = append(overfilled, m)
		}
	}
	for _, m := range overfilled {
		for _, tp := range b.sortedOf(m) {
			if b.count(m) <= b.desired[m] {
				break
			}
			b.remove(m, tp)
		}
	}
	for _, tp := range b.targets {
		for _, m := range slices.Clone(b.byPartition[tp]) {
			if len(b.byPartition[tp]) <= b.desiredSharing {
				break
			}
			b.remove(m, tp)
			unfilled = insertSorted(unfilled, m)
		}
	}
	b.assignRemaining(unfilled)
}

// heterogeneous is one topic of SimpleHeterogeneousAssignmentBuilder.
func (b *builder) heterogeneous() {
	all := make([]int, len(b.old))
	for i := range all {
		all[i] = i
	}
	b.keepOld(all)
	for _, m := range all {
		for _, tp := range b.sortedOf(m) {
			if b.count(m) <= b.desired[m] {
				break
			}
			b.remove(m, tp)
		}
	}
	for _, tp := range b.targets {
		for _, m := range slices.Clone(b.byPartition[tp]) {
			if len(b.byPartition[tp]) <= b.desiredSharing {
				break
			}
			b.remove(m, tp)
		}
	}
	var unfilled []int
	for _, m := range b.members {
		if b.count(m) < b.desired[m] {
			unfilled = insertSorted(unfilled, m)
		}
	}
	b.assignRemaining(unfilled)
}

func insertSorted(xs []int, x int) []int {
	i, found := slices.BinarySearch(xs, x)
	if found {
		return xs
	}
	return slices.Insert(xs, i, x)
}

// assignRemaining is assignRemainingPartitions: one pass over the
// partitions, cycling through the unfilled members, giving each partition
// that has fewer than desiredSharing members more of them. As in Kafka the
// partition's member set is not updated inside the loop, and the "assigned
// in this cycle" flag spans partitions.
func (b *builder) assignRemaining(unfilled []int) {
	if len(unfilled) == 0 {
		return
	}
	pos := 0 // next index into unfilled
	assignedThisCycle := false
	for _, tp := range b.targets {
		before := slices.Clone(b.byPartition[tp])
		if len(before) < b.desiredSharing {
			toMake := b.desiredSharing - len(before)
			for toMake > 0 {
				if pos >= len(unfilled) {
					if !assignedThisCycle {
						break
					}
					pos, assignedThisCycle = 0, false
					if len(unfilled) == 0 {
						break
					}
				}
				m := unfilled[pos]
				pos++
				if _, in := slices.BinarySearch(before, m); in {
					continue
				}
				b.add(m, tp)
				toMake--
				assignedThisCycle = true
				if b.count(m) >= b.desired[m] {
					pos--
					unfilled = slices.Delete(unfilled, pos, pos+1)
				}
			}
		}
		if len(unfilled) == 0 {
			break
		}
	}
}
