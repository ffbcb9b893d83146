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
	lo, hi int64 // the revived records' deadlines lie in [lo, hi] (ms)
	n      int64 // messages not yet accounted for
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
	c.lostPops = append(c.lostPops, lostPop{lo: a.atMs + a.invisible, hi: e.At.Millis() + a.invisible, n: e.N})
}

// explainLostPop takes one message of a lost response whose window holds
// the deadline vt, and drops windows long past.
func (c *Checker) explainLostPop(vt, nowMs int64) bool {
	kept := c.lostPops[:0]
	found := false
	for _, p := range c.lostPops {
		if !found && vt > 0 && p.lo <= vt && vt <= p.hi {
			found = true
			p.n--
		}
		if p.n > 0 && p.hi+lostPopHorizon >= nowMs {
			kept = append(kept, p)
		}
	}
	c.lostPops = kept
	return found
}
