package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// brokerPop serves a pop (or a woken suspended pop) at the broker.
func (s *sim) brokerPop(cl *call, req *pop.PopRequest) {
	res := &cl.pop.res
	s.b.Pop(s.q.now(), req, res)
	s.wake(res.Woken)
	if res.Status == pop.PopSuspended {
		cl.pollID = res.PollID
		s.polls[res.PollID] = cl
		s.armPollTick()
		if cl.suspended {
			return // re-suspended after a wakeup: still the same request
		}
		cl.suspended = true
		s.emit(model.Event{Kind: model.EvPopSuspended, Client: cl.c.idx, Topic: req.Topic, Queue: -1, Offset: -1, N: int64(req.MaxMsgNums), Deadline: req.BornTime.Millis() + req.PollTime.Millis()})
		return
	}
	cl.pollID = 0
	if cl.c.kind == Simple {
		s.proxyFilter(cl.c, res)
	}
	if s.lost(callPop, true) {
		cl.reported = true
		s.emit(model.Event{Kind: model.EvPopLost, Client: cl.c.idx, Topic: req.Topic, Queue: -1, Offset: -1, Code: res.Code, N: int64(len(res.Messages)), Detail: "response"})
		return
	}
	s.reply(cl)
}

// wakeup re-runs a suspended pop request the broker handed back.
func (s *sim) wakeup(w *pop.Wakeup) {
	cl := s.polls[w.ID]
	if cl == nil {
		return // dropped by a crash (Disconnect) or a broker restart
	}
	delete(s.polls, w.ID)
	cl.pop.req = w.Request
	s.brokerPop(cl, &cl.pop.req)
}

// wake re-runs woken requests once the engine call that woke them has
// returned (RocketMQ resubmits them to the pull executor). ws belongs to a
// result no re-run writes into (a pop's result is its own call's), so its
// elements can be referenced.
func (s *sim) wake(ws []pop.Wakeup) {
	for i := range ws {
		s.wakeup(&ws[i])
	}
}

// armPollTick schedules one PollTick exactly at the broker's next poll
// expiry, unless an earlier one is already armed.
func (s *sim) armPollTick() {
	t, ok := s.b.NextPollExpiry()
	if !ok {
		return
	}
	t = max(t, s.q.now())
	if s.pollArmed && s.pollAt <= t {
		return
	}
	s.pollArmed, s.pollAt = true, t
	s.q.at(t, evPollTick, -1, 0, nil)
}

func (s *sim) pollTick(at clock.Time) {
	if !s.pollArmed || at != s.pollAt {
		return // superseded by an earlier tick
	}
	s.pollArmed = false
	s.wake(s.b.PollTick(s.q.now()))
	s.armPollTick()
}

// brokerAck serves an ack; the push and simple clients ignore the
// response, so only its loss is traced.
func (s *sim) brokerAck(cl *call) {
	h := cl.h
	r := s.b.AckHeader(s.q.now(), &pop.AckMessageRequestHeader{ConsumerGroup: cl.c.g.name, Topic: h.topic, QueueID: h.queue, Offset: h.offset, ExtraInfo: cl.handle})
	n := int64(0)
	if r.Removed != 0 {
		n = 1
	}
	s.emit(model.Event{Kind: model.EvAckAccepted, Client: cl.c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: cl.handle, Code: r.Code, N: n})
	if r.Removed != 0 {
		s.led.acked(h.key, h.deliveredAt, s.q.now())
	}
	if s.lost(callAck, true) {
		s.emit(model.Event{Kind: model.EvAckResponseLost, Client: cl.c.idx, Msg: h.key, Handle: cl.handle})
	}
}

// brokerChange serves a changeInvisibleTime.
func (s *sim) brokerChange(cl *call) {
	h := cl.h
	if cl.why == changeFault && cl.edge == renewSameDeadline {
		// The injected edge: ask for exactly the time left, so the new
		// record's deadline equals the old one (apache/rocketmq#10276).
		hd, _ := model.ParseReceiptHandle(cl.handle)
		left := hd.NextVisibleTime() - s.q.now().Millis()
		if left < 0 {
			left = 0
		}
		cl.invisibleMs = left
	}
	r := s.b.ChangeInvisibleTimeHeader(s.q.now(), &pop.ChangeInvisibleTimeRequestHeader{
		ConsumerGroup: cl.c.g.name, Topic: h.topic, QueueID: h.queue, Offset: h.offset, ExtraInfo: cl.handle, InvisibleTime: cl.invisibleMs,
	})
	cl.chCode, cl.newHandle = r.Code, r.Handle
	ev := model.Event{Kind: model.EvChangeAccepted, Client: cl.c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Code: r.Code}
	if r.Code == model.Success {
		ev.Handle, ev.Deadline = r.Handle.String(), r.Handle.NextVisibleTime()
		if r.OldDeleted {
			ev.N = 1
		}
	}
	s.emit(ev)
	if s.lost(callChange, true) {
		cl.reported = true
		s.emit(model.Event{Kind: model.EvChangeLost, Client: cl.c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: ev.Handle, Deadline: ev.Deadline, Detail: "response"})
		return
	}
	if cl.why == changeRenew || cl.why == changeFault {
		s.reply(cl)
	}
}

