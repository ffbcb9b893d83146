package sim

import (
	"popsim/clock"
	"popsim/filter"
	"popsim/model"
)

// Subscriptions. Each group consumes one topic with one expression, and
// several groups may consume one topic (rocketmq): each is an independent
// consumer of every message it subscribes to, with its own offsets, retry
// topic and ledger. When a message is stored the simulator opens it, in
// the meter, once per group consuming its topic, and settles at once, for
// each group whose subscription the broker's filter rejects it under,
// that it is owed to that group by no one (a drop r=no-match naming the
// group: the checker settles it for that group only).

// subscribe compiles each group's subscription (validated already) and
// places each group among the groups consuming its topic (group.pos, in
// s.groups order), for the meter.
func (s *sim) subscribe() {
	s.onTopic = map[string][]*group{}
	for _, g := range s.groups {
		if len(g.members) == 0 {
			continue
		}
		f, err := filter.ParsePop(g.members[0].spec.ExpressionType, g.members[0].spec.Expression)
		if err != nil {
			panic("sim: a validated subscription does not parse: " + err.Error())
		}
		if !f.MatchesAll() {
			g.sub = f
		}
		g.pos = int32(len(s.onTopic[g.topic]))
		s.onTopic[g.topic] = append(s.onTopic[g.topic], g)
	}
	s.meter.groups(s.groups, s.cons)
}

// noMatch traces a client (or its proxy) dropping a message its group
// was lent but does not subscribe to: the broker's TAG filter compares
// tag hash codes, so a tag that collides with a subscribed one (Aa and BB)
// gets through, and the exact check after the pop (the proxy's
// PopMessageResultFilterImpl NO_MATCH, the push consumer's
// processPopResult) acks it instead of consuming it, at now. The caller
// acks.
func (s *sim) noMatch(now clock.Time, c *consumer, id model.MsgID, lease model.LeaseID) {
	s.cov.hit("drop-no-match")
	s.tr.emitAt(now, model.Event{Kind: model.EvDrop, Client: c.idx, Msg: id, Lease: lease, Reason: model.RNoMatch})
	s.meter.finish(c.g, id)
}

// stored opens a message the engine stored, meant to be sent at intended,
// in the meter for every group consuming its topic (gs), then settles it for
// each group that does not subscribe to it: the broker's filter never
// hands it out to that group, so it is owed to no one there (a drop
// r=no-match naming the group, which the checker settles) and the meter
// closes it for that group.
func (s *sim) stored(gs []*group, m *model.Message, intended clock.Time) {
	for _, g := range gs {
		s.meter.produced(g, m.ID, intended, s.q.now())
	}
	for _, g := range gs {
		if g.sub != nil && !g.owes(m) {
			s.emit(model.Event{Kind: model.EvDrop, Client: -1, Group: g.name, Msg: m.ID, Reason: model.RNoMatch})
			s.meter.finish(g, m.ID)
		}
	}
}
