package sim

import (
	"math/rand/v2"
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
)

// Client constants with RocketMQ's values.
const (
	pullTimeDelayWhenException = 3000 * clock.Millisecond // pullTimeDelayMillsWhenException
	pullTimeDelayWhenFlowCtl   = 50 * clock.Millisecond   // PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL
	pullTimeDelayWhenBusy      = 20 * clock.Millisecond   // broker flow control
	pullThresholdForQueue      = 1000                     // pullThresholdForQueue: cached messages per queue
)

// popDelayLevel is the push consumer's changeInvisibleTime backoff in
// seconds (DefaultMQPushConsumer.popDelayLevel).
var popDelayLevel = [...]int64{10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// popDelaySeconds is popDelayLevel[level], or the last entry when level is
// past the table.
func popDelaySeconds(level int) int64 {
	if level >= len(popDelayLevel) {
		return popDelayLevel[len(popDelayLevel)-1]
	}
	return popDelayLevel[max(level, 0)]
}

// consumer is one consumer process: a small state machine driven by
// scheduler events. Its kind decides which client model runs.
type consumer struct {
	idx  int32
	kind ConsumerKind
	spec *ConsumerSpec
	// The client's own settings: exactly one is set, by its kind.
	popPush  *PopPushSettings
	simple   *SimpleSettings
	pull     *PullSettings
	proc     workload.Dist
	outcomes workload.Outcomes
	g        *group
	gpos     int // position in g.members
	rng      *rand.Rand
	skew     clock.Duration // client clock = broker clock + skew

	alive      bool
	epoch      uint32
	clientID   string
	pauseUntil clock.Time
	slowUntil  clock.Time

	// Consume threads: buf[head:] waits for a free thread; running are
	// being consumed, one per busy thread (at most Threads).
	buf     []*held
	head    int
	running []*held

	waitAck   int   // pop-push: received, not yet acked/renewed/aborted
	local     int   // simple and pull: held locally (waiting, running, retrying)
	popOut    *call // the outstanding pop or receive
	pollArmed bool  // an evPoll is scheduled
	wantPoll  bool  // simple: a receive waits for local capacity

	queues []*pullQueue // pull: by queue id
}

// held is a message a client holds: delivered, and not yet finished.
type held struct {
	c           *consumer
	epoch       uint32
	msg         *model.Message
	key         string
	topic       string // the real topic (a retry topic for retry messages)
	queue       int32
	offset      int64
	handle      model.ReceiptHandle
	hstr        string
	deliveredAt clock.Time
	outcome     workload.Outcome
	finished    bool
	holdUntil   clock.Time // an injected fault stretches processing to here
	endEv       *event     // the end of its consumption, while running
	endSeq      uint64

	// simple consumer auto-renew
	firstRecv  clock.Time
	renews     int
	renewFails int
	renewOut   bool
	renewStop  bool

	// pull consumer
	pq      *pullQueue
	gen     uint32
	attempt int32
}

func (s *sim) newConsumer(idx int32, spec *ConsumerSpec) *consumer {
	g := s.byName[spec.Group]
	c := &consumer{
		idx: idx, kind: spec.Kind, spec: spec, proc: spec.Processing.Dist, outcomes: spec.Outcomes, g: g,
		rng: newStream(s.cfg.Seed, streamConsumer+uint64(idx)), alive: true,
	}
	switch set := spec.Settings.(type) {
	case *PopPushSettings:
		c.popPush = set
	case *SimpleSettings:
		c.simple = set
	case *PullSettings:
		c.pull = set
	}
	if g.members == nil {
		g.topic, g.kind, g.queues = spec.Topic, spec.Kind, s.c.topics[spec.Topic].Queues
		g.detail = "topic=" + g.topic
	}
	c.gpos = len(g.members)
	g.members = append(g.members, c)
	if st := &s.faults.skew; st.on {
		b := int64(st.bound)
		c.skew = clock.Duration(s.faults.rng[famSkew].Int64N(2*b+1) - b)
		if c.skew != 0 {
			s.cov.hit("clock-skew")
		}
	}
	c.clientID = "c" + strconv.Itoa(int(idx)) + "-0"
	return c
}

// popTimes are the invisible and long-polling times of a pop-push or
// simple consumer's pops.
func (c *consumer) popTimes() (invisible, poll clock.Duration) {
	if c.simple != nil {
		return c.simple.InvisibleTime, c.simple.PollTime
	}
	return c.popPush.InvisibleTime, c.popPush.PollTime
}

// now is the consumer's own clock; nowMs in RocketMQ's milliseconds.
func (c *consumer) now(s *sim) clock.Time { return s.q.now().Add(c.skew) }
func (c *consumer) nowMs(s *sim) int64    { return c.now(s).Millis() }

// virtual converts an instant of the consumer's clock to broker time.
func (c *consumer) virtual(t clock.Time) clock.Time { return t.Add(-c.skew) }

// leaseExpired is the client's view: nextVisibleTime <= now by its clock.
func (s *sim) leaseExpired(c *consumer, h *held) bool {
	return h.handle.IsExpired(c.nowMs(s))
}

func (s *sim) startConsumer(c *consumer) {
	switch c.kind {
	case PopPush, Simple:
		s.schedulePoll(c, 0)
	case Pull:
		s.q.after(c.pull.CommitInterval, evCommit, c.idx, c.epoch, nil)
	}
}

// schedulePoll arms the consumer's next pop or receive after d; with d = 0
// it is issued at once.
func (s *sim) schedulePoll(c *consumer, d clock.Duration) {
	if c.pollArmed || !c.alive {
		return
	}
	if d == 0 {
		s.poll(c, nil)
		return
	}
	c.pollArmed = true
	s.q.after(d, evPoll, c.idx, c.epoch, nil)
}

func (s *sim) poll(c *consumer, p any) {
	if pq, ok := p.(*pullQueue); ok {
		s.pull(c, pq)
		return
	}
	c.pollArmed = false
	switch c.kind {
	case PopPush:
		s.pushPop(c)
	case Simple:
		s.receive(c)
	}
}

// deliver records one message handed to a POP client.
func (s *sim) deliver(c *consumer, m *model.Message, h model.ReceiptHandle) *held {
	hd := &held{
		c: c, epoch: c.epoch, msg: m, key: m.UniqKey, topic: h.RealTopic(m.Topic, c.g.name), queue: h.QueueID, offset: h.QueueOffset,
		handle: h, hstr: h.String(), deliveredAt: s.q.now(),
	}
	s.emit(model.Event{Kind: model.EvDeliver, Client: c.idx, Msg: hd.key, Topic: hd.topic, Queue: hd.queue, Offset: hd.offset,
		Attempt: m.ReconsumeTimes, Handle: hd.hstr, Deadline: h.NextVisibleTime(), Detail: c.g.presented(m.Topic)})
	s.led.delivered(hd.key)
	return hd
}

// heldEvent is a trace event about a held message: where it lives, the
// handle the client holds now, its reconsumeTimes.
func (s *sim) heldEvent(k model.EventKind, c *consumer, h *held, detail string) model.Event {
	a := h.msg.ReconsumeTimes
	if h.pq != nil {
		a = h.attempt
	}
	return model.Event{Kind: k, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Attempt: a, Handle: h.hstr, Detail: detail}
}

// startWork hands waiting messages to free consume threads.
func (s *sim) startWork(c *consumer) {
	for len(c.running) < c.spec.Threads && c.head < len(c.buf) {
		h := c.buf[c.head]
		c.buf[c.head] = nil
		c.head++
		if !s.beforeConsume(c, h) {
			continue
		}
		s.emit(s.heldEvent(model.EvConsumeStart, c, h, ""))
		d := c.proc.Sample(c.rng)
		if s.q.now() < c.slowUntil {
			d *= clock.Duration(s.cfg.Faults.Slow.Factor)
		}
		d = max(d, h.holdUntil.Sub(s.q.now()))
		h.outcome = c.outcomes.Sample(c.rng)
		h.endEv = s.q.after(d, evConsumeEnd, c.idx, c.epoch, h)
		h.endSeq = h.endEv.seq
		c.running = append(c.running, h)
	}
	if c.head == len(c.buf) {
		c.buf, c.head = c.buf[:0], 0
	} else if c.head >= 1024 && 2*c.head >= len(c.buf) {
		n := copy(c.buf, c.buf[c.head:])
		c.buf, c.head = c.buf[:n], 0
	}
}

// beforeConsume applies the kind's check before a thread takes a message.
func (s *sim) beforeConsume(c *consumer, h *held) bool {
	switch c.kind {
	case PopPush:
		// ConsumeRequest.run: now - popTime >= invisibleTime aborts; nothing
		// is sent and the broker revives the message.
		if s.leaseExpired(c, h) {
			c.waitAck--
			h.finished = true
			s.cov.hit("expired-before-consume")
			s.emit(s.heldEvent(model.EvExpiredLocal, c, h, "before"))
			return false
		}
	case Pull:
		// A dropped process queue is not consumed.
		if h.gen != h.pq.gen || !h.pq.owned {
			c.local--
			return false
		}
	}
	return true
}

var outcomeNames = [...]string{workload.Success: "success", workload.ReconsumeLater: "later", workload.Exception: "exception"}

func (s *sim) consumeEnd(c *consumer, h *held) {
	c.running = removeHeld(c.running, h)
	s.emit(s.heldEvent(model.EvConsumeEnd, c, h, outcomeNames[h.outcome]))
	switch c.kind {
	case PopPush:
		s.pushDone(c, h)
	case Simple:
		s.simpleDone(c, h)
	case Pull:
		s.pullDone(c, h)
	}
	s.startWork(c)
}

// removeHeld removes h from running; h must be there.
func removeHeld(running []*held, h *held) []*held {
	for i, r := range running {
		if r == h {
			return append(running[:i], running[i+1:]...)
		}
	}
	panic("sim: a consumption ended that was not running")
}

// sendAck acks a held message with its current handle (fire and forget).
func (s *sim) sendAck(c *consumer, h *held) {
	h.finished = true
	cl := s.newCall(callAck, c)
	cl.h, cl.handle = h, h.hstr
	s.emit(model.Event{Kind: model.EvAckSent, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: h.hstr})
	s.send(cl, 0)
}

// sendChange renews a held message's lease to invisibleMs from now, with
// the handle hstr.
func (s *sim) sendChange(c *consumer, h *held, hstr string, invisibleMs int64, why changePurpose, timeout clock.Duration) *call {
	cl := s.newCall(callChange, c)
	cl.h, cl.handle, cl.why = h, hstr, why
	cl.invisibleMs = invisibleMs
	s.emit(model.Event{Kind: model.EvChangeSent, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: hstr, Deadline: invisibleMs})
	s.send(cl, timeout)
	return cl
}

// adopt takes the new handle from a renewal's response.
func (h *held) adopt(nh model.ReceiptHandle) {
	h.handle, h.hstr = nh, nh.String()
}