// revive is one pass of the KV revive loop, every ReviveIdleInterval or at
// once after a full page.
func (s *sim) revive() {
	r := s.b.Revive(s.q.now())
	s.tracePutFailures(r.Failures)
	s.traceRevivals(r.Revivals)
	s.wake(r.Woken)
	s.wakePulls(r.PullWoken)
	next := clock.Duration(pop.ReviveIdleInterval) * clock.Millisecond
	if r.FullPage {
		next = 0
	}
	s.q.after(next, evRevive, -1, 0, nil)
}

func (s *sim) cacheCleanup() {
	r := s.b.CleanupCache(s.q.now())
	s.tracePutFailures(r.Failures)
	if r.Flushed > 0 {
		s.emit(model.Event{Kind: model.EvCacheFlush, Client: -1, N: int64(r.Flushed)})
	}
	s.traceRevivals(r.Revives)
	s.wake(r.Woken)
	s.wakePulls(r.PullWoken)
	s.q.after(pop.CacheCleanupInterval*clock.Millisecond, evCacheCleanup, -1, 0, nil)
}

func (s *sim) traceRevivals(rs []pop.Revival) {
	for i := range rs {
		rv := &rs[i]
		rec := &rv.Record
		ev := model.Event{Client: -1, Topic: rec.TopicID, Queue: rec.QueueID, Offset: rec.Offset, Deadline: rec.VisibilityTimeout(),
			Msg: rv.UniqKey, Attempt: rv.ReconsumeTimes}
		switch rv.Outcome {
		case pop.Revived:
			cp := rv.Copy
			ev.Kind, ev.Topic, ev.Queue, ev.Offset, ev.Attempt = model.EvRevive, cp.Topic, cp.QueueID, cp.Offset, rv.CopyReconsumeTimes
		case pop.ReviveSkipped:
			ev.Kind = model.EvReviveSkipped
		case pop.ReviveRetried:
			ev.Kind, ev.Deadline = model.EvReviveRetried, rv.NextDeadline.Millis()
			s.cov.hit("revive-retried")
		case pop.ReviveDropped:
			ev.Kind = model.EvReviveDropped
			s.cov.hit("revive-dropped")
		}
		s.emit(ev)
	}
}

// syncPutFaults hands the revive-put-failure site to the broker as data:
// the broker decides each retry-topic write from the run's fault seed and
// the write's ordinal, and reports failures in the result of the call they
// happened in (tracePutFailures). Faults are off in the liveness phase.
func (s *sim) syncPutFaults() {
	var f pop.Faults
	if st := &s.faults.putFailure; st.on && !s.live {
		f = pop.Faults{Seed: s.faultSeed, RetryWritePPM: st.ppm}
	}
	if err := s.b.SetFaults(f); err != nil {
		panic("sim: setting the broker's faults: " + err.Error())
	}
}

// tracePutFailures traces the retry-topic writes the broker's faults
// failed during the call that just returned (revive or cache cleanup).
func (s *sim) tracePutFailures(fs []pop.WriteFailure) {
	for i := range fs {
		s.cov.hit("revive-put-failure")
		s.emit(model.Event{Kind: model.EvPutFailure, Client: -1, Topic: fs[i].Topic, Queue: fs[i].QueueID, Offset: -1})
	}
}

// brokerRestart loses the broker's volatile state; suspended requests it
// drops are never answered, so their clients time out. It returns the next
// restart it arms (nil when the run is past its live phase).
func (s *sim) brokerRestart() *event {
	if s.live {
		return nil
	}
	next := s.q.after(expDelay(s.faults.rng[famBrokerRestart], s.faults.broker.every), evBrokerRestart, -1, 0, nil)
	r := s.b.Restart(s.q.now())
	s.cov.hit("broker-restart")
	for _, w := range r.DroppedPolls {
		delete(s.polls, w.ID)
		s.cov.hit("dropped-polls")
	}
	for _, w := range r.DroppedPulls { // never answered: their clients time out
		delete(s.pullHolds, w.ID)
	}
	s.emit(model.Event{Kind: model.EvBrokerRestart, Client: -1, N: int64(len(r.DroppedPolls)), Detail: "cached-lost=" + itoa(int64(r.CachedLost))})
	return next
}
