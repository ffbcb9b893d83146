package share

import (
	"sort"

	"popsim/clock"
)

// NextDeadline returns when Tick next has work: the earliest acquisition
// lock deadline or member session deadline. The driver calls Tick then.
func (b *Broker) NextDeadline() (clock.Time, bool) {
	best, found := b.nextMemberDeadline()
	if k, ok := b.timers.min(); ok && (!found || k.deadline < best) {
		best, found = k.deadline, true
	}
	return best, found
}

// Tick runs the timers that are due at now: acquisition locks whose
// deadline is <= now expire (AVAILABLE again, or ARCHIVED at the delivery
// limit), and members whose session deadline is <= now leave their group.
// A lock that is due but not yet expired by Tick still accepts
// acknowledgements, as in Kafka where the timer task and an acknowledgement
// race for the share-partition's lock.
func (b *Broker) Tick(now clock.Time) TickResult {
	var res TickResult
	due := b.timers.peekDue(now)
	if len(due) > 0 {
		bySP := map[uint32][]timerKey{}
		for _, k := range due {
			bySP[k.sp] = append(bySP[k.sp], k)
		}
		type timed struct {
			ev LeaseEvent
			at clock.Time
		}
		var all []timed
		for _, sp := range b.sortedSPs() {
			keys := bySP[sp.id]
			if len(keys) == 0 {
				continue
			}
			evs, dls := sp.expire(now, keys)
			for i := range evs {
				all = append(all, timed{evs[i], dls[i]})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
		for _, t := range all {
			res.Ended = append(res.Ended, t.ev)
		}
	}
	res.Expired = b.expireMembers(now)
	return res
}
