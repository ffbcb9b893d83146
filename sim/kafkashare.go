package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/share"
	"popsim/workload"
)

// The Kafka share consumer: a KafkaShareConsumer in a share group
// (KIP-932), after the Java client's poll loop.
//
//   - Membership: ShareGroupHeartbeat to the group coordinator every
//     group.share.heartbeat.interval.ms (the interval the answer names),
//     joining with epoch 0 and the topic; the answer's assignment is the
//     partitions the member fetches from. A fenced or unknown member
//     rejoins. A crashed process stops heartbeating: its member stays in
//     the group (and keeps its partitions) until share.session.timeout.ms
//     passes, while its acquired records come back at once because its
//     connection closed (the adapter's Disconnect).
//   - The share session: ShareFetch with epoch 0 opens it, each request
//     carries the next epoch; an error or a request the client gave up on
//     resets it (the next ShareFetch opens a new one: Kafka replaces the
//     old session without releasing its records).
//   - poll: a ShareFetch of up to max.poll.records (the consumer's batch)
//     from the assigned partitions; the engine answers at once and the
//     adapter holds an empty fetch for fetch.max.wait.ms (the broker's
//     delayed share fetch). Records go to the consume threads; the next
//     poll comes once every record of the batch was processed, as
//     KafkaShareConsumer requires in both modes.
//   - Acknowledgement: explicit mode (the simulator's default) maps each
//     outcome to a type — success ACCEPT, RECONSUME_LATER RELEASE, an
//     exception RELEASE or REJECT (exceptionAck); implicit mode (Kafka's
//     default) ACCEPTs every record of the previous poll, so a failed one
//     is dropped under the named policy implicit-accept. The types ride on
//     the next ShareFetch, or with commitSync go in a ShareAcknowledge whose
//     answer the client waits for before it polls again.
//   - RENEW: the fault injector's renewals (explicit mode only) go in a
//     ShareAcknowledge with IsRenewAck; Kafka's RENEW restarts the lock for
//     the group's lock duration, so the same-deadline edge is an early
//     renewal here.
//   - One request to the broker at a time (the client does not send to a
//     node with a request in flight); heartbeats go to the coordinator.

// KafkaShareConsumerSettings are a kafka-share consumer's own settings,
// under the Java client's config names where it has one.
type KafkaShareConsumerSettings struct {
	// AcknowledgementMode is share.acknowledgement.mode: explicit (the
	// simulator's default: the workload's outcomes become acknowledgement
	// types) or implicit (Kafka's default).
	AcknowledgementMode string `yaml:"share.acknowledgement.mode"`
	// AcquireMode is share.acquire.mode: batch_optimized (default; whole
	// log batches, max.poll.records a soft limit) or record_limit.
	AcquireMode    string `yaml:"share.acquire.mode"`
	FetchMaxWaitMs int32  `yaml:"fetch.max.wait.ms" unit:"ms"`  // 500: how long a fetch that finds nothing waits, 0..30000
	RequestTimeout int32  `yaml:"request.timeout.ms" unit:"ms"` // 30000, 1000..300000
	RetryBackoffMs int32  `yaml:"retry.backoff.ms" unit:"ms"`   // 100: after an error answer, 0..10000
	// CommitSync: after each batch the application calls commitSync(),
	// sending its acknowledgements in a ShareAcknowledge and waiting for the
	// answer, instead of letting them ride on the next poll.
	CommitSync bool
	// ExceptionAck is how explicit mode acknowledges a record whose
	// processing threw: release (default: redeliver) or reject (archive).
	ExceptionAck string
}

func (*KafkaShareConsumerSettings) Kind() ConsumerKind     { return KafkaShareConsumer }
func (*KafkaShareConsumerSettings) batch() (def, hi int32) { return 500, 10000 }

func (p *KafkaShareConsumerSettings) withDefaults() ConsumerSettings {
	d := *p
	def(&d.AcknowledgementMode, "explicit")
	def(&d.AcquireMode, share.BatchOptimized.String())
	def(&d.FetchMaxWaitMs, 500)
	def(&d.RequestTimeout, 30000)
	def(&d.RetryBackoffMs, 100)
	def(&d.ExceptionAck, "release")
	return &d
}

func (p *KafkaShareConsumerSettings) check(v *validator, path string) {
	oneOf(v, path+".share.acknowledgement.mode", p.AcknowledgementMode, "explicit", "implicit")
	oneOf(v, path+".share.acquire.mode", p.AcquireMode, share.BatchOptimized.String(), share.RecordLimit.String())
	v.intIn(path+".fetch.max.wait.ms", int64(p.FetchMaxWaitMs), 0, 30000)
	v.intIn(path+".request.timeout.ms", int64(p.RequestTimeout), 1000, 300000)
	v.intIn(path+".retry.backoff.ms", int64(p.RetryBackoffMs), 0, 10000)
	oneOf(v, path+".exceptionAck", p.ExceptionAck, "release", "reject")
	if p.CommitSync && p.AcknowledgementMode == "implicit" {
		v.add(path+".commitSync", "false with share.acknowledgement.mode implicit", "true")
	}
}

