package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/workload"
)

// The pull baseline: classic clustering. Each queue of the topic is owned
// by one live consumer of the group (AllocateMessageQueueAveragely,
// rebalanced at once when a consumer crashes or comes back). The owner
// pulls from its own offset straight from the broker's store (the
// simulator emulates pull long polling: an empty pull parks until a
// message arrives on the queue or the poll time ends), consumes on its
// threads and commits the smallest unfinished offset every
// CommitInterval. A new owner starts at the committed offset, so
// uncommitted work is redelivered. A failed message is re-consumed locally
// after the popDelayLevel backoff (standing in for sendMessageBack to
// %RETRY%group, which needs a delay timer the engine does not have) and
// goes to %DLQ%group after maxReconsumeTimes attempts; its offset is not
// committed past it meanwhile, so at-least-once holds. Flow control counts
// cached messages (pullThresholdForQueue, 1000), not the offset span: a
// message waiting for its retry pins the commit offset, not the queue.

// pullQueue is one queue as its owner sees it.
type pullQueue struct {
	c         *consumer
	q         int32
	owned     bool
	gen       uint32 // ownership generation: work of an older one is discarded
	next      int64  // next offset to pull
	base      int64  // smallest unfinished offset
	done      []bool // done[i]: offset base+i finished
	pulling   bool
	armed     bool
	committed int64
	// cached counts messages delivered and waiting for or in consumption
	// (not those waiting for a local retry): flow control's measure.
	cached int
}

// allocate is AllocateMessageQueueAveragely: the queues consumer i of n
// owns.
func allocate(queues int32, i, n int) (start, count int32) {
	if n == 0 || i >= n {
		return 0, 0
	}
	q := int(queues)
	mod := q % n
	avg := 1
	if q > n {
		avg = q / n
		if mod > 0 && i < mod {
			avg++
		}
	}
	st := i*avg + mod
	if mod > 0 && i < mod {
		st = i * avg
	}
	return int32(min(st, q)), int32(max(min(avg, q-st), 0))
}

// rebalance reassigns the group's queues among its live members: owners
// that lose a queue commit and drop it first, then new owners start at
// the committed offset.
func (s *sim) rebalance(g *group) {
	var live []*consumer
	for _, c := range g.members {
		if c.alive {
			live = append(live, c)
		}
	}
	want := make([][]bool, len(g.members))
	for i, c := range live {
		st, n := allocate(g.queues, i, len(live))
		w := make([]bool, g.queues)
		for q := st; q < st+n; q++ {
			w[q] = true
		}
		want[c.gpos] = w
	}
	for _, c := range live {
		for _, pq := range c.queues {
			if pq != nil && pq.owned && !want[c.gpos][pq.q] {
				s.commitQueue(c, pq)
				pq.owned = false
				pq.gen++
			}
		}
	}
	for _, c := range live {
		for q, w := range want[c.gpos] {
			if w && (c.queues == nil || c.queues[q] == nil || !c.queues[q].owned) {
				s.gain(c, int32(q))
			}
		}
	}
}

func (s *sim) gain(c *consumer, q int32) {
	if c.queues == nil {
		c.queues = make([]*pullQueue, c.g.queues)
	}
	pq := c.queues[q]
	if pq == nil {
		pq = &pullQueue{c: c, q: q}
		c.queues[q] = pq
	}
	start := max(c.g.committed[q], 0)
	pq.owned, pq.pulling, pq.armed = true, false, false
	pq.gen++
	pq.next, pq.base, pq.committed, pq.done, pq.cached = start, start, start, pq.done[:0], 0
	s.cov.hit("rebalance")
	s.emit(model.Event{Kind: model.EvRebalance, Client: c.idx, Topic: c.g.topic, Queue: q, Offset: start})
	s.schedulePull(pq, 0)
}

func (s *sim) schedulePull(pq *pullQueue, d clock.Duration) {
	if pq.armed || !pq.owned {
		return
	}
	pq.armed = true
	s.q.after(d, evPoll, pq.c.idx, pq.c.epoch, pq)
}

// pull sends one pull request for pq, unless flow control holds it.
func (s *sim) pull(c *consumer, pq *pullQueue) {
	pq.armed = false
	if !pq.owned || pq.pulling {
		return
	}
	if pq.cached >= pullThresholdForQueue {
		s.cov.hit("flow-control")
		s.schedulePull(pq, pullTimeDelayWhenFlowCtl)
		return
	}
	cl := s.newCall(callPull, c)
	cl.pq, cl.gen, cl.offset = pq, pq.gen, pq.next
	pq.pulling = true
	s.send(cl, c.spec.PollTime+s.cfg.Network.PollTimeoutSlack)
}

// brokerPull reads the store for a pull; an empty read parks the request.
func (s *sim) brokerPull(cl *call) {
	t := cl.c.g.topic
	if lo := s.b.MinOffset(t, cl.pq.q); cl.offset < lo {
		cl.offset = lo // OFFSET_TOO_SMALL: the broker corrects it
	}
	hi := s.b.MaxOffset(t, cl.pq.q)
	for off := cl.offset; off < hi && len(cl.msgs) < int(cl.c.spec.Batch); off++ {
		if m, ok := s.b.Message(t, cl.pq.q, off); ok {
			cl.msgs = append(cl.msgs, &m)
		}
	}
	if len(cl.msgs) == 0 && !cl.parked {
		cl.parked = true
		k := pullKey{s.topicIdx[t], cl.pq.q}
		s.pullWaits[k] = append(s.pullWaits[k], cl)
		s.q.after(cl.c.spec.PollTime, evPullExpire, -1, 0, cl)
		return
	}
	s.respondPull(cl)
}

