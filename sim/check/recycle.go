package check

import "slices"

// Records of forgotten messages are reused: a long run allocates about as
// many as it holds at once, instead of one per message and group.
//
// A record is forgotten when its message is settled with nothing left in
// flight (maybeForget), but the event that forgot it may still be at work
// on it (a crash releasing its client's deliveries one by one), so its
// record joins the free list only when the event ends. Before that, every
// pointer into it is taken out of the clients' lists, which keep
// deliveries and leases past their message's end (all of them inert by
// then: released, ended, no longer awaited). Nothing else refers to a
// forgotten message: the group's window and the lease table forgot it,
// wakeup obligations name messages by id, and the orderly structures that
// do keep settled messages (orderQueue.owed, group.passable) belong to
// orderly groups, whose records are not reused (maybeForget).

// recycle moves the records forgotten during the current event to the
// free list.
func (c *Checker) recycle() {
	for i, m := range c.forgotten {
		c.forgotten[i] = nil
		if slices.Contains(c.free, m) {
			// Forgotten twice in one event: it is in the list once.
			continue
		}
		c.scrub(m)
		checkRecycled(c, m)
		c.free = append(c.free, m)
	}
	c.forgotten = c.forgotten[:0]
}

// scrub takes the pointers into m's record, and to leases and deliveries
// of m, out of the lists of the clients it was lent or delivered to.
func (c *Checker) scrub(m *msgState) {
	last := int32(-1)
	for _, l := range m.leases {
		if l.client != last {
			c.unrefClient(l.client, m)
			last = l.client
		}
		if d := l.dlv; d != nil && d.client != last {
			c.unrefClient(d.client, m)
			last = d.client
		}
	}
	if m.dlvRoom && m.firstDlv.client != last {
		c.unrefClient(m.firstDlv.client, m)
	}
	if p := m.pull; p != nil && p.dlv != nil && p.dlv.client != last {
		c.unrefClient(p.dlv.client, m)
	}
}

// unrefClient drops client k's deliveries and leases of m.
func (c *Checker) unrefClient(k int32, m *msgState) {
	if k < 0 || int(k) >= len(c.clients) {
		return
	}
	cl := &c.clients[k]
	cl.held = slices.DeleteFunc(cl.held, func(d *delivery) bool { return d.m == m })
	cl.pending = slices.DeleteFunc(cl.pending, func(l *lease) bool { return l.m == m })
	cl.lostBatch = slices.DeleteFunc(cl.lostBatch, func(l *lease) bool { return l.m == m })
}
