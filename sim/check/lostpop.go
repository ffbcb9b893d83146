package check

import "popsim/model"

// Pop responses that carried messages but never reached the consumer
// (EvPopLost with N > 0: lost on the way back, late after the client's
// timeout, or the client gone) leave records no EvDeliver names. Their
// messages revive at popTime + invisibleTime. The broker's popTime lies
// between the client's EvPopRequest and the EvPopLost, so each lost
// response gives a window of possible deadlines that explains up to N
// revives.

// lostPopHorizon is how long past its window a lost response is kept.
const lostPopHorizon = 60_000 // ms

type popAsk struct {
	atMs, invisible int64
	max             int64 // maxMsgNums (EvPopRequest.N)
	open            bool  // not answered yet (no EvPopResponse / EvPopLost)
}

type lostPop struct {
	popLo, popHi int64 // the broker's pop time lies in [popLo, popHi] (ms)
	invisible    int64
	n            int64 // messages not yet accounted for
}

// onPopAsked remembers a client's latest pop request: when and for how long
// (EvPopRequest.Deadline is the invisible time in ms).
func (c *Checker) onPopAsked(e *model.Event) {
	c.asks[e.Client] = popAsk{atMs: e.At.Millis(), invisible: e.Deadline, max: e.N, open: true}
}

// onCrashAsk: a client that crashes with a pop request open may have been
// served before it died; up to maxMsgNums messages of that response are
// as good as lost.
func (c *Checker) onCrashAsk(e *model.Event) {
	a, ok := c.asks[e.Client]
	if !ok || !a.open || a.max <= 0 {
		return
	}
	c.lostPops = append(c.lostPops, lostPop{popLo: a.atMs, popHi: e.At.Millis(), invisible: a.invisible, n: a.max})
	c.onPopAnswered(e)
}

func (c *Checker) onPopAnswered(e *model.Event) {
	if a, ok := c.asks[e.Client]; ok {
		a.open = false
		c.asks[e.Client] = a
	}
}

// pausedPop: a record with deadline vt that no delivery made may be the
// pop of a paused client's open request: its response is written only when
// the client resumes, after the lease ran out (the copy it left is then
// claimed by that late delivery).
func (c *Checker) pausedPop(vt, nowMs int64) (lostPop, bool) {
	var p lostPop
	var pcl int32
	ok := false
	for cl, a := range c.asks { // the earliest open request, ties to the lowest client: map order cannot decide
		earlier := !ok || a.atMs < p.popLo || (a.atMs == p.popLo && cl < pcl)
		if a.open && c.wake.paused[cl] && vt > 0 && a.atMs+a.invisible <= vt && earlier {
			p, pcl, ok = lostPop{popLo: a.atMs, popHi: nowMs, invisible: a.invisible}, cl, true
		}
	}
	return p, ok
}

func (c *Checker) onPopLost(e *model.Event) {
	c.onPopAnswered(e)
	a, ok := c.asks[e.Client]
	if e.N <= 0 || !ok {
		return
	}
	c.lostPops = append(c.lostPops, lostPop{popLo: a.atMs, popHi: e.At.Millis(), invisible: a.invisible, n: e.N})
}

// takeLostPop accounts one message to a lost response whose records could
// have the deadline vt. Of the windows that fit it takes the one that
// closes first (revives come in deadline order, so this greedy choice never
// strands a later one). It returns that response, and drops windows long
// past.
func (c *Checker) takeLostPop(m *msgState, vt, nowMs int64) (p lostPop, found bool) {
	best := -1
	born := m.bornMs()
	for i, p := range c.lostPops {
		lo, hi := p.popLo+p.invisible, p.popHi+p.invisible
		if vt > 0 && lo <= vt && vt <= hi && p.popHi >= born && (best < 0 || hi < c.lostPops[best].popHi+c.lostPops[best].invisible) {
			best = i
		}
	}
	if best >= 0 {
		found, p = true, c.lostPops[best]
		c.lostPops[best].n--
	}
	kept := c.lostPops[:0]
	for _, q := range c.lostPops {
		if q.n > 0 && q.popHi+q.invisible+lostPopHorizon >= nowMs {
			kept = append(kept, q)
		}
	}
	c.lostPops = kept
	return p, found
}

// mayBeLostPop reports a lost response that could have held m (lost after
// m was produced) and whose records could have expired by nowMs, without
// taking it: the earliest such.
func (c *Checker) mayBeLostPop(m *msgState, nowMs int64) (p lostPop, ok bool) {
	born := m.bornMs()
	for _, q := range c.lostPops {
		if q.popLo+q.invisible <= nowMs && q.popHi >= born && (!ok || q.popLo < p.popLo) {
			p, ok = q, true
		}
	}
	return p, ok
}

// markLostPop: the lost response p popped the message from a location
// visible by then: the first not yet popped, as a guess (a later pop
// without a restart corrects it), or a re-pop after a restart. Which one
// the trace cannot tell, so the record it made is on its own extra line.
func markLostPop(m *msgState, p lostPop) (lineage string) {
	for i := range m.locs {
		if l := &m.locs[i]; !l.popped && l.bornMs <= p.popHi {
			l.popped, l.guessed, l.popMs = true, true, p.popLo
			break
		}
	}
	return CausePopLost
}
