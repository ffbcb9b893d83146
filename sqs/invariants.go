package sqs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// CheckInvariants verifies the structure of the service's state and
// returns the first violation, or nil. It is for tests and the simulator's
// self-checks; it changes nothing. What it checks:
//
//   - time: nothing is due at or before now (every call runs what is due);
//   - messages: positions within the queue's counter, leases within the
//     service's counter, a receive count exactly when a lease was granted,
//     an in-flight message's deadline after now, a delayed one's delay
//     ending after now, a visible one's delay over;
//   - indexes: the per-state counts, the per-server visible sets (standard),
//     the group membership, the stored-position set, the group sizes,
//     in-flight counts and the ready set (FIFO) all agree with the
//     messages;
//   - timers: exactly one retention timer per message, one visibility timer
//     per in-flight message, one delay timer per delayed message, one wait
//     timer per parked poll, and nothing else;
//   - long polls: the id index agrees with the queues' lists, lists are in
//     id order, and no parked poll could be answered now (its queue has no
//     available message while it has in-flight capacity);
//   - dead-letter queues: present exactly with a RedrivePolicy, of the same
//     type, created earlier.
func (s *Service) CheckInvariants() error {
	if len(s.dirty) != 0 {
		return fmt.Errorf("sqs: %d queues left to serve between calls", len(s.dirty))
	}
	if t, ok := s.timers.Min(); ok && t.at <= s.now {
		return fmt.Errorf("sqs: timer %+v due at or before now %v", t, s.now)
	}
	want := 0
	polls := 0
	for i, q := range s.queues {
		if q.idx != i || s.byName[q.name] != q {
			return fmt.Errorf("sqs: queue %s indexed as %d, listed at %d", q.name, q.idx, i)
		}
		n, err := s.checkQueue(q)
		if err != nil {
			return err
		}
		want += n
		polls += len(q.polls)
	}
	if polls != len(s.pollQueue) {
		return fmt.Errorf("sqs: %d parked polls in queues, %d in the index", polls, len(s.pollQueue))
	}
	if s.timers.Len() != want {
		return fmt.Errorf("sqs: %d timers, want %d", s.timers.Len(), want)
	}
	return nil
}

// checkQueue checks one queue and returns how many timers it owns.
func (s *Service) checkQueue(q *queue) (int, error) {
	if err := s.checkDLQ(q); err != nil {
		return 0, err
	}
	var c Counts
	timers := 0
	for _, seq := range sortedKeys(q.msgs) { // sorted: the first violation reported does not depend on map order
		m := q.msgs[seq]
		if err := s.checkMessage(q, seq, m); err != nil {
			return 0, err
		}
		timers++
		switch m.state {
		case stVisible:
			c.Visible++
		case stInFlight:
			c.InFlight++
			timers++
		case stDelayed:
			c.Delayed++
			timers++
		}
	}
	if c.Visible != q.visible || c.InFlight != q.inflight || c.Delayed != q.delayed {
		return 0, fmt.Errorf("sqs: %s counts %d/%d/%d (visible/in-flight/delayed), messages say %d/%d/%d",
			q.name, q.visible, q.inflight, q.delayed, c.Visible, c.InFlight, c.Delayed)
	}
	var err error
	if q.fifo() {
		err = s.checkFifo(q)
	} else {
		err = s.checkStandard(q)
	}
	if err == nil {
		err = s.checkPolls(q)
	}
	return timers + len(q.polls), err
}

func (s *Service) checkDLQ(q *queue) error {
	p := q.attrs.RedrivePolicy
	switch {
	case (p == nil) != (q.dlq == nil):
		return fmt.Errorf("sqs: %s has redrive policy %v and dead-letter queue %v", q.name, p != nil, q.dlq != nil)
	case q.dlq == nil:
		return nil
	case q.dlq.fifo() != q.fifo() || q.dlq.idx >= q.idx || q.dlq.arn != p.DeadLetterTargetArn:
		return fmt.Errorf("sqs: %s has dead-letter queue %s of another type, created later, or not its policy's target", q.name, q.dlq.name)
	}
	return nil
}

func (s *Service) checkMessage(q *queue, seq int64, m *message) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("sqs: %s@%d (%s): %s", q.name, seq, m.state, fmt.Sprintf(format, args...))
	}
	retention := s.retentionTimer(q, m)
	switch {
	case m.seq != seq || seq < 1 || seq > q.nextSeq:
		return bad("position %d outside 1..%d or misfiled", m.seq, q.nextSeq)
	case m.lease > s.lastLease:
		return bad("lease %d never granted (last %d)", m.lease, s.lastLease)
	case (m.lease != 0) != (m.receiveCount != 0) && m.dlqSource == "":
		return bad("lease %d with receive count %d", m.lease, m.receiveCount)
	case m.state == stInFlight && (m.lease == 0 || m.deadline <= s.now):
		return bad("in flight with lease %d and deadline %v at %v", m.lease, m.deadline, s.now)
	case m.state == stDelayed && m.availableAt <= s.now:
		return bad("delayed until %v at %v", m.availableAt, s.now)
	case m.state == stVisible && m.availableAt > s.now:
		return bad("visible before its delay ends at %v", m.availableAt)
	case (m.group != nil) != q.fifo():
		return bad("group %v on a queue with FifoQueue=%v", m.group != nil, q.fifo())
	case retention.at <= s.now:
		return bad("retained past its retention end %v", retention.at)
	}
	if _, ok := s.timers.Get(retention); !ok {
		return bad("no retention timer")
	}
	switch m.state {
	case stInFlight:
		if _, ok := s.timers.Get(timer{at: m.deadline, kind: tVisibility, q: int32(q.idx), id: m.seq}); !ok {
			return bad("no visibility timer")
		}
	case stDelayed:
		if _, ok := s.timers.Get(timer{at: m.availableAt, kind: tDelay, q: int32(q.idx), id: m.seq}); !ok {
			return bad("no delay timer")
		}
	}
	return nil
}

