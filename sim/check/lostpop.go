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
}

type lostPop struct {
	popLo, popHi int64 // the broker's pop time lies in [popLo, popHi] (ms)
	invisible    int64
	n            int64 // messages not yet accounted for
}

// onPopAsked remembers a client's latest pop request: when and for how long
// (EvPopRequest.Deadline is the invisible time in ms).
func (c *Checker) onPopAsked(e *model.Event) {
	c.asks[e.Client] = popAsk{atMs: e.At.Millis(), invisible: e.Deadline}
}

func (c *Checker) onPopLost(e *model.Event) {
	a, ok := c.asks[e.Client]
	if e.N <= 0 || !ok {
		return
	}
	c.lostPops = append(c.lostPops, lostPop{popLo: a.atMs, popHi: e.At.Millis(), invisible: a.invisible, n: e.N})
}

// takeLostPop accounts one message to a lost response whose records could
// have the deadline vt, or, with vt <= 0, could have expired by nowMs. Of
// the windows that fit it takes the one that closes first (revives come in
// deadline order, so this greedy choice never strands a later one). It
// returns the earliest possible pop time, and drops windows long past.
func (c *Checker) takeLostPop(vt, nowMs int64) (popMs int64, found bool) {
	best := -1
	for i, p := range c.lostPops {
		lo, hi := p.popLo+p.invisible, p.popHi+p.invisible
		fits := vt > 0 && lo <= vt && vt <= hi || vt <= 0 && lo <= nowMs
		if fits && (best < 0 || hi < c.lostPops[best].popHi+c.lostPops[best].invisible) {
			best = i
		}
	}
	if best >= 0 {
		found, popMs = true, c.lostPops[best].popLo
		c.lostPops[best].n--
	}
	kept := c.lostPops[:0]
	for _, p := range c.lostPops {
		if p.n > 0 && p.popHi+p.invisible+lostPopHorizon >= nowMs {
			kept = append(kept, p)
		}
	}
	c.lostPops = kept
	return popMs, found
}

// mayBeLostPop reports a lost response whose records could have expired by
// nowMs, without taking it, and its earliest possible pop time.
func (c *Checker) mayBeLostPop(nowMs int64) (popMs int64, ok bool) {
	for _, p := range c.lostPops {
		if p.popLo+p.invisible <= nowMs && (!ok || p.popLo < popMs) {
			popMs, ok = p.popLo, true
		}
	}
	return popMs, ok
}

// markLostPop: the lost response popped the message from a location not
// yet popped (the first such, other than skip), on the main line. When
// every location had been popped, it was a re-pop after a broker restart,
// on that extra line.
func markLostPop(m *msgState, popMs int64, skip int32) (lineage string) {
	for i := range m.locs {
		if l := &m.locs[i]; !l.popped && int32(i) != skip {
			l.popped, l.popMs = true, popMs
			return ""
		}
	}
	return CauseBrokerRestart
}
