package check

import (
	"strconv"

	"popsim/model"
)

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
		v.Msg = "group " + m.g.name + " message " + strconv.FormatUint(uint64(m.id), 10)
		v.History = c.historyOf(m)
	}
	c.viol = append(c.viol, v)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// placeList names the places a message lives.
func (m *msgState) placeList() string {
	if len(m.places) == 0 {
		return "nowhere yet"
	}
	s := ""
	for i, p := range m.places {
		if i > 0 {
			s += ", "
		}
		s += p.place.String()
	}
	return s
}