func (s *Service) checkStandard(q *queue) error {
	n := 0
	for i, t := range q.vis {
		var err error
		t.Scan(func(seq int64) bool {
			m := q.msgs[seq]
			if m == nil || m.state != stVisible || int(seq%int64(len(q.vis))) != i {
				err = fmt.Errorf("sqs: %s server %d lists %d, which is not a visible message of that server", q.name, i, seq)
				return false
			}
			n++
			return true
		})
		if err != nil {
			return err
		}
	}
	if n != q.visible {
		return fmt.Errorf("sqs: %s servers list %d visible messages, want %d", q.name, n, q.visible)
	}
	return nil
}

func (s *Service) checkFifo(q *queue) error {
	if q.members.Len() != len(q.msgs) || q.live.Len() != len(q.msgs) {
		return fmt.Errorf("sqs: %s has %d members and %d positions for %d messages", q.name, q.members.Len(), q.live.Len(), len(q.msgs))
	}
	size := map[*group]int{}
	inflight := map[*group]int{}
	for _, seq := range sortedKeys(q.msgs) {
		m := q.msgs[seq]
		g := m.group
		if q.groups[m.groupID] != g || g.id != m.groupID {
			return fmt.Errorf("sqs: %s@%d is in group %q, not the queue's group of that id", q.name, seq, g.id)
		}
		if _, ok := q.members.Get(memberKey{g.ord, seq}); !ok {
			return fmt.Errorf("sqs: %s@%d missing from its group's members", q.name, seq)
		}
		if _, ok := q.live.Get(seq); !ok {
			return fmt.Errorf("sqs: %s@%d missing from the stored positions", q.name, seq)
		}
		size[g]++
		if m.state == stInFlight {
			inflight[g]++
		}
	}
	ready := 0
	for _, id := range sortedKeys(q.groups) {
		g := q.groups[id]
		if g.size != size[g] || g.size == 0 || g.inflight != inflight[g] || g.id != id {
			return fmt.Errorf("sqs: %s group %q size %d in-flight %d, messages say %d and %d", q.name, id, g.size, g.inflight, size[g], inflight[g])
		}
		head := int64(0)
		q.members.Ascend(memberKey{g.ord, 0}, func(k memberKey) bool { head = k.seq; return false })
		want := g.inflight == 0 && q.msgs[head].state == stVisible
		_, in := q.ready.Get(g)
		if want != g.ready || want != in || want && g.head != head {
			return fmt.Errorf("sqs: %s group %q ready=%v (listed %v, head %d), want ready=%v head %d", q.name, id, g.ready, in, g.head, want, head)
		}
		if want {
			ready++
		}
	}
	if ready != q.ready.Len() {
		return fmt.Errorf("sqs: %s lists %d ready groups, want %d", q.name, q.ready.Len(), ready)
	}
	return nil
}

func (s *Service) checkPolls(q *queue) error {
	for i, p := range q.polls {
		switch {
		case s.pollQueue[p.id] != q:
			return fmt.Errorf("sqs: poll %d parked on %s is not indexed there", p.id, q.name)
		case i > 0 && q.polls[i-1].id >= p.id:
			return fmt.Errorf("sqs: %s polls out of order at %d", q.name, p.id)
		case p.until <= s.now:
			return fmt.Errorf("sqs: poll %d on %s still parked after its wait ended at %v", p.id, q.name, p.until)
		}
		if _, ok := s.timers.Get(timer{at: p.until, kind: tPoll, q: int32(q.idx), id: int64(p.id)}); !ok {
			return fmt.Errorf("sqs: poll %d on %s has no wait timer", p.id, q.name)
		}
	}
	if len(q.polls) == 0 || !s.hasCapacity(q) {
		return nil
	}
	if !q.fifo() && q.visible > 0 {
		return fmt.Errorf("sqs: %s has %d visible messages and %d parked polls", q.name, q.visible, len(q.polls))
	}
	if q.fifo() {
		if g, ok := q.ready.Min(); ok && g.head <= s.fifoThreshold(q) {
			return fmt.Errorf("sqs: %s group %q can deliver and %d polls are parked", q.name, g.id, len(q.polls))
		}
	}
	return nil
}

func (s *Service) hasCapacity(q *queue) bool {
	if q.fifo() {
		return q.inflight < s.cfg.FifoInFlightLimit
	}
	return q.inflight < s.cfg.StandardInFlightLimit
}
