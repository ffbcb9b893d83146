package sim

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
	"popsim/workload/pcg"
)

// Client constants with RocketMQ's values.
const (
	pullTimeDelayWhenException = 3000 * clock.Millisecond // pullTimeDelayMillsWhenException
	pullTimeDelayWhenFlowCtl   = 50 * clock.Millisecond   // PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL
	pullTimeDelayWhenBusy      = 20 * clock.Millisecond   // broker flow control
	pullThresholdForQueue      = 1000                     // pullThresholdForQueue: cached messages per queue
)

// client is one consumer kind's client model: how it asks the engine for
// messages, what it does with answers and with each consumed message. The
// core (consumer) owns what every kind has: the consume threads and their
// buffer, the process's clock and lifecycle, the network.
type client interface {
	// start is the process starting (or restarting): its first request,
	// its clocks.
	start(s *sim)
	// poll is the kind's tkPoll task (p: what it was scheduled with).
	poll(s *sim, p payload)
	// reply is an answer reaching the client; timeout is the client giving
	// up on r.
	reply(s *sim, r Request)
	timeout(s *sim, r Request)
	// timer is the kind's own timed work (a tkClient task's payload).
	timer(s *sim, p payload)
	// beforeConsume is the kind's check as a thread takes w (false: w is
	// not consumed); consumed is w's consumption ending.
	beforeConsume(s *sim, w work) bool
	consumed(s *sim, w work)
	// crashed drops the kind's local state: the process died.
	crashed(s *sim)
	// busy reports local work the core does not see (messages waiting for
	// an ack, a retry or a thread).
	busy() bool
}

// unacker is a client that holds messages beyond its consume threads'
// buffer whose acknowledgement it has not sent (a Kafka share consumer's
// processed records waiting for the next poll).
type unacker interface {
	unacked(dst []model.MsgID) []model.MsgID
}

// heldAtCrash notes, for the time-to-redeliver measure, every message the
// crashing consumer holds unacknowledged.
func (s *sim) heldAtCrash(c *consumer) {
	now := s.q.now()
	if u, ok := c.cl.(unacker); ok {
		for _, id := range u.unacked(nil) {
			s.meter.crash(c.g, id, now)
		}
		return
	}
	for _, w := range c.buf[c.head:] {
		for _, h := range membersOf(w) {
			if !h.finished {
				s.meter.crash(c.g, h.msg.ID, now)
			}
		}
	}
	for _, w := range c.running {
		for _, h := range membersOf(w) {
			s.meter.crash(c.g, h.msg.ID, now)
		}
	}
}

// rebalancer is a client whose group reassigns work when a member comes
// or goes (the Pull baseline).
type rebalancer interface {
	rebalance(s *sim)
}

// consumer is one consumer process: the parts every kind has and its
// kind's client model.
//
// An answer's arrival and the consumption it starts read most of the
// record, so its fields lie in the lines they are read from (the record
// is padded to 192 bytes, whose allocation class starts every record on a
// line: TestConsumerLayout): line 0 what every answer's arrival, client
// task, request and ack reads (the incarnation, whether it is alive or
// paused, the client model, the group, the client id), line 1 the consume
// threads and the spec (shared by the consumers it counts, so cached),
// line 2 the random stream a consumption's start draws from and the rest.
// The processing time's distribution and the outcomes are read from the
// spec. In the hot topic (500 consumers, whose records do not stay cached
// from one answer to the next) the record took 216 bytes, in the 224-byte
// class (four or five lines), and its stream a line of its own.
type consumer struct {
	idx        int32
	epoch      uint32
	alive      bool
	pauseUntil clock.Time
	cl         client
	g          *group
	clientID   string

	// Consume threads: buf[head:] waits for a free thread; running are
	// being consumed, one per busy thread (at most Threads).
	buf     []work
	head    int
	running []work
	spec    *ConsumerSpec

	rng       pcg.Rand
	slowUntil clock.Time
	skew      clock.Duration // client clock = engine clock + skew
	gpos      int            // position in g.members

	_ [consumerPad]byte
}

// consumerPad pads a consumer to 192 bytes (TestConsumerLayout).
const consumerPad = 24

