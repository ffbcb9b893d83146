package check

// Records of forgotten messages are reused: a long run allocates about as
// many as it holds at once, instead of one per message and group.
//
// A record is forgotten when its message is settled with nothing left in
// flight (maybeForget), but the event that forgot it may still be at work
// on it (a crash releasing its client's deliveries one by one), so its
// record joins the free list only when the event ends. The clients' lists
// keep deliveries and leases past their message's end (all of them inert
// by then: released, ended, no longer awaited): a held delivery and a
// pending lease are tagged with their record's generation, which moves
// when the record is freed, and are passed over once stale (an orderly
// client's lost batch is copied from the live pending leases, and
// orderly records are not reused). Nothing else refers to a
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
		m.freed = true
		m.gen++ // the clients' held entries of it are stale from now on
		checkRecycled(c, m)
		c.free = append(c.free, m)
	}
	c.forgotten = c.forgotten[:0]
}