// oneOf checks that s is one of the allowed values.
func oneOf(v *validator, path, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.add(path, orList(allowed), "%q", s)
}

// kafkaShareConsumer is the Kafka share consumer's client model.
type kafkaShareConsumer struct {
	c   *consumer
	set *KafkaShareConsumerSettings
	a   *kafkaShare

	memberEpoch int32 // the coordinator's epoch for this member (0: join)
	assignment  []share.TopicPartition
	hbOut       bool // a heartbeat is on its way
	hb          kafkaHeartbeat
	interval    clock.Duration

	session    int32        // the share session epoch the next request carries (0: open one)
	out        Request      // the request to the broker in flight
	next       nextPoll     // the next receive (a tkPoll armed)
	unfinished int          // records of the last poll still being processed
	acks       []shareAck   // acknowledgements to send
	held       []*shareHeld // the last poll's records
}

// kafkaHeartbeat is the heartbeat timer's payload.
type kafkaHeartbeat struct{}

// shareHeld is a record a Kafka share consumer holds.
type shareHeld struct {
	held
	tp share.TopicPartition
}

func (s *sim) newKafkaShareConsumer(c *consumer, set *KafkaShareConsumerSettings) *kafkaShareConsumer {
	a := s.kafka()
	return &kafkaShareConsumer{c: c, set: set, a: a, interval: clock.MillisDuration(int64(a.set.HeartbeatIntervalMs))}
}

func (p *kafkaShareConsumer) maxWait() clock.Duration {
	return clock.MillisDuration(int64(p.set.FetchMaxWaitMs))
}

func (p *kafkaShareConsumer) explicit() bool { return p.set.AcknowledgementMode == "explicit" }

func (p *kafkaShareConsumer) start(s *sim) {
	p.heartbeat(s)
	s.q.after(p.interval, tkClient, p.c.idx, p.c.epoch, &p.hb)
}

func (p *kafkaShareConsumer) crashed(*sim) {
	p.memberEpoch, p.assignment, p.hbOut, p.session, p.out, p.next.armed = 0, nil, false, 0, nil, false
	p.unfinished, p.acks, p.held = 0, nil, nil
}

func (p *kafkaShareConsumer) busy() bool { return p.unfinished > 0 || len(p.acks) > 0 }

// unacked lists the records the consumer holds whose acknowledgement it
// has not sent: being processed, or processed and waiting for the next
// request.
func (p *kafkaShareConsumer) unacked(dst []model.MsgID) []model.MsgID {
	for _, h := range p.held {
		if !h.finished || p.pending(h) {
			dst = append(dst, h.msg.ID)
		}
	}
	return dst
}

func (p *kafkaShareConsumer) pending(h *shareHeld) bool {
	for i := range p.acks {
		if p.acks[i].lease == h.lease {
			return true
		}
	}
	return false
}

// heartbeat sends ShareGroupHeartbeat, unless one is on its way.
func (p *kafkaShareConsumer) heartbeat(s *sim) {
	if p.hbOut {
		return
	}
	c := p.c
	r := &shareHeartbeatReq{req: share.HeartbeatRequest{GroupID: c.g.name, MemberID: c.clientID, MemberEpoch: p.memberEpoch}}
	if p.memberEpoch == 0 {
		r.req.SubscribedTopicNames = []string{c.g.topic}
	}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossNone, reply: true}
	p.hbOut = true
	s.send(r, clock.MillisDuration(int64(p.set.RequestTimeout)))
}

func (p *kafkaShareConsumer) timer(s *sim, x payload) {
	switch x := x.(type) {
	case *kafkaHeartbeat:
		p.heartbeat(s)
		s.q.after(p.interval, tkClient, p.c.idx, p.c.epoch, &p.hb)
	case *renewFault:
		p.renew(s, x)
	}
}

func (p *kafkaShareConsumer) reply(s *sim, r Request) {
	switch r := r.(type) {
	case *shareHeartbeatReq:
		p.heartbeatReply(s, r)
	case *shareFetchReq:
		p.fetchReply(s, r)
	case *shareAckReq:
		p.out = nil
		p.session = nextShareEpoch(r.req.ShareSessionEpoch)
		if r.res.Err != share.None {
			p.session = 0
		}
		p.fetchLoop(s)
	}
}