// held is a message a client holds: delivered, and not yet finished. Each
// kind wraps it with its own fields (popHeld, pullHeld).
type held struct {
	c           *consumer
	epoch       uint32
	msg         *model.Message // as delivered: a copy in the response
	lease       model.LeaseID  // the lease it is held under (0: none, Pull)
	topic       string         // where it lives: its real topic (a retry topic for a retry message)
	queue       int32          // its broker's own queue id
	broker      int32          // the broker it came from (route)
	offset      int64
	deliveredAt clock.Time
	outcome     workload.Outcome
	finished    bool
	// pinned: something other than the client's own lists refers to it
	// (an injected renewal's task), so a client that recycles what it
	// held (the simple consumer) must not reuse it.
	pinned    bool
	holdUntil clock.Time // an injected fault stretches processing to here
	endTask   *task      // the end of its consumption, while running
	endSeq    uint64
}

// work is a message in a consumer's hands, of whatever kind.
type work interface {
	payload
	base() *held
}

func (h *held) base() *held { return h }

// batch is work of several messages: one listener call on one consume
// thread, which processes its messages one after another (a push
// consumer's consumeMessageBatchMaxSize above 1). Its base is its first
// message, which carries the call's end task.
type batch interface {
	work
	members() []*held
}

// membersOf is the messages of w: its members for a batch, else w's own.
func membersOf(w work) []*held {
	if b, ok := w.(batch); ok {
		return b.members()
	}
	return []*held{w.base()}
}

