package check

import "popsim/model"

// violate records a broken invariant at event seq. Past MaxViolations for
// the invariant it is only counted.
func (c *Checker) violate(inv string, seq int64, m *msgState, detail string) {
	if c.perInv[inv] >= c.opt.MaxViolations {
		c.rep.Suppressed[inv]++
		return
	}
	c.perInv[inv]++
	v := model.Violation{Invariant: inv, Seed: c.opt.Seed, EventIndex: seq, Detail: detail, Replay: c.opt.Replay}
	if m != nil {
		v.Msg = m.key
		v.History = m.history()
	}
	c.viol = append(c.viol, v)
}