func (p *kafkaShareConsumer) heartbeatReply(s *sim, r *shareHeartbeatReq) {
	p.hbOut = false
	res := &r.res
	switch res.Err {
	case share.None:
		p.memberEpoch, p.assignment = res.MemberEpoch, res.Assignment
		if res.HeartbeatIntervalMs > 0 {
			p.interval = clock.MillisDuration(int64(res.HeartbeatIntervalMs))
		}
		p.fetchLoop(s)
	case share.FencedMemberEpoch, share.UnknownMemberID:
		// The coordinator dropped the member (its session timed out):
		// rejoin at once.
		p.memberEpoch, p.assignment = 0, nil
		p.heartbeat(s)
	}
}

func (p *kafkaShareConsumer) timeout(s *sim, r Request) {
	switch r := r.(type) {
	case *shareHeartbeatReq:
		p.hbOut = false
	case *shareFetchReq, *shareAckReq:
		s.traceLost(r, model.RTimeout)
		if p.out == r {
			p.out = nil
		}
		// The client closes the connection and starts a new session.
		p.session = 0
		p.schedulePoll(s, clock.MillisDuration(int64(p.set.RetryBackoffMs)))
	}
}

func (p *kafkaShareConsumer) schedulePoll(s *sim, d clock.Duration) {
	if p.next.sendNow(s, p.c, d) {
		p.fetchLoop(s)
	}
}

func (p *kafkaShareConsumer) poll(s *sim, _ payload) { p.fetchLoop(s) }

// fetchLoop sends the next ShareFetch (or commitSync's ShareAcknowledge)
// when nothing is in flight and the last poll's records are processed.
func (p *kafkaShareConsumer) fetchLoop(s *sim) {
	p.next.armed = false
	if p.out != nil || p.unfinished > 0 || len(p.assignment) == 0 {
		return
	}
	if p.session > 0 && p.set.CommitSync && len(p.acks) > 0 {
		p.commitSync(s)
		return
	}
	c := p.c
	max := c.spec.Batch
	acks := p.acks
	if p.session == 0 {
		// A new session cannot carry acknowledgements: open it with an
		// empty fetch first, when there are any to send.
		acks = nil
		if len(p.acks) > 0 {
			max = 0
		}
	}
	r := &shareFetchReq{req: share.ShareFetchRequest{
		GroupID: c.g.name, MemberID: c.clientID, ShareSessionEpoch: p.session, MaxRecords: max,
		AcquireMode: p.acquireMode(), Partitions: p.assignment, Acks: groupAcks(acks),
	}, acks: acks}
	if acks != nil {
		p.acks = nil
	}
	loss := lossPop
	if len(acks) > 0 {
		loss = lossAck
	}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: loss, reply: true}
	p.out = r
	q := int32(-1)
	if len(p.assignment) == 1 {
		q = p.assignment[0].Partition
	}
	s.emit(model.Event{Kind: model.EvReceive, Client: c.idx, Topic: c.g.topic, Queue: q, Count: max, Span: clock.MillisDuration(int64(p.a.set.RecordLockDurationMs))})
	p.traceAcks(s, acks)
	s.send(r, clock.MillisDuration(int64(p.set.RequestTimeout)))
}

func (p *kafkaShareConsumer) acquireMode() share.AcquireMode {
	if p.set.AcquireMode == share.RecordLimit.String() {
		return share.RecordLimit
	}
	return share.BatchOptimized
}

// commitSync sends the pending acknowledgements in a ShareAcknowledge.
func (p *kafkaShareConsumer) commitSync(s *sim) {
	c := p.c
	acks := p.acks
	p.acks = nil
	r := &shareAckReq{req: share.ShareAcknowledgeRequest{GroupID: c.g.name, MemberID: c.clientID, ShareSessionEpoch: p.session, Acks: groupAcks(acks)}, acks: acks}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossAck, reply: true}
	p.out = r
	p.traceAcks(s, acks)
	s.send(r, clock.MillisDuration(int64(p.set.RequestTimeout)))
}

// traceAcks traces the client's acknowledgements as it sends them.
func (p *kafkaShareConsumer) traceAcks(s *sim, acks []shareAck) {
	for i := range acks {
		k := &acks[i]
		e := model.Event{Client: p.c.idx, Msg: k.msg, Lease: k.lease}
		switch k.typ {
		case share.AckAccept:
			e.Kind = model.EvAck
		case share.AckRelease:
			e.Kind = model.EvRelease
		case share.AckReject:
			e.Kind = model.EvReject
		case share.AckRenew:
			e.Kind, e.Span, e.Reason = model.EvRenew, clock.MillisDuration(int64(p.a.set.RecordLockDurationMs)), k.reason
		}
		s.emit(e)
	}
}

