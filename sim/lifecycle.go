package sim

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
)

// scheduleFaultClocks starts the consumer's crash, pause and slow clocks
// (exponential intervals from each family's stream).
func (s *sim) scheduleFaultClocks(c *consumer) {
	if st := &s.faults.crash; st.on {
		s.q.after(expDelay(s.faults.rng[famCrash], st.every), evCrash, c.idx, 0, nil)
	}
	if st := &s.faults.pause; st.on {
		s.q.after(expDelay(s.faults.rng[famPause], st.every), evPause, c.idx, 0, nil)
	}
	if st := &s.faults.slow; st.on {
		s.q.after(expDelay(s.faults.rng[famSlow], st.every), evSlow, c.idx, 0, nil)
	}
}

// crashEvent is the consumer's crash clock firing.
func (s *sim) crashEvent(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famCrash], s.faults.crash.every), evCrash, c.idx, 0, nil)
	if c.alive {
		s.crash(c)
	}
}

// crash kills the consumer process: its local state and buffered work are
// gone, its leases are left to expire, and the broker drops its suspended
// polls when it finds the channel closed (Disconnect). It restarts after a
// delay.
func (s *sim) crash(c *consumer) {
	s.cov.hit("crash")
	s.emit(model.Event{Kind: model.EvCrash, Client: c.idx})
	c.alive = false
	c.epoch++
	c.pauseUntil, c.slowUntil = 0, 0
	c.buf, c.head, c.waitAck, c.local, c.running = nil, 0, 0, 0, nil
	c.popOut, c.pollArmed, c.wantPoll = nil, false, false
	for id, cl := range s.polls { // deletion only
		if cl.c == c {
			delete(s.polls, id)
		}
	}
	s.b.Disconnect(c.clientID)
	for _, pq := range c.queues {
		if pq != nil {
			pq.owned, pq.pulling, pq.armed = false, false, false
			pq.gen++
		}
	}
	s.q.after(s.cfg.Faults.Crash.RestartDelay.Sample(s.faults.rng[famCrash]), evRestart, c.idx, c.epoch, nil)
	if c.kind == Pull {
		s.rebalance(c.g)
	}
}

func (s *sim) restartEvent(c *consumer, epoch uint32) {
	if c.alive || epoch != c.epoch {
		return
	}
	s.restart(c)
}

// restart brings a crashed consumer back as a new incarnation.
func (s *sim) restart(c *consumer) {
	c.alive = true
	c.epoch++
	c.clientID = "c" + strconv.Itoa(int(c.idx)) + "-" + strconv.Itoa(int(c.epoch))
	s.cov.hit("restart")
	s.emit(model.Event{Kind: model.EvRestart, Client: c.idx})
	s.startConsumer(c)
	if c.kind == Pull {
		s.rebalance(c.g)
	}
}

// pause freezes a consumer (a GC pause): its events wait until the pause
// ends, while its leases keep running out.
func (s *sim) pause(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famPause], s.faults.pause.every), evPause, c.idx, 0, nil)
	if !c.alive || s.q.now() < c.pauseUntil {
		return
	}
	s.freeze(c, max(s.cfg.Faults.Pause.Duration.Sample(s.faults.rng[famPause]), 1))
}

// freeze pauses c for d from now.
func (s *sim) freeze(c *consumer, d clock.Duration) {
	c.pauseUntil = s.q.now().Add(d)
	// Frozen threads make no progress: running consumptions end d later.
	for _, h := range c.running {
		if h.endEv.seq != h.endSeq || h.endEv.idx < 0 {
			panic("sim: a running consumption has no pending end event")
		}
		at := h.endEv.at.Add(d)
		s.q.cancel(h.endEv, h.endSeq)
		h.endEv = s.q.at(at, evConsumeEnd, c.idx, c.epoch, h)
		h.endSeq = h.endEv.seq
	}
	s.cov.hit("pause")
	s.emit(model.Event{Kind: model.EvPause, Client: c.idx, Deadline: c.pauseUntil.Millis()})
	s.q.at(c.pauseUntil, evResume, c.idx, c.epoch, nil)
}

// slow makes a consumer's processing SlowFactor times slower for a while.
func (s *sim) slow(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famSlow], s.faults.slow.every), evSlow, c.idx, 0, nil)
	if !c.alive {
		return
	}
	s.cov.hit("slow")
	c.slowUntil = s.q.now().Add(s.cfg.Faults.Slow.Duration.Sample(s.faults.rng[famSlow]))
}
