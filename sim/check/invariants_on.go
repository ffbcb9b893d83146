//go:build invariants

package check

import (
	"fmt"

	"popsim/model"
)

// With the invariants build tag, a record about to be reused is first
// looked for in everything the checker keeps: a pointer to it, or to a
// lease or delivery of its message, panics (a client's held delivery or
// pending lease is allowed once its generation tag is stale). Then it is
// poisoned until its reuse, so that a use through a pointer the search
// missed dereferences nil (its group), and reads ids no message or lease
// has.
func checkRecycled(c *Checker, m *msgState) {
	where := func(what string) {
		panic(fmt.Sprintf("check: the record of message %d (group %s), forgotten, is still referred to by %s", m.id, m.g.name, what))
	}
	for k := range c.clients {
		cl := &c.clients[k]
		for _, r := range cl.held.get() {
			if r.d.m == m && r.live() {
				where(fmt.Sprintf("client %d's held deliveries (as live)", k))
			}
		}
		for _, r := range cl.pending.get() {
			if r.l.m == m && r.live() {
				where(fmt.Sprintf("client %d's pending leases (as live)", k))
			}
		}
		for _, l := range c.lostBatch(cl) {
			if l.m == m {
				where(fmt.Sprintf("client %d's lost batch", k))
			}
		}
	}
	for k, q := range c.order.queues { // searching only: order does not matter
		for _, l := range q.live {
			if l.m == m {
				where(fmt.Sprintf("the live leases of orderly queue %v", k))
			}
		}
		for _, o := range q.owed {
			if o == m {
				where(fmt.Sprintf("the owed offsets of orderly queue %v", k))
			}
		}
	}
	c.leases.w.each(func(_ uint64, l *lease) {
		if l.m == m {
			where(fmt.Sprintf("lease %d in the lease table", l.id))
		}
	})
	for _, g := range c.groups {
		for _, ms := range g.passable { // searching only: order does not matter
			for _, x := range ms {
				if x == m {
					where("group " + g.name + "'s passable index")
				}
			}
		}
		for _, x := range g.unplaced {
			if x == m {
				where("group " + g.name + "'s unplaced messages")
			}
		}
		g.msgs.each(func(_ uint64, x *msgState) {
			if x == m {
				where("group " + g.name + "'s messages")
			}
			for _, l := range x.leases {
				if l.m == m || l.dlv != nil && l.dlv.m == m || l.next != nil && l.next.m == m {
					where(fmt.Sprintf("a lease of message %d", x.id))
				}
			}
			for _, t := range x.tokens {
				if t.prev != nil && t.prev.m == m {
					where(fmt.Sprintf("a token of message %d", x.id))
				}
			}
			if x.pull != nil && x.pull.dlv != nil && x.pull.dlv.m == m {
				where(fmt.Sprintf("the pull delivery of message %d", x.id))
			}
		})
	}
	for _, x := range c.free {
		if x == m {
			where("the free list")
		}
	}
	poison(m)
}

func poison(m *msgState) {
	m.g, m.id, m.topic = nil, ^model.MsgID(0), "(recycled)"
	m.firstLease = lease{id: ^model.LeaseID(0), m: m}
	m.firstDlv = delivery{client: -1 << 30, m: m}
	m.pull = nil
}
