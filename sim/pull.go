package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// The pull baseline: classic clustering. Each queue of the topic is owned
// by one live consumer of the group (AllocateMessageQueueAveragely,
// rebalanced at once when a consumer crashes or comes back: the rebalance
// is the client's). The owner pulls from its own offset with the engine's
// Pull (a pull that finds nothing is held by the broker's
// PullRequestHoldService until a message arrives on the queue, or until
// the hold check after its suspend time, PollTime), consumes on its
// threads and commits the smallest unfinished offset to the engine every
// CommitInterval (UPDATE_CONSUMER_OFFSET). A new owner starts at the
// engine's committed offset (QUERY_CONSUMER_OFFSET), so uncommitted work
// is redelivered. A pull answered OFFSET_ILLEGAL restarts at the broker's
// nextBeginOffset at once (a real client drops its process queue and
// waits for a rebalance). A failed message is re-consumed locally after
// the popDelayLevel backoff (standing in for sendMessageBack to
// %RETRY%group, which needs a delay timer the engine does not have) and
// goes to %DLQ%group after maxReconsumeTimes attempts; its offset is not
// committed past it meanwhile, so at-least-once holds. Flow control counts
// cached messages (pullThresholdForQueue, 1000), not the offset span: a
// message waiting for its retry pins the commit offset, not the queue.
// Offset queries, commits and the DLQ send-back reach the engine without
// the network (the engine answers them in place).

// pullConsumer is the Pull baseline's client model.
type pullConsumer struct {
	c      *consumer
	set    *PullSettings
	local  int          // messages held (waiting, running, retrying)
	queues []*pullQueue // by queue id
	commit pullCommit   // the commit clock's payload
	// assigned: the Pull side of a push consumer whose queues the broker
	// assigns (switch.go), not the baseline: a message its dropped queue
	// lets go unconsumed is traced, and one the listener finished after
	// the drop is measured (its consumption happened).
	assigned bool
}

// pullCommit is the payload of the commit clock's task.
type pullCommit struct{}