// groupAcks is the acknowledgements in ShareFetch/ShareAcknowledge form:
// per partition in first-seen order, one batch per record in offset
// order.
func groupAcks(acks []shareAck) []share.PartitionAcks {
	var out []share.PartitionAcks
	for i := range acks {
		k := &acks[i]
		j := 0
		for j < len(out) && out[j].TopicPartition != k.tp {
			j++
		}
		if j == len(out) {
			out = append(out, share.PartitionAcks{TopicPartition: k.tp})
		}
		b := share.AckBatch{FirstOffset: k.offset, LastOffset: k.offset, Types: []share.AckType{k.typ}}
		bs := out[j].Batches
		at := len(bs)
		for at > 0 && bs[at-1].FirstOffset > k.offset {
			at--
		}
		bs = append(bs, share.AckBatch{})
		copy(bs[at+1:], bs[at:])
		bs[at] = b
		out[j].Batches = bs
	}
	return out
}

// fetchReply is a ShareFetch's answer: the session's next epoch, the
// records for the consume threads.
func (p *kafkaShareConsumer) fetchReply(s *sim, r *shareFetchReq) {
	if p.out == r {
		p.out = nil
	}
	c := p.c
	res := &r.res
	s.emit(model.Event{Kind: model.EvReceived, Client: c.idx, Code: int32(res.Err), Count: int32(len(res.Deliveries))})
	if res.Err != share.None {
		p.session = 0
		p.schedulePoll(s, clock.MillisDuration(int64(p.set.RetryBackoffMs)))
		return
	}
	p.session = r.next
	p.held = p.held[:0]
	for i := range res.Deliveries {
		d := &res.Deliveries[i]
		h := &shareHeld{held: held{c: c, epoch: c.epoch, msg: d.Msg, lease: d.Lease, topic: d.Topic, queue: d.Partition, offset: d.Offset, deliveredAt: s.q.now()}, tp: d.TopicPartition}
		s.deliver(&h.held, d.DeliveryCount, d.Topic)
		p.held = append(p.held, h)
		p.unfinished++
		c.buf = append(c.buf, h)
		if p.explicit() {
			s.injectRenewals(c, h, d.Deadline)
		}
	}
	s.startWork(c)
	if p.unfinished == 0 {
		p.fetchLoop(s)
	}
}

func (p *kafkaShareConsumer) beforeConsume(*sim, work) bool { return true }

// consumed records the record's acknowledgement; the last record of the
// poll lets the consumer poll again (or commit).
func (p *kafkaShareConsumer) consumed(s *sim, w work) {
	h := w.(*shareHeld)
	h.finished = true
	k := shareAck{tp: h.tp, offset: h.offset, typ: share.AckAccept, msg: h.msg.ID, lease: h.lease, at: h.deliveredAt}
	switch {
	case h.outcome.Succeeded():
	case !p.explicit():
		s.cov.hit("drop-implicit-accept")
		s.emitHeld(model.EvDrop, &h.held, model.RImplicitAccept)
		s.meter.finish(p.c.g, h.msg.ID)
	case h.outcome == workload.ReconsumeLater || p.set.ExceptionAck == "release":
		k.typ = share.AckRelease
	default:
		k.typ = share.AckReject
	}
	p.acks = append(p.acks, k)
	if p.unfinished--; p.unfinished == 0 {
		p.fetchLoop(s)
	}
}

// renew sends an injected RENEW for a record still being processed, when
// no other request is in flight (the same-deadline edge renews early; the
// after-revive edge names the delivery's lease, which the record may have
// lost meanwhile).
func (p *kafkaShareConsumer) renew(s *sim, f *renewFault) {
	h := f.w.(*shareHeld)
	if f.edge != renewAfterRevive && h.finished || p.out != nil || p.session == 0 || h.epoch != p.c.epoch {
		return
	}
	s.cov.hit(s.faults.renew[f.edge].name)
	c := p.c
	k := shareAck{tp: h.tp, offset: h.offset, typ: share.AckRenew, msg: h.msg.ID, lease: f.lease, reason: renewReason(f.edge)}
	r := &shareAckReq{req: share.ShareAcknowledgeRequest{GroupID: c.g.name, MemberID: c.clientID, ShareSessionEpoch: p.session,
		IsRenewAck: true, Acks: groupAcks([]shareAck{k})}, acks: []shareAck{k}}
	r.reqBase = reqBase{c: c, epoch: c.epoch, loss: lossChange, reply: true}
	p.out = r
	p.traceAcks(s, r.acks)
	timeout := clock.MillisDuration(int64(p.set.RequestTimeout))
	if f.edge == renewAtExpiry {
		s.sendAt(r, f.dl, timeout)
		return
	}
	s.send(r, timeout)
}

// renewReason is the trace's reason for an injected renewal at edge.
func renewReason(edge int) model.Reason {
	return [...]model.Reason{renewSameDeadline: model.RSameDeadline, renewAtExpiry: model.RAtExpiry, renewAfterRevive: model.RAfterRevive}[edge]
}
