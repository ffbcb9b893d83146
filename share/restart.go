package share

import (
	"sort"

	"popsim/clock"
	"popsim/model"
)

// Restart simulates a broker restart. Lost: the share-partitions' cached
// state with every acquisition lock (acquired records come back from the
// persisted state: AVAILABLE with their last persisted delivery count, or
// never written and re-fetched as new), and all share sessions. Kept: the
// logs, the share coordinator's persisted state (SPSO, state epoch, state
// batches) and the group coordinator's groups; each member's session
// timeout restarts from now, as the coordinator reschedules it on load.
// Share-partitions load again lazily, on the next fetch. Lease ids keep
// counting.
func (b *Broker) Restart(now clock.Time) RestartResult {
	var res RestartResult
	for _, sp := range b.sortedSPs() {
		ps := b.persisted[sp.key]
		for _, f := range sp.cache {
			for off := f.first; off <= f.last; off++ {
				r := &f.st
				var lease model.LeaseID
				if f.split() {
					r = &f.offsets[off-f.first]
					lease = r.lease
				} else {
					lease = r.lease + model.LeaseID(off-f.first)
				}
				if r.state != Acquired {
					continue
				}
				res.Lost = append(res.Lost, lostEvent(now, sp, ps, off, lease, r))
			}
		}
	}
	res.Sessions = len(b.sessions)
	b.stats.LostLeases += int64(len(res.Lost))
	b.stats.Restarts++
	b.sps = map[spKey]*sharePartition{}
	b.spByID, b.spOrder = nil, nil
	b.sessions = map[sessionKey]*session{}
	b.timers.init()
	for _, g := range b.groups { // every member updated; order does not matter
		gc := b.GroupConfig(g.id)
		for _, m := range g.members {
			m.deadline = now.Add(clock.MillisDuration(int64(gc.SessionTimeoutMs)))
		}
	}
	return res
}

// lostEvent describes a lease lost at restart: the record's state and
// delivery count are what the reload will find (persisted, or AVAILABLE
// with count 0 when never written; ARCHIVED below the persisted start).
func lostEvent(now clock.Time, sp *sharePartition, ps *persistedState, off int64, lease model.LeaseID, r *recState) LeaseEvent {
	e := LeaseEvent{Lease: lease, Group: sp.key.group, TopicPartition: sp.key.TopicPartition, Offset: off,
		Msg: msgID(sp.log.at(off)), Member: r.member, End: EndLostAtRestart, State: Available, At: now}
	if ps.startOffset >= 0 && off < ps.startOffset {
		e.State = Archived
		return e
	}
	i := sort.Search(len(ps.batches), func(i int) bool { return ps.batches[i].LastOffset >= off })
	if i < len(ps.batches) && ps.batches[i].FirstOffset <= off {
		e.State, e.DeliveryCount = ps.batches[i].State, ps.batches[i].DeliveryCount
	}
	return e
}
