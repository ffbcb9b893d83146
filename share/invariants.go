package share

import (
	"fmt"
	"slices"
)

// CheckInvariants verifies structural facts of the engine's state and
// returns the first violation, or nil. It is for tests and the simulator's
// self-checks; it never changes the broker (O(state)). What it checks:
//
//   - every share-partition's cache: batches sorted, non-empty, never
//     overlapping, within the log; per-offset arrays the batch's length;
//   - every record: a legal state; 0 <= count <= the delivery limit; an
//     AVAILABLE record below the limit; member, lease and deadline set
//     exactly when ACQUIRED (count >= 1 then); leases below the next one;
//   - offsets: nothing non-terminal below the SPSO except ACQUIRED records
//     the log start offset passed; the SPEO is the last cached offset, or
//     the SPSO when the cache is empty or entirely below it; an AVAILABLE
//     record at or above the SPSO means the next-fetch flag is set;
//   - owners: an ACQUIRED record's owner has an open share session in the
//     group, or its session-close release failed to persist (orphan);
//   - lock timers: exactly one per ACQUIRED batch or offset, with its
//     deadline, and nothing else;
//   - the share coordinator's records: batches sorted, disjoint, merged,
//     never ACQUIRED, never below the start offset, counts within limits;
//   - groups: member epochs <= the group epoch, assignments within
//     existing partitions with initialized share-group state; sessions
//     have epochs >= 1.
func (b *Broker) CheckInvariants() error {
	acquiredUnits := 0
	for _, sp := range b.sortedSPs() {
		n, err := sp.check()
		if err != nil {
			return fmt.Errorf("share: invariant: %s/%s: %w", sp.key.group, sp.key.TopicPartition, err)
		}
		acquiredUnits += n
	}
	if err := b.checkTimers(acquiredUnits); err != nil {
		return err
	}
	for k, ps := range b.persisted { // each checked alone; order does not matter
		if err := b.checkPersisted(k, ps); err != nil {
			return fmt.Errorf("share: invariant: persisted %s/%s: %w", k.group, k.TopicPartition, err)
		}
	}
	return b.checkGroups()
}

// check verifies one share-partition and returns its number of ACQUIRED
// units (whole batches and single offsets, one timer each).
func (sp *sharePartition) check() (int, error) {
	units := 0
	prevLast := int64(-1 << 62)
	anyAvailable := false
	for _, f := range sp.cache {
		if f.first > f.last || f.first <= prevLast {
			return 0, fmt.Errorf("batch %d..%d out of order or overlapping (previous ends at %d)", f.first, f.last, prevLast)
		}
		if f.last >= sp.log.end() {
			return 0, fmt.Errorf("batch %d..%d beyond the log end %d", f.first, f.last, sp.log.end())
		}
		prevLast = f.last
		if f.split() && int64(len(f.offsets)) != f.last-f.first+1 {
			return 0, fmt.Errorf("batch %d..%d has %d offset states", f.first, f.last, len(f.offsets))
		}
		for off := f.first; off <= f.last; off++ {
			r := &f.st
			if f.split() {
				r = &f.offsets[off-f.first]
			}
			if err := sp.checkRecord(off, r); err != nil {
				return 0, err
			}
			if r.state == Available && off >= sp.start {
				anyAvailable = true
			}
		}
		if f.split() {
			for i := range f.offsets {
				if f.offsets[i].state == Acquired {
					units++
				}
			}
		} else if f.st.state == Acquired {
			units++
		}
	}
	if anyAvailable && !sp.findNext {
		return 0, fmt.Errorf("an AVAILABLE record at or above the start offset %d but the next-fetch flag is clear", sp.start)
	}
	switch n := len(sp.cache); {
	case n == 0 && sp.end != sp.start:
		return 0, fmt.Errorf("empty cache but start %d != end %d", sp.start, sp.end)
	case n > 0 && sp.end != sp.cache[n-1].last && !(sp.end == sp.start && sp.start > sp.cache[n-1].last):
		return 0, fmt.Errorf("end offset %d is not the last cached offset %d", sp.end, sp.cache[n-1].last)
	}
	return units, nil
}

