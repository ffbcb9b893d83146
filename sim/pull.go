package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/workload"
)

// The pull baseline: classic clustering. Each queue of the topic is owned
// by one live consumer of the group (AllocateMessageQueueAveragely,
// rebalanced at once when a consumer crashes or comes back). The owner
// pulls from its own offset with the broker's Pull (a pull that finds
// nothing is held by the broker's PullRequestHoldService until a message
// arrives on the queue, or until the hold check after its suspend time,
// PollTime), consumes on its threads and commits the smallest unfinished
// offset to the broker every CommitInterval (UPDATE_CONSUMER_OFFSET). A
// new owner starts at the broker's committed offset
// (QUERY_CONSUMER_OFFSET), so uncommitted work is redelivered. A pull
// answered OFFSET_ILLEGAL restarts at the broker's nextBeginOffset at once
// (a real client drops its process queue and waits for a rebalance). A failed message is re-consumed locally
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
	start := int64(0) // QUERY_NOT_FOUND: consume from the queue's start
	if r := s.b.QueryConsumerOffset(&pop.QueryConsumerOffsetRequest{ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: q}); r.Code == model.Success {
		start = r.Offset
	}
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
	s.send(cl, c.pull.PollTime+s.cfg.Network.PollTimeoutSlack)
}

// brokerPull serves a pull at the broker; one that finds nothing is held
// there (PullRequestHoldService) and answered when the broker hands it
// back.
func (s *sim) brokerPull(cl *call) {
	sp := cl.c.spec
	req := pop.PullRequest{
		ClientID: cl.c.clientID, ConsumerGroup: cl.c.g.name, Topic: cl.c.g.topic, QueueID: cl.pq.q, QueueOffset: cl.offset,
		MaxMsgNums: sp.Batch, Suspend: true, SuspendTimeout: cl.c.pull.PollTime, ExpressionType: "TAG", Subscription: sp.Expression,
	}
	s.b.Pull(s.q.now(), &req, &cl.pullRes)
	if cl.pullRes.Status == pop.PullSuspended {
		s.pullHolds[cl.pullRes.HoldID] = cl
		s.armHoldCheck()
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

// wakePulls re-runs held pulls the broker handed back (executeRequestWhenWakeup)
// and answers them.
func (s *sim) wakePulls(ws []pop.PullWakeup) {
	for i := range ws {
		cl := s.pullHolds[ws[i].ID]
		if cl == nil {
			continue // dropped by a broker restart
		}
		delete(s.pullHolds, ws[i].ID)
		s.b.RerunPull(s.q.now(), &ws[i].Request, &cl.pullRes)
		s.respondPull(cl)
	}
}

// armHoldCheck schedules the broker's hold check at its next due time,
// unless an earlier one is armed.
func (s *sim) armHoldCheck() {
	t, ok := s.b.NextHoldCheck()
	if !ok {
		return
	}
	t = max(t, s.q.now())
	if s.holdArmed && s.holdAt <= t {
		return
	}
	s.holdArmed, s.holdAt = true, t
	s.q.at(t, evHoldCheck, -1, 0, nil)
}

// holdCheck runs PullRequestHoldService's periodic check.
func (s *sim) holdCheck(at clock.Time) {
	if !s.holdArmed || at != s.holdAt {
		return // superseded by an earlier check
	}
	s.holdArmed = false
	s.wakePulls(s.b.CheckHoldRequest(s.q.now()))
	s.armHoldCheck()
}

// pullResponse hands pulled messages to the consumer.
func (s *sim) pullResponse(c *consumer, cl *call) {
	pq := cl.pq
	pq.pulling = false
	if cl.gen != pq.gen || !pq.owned {
		return
	}
	res := &cl.pullRes
	if res.Status == pop.PullOffsetIllegal {
		cl.offset = res.NextBeginOffset // OFFSET_TOO_SMALL and the like: the broker's correction
	}
	s.emit(model.Event{Kind: model.EvPull, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: cl.offset, N: int64(len(res.Messages))})
	if cl.offset > pq.next {
		pq.next, pq.base, pq.done = cl.offset, cl.offset, pq.done[:0]
	}
	for i := range res.Messages {
		m := &res.Messages[i]
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
	if h.attempt > c.pull.MaxReconsumeTimes {
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
	s.wakePulls(r.PullWoken)
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
	s.q.after(c.pull.CommitInterval, evCommit, c.idx, c.epoch, nil)
}

func (s *sim) commitQueue(c *consumer, pq *pullQueue) {
	if pq.base == pq.committed {
		return
	}
	pq.committed = pq.base
	r := s.b.UpdateConsumerOffset(&pop.UpdateConsumerOffsetRequest{ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: pq.q, CommitOffset: pq.base})
	if r.Code != model.Success {
		panic("sim: committing a pull consumer's offset: " + r.Code.String() + " " + r.Remark)
	}
	s.emit(model.Event{Kind: model.EvCommit, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: pq.base})
}