func (s *sim) respondPull(cl *call) {
	if s.lost(callPull, true) {
		return
	}
	s.reply(cl)
}

// wakePulls answers the pulls parked on a queue that just got a message.
func (s *sim) wakePulls(topic string, q int32) {
	ti, ok := s.topicIdx[topic]
	if !ok {
		return
	}
	k := pullKey{ti, q}
	ws := s.pullWaits[k]
	if len(ws) == 0 {
		return
	}
	delete(s.pullWaits, k)
	for _, cl := range ws {
		cl.parked = false
		s.brokerPull(cl)
	}
}

// pullExpire answers a parked pull whose poll time is up, empty.
func (s *sim) pullExpire(cl *call) {
	if !cl.parked {
		return
	}
	cl.parked = false
	k := pullKey{s.topicIdx[cl.c.g.topic], cl.pq.q}
	ws := s.pullWaits[k]
	for i, x := range ws {
		if x == cl {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(s.pullWaits, k)
	} else {
		s.pullWaits[k] = ws
	}
	s.respondPull(cl)
}

// pullResponse hands pulled messages to the consumer.
func (s *sim) pullResponse(c *consumer, cl *call) {
	pq := cl.pq
	pq.pulling = false
	if cl.gen != pq.gen || !pq.owned {
		return
	}
	s.emit(model.Event{Kind: model.EvPull, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: cl.offset, N: int64(len(cl.msgs))})
	if cl.offset > pq.next {
		pq.next, pq.base, pq.done = cl.offset, cl.offset, pq.done[:0]
	}
	for _, m := range cl.msgs {
		if m.QueueOffset < pq.next {
			continue
		}
		h := &held{c: c, epoch: c.epoch, msg: m, key: m.UniqKey, topic: m.Topic, queue: m.QueueID, offset: m.QueueOffset, deliveredAt: s.q.now(), pq: pq, gen: pq.gen}
		s.pullDeliver(c, h)
		pq.next = m.QueueOffset + 1
		pq.done = append(pq.done, false)
		pq.cached++
		c.local++
		c.buf = append(c.buf, h)
	}
	s.startWork(c)
	s.schedulePull(pq, 0)
}

func (s *sim) pullDeliver(c *consumer, h *held) {
	s.emit(model.Event{Kind: model.EvDeliver, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Attempt: h.attempt, Detail: c.g.presented(h.topic)})
	s.led.delivered(h.key)
}

// pullDone: success finishes the offset; failure retries locally after the
// backoff, or sends the message to the DLQ after maxReconsumeTimes.
func (s *sim) pullDone(c *consumer, h *held) {
	pq := h.pq
	if h.gen != pq.gen || !pq.owned {
		c.local-- // the queue moved on: the new owner redelivers from the committed offset
		return
	}
	pq.cached--
	if h.outcome == workload.Success {
		c.local--
		s.led.acked(h.key, h.deliveredAt, s.q.now())
		s.finishOffset(pq, h.offset)
		return
	}
	h.attempt++
	if h.attempt > c.spec.MaxReconsumeTimes {
		c.local--
		s.pullDLQ(c, h)
		s.finishOffset(pq, h.offset)
		return
	}
	s.q.after(clock.Duration(popDelaySeconds(int(h.attempt-1)))*clock.Second, evLocalRetry, c.idx, c.epoch, h)
}

// localRetry redelivers a failed message to the consumer's own threads.
func (s *sim) localRetry(c *consumer, h *held) {
	if h.gen != h.pq.gen || !h.pq.owned {
		c.local--
		return
	}
	h.deliveredAt = s.q.now()
	h.pq.cached++
	s.pullDeliver(c, h)
	c.buf = append(c.buf, h)
	s.startWork(c)
}

func (s *sim) pullDLQ(c *consumer, h *held) {
	dlq := model.DLQTopic(c.g.name)
	if s.b.MaxOffset(dlq, 0) < 0 {
		s.createDLQ(dlq)
	}
	cp := h.msg.Clone()
	cp.Topic, cp.QueueID, cp.ReconsumeTimes = dlq, 0, h.attempt
	_ = cp.SetProperty(model.PropertyOriginMessageID, h.key)
	r := s.b.Put(s.q.now(), cp)
	s.wake(r.Woken)
	s.cov.hit("dlq")
	s.emit(model.Event{Kind: model.EvDLQ, Client: c.idx, Msg: h.key, Topic: dlq, Queue: 0, Offset: r.Offset, Attempt: h.attempt})
	s.led.finish(h.key)
}

// finishOffset marks an offset finished and moves the queue's base.
func (s *sim) finishOffset(pq *pullQueue, off int64) {
	i := off - pq.base
	if i < 0 || i >= int64(len(pq.done)) {
		return
	}
	pq.done[i] = true
	n := 0
	for n < len(pq.done) && pq.done[n] {
		n++
	}
	if n > 0 {
		pq.base += int64(n)
		pq.done = append(pq.done[:0], pq.done[n:]...)
	}
}

// commitTick persists the consumer's offsets (persistConsumerOffsetInterval).
func (s *sim) commitTick(c *consumer) {
	for _, pq := range c.queues {
		if pq != nil && pq.owned {
			s.commitQueue(c, pq)
		}
	}
	s.q.after(c.spec.CommitInterval, evCommit, c.idx, c.epoch, nil)
}

func (s *sim) commitQueue(c *consumer, pq *pullQueue) {
	if pq.base == pq.committed {
		return
	}
	pq.committed = pq.base
	c.g.committed[pq.q] = pq.base
	s.emit(model.Event{Kind: model.EvCommit, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: pq.base})
}