func (sp *sharePartition) checkRecord(off int64, r *recState) error {
	switch r.state {
	case Available, Acquired, Acknowledged, Archived:
	default:
		return fmt.Errorf("offset %d in illegal state %d", off, r.state)
	}
	if r.count < 0 || r.count > sp.maxDelivery {
		return fmt.Errorf("offset %d: delivery count %d outside 0..%d", off, r.count, sp.maxDelivery)
	}
	if r.state == Available && r.count >= sp.maxDelivery {
		return fmt.Errorf("offset %d: AVAILABLE at the delivery limit (%d)", off, r.count)
	}
	acquired := r.state == Acquired
	if acquired != (r.member != "") || acquired != (r.deadline != 0) || acquired != (r.lease != 0) {
		return fmt.Errorf("offset %d: %v with member %q, deadline %v, lease %d", off, r.state, r.member, r.deadline, r.lease)
	}
	if !acquired {
		if off < sp.start && r.state == Available {
			return fmt.Errorf("offset %d: AVAILABLE below the start offset %d", off, sp.start)
		}
		return nil
	}
	if r.count < 1 || r.lease >= sp.b.nextLease {
		return fmt.Errorf("offset %d: ACQUIRED with count %d and lease %d (next lease %d)", off, r.count, r.lease, sp.b.nextLease)
	}
	if off < sp.start && off >= sp.log.start {
		return fmt.Errorf("offset %d: ACQUIRED below the start offset %d but not below the log start %d", off, sp.start, sp.log.start)
	}
	if sp.b.sessions[sessionKey{sp.key.group, r.member}] == nil && !sp.orphans[r.member] {
		return fmt.Errorf("offset %d: ACQUIRED by %s, which has no share session", off, r.member)
	}
	return nil
}

func (b *Broker) checkTimers(units int) error {
	if b.timers.len() != units {
		return fmt.Errorf("share: invariant: %d lock timers for %d acquired batches and offsets", b.timers.len(), units)
	}
	var err error
	b.timers.bt.Scan(func(k timerKey) bool {
		if int(k.sp) >= len(b.spByID) || b.spByID[k.sp] == nil {
			err = fmt.Errorf("share: invariant: lock timer for unknown share-partition %d", k.sp)
			return false
		}
		sp := b.spByID[k.sp]
		i := sp.floor(k.first)
		if i < 0 || sp.cache[i].last < k.first {
			err = fmt.Errorf("share: invariant: lock timer at %d of %v covers nothing cached", k.first, sp.key)
			return false
		}
		f := sp.cache[i]
		r := &f.st
		if f.split() {
			r = &f.offsets[k.first-f.first]
		} else if f.first != k.first {
			err = fmt.Errorf("share: invariant: lock timer at %d inside whole batch %d..%d of %v", k.first, f.first, f.last, sp.key)
			return false
		}
		if r.state != Acquired || r.deadline != k.deadline {
			err = fmt.Errorf("share: invariant: lock timer at %d (%v) of %v for a %v record with deadline %v", k.first, k.deadline, sp.key, r.state, r.deadline)
			return false
		}
		return true
	})
	return err
}

func (b *Broker) checkPersisted(k spKey, ps *persistedState) error {
	limit := b.GroupConfig(k.group).DeliveryCountLimit
	for i, pb := range ps.batches {
		if pb.FirstOffset > pb.LastOffset || ps.startOffset >= 0 && pb.FirstOffset < ps.startOffset || ps.startOffset < 0 {
			return fmt.Errorf("batch %+v with start offset %d", pb, ps.startOffset)
		}
		if pb.State == Acquired || pb.DeliveryCount < 0 || pb.DeliveryCount > limit {
			return fmt.Errorf("batch %+v: ACQUIRED is never persisted; counts lie in 0..%d", pb, limit)
		}
		if i > 0 {
			p := ps.batches[i-1]
			if p.LastOffset >= pb.FirstOffset {
				return fmt.Errorf("batches %+v and %+v overlap or are out of order", p, pb)
			}
			if p.LastOffset+1 == pb.FirstOffset && p.State == pb.State && p.DeliveryCount == pb.DeliveryCount {
				return fmt.Errorf("batches %+v and %+v are not merged", p, pb)
			}
		}
	}
	return nil
}

func (b *Broker) checkGroups() error {
	for _, gid := range sortedKeys(b.groups) {
		g := b.groups[gid]
		for _, id := range g.memberIDs() {
			m := g.members[id]
			if m.epoch > g.epoch || m.epoch < 1 {
				return fmt.Errorf("share: invariant: group %s member %s epoch %d (group epoch %d)", gid, id, m.epoch, g.epoch)
			}
			if !slices.IsSortedFunc(m.assignment, func(a, c TopicPartition) int {
				if tpLess(a, c) {
					return -1
				}
				return 1
			}) {
				return fmt.Errorf("share: invariant: group %s member %s assignment not sorted", gid, id)
			}
			for _, tp := range m.assignment {
				if b.log(tp) == nil || b.persisted[spKey{gid, tp}] == nil {
					return fmt.Errorf("share: invariant: group %s member %s assigned %s without share-group state", gid, id, tp)
				}
			}
		}
	}
	for k, s := range b.sessions { // each checked alone; order does not matter
		if s.epoch < 1 {
			return fmt.Errorf("share: invariant: session %s/%s epoch %d", k.group, k.member, s.epoch)
		}
	}
	return nil
}
