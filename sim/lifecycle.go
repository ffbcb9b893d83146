package sim

import (
	"fmt"
	"strconv"

	"popsim/clock"
	"popsim/model"
)

// scheduleFaultClocks starts the consumer's crash, pause and slow clocks
// (exponential intervals from each family's stream).
func (s *sim) scheduleFaultClocks(c *consumer) {
	if st := &s.faults.crash; st.on {
		s.q.after(expDelay(s.faults.rng[famCrash], st.every), tkCrash, c.idx, 0, nil)
	}
	if st := &s.faults.pause; st.on {
		s.q.after(expDelay(s.faults.rng[famPause], st.every), tkPause, c.idx, 0, nil)
	}
	if st := &s.faults.slow; st.on {
		s.q.after(expDelay(s.faults.rng[famSlow], st.every), tkSlow, c.idx, 0, nil)
	}
}

// crashTask is the consumer's crash clock firing.
func (s *sim) crashTask(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famCrash], s.faults.crash.every), tkCrash, c.idx, 0, nil)
	if c.alive {
		s.crash(c)
	}
}

// crash kills the consumer process: its local state and buffered work are
// gone, its leases are left to expire, and the engine drops its parked
// requests when it finds the connection closed (Disconnect). It restarts
// after a delay.
func (s *sim) crash(c *consumer) {
	s.cov.hit("crash")
	s.heldAtCrash(c)
	s.emit(model.Event{Kind: model.EvCrash, Client: c.idx})
	c.alive = false
	c.epoch++
	c.pauseUntil, c.slowUntil = 0, 0
	c.buf, c.head, c.running = nil, 0, nil
	c.cl.crashed(s)
	s.eng.Disconnect(s.q.now(), c, &s.out)
	s.settle(&s.out)
	s.q.after(s.cfg.Faults.Crash.RestartDelay.Sample(s.faults.rng[famCrash]), tkRestart, c.idx, c.epoch, nil)
	if rb, ok := c.cl.(rebalancer); ok {
		rb.rebalance(s)
	}
}

func (s *sim) restartTask(c *consumer, epoch uint32) {
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
	c.cl.start(s)
	if rb, ok := c.cl.(rebalancer); ok {
		rb.rebalance(s)
	}
}

// pause freezes a consumer (a GC pause): its tasks wait until the pause
// ends, while its leases keep running out.
func (s *sim) pause(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famPause], s.faults.pause.every), tkPause, c.idx, 0, nil)
	if !c.alive || s.q.now() < c.pauseUntil {
		return
	}
	s.freeze(c, max(s.cfg.Faults.Pause.Duration.Sample(s.faults.rng[famPause]), 1))
}

// freeze pauses c for d from now.
func (s *sim) freeze(c *consumer, d clock.Duration) {
	c.pauseUntil = s.q.now().Add(d)
	// Frozen threads make no progress: running consumptions end d later.
	for _, w := range c.running {
		h := w.base()
		if h.endTask.seq != h.endSeq || !h.endTask.queued() {
			panic("sim: a running consumption has no pending end task")
		}
		at := h.endTask.at.Add(d)
		s.q.cancel(h.endTask, h.endSeq)
		h.endTask = s.q.at(at, tkConsumeEnd, c.idx, c.epoch, w)
		h.endSeq = h.endTask.seq
	}
	s.cov.hit("pause")
	s.emit(model.Event{Kind: model.EvPause, Client: c.idx, Deadline: c.pauseUntil})
	s.q.at(c.pauseUntil, tkResume, c.idx, c.epoch, nil)
}

// slow makes a consumer's processing SlowFactor times slower for a while.
func (s *sim) slow(c *consumer) {
	if s.live {
		return
	}
	s.q.after(expDelay(s.faults.rng[famSlow], s.faults.slow.every), tkSlow, c.idx, 0, nil)
	if !c.alive {
		return
	}
	s.cov.hit("slow")
	c.slowUntil = s.q.now().Add(s.cfg.Faults.Slow.Duration.Sample(s.faults.rng[famSlow]))
}

// gracefulStopper is an engine that models a graceful broker stop
// (RocketMQ); the configuration refuses the fault for the others.
type gracefulStopper interface {
	// Stop stops the broker gracefully and starts it again: parked
	// requests are answered first, then it restarts as Restart does.
	Stop(now clock.Time, out *Outcome)
}

// brokerStop stops the broker gracefully and starts it again. It returns
// the next stop it arms (nil when the run is past its live phase).
func (s *sim) brokerStop(b int32) *task {
	if s.live {
		return nil
	}
	next := s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.stop.every), tkBrokerStop, -1, 0, nil)
	s.cov.hit("broker-stop")
	if c, ok := s.eng.(*rocketCluster); ok {
		c.StopBroker(s.q.now(), s.faultBroker(b), &s.out)
		s.settle(&s.out)
		return next
	}
	g, ok := s.eng.(gracefulStopper)
	if !ok {
		panic(fmt.Sprintf("sim: engine %T has no graceful stop; the configuration should have refused faults.brokerStop", s.eng))
	}
	g.Stop(s.q.now(), &s.out)
	s.settle(&s.out)
	return next
}

// brokerRestart loses the engine's volatile state; parked requests it
// drops are never answered, so their clients time out. It returns the next
// restart it arms (nil when the run is past its live phase).
func (s *sim) brokerRestart(b int32) *task {
	if s.live {
		return nil
	}
	next := s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.broker.every), tkBrokerRestart, -1, 0, nil)
	s.cov.hit("broker-restart")
	if c, ok := s.eng.(*rocketCluster); ok {
		c.RestartBroker(s.q.now(), s.faultBroker(b), &s.out)
	} else {
		s.eng.Restart(s.q.now(), &s.out)
	}
	s.settle(&s.out)
	return next
}

// faultBroker is the broker a restart or stop hits: b, or for the fault
// clocks (b < 0) one drawn from the broker fault stream (with one broker
// nothing is drawn, so single-broker runs keep their draws).
func (s *sim) faultBroker(b int32) int32 {
	if b >= 0 || !s.rt.multi() {
		return max(b, 0)
	}
	return s.faults.rng[famBrokerRestart].Int32N(s.rt.n)
}
