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
// back and slow ones recover. Everything must now drain within Drain, or
// DrainBudget while messages are still being retried.
func (s *sim) startLiveness() {
	s.live, s.lossOn, s.renewOn = true, false, false
	s.syncFaults()
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Reason: model.RLiveness})
	if invariantsOn {
		s.checkEngine()
	}
	for _, c := range s.cons {
		c.slowUntil = 0
		if !c.alive {
			s.restart(c)
		}
	}
	s.q.after(drainCheckInterval, tkDrainCheck, -1, 0, nil)
}

// syncFaults hands the engine its faults as data: the revive-put-failure
// site decides each retry-topic write, and the revive-read-failure site
// each revive read, from the run's fault seed and the write's or read's
// ordinal; each failure is reported in the result of the call it happened
// in. Faults are off in the liveness phase.
func (s *sim) syncFaults() {
	f := EngineFaults{Seed: s.faultSeed}
	if st := &s.faults.putFailure; st.on && !s.live {
		f.RedeliveryWritePPM = st.ppm
	}
	if st := &s.faults.readFailure; st.on && !s.live {
		f.RedeliveryReadPPM = st.ppm
	}
	if f.RedeliveryWritePPM == 0 && f.RedeliveryReadPPM == 0 {
		f = EngineFaults{}
	}
	if st := &s.faults.dup; st.on && !s.live {
		f.Seed, f.DuplicatePPM = s.faultSeed, st.ppm
	}
	if st := &s.faults.lock; st.on && !s.live {
		f.Seed, f.LockBusyPPM = s.faultSeed, st.ppm
	}
	s.eng.SetFaults(f)
}

func (s *sim) drainCheck() {
	if !s.quiescent() {
		s.settling = false
		if s.q.now() >= s.drainEnd && !s.retrying() {
			s.stopped = true // what is left is lost: waiting cannot finish it
			return
		}
		s.q.after(drainCheckInterval, tkDrainCheck, -1, 0, nil)
		return
	}
	if st, ok := s.eng.(settler); ok && !s.settling && st.SettleTime() > 0 {
		// the engine's periodic work may still move its commit offsets:
		// quiet for one more of its periods, then the run is done
		s.settling = true
		s.q.after(st.SettleTime(), tkDrainCheck, -1, 0, nil)
		return
	}
	s.drained, s.stopped = true, true
}

// settler is an engine whose commit offsets a periodic task of its own
// moves after the last call that changed them (RocketMQ's KV cache
// cleanup commits what its cache held back): SettleTime is how long the
// run stays quiet after it drains before its commit lags are taken.
type settler interface {
	SettleTime() clock.Duration
}

// stop ends the run at the end of Drain, unless messages are still being
// retried: then the run goes on until it drains, stops retrying, or
// reaches the end of the retry chain (Config.DrainBudget).
func (s *sim) stop() {
	if s.q.now() < s.chainEnd && s.retrying() {
		s.q.at(s.chainEnd, tkStop, -1, 0, nil)
		return
	}
	s.stopped = true
}

// quiescent: every produced message is finished, the engine holds no
// lease in flight, no consumer holds work, and every queue a group
// consumes (retry queues included) has been read to its end.
func (s *sim) quiescent() bool {
	return s.meter.outstanding() == 0 && !s.retrying()
}

// retrying: the engine holds a lease in flight, a consumer holds work, or
// a queue a group consumes (retry queues included) has not been read to
// its end — the run can still make progress. Unfinished messages with
// none of these are lost: waiting longer cannot finish them.
func (s *sim) retrying() bool {
	if s.brokersBusy() {
		return true // requests (puts among them) still wait at the broker or are being served
	}
	if n, _ := s.eng.Status(false, nil); n > 0 {
		return true
	}
	for _, c := range s.cons {
		if !c.alive || len(c.running) > 0 || c.head < len(c.buf) || c.cl.busy() {
			return true
		}
	}
	_, s.positions = s.eng.Status(true, s.positions)
	for i := range s.positions {
		if s.positions[i].Lag() > 0 {
			return true
		}
	}
	return false
}

// commitLags is maxOffset - commitOffset per queue at the end of the run.
func (s *sim) commitLags() []check.QueueLag {
	_, s.positions = s.eng.Status(true, s.positions)
	out := make([]check.QueueLag, 0, len(s.positions))
	for i := range s.positions {
		p := &s.positions[i]
		out = append(out, check.QueueLag{Group: p.Group, Topic: p.Topic, Queue: p.Queue, Lag: p.CommitLag()})
	}
	return out
}

// commitKey names one group's queue.
type commitKey struct {
	group, topic string
	queue        int32
}

// traceCommits traces the engine's durable commit offsets that moved since
// they were last traced (the checker forgets what a commit offset passes,
// so an offset a restart can take back is not traced).
func (s *sim) traceCommits() {
	_, s.positions = s.eng.Status(true, s.positions)
	for i := range s.positions {
		p := &s.positions[i]
		if p.Durable >= 0 {
			s.traceCommit(-1, p.Group, p.Topic, p.Queue, p.Durable)
		}
	}
}

// traceCommit traces a commit offset of a group's queue, by the engine
// (client -1) or by a client, unless it is the one traced last.
func (s *sim) traceCommit(client int32, group, topic string, queue int32, offset int64) {
	k := commitKey{group, topic, queue}
	if last, ok := s.commits[k]; ok && last == offset || !ok && offset == 0 {
		return
	}
	s.commits[k] = offset
	s.emit(model.Event{Kind: model.EvCommit, Client: client, Group: group, Topic: topic, Queue: queue, Offset: offset})
}

// A run whose retry chains keep it going long into the drain phase (hours,
// when a defect keeps messages retrying) records its time series more
// coarsely past seriesThinAfter into that phase: one point per
// seriesThinInterval, so that its summary stays small. The sample tick,
// and the commit tracing it does, keep their cadence.
const (
	seriesThinAfter    = 10 * clock.Minute
	seriesThinInterval = clock.Minute
)

// sample appends one time-series point every SampleInterval (thinned late
// in a long drain) and traces the commit offsets that moved.
func (s *sim) sample() {
	now := s.q.now()
	if now < s.safetyEnd.Add(seriesThinAfter) || now.Sub(s.start).Millis()-s.meter.last.AtMs >= seriesThinInterval.Millis() {
		s.record()
	}
	s.traceCommits()
	s.q.after(s.cfg.SampleInterval, tkSample, -1, 0, nil)
}

// record appends a time-series point: counts since the previous point, and
// the backlog and engine in-flight levels now.
func (s *sim) record() {
	n, _ := s.eng.Status(false, nil)
	s.meter.record(s.q.now().Sub(s.start), int64(n))
}
