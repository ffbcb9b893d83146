package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/sim/check"
)

// drainCheckInterval is how often the liveness phase tests quiescence.
const drainCheckInterval = 100 * clock.Millisecond

// startLiveness ends the safety phase: faults stop, producers have
// stopped (no arrival is scheduled past Duration), crashed consumers come
// back and slow ones recover. Everything must now drain within DrainBudget.
func (s *sim) startLiveness() {
	s.live = true
	s.syncPutFaults()
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Detail: "liveness"})
	for _, c := range s.cons {
		c.slowUntil = 0
		if !c.alive {
			s.restart(c)
		}
	}
	s.q.after(drainCheckInterval, evDrainCheck, -1, 0, nil)
}

func (s *sim) drainCheck() {
	if s.quiescent() {
		s.drained, s.stopped = true, true
		return
	}
	s.q.after(drainCheckInterval, evDrainCheck, -1, 0, nil)
}

// quiescent: every produced message is finished, the broker holds no
// in-flight record, no consumer holds work, and every queue (retry queues
// included) has been consumed to its end.
func (s *sim) quiescent() bool {
	if s.led.outstanding() > 0 || s.b.InFlightCount() > 0 {
		return false
	}
	for _, c := range s.cons {
		if !c.alive || len(c.running) > 0 || c.head < len(c.buf) || c.local > 0 || c.waitAck > 0 {
			return false
		}
	}
	for _, g := range s.groups {
		for _, l := range s.positions(g) {
			if l.Lag > 0 {
				return false
			}
		}
	}
	return true
}

// positions is, per queue the group consumes (its retry topics included),
// how far the group is behind the queue's end: for POP groups by the
// volatile pop offset (the commit offset when there is none), for the pull
// baseline by its committed offset.
func (s *sim) positions(g *group) []check.QueueLag {
	var out []check.QueueLag
	for _, t := range s.groupTopics(g) {
		for q := int32(0); ; q++ {
			hi := s.b.MaxOffset(t, q)
			if hi < 0 {
				break
			}
			pos := int64(-1)
			if g.kind == Pull {
				pos = s.b.ConsumerOffsets(g.name, t, q).Commit
			} else if o := s.b.ConsumerOffsets(g.name, t, q); o.Pull >= 0 {
				pos = o.Pull
			} else {
				pos = o.Commit
			}
			out = append(out, check.QueueLag{Group: g.name, Topic: t, Queue: q, Lag: hi - max(pos, 0)})
		}
	}
	return out
}

// commitLags is maxOffset - commitOffset per queue at the end of the run.
func (s *sim) commitLags() []check.QueueLag {
	var out []check.QueueLag
	for _, g := range s.groups {
		for _, t := range s.groupTopics(g) {
			for q := int32(0); s.b.MaxOffset(t, q) >= 0; q++ {
				co := s.b.ConsumerOffsets(g.name, t, q).Commit
				out = append(out, check.QueueLag{Group: g.name, Topic: t, Queue: q, Lag: s.b.MaxOffset(t, q) - max(co, 0)})
			}
		}
	}
	return out
}

// groupTopics is the group's topic and, for POP groups, its retry topics
// that exist.
func (s *sim) groupTopics(g *group) []string {
	out := []string{g.topic}
	if g.kind == Pull {
		return out
	}
	for _, t := range []string{model.RetryTopicV1(g.name, g.topic), model.RetryTopicV2(g.name, g.topic)} {
		if s.b.MaxOffset(t, 0) >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// sample appends one time-series point every SampleInterval.
func (s *sim) sample() {
	s.record()
	s.q.after(s.cfg.SampleInterval, evSample, -1, 0, nil)
}

// record appends a time-series point: counts since the previous point, and
// the backlog and broker in-flight levels now.
func (s *sim) record() {
	l := s.led
	p := model.SeriesPoint{
		AtMs:     s.q.now().Sub(s.start).Millis(),
		Produced: l.nProduced, Acked: l.nAcked, Redelivered: l.nRedelivered,
		Backlog: l.outstanding(), InFlight: int64(s.b.InFlightCount()),
	}
	d := p
	d.Produced -= l.last.Produced
	d.Acked -= l.last.Acked
	d.Redelivered -= l.last.Redelivered
	l.last = p
	l.series = append(l.series, d)
}