// pullQueue is one queue as its owner sees it.
type pullQueue struct {
	p         *pullConsumer
	q         int32 // the queue in the cluster's numbering (route)
	broker    int32 // the broker that holds it, and its id there
	local     int32
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

// pullHeld is a message a Pull consumer holds: its queue and ownership
// generation, and its local attempts.
type pullHeld struct {
	held
	pq      *pullQueue
	gen     uint32
	attempt int32
}

func (p *pullConsumer) start(s *sim) {
	s.q.after(p.set.CommitInterval, tkClient, p.c.idx, p.c.epoch, &p.commit)
}

func (p *pullConsumer) busy() bool { return p.local > 0 }

func (p *pullConsumer) crashed(*sim) {
	p.local = 0
	for _, pq := range p.queues {
		if pq != nil {
			pq.owned, pq.pulling, pq.armed = false, false, false
			pq.gen++
		}
	}
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

// rebalance reassigns the group's queues among its live members.
func (p *pullConsumer) rebalance(s *sim) { s.rebalance(p.c.g) }

// rebalance reassigns a Pull group's queues among its live members: owners
// that lose a queue commit and drop it first, then new owners start at the
// committed offset.
func (s *sim) rebalance(g *group) {
	var live []*pullConsumer
	for _, c := range g.members {
		if c.alive {
			live = append(live, c.cl.(*pullConsumer))
		}
	}
	want := make([][]bool, len(g.members))
	for i, p := range live {
		st, n := allocate(g.queues, i, len(live))
		w := make([]bool, g.queues)
		for q := st; q < st+n; q++ {
			w[q] = true
		}
		want[p.c.gpos] = w
	}
	for _, p := range live {
		for _, pq := range p.queues {
			if pq != nil && pq.owned && !want[p.c.gpos][pq.q] {
				p.release(s, pq)
			}
		}
	}
	for _, p := range live {
		for q, w := range want[p.c.gpos] {
			if w && !p.owns(int32(q)) {
				p.gain(s, int32(q))
			}
		}
	}
}

// release is removeUnnecessaryMessageQueue: the queue's offset is
// persisted, then its process queue dropped (work of it is discarded).
func (p *pullConsumer) release(s *sim, pq *pullQueue) {
	p.commitQueue(s, pq)
	pq.owned = false
	pq.gen++
}

// owns reports whether the consumer holds queue q.
func (p *pullConsumer) owns(q int32) bool {
	return p.queues != nil && p.queues[q] != nil && p.queues[q].owned
}

func (p *pullConsumer) gain(s *sim, q int32) { p.gainAfter(s, q, 0) }

// gainAfter takes queue q over from the committed offset and sends its
// first pull after d (dispatchPullRequest's delay).
func (p *pullConsumer) gainAfter(s *sim, q int32, d clock.Duration) {
	c := p.c
	if p.queues == nil {
		p.queues = make([]*pullQueue, c.g.queues)
	}
	pq := p.queues[q]
	if pq == nil {
		pq = &pullQueue{p: p, q: q}
		pq.broker, pq.local = s.rt.split(c.g.topic, q)
		p.queues[q] = pq
	}
	start := int64(0) // QUERY_NOT_FOUND: consume from the queue's start
	qr := offsetQuery{req: pop.QueryConsumerOffsetRequest{ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: pq.local}}
	qr.broker = pq.broker
	s.serveNow(&qr)
	if qr.res.Code == model.Success {
		start = qr.res.Offset
	}
	pq.owned, pq.pulling, pq.armed = true, false, false
	pq.gen++
	pq.next, pq.base, pq.committed, pq.done, pq.cached = start, start, start, pq.done[:0], 0
	s.cov.hit("rebalance")
	e := model.Event{Kind: model.EvRebalance, Client: c.idx, Topic: c.g.topic, Queue: q, Offset: start}
	if p.assigned {
		e.Reason = model.RPull
	}
	s.emit(e)
	p.schedulePull(s, pq, d)
}

func (p *pullConsumer) schedulePull(s *sim, pq *pullQueue, d clock.Duration) {
	if pq.armed || !pq.owned {
		return
	}
	pq.armed = true
	s.q.after(d, tkPoll, p.c.idx, p.c.epoch, pq)
}

// poll sends one pull request for the queue, unless flow control holds it.
func (p *pullConsumer) poll(s *sim, x payload) {
	pq := x.(*pullQueue)
	pq.armed = false
	if !pq.owned || pq.pulling {
		return
	}
	if pq.cached >= pullThresholdForQueue {
		s.cov.hit("flow-control")
		p.schedulePull(s, pq, pullTimeDelayWhenFlowCtl)
		return
	}
	c := p.c
	r := &pullReq{pq: pq, gen: pq.gen, offset: pq.next, req: pop.PullRequest{
		ClientID: c.clientID, ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: pq.local, QueueOffset: pq.next,
		MaxMsgNums: c.spec.Batch, Suspend: true, SuspendTimeout: p.set.PollTime, ExpressionType: c.spec.ExpressionType, Subscription: c.spec.Expression,
	}}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossPull, reply: true, broker: pq.broker}
	pq.pulling = true
	s.send(r, p.set.PollTime+s.cfg.Network.PollTimeoutSlack)
}

func (p *pullConsumer) timeout(s *sim, r Request) {
	if r, ok := r.(*pullReq); ok {
		r.pq.pulling = false
		p.schedulePull(s, r.pq, pullTimeDelayWhenException)
	}
}

// reply hands pulled messages to the consumer.
func (p *pullConsumer) reply(s *sim, x Request) {
	r := x.(*pullReq)
	pq := r.pq
	pq.pulling = false
	if r.gen != pq.gen || !pq.owned {
		if p.assigned { // the answer to a pull its dropped queue had parked: read, then thrown away
			s.emit(model.Event{Kind: model.EvPull, Client: p.c.idx, Topic: p.c.g.topic, Queue: pq.q, Offset: r.offset, Count: int32(len(r.res.Messages)), Reason: model.RDropped})
		}
		return
	}
	c := p.c
	res := &r.res
	if res.Status == pop.PullOffsetIllegal {
		r.offset = res.NextBeginOffset // OFFSET_TOO_SMALL and the like: the broker's correction
	}
	s.emit(model.Event{Kind: model.EvPull, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: r.offset, Count: int32(len(res.Messages))})
	if r.offset > pq.next {
		pq.next, pq.base, pq.done = r.offset, r.offset, pq.done[:0]
	}
	for i := range res.Messages {
		m := &res.Messages[i]
		if m.QueueOffset < pq.next {
			continue
		}
		if c.g.sub != nil {
			pq.skip(m.QueueOffset)
			if !c.g.sub.MatchTags(m.Tags) {
				// processPullResult drops a tag the subscription does not
				// name exactly (the broker compares hash codes): the
				// simulator settled it as no-match when it was stored.
				pq.skip(m.QueueOffset + 1)
				continue
			}
		}
		h := &pullHeld{held: held{c: c, epoch: c.epoch, msg: m, topic: m.Topic, queue: m.QueueID, broker: pq.broker, offset: m.QueueOffset, deliveredAt: s.q.now()}, pq: pq, gen: pq.gen}
		s.deliver(&h.held, h.attempt, h.topic)
		pq.next = m.QueueOffset + 1
		pq.done = append(pq.done, false)
		pq.cached++
		p.local++
		c.buf = append(c.buf, h)
	}
	if c.g.sub != nil && (res.Status == pop.PullFound || res.Status == pop.PullNoMatchedMsg) {
		pq.skip(res.NextBeginOffset) // the read went past entries the filter skipped
	}
	s.startWork(c)
	p.schedulePull(s, pq, 0)
}

// beforeConsume: a dropped process queue is not consumed.
func (p *pullConsumer) beforeConsume(s *sim, w work) bool {
	h := w.(*pullHeld)
	if h.gen != h.pq.gen || !h.pq.owned {
		p.local--
		if p.assigned {
			s.emitHeld(model.EvExpiredLocal, &h.held, model.RDropped)
		}
		return false
	}
	return true
}

// consumed: success finishes the offset; failure retries locally after the
// backoff, or sends the message to the DLQ after maxReconsumeTimes.
func (p *pullConsumer) consumed(s *sim, w work) {
	h := w.(*pullHeld)
	pq := h.pq
	if h.gen != pq.gen || !pq.owned {
		p.local-- // the queue moved on: the new owner redelivers from the committed offset
		if p.assigned && h.outcome.Succeeded() {
			s.meter.acked(p.c.g, h.msg.ID, h.deliveredAt, s.q.now())
		}
		return
	}
	pq.cached--
	if h.outcome.Succeeded() {
		p.local--
		s.meter.acked(p.c.g, h.msg.ID, h.deliveredAt, s.q.now())
		pq.finish(h.offset)
		return
	}
	h.attempt++
	if h.attempt > p.set.MaxReconsumeTimes {
		p.local--
		p.sendToDLQ(s, h)
		pq.finish(h.offset)
		return
	}
	s.q.after(clock.Duration(popDelaySeconds(int(h.attempt-1)))*clock.Second, tkClient, p.c.idx, p.c.epoch, h)
}

func (p *pullConsumer) timer(s *sim, x payload) {
	switch x := x.(type) {
	case *pullHeld:
		p.localRetry(s, x)
	case *pullCommit:
		p.commitTick(s)
	}
}

// localRetry redelivers a failed message to the consumer's own threads.
func (p *pullConsumer) localRetry(s *sim, h *pullHeld) {
	if h.gen != h.pq.gen || !h.pq.owned {
		p.local--
		if p.assigned {
			s.emitHeld(model.EvExpiredLocal, &h.held, model.RDropped)
		}
		return
	}
	h.deliveredAt = s.q.now()
	h.pq.cached++
	s.deliver(&h.held, h.attempt, h.topic)
	p.c.buf = append(p.c.buf, h)
	s.startWork(p.c)
}

// sendToDLQ sends a message back to %DLQ%group (reconsumeTimes = its
// attempts, ORIGIN_MESSAGE_ID set).
func (p *pullConsumer) sendToDLQ(s *sim, h *pullHeld) {
	c := p.c
	cp := h.msg.Clone()
	cp.Topic, cp.QueueID, cp.ReconsumeTimes = model.DLQTopic(c.g.name), 0, h.attempt
	_ = cp.SetProperty(model.PropertyOriginMessageID, h.msg.UniqKey)
	r := sendBack{group: c.g.name, msg: cp}
	r.broker = h.broker // the broker the message came from
	s.serveNow(&r)
	s.cov.hit("dlq")
	s.emit(model.Event{Kind: model.EvDLQ, Client: c.idx, Msg: h.msg.ID, Topic: cp.Topic, Queue: s.rt.global(h.broker, cp.Topic, 0), Offset: r.res.Offset, Attempt: h.attempt})
	s.meter.finish(c.g, h.msg.ID)
}

// finish marks an offset finished and moves the queue's base.
func (pq *pullQueue) finish(off int64) {
	i := off - pq.base
	if i < 0 || i >= int64(len(pq.done)) {
		return
	}
	pq.done[i] = true
	pq.advance()
}

// skip moves the next offset to pull up to off, the offsets in between
// finished: the broker's filter skipped them for the group, so nothing of
// the group lives there (a real client's ProcessQueue never holds them,
// and the offset it commits passes them: correctTagsOffset when nothing
// else is held).
func (pq *pullQueue) skip(off int64) {
	for pq.next < off {
		pq.done = append(pq.done, true)
		pq.next++
	}
	pq.advance()
}

// advance moves the queue's base past its finished offsets.
func (pq *pullQueue) advance() {
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
func (p *pullConsumer) commitTick(s *sim) {
	for _, pq := range p.queues {
		if pq != nil && pq.owned {
			p.commitQueue(s, pq)
		}
	}
	s.q.after(p.set.CommitInterval, tkClient, p.c.idx, p.c.epoch, &p.commit)
}

func (p *pullConsumer) commitQueue(s *sim, pq *pullQueue) {
	if pq.base == pq.committed {
		return
	}
	c := p.c
	pq.committed = pq.base
	r := offsetCommit{req: pop.UpdateConsumerOffsetRequest{ConsumerGroup: c.g.name, Topic: c.g.topic, QueueID: pq.local, CommitOffset: pq.base}}
	r.broker = pq.broker
	s.serveNow(&r)
	if r.res.Code != model.Success {
		panic("sim: committing a pull consumer's offset: " + r.res.Code.String() + " " + r.res.Remark)
	}
	s.traceCommit(c.idx, c.g.name, c.g.topic, pq.q, pq.base)
}
