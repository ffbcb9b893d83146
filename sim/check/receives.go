package check

import "popsim/model"

// receives is what the checker counts of one client's receive requests.
// The trace does not say which request an answer, a loss or a lease
// belongs to, and a client with several pop loops (one per broker, or per
// queue the broker assigned it) has several requests out at once: a loss
// announced for one of them says nothing about the leases the others'
// answers are bringing. A lease lent to the client stays awaited (its
// message is not forgotten) until the counts prove that no answer still on
// its way can carry it; until then it is only kept, never judged.
//
// Each request ends in exactly one first report: its answer (received),
// its loss on the way there (request) or back (response), the client
// giving up (timeout, which a late answer may follow: late), or the end of
// the client incarnation that sent it (client-gone). The counts err on the
// side of keeping: out and ghosts never fall below what they count, lost
// never rises above it.
type receives struct {
	out      int32 // live requests without a first report (upper bound)
	ghosts   int32 // requests of a crashed incarnation without one (upper bound)
	lost     int32 // awaited leases whose answer a loss announced since the last release (lower bound)
	timedOut int32 // requests given up whose late answer has not come (upper bound)
	stale    int32 // late answers whose leases the last release let go already (upper bound)
}

// sent counts a receive request.
func (x *receives) sent() { x.out++ }

// answered counts an answer that reached its client.
func (x *receives) answered() { x.out = less(x.out) }

// lostAnswer counts a receive's loss event.
func (x *receives) lostAnswer(e *model.Event) {
	switch e.Reason {
	case model.RLate:
		x.timedOut = less(x.timedOut)
		if x.stale > 0 {
			x.stale-- // perhaps an answer the last release let go: not counted
		} else {
			x.lost += e.Count
		}
	case model.RTimeout:
		x.out = less(x.out)
		x.timedOut++
	case model.RRequest:
		x.out = less(x.out)
	case model.RResponse, model.RNone: // a hand-written trace may name no reason
		// The answer of a crashed incarnation's request can be lost on
		// its way back after the crash: while one may be out, a lost
		// response is nobody's for certain, and counts nothing.
		if x.ghosts == 0 {
			x.out = less(x.out)
			x.lost += e.Count
		}
	case model.RClientGone:
		x.ghosts = less(x.ghosts)
	}
}

// crashed: the incarnation's requests become ghosts; its leases were let go.
func (x *receives) crashed() {
	*x = receives{ghosts: x.ghosts + x.out}
}

// released: every awaited lease was let go. Only a request that timed out
// before can still announce its answer (late), with leases already let go.
func (x *receives) released() {
	x.lost, x.stale = 0, x.timedOut
}

func less(n int32) int32 {
	if n > 0 {
		return n - 1
	}
	return 0
}

// releaseLost lets go of client cl's awaited leases once no answer still
// on its way can carry one: no live request is out, or every awaited lease
// is accounted for by an announced loss. It does not run between an
// answer and the deliveries that follow it.
func (c *Checker) releaseLost(cl *client) {
	if cl.rx.allLost(cl.pending.get()) {
		c.noneAwaited(cl)
	}
}

// allLost reports whether no awaited lease of pending can still be on its
// way: every one of them was in an answer that was lost, or that the
// client gave up on.
func (x *receives) allLost(pending []pendRef) bool {
	return x.out == 0 || x.lost > 0 && awaited(pending) <= int(x.lost)
}

// awaited counts the entries of pending whose lease is still awaited (an
// entry each: a lease lent again has two, one per answer).
func awaited(pending []pendRef) int {
	n := 0
	for _, r := range pending {
		if r.live() && r.l.awaiting {
			n++
		}
	}
	return n
}
