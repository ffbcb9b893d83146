package check

// Records of forgotten messages are reused: a long run allocates about as
// many as it holds at once, instead of one per message and group.
//
// A record is forgotten when its message is settled with nothing left in
// flight (maybeForget), but the event that forgot it may still be at work
// on it (a crash releasing its client's deliveries one by one), so its
// record joins the free list only when the event ends. The clients' lists
// keep deliveries and leases past their message's end (all of them inert
// by then: released, ended, no longer awaited): a held delivery is
// tagged with its record's generation, which moves when the record is
// freed, and is passed over once stale; the short lists of leases are
// rid of the message's leases when it is freed. Nothing else refers to a
// forgotten message: the group's window and the lease table forgot it,
// wakeup obligations name messages by id, and the orderly structures that
// do keep settled messages (orderQueue.owed, group.passable) belong to
// orderly groups, whose records are not reused (maybeForget).

// recycle moves the records forgotten during the current event to the
// free list.
func (c *Checker) recycle() {
	for i, m := range c.forgotten {
		c.forgotten[i] = nil
		if m.freed {
			continue // forgotten twice in one event: in the list once
		}
		c.scrub(m)
		m.freed = true
		m.gen++ // the clients' held entries of it are stale from now on
		checkRecycled(c, m)
		c.free = append(c.free, m)
	}
	c.forgotten = c.forgotten[:0]
}

// scrub takes the leases of m out of the pending and lost-batch lists of
// the clients they were lent to.
func (c *Checker) scrub(m *msgState) {
	last := int32(-1)
	for _, l := range m.leases {
		if k := l.client; k != last && k >= 0 && int(k) < len(c.clients) {
			last = k
			cl := &c.clients[k]
			if len(cl.pending) > 0 {
				cl.pending = dropLeasesOf(cl.pending, m)
			}
			if len(cl.lostBatch) > 0 {
				cl.lostBatch = dropLeasesOf(cl.lostBatch, m)
			}
		}
	}
}

// dropLeasesOf removes the leases of m from ls, in place.
func dropLeasesOf(ls []*lease, m *msgState) []*lease {
	for i, l := range ls {
		if l.m != m {
			continue
		}
		out := ls[:i]
		for _, x := range ls[i+1:] {
			if x.m != m {
				out = append(out, x)
			}
		}
		clearFew(ls[len(out):]) // one lease, mostly
		return out
	}
	return ls
}