func (s *sim) newConsumer(idx int32, spec *ConsumerSpec) *consumer {
	g := s.byName[spec.Group]
	c := &consumer{
		idx: idx, spec: spec, g: g,
		rng: *newStream(s.cfg.Seed, streamConsumer+uint64(idx)), alive: true,
	}
	if g.members == nil {
		g.topic, g.kind, g.queues = spec.Topic, spec.Kind, s.rt.queues(spec.Topic)
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
	switch set := spec.Settings.(type) {
	case *PopPushSettings:
		p := &pushConsumer{c: c, set: set}
		p.defaultLoops(s)
		if g.cfg.ConsumeMessageOrderly {
			p.ord = newOrderly()
		}
		c.cl = p
	case *SimpleSettings:
		c.cl = s.newSimpleConsumer(c, set)
	case *PullSettings:
		c.cl = &pullConsumer{c: c, set: set}
	case *KafkaShareConsumerSettings:
		c.cl = s.newKafkaShareConsumer(c, set)
	case *SQSConsumerSettings:
		c.cl = s.newSQSConsumer(c, set)
	default:
		panic("sim: consumer settings of an unknown kind")
	}
	return c
}

// now is the consumer's own clock.
func (c *consumer) now(s *sim) clock.Time { return s.q.now().Add(c.skew) }

// virtual converts an instant of the consumer's clock to engine time.
func (c *consumer) virtual(t clock.Time) clock.Time { return t.Add(-c.skew) }

// deliver traces a message reaching its client: where it lives, its lease
// and attempt, the topic the client was shown.
func (s *sim) deliver(h *held, attempt int32, shown string) {
	e := s.event(model.EvDeliver)
	e.Client, e.Msg, e.Lease, e.Topic, e.Queue, e.Offset = h.c.idx, h.msg.ID, h.lease, h.topic, s.rt.global(h.broker, h.topic, h.queue), h.offset
	e.Attempt, e.Shown = attempt, shown
	s.emitSlot() // the meter counts the delivery as it reads the event (meter.onDeliver)
}

// startWork hands waiting messages to free consume threads. A POP
// client's single message, the usual work, is started by startSingle
// with its concrete type, held so throughout; a batch by startBatch; a
// single message of another kind by startSingle through the interface.
func (s *sim) startWork(c *consumer) {
	for len(c.running) < c.spec.Threads && c.head < len(c.buf) {
		w := c.buf[c.head]
		c.buf[c.head] = nil
		c.head++
		if !c.cl.beforeConsume(s, w) {
			continue
		}
		if h, ok := w.(*popHeld); ok {
			s.startSingle(c, &h.held, h)
		} else if b, ok := w.(batch); ok {
			s.startBatch(c, b)
		} else {
			s.startSingle(c, w.base(), w)
		}
		c.running = append(c.running, w)
	}
	if c.head == len(c.buf) {
		c.buf, c.head = c.buf[:0], 0
	} else if c.head >= 1024 && 2*c.head >= len(c.buf) {
		n := copy(c.buf, c.buf[c.head:])
		clear(c.buf[n:])
		c.buf, c.head = c.buf[:n], 0
	}
}

// startSingle starts the consumption of one message held as h, p being
// the work it belongs to: its start traced, its processing time and its
// outcome drawn, its end scheduled. startWork calls it with a POP
// client's single message by its concrete type (no assertion on the
// way) and with work of another kind through the interface.
func (s *sim) startSingle(c *consumer, h *held, p payload) {
	s.heldSlot(model.EvConsumeStart, h, model.RNone) // emitHeld written out, as in consumeEnd
	s.emitSlot()
	d := s.stretch(c, c.spec.Processing.Dist.Sample(&c.rng), h.holdUntil)
	h.outcome = c.spec.Outcomes.SampleFor(&c.rng, uint64(h.msg.ID))
	h.endTask = s.q.after(d, tkConsumeEnd, c.idx, c.epoch, p)
	h.endSeq = h.endTask.seq
}

// startBatch starts one listener call on a batch: each member's start
// traced, its processing time and outcome drawn, the call's end (its
// first member's task) after the sum of the times.
func (s *sim) startBatch(c *consumer, b batch) {
	h := b.base()
	var d clock.Duration
	hold := h.holdUntil
	for _, m := range b.members() {
		s.emitHeld(model.EvConsumeStart, m, model.RNone)
		d += c.spec.Processing.Dist.Sample(&c.rng)
		m.outcome = c.spec.Outcomes.SampleFor(&c.rng, uint64(m.msg.ID))
		hold = max(hold, m.holdUntil)
	}
	h.endTask = s.q.after(s.stretch(c, d, hold), tkConsumeEnd, c.idx, c.epoch, b)
	h.endSeq = h.endTask.seq
}

// stretch is a consumption's processing time d under the injected faults:
// multiplied while the client is slowed, and lasting at least until hold.
func (s *sim) stretch(c *consumer, d clock.Duration, hold clock.Time) clock.Duration {
	now := s.q.now()
	if now < c.slowUntil {
		d *= clock.Duration(s.cfg.Faults.Slow.Factor)
	}
	return max(d, hold.Sub(now))
}

var outcomeReasons = [...]model.Reason{workload.Success: model.RSuccess, workload.ReconsumeLater: model.RLater, workload.Exception: model.RException, workload.AckedNotDone: model.RNotDone}

func (s *sim) consumeEnd(c *consumer, w work) {
	c.running = removeWork(c.running, w)
	if h, ok := w.(*popHeld); ok { // the usual work, by its concrete type
		s.heldSlot(model.EvConsumeEnd, &h.held, outcomeReasons[h.outcome]) // emitHeld written out
		s.emitSlot()
	} else if b, ok := w.(batch); ok {
		for _, h := range b.members() {
			s.emitHeld(model.EvConsumeEnd, h, outcomeReasons[h.outcome])
		}
	} else {
		h := w.base()
		s.emitHeld(model.EvConsumeEnd, h, outcomeReasons[h.outcome])
	}
	c.cl.consumed(s, w)
	s.startWork(c)
}

// workOf is p, a consumption's end task's payload, as work: a POP
// client's single message by its concrete type first (startWork
// schedules it as its concrete type).
func workOf(p payload) work {
	if h, ok := p.(*popHeld); ok {
		return h
	}
	return p.(work)
}

// removeWork removes w from running, keeping the others' order (a pause
// re-arms their ends in it); w must be there. A POP client's single
// message is found by pointer: comparing two interfaces calls the
// runtime.
func removeWork(running []work, w work) []work {
	i := indexWork(running, w)
	if i < 0 {
		panic("sim: a consumption ended that was not running")
	}
	n := len(running) - 1
	for ; i < n; i++ {
		running[i] = running[i+1]
	}
	running[n] = nil
	return running[:n]
}

// indexWork is where w is in running, -1 when it is not there.
func indexWork(running []work, w work) int {
	if h, ok := w.(*popHeld); ok {
		for i, r := range running {
			if x, ok := r.(*popHeld); ok && x == h {
				return i
			}
		}
		return -1
	}
	for i, r := range running {
		if r == w {
			return i
		}
	}
	return -1
}

// nextPoll is a client's next receive: at most one tkPoll armed at a time.
type nextPoll struct{ armed bool }

// sendNow says whether the client sends its receive at once (d = 0); else
// it arms a tkPoll after d. Nothing happens while one is armed or the
// client is down.
func (t *nextPoll) sendNow(s *sim, c *consumer, d clock.Duration) bool {
	return t.sendNowWith(s, c, d, nil)
}

// sendNowWith is sendNow with the payload its tkPoll carries (which of
// the client's loops it is for).
func (t *nextPoll) sendNowWith(s *sim, c *consumer, d clock.Duration, x payload) bool {
	if t.armed || !c.alive {
		return false
	}
	if d == 0 {
		return true
	}
	t.armed = true
	s.q.after(d, tkPoll, c.idx, c.epoch, x)
	return false
}
