package sim

import (
	"fmt"
	"slices"
	"sort"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
)

// The adapter for the RocketMQ engine (package pop: both POP paths and the
// Pull path; package proxy for the simple consumer). The path is the
// engine settings' popConsumerKVServiceEnable, as RocketMQ chooses it. The
// adapter drives pop.Broker on RocketMQ's cadence: on the checkpoint path
// CheckpointTick at NextCheckpointTick (the timer wheel, the buffer's scans
// and the revive rounds); on the KV path Revive every ReviveIdleInterval
// (at once after a full page) and CleanupCache every CacheCleanupInterval;
// on both PollTick at NextPollExpiry, CheckHoldRequest at NextHoldCheck and
// OrderTick at NextOrderTick. It re-runs woken parked pops and held pulls
// as RocketMQ resubmits them, and turns every result into trace events
// after the broker returns (docs/trace.md, "RocketMQ's two paths").
// Orderly (FIFO) results are the same on both paths: their lapses are
// traced before the answer of the call they came in (a renewal's own
// immediate lapse after it), as lapse events.

// rocketMQ is the RocketMQ engine behind the seam.
type rocketMQ struct {
	b      *pop.Broker
	s      *sim   // the trace, the meter and the coverage counters
	idx    int32  // the broker's index in the cluster (route)
	rt     *route // the cluster's queue numbering
	tbase  int32  // the broker's first timer id: idx × rmqTimers
	ck     bool   // the checkpoint path (popConsumerKVServiceEnable off)
	cache  bool   // KV with enablePopBufferMerge: CleanupCache runs
	groups []rmqGroup
	polls  pollTable           // parked pops and receives, by poll id
	holds  map[uint64]*pullReq // held pulls, by hold id
	// selfEnded: checkpoint-path leases a renewal made and ended at once,
	// its ack of the old checkpoint pairing with its own new one (a
	// renewal in its pop's millisecond with bug SameMillisChangeInvisible:
	// the two checkpoints share a merge key). The message will not come
	// back; the client's ack of the new lease, which ends nothing more, is
	// its ack for the meter.
	selfEnded map[model.LeaseID]struct{}
	// ackRequests and batchAckRequests count the ACK_MESSAGE and
	// BATCH_ACK_MESSAGE requests served (Counters).
	ackRequests, batchAckRequests int64
	// release: each topic's groups, whose consumed messages the KV revive
	// pass frees (releasable); nil when the run may read old offsets.
	release []topicGroups
	// releaseRevive: the checkpoint tick frees the revive topic's consumed
	// messages (neverRestarts).
	releaseRevive bool
	releasedAt    clock.Time // the last release (one per ReviveIdleInterval)
	released      int        // messages released so far (tests)
	floor         []int64    // scratch for the release's floor (pins.floor)
	// woken is Store's wakeup list, kept between puts so that a put
	// allocates none; a Store holds it while it runs.
	woken []pop.Wakeup
	// lockFaults: the broker's faults may find its pop lock busy
	// (LockBusyPPM, SetFaults). Without them its LockBusy count cannot
	// grow (pop.Stats), and a pop does not read it: Stats copies the
	// broker's whole counter block, twice a pop.
	lockFaults bool
}

// topicGroups is a topic and every group consuming it.
type topicGroups struct {
	topic  string
	groups []string
}

// rmqGroup is a consumer group as the adapter reports its positions.
type rmqGroup struct {
	name, topic string
	pull        bool // positions by the committed offset (the Pull baseline)
	// retry are the group's POP retry topics (V1, V2), built once for
	// status rather than on every call.
	retry [2]string
}

// The adapter's timers.
const (
	rmqRevive int32 = iota
	rmqCacheCleanup
	rmqPollExpiry
	rmqHoldCheck
	rmqOrder // OrderTick: FIFO lapses and the lock-free notifications
	rmqCheckpoint
	rmqTimers // timers per broker
)

// openRocketMQ is the rocketmq engine's registration (engineKinds).
func openRocketMQ(s *sim, settings EngineSettings) (Engine, error) {
	cfg := pop.DefaultConfig()
	if settings != nil {
		cfg = *settings.(*pop.Config)
	}
	if s.rt.multi() {
		return newRocketCluster(s, cfg)
	}
	return newRocketMQ(s, cfg, 0)
}

func newRocketMQ(s *sim, cfg pop.Config, idx int32) (*rocketMQ, error) {
	if s.rt.multi() {
		cfg.BrokerName = s.rt.names[idx]
	}
	b, err := pop.New(cfg)
	if err != nil {
		return nil, err
	}
	if r := s.opts.Reuse; r != nil {
		b.UseSpare(&r.logs)
	}
	a := &rocketMQ{b: b, s: s, idx: idx, rt: s.rt, tbase: idx * rmqTimers, ck: !cfg.UsesKV(), holds: map[uint64]*pullReq{}}
	a.cache = !a.ck && cfg.EnablePopBufferMerge
	for _, t := range s.cfg.Topics {
		if err := b.CreateTopic(pop.TopicConfig{Name: t.Name, ReadQueueNums: t.Queues, WriteQueueNums: t.Queues}); err != nil {
			return nil, err
		}
	}
	for _, name := range s.c.groupList {
		if err := b.CreateGroup(s.c.groups[name]); err != nil {
			return nil, err
		}
		for _, cs := range s.c.consumers {
			if cs.Group == name {
				a.groups = append(a.groups, rmqGroup{name: name, topic: cs.Topic, pull: cs.Kind == Pull,
					retry: [2]string{model.BuildPopRetryTopicV1(cs.Topic, name), model.BuildPopRetryTopicV2(cs.Topic, name)}})
				if err := a.setRequestMode(name, cs.Topic); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	if !a.ck && s.releasable() {
		a.release = releaseList(a.groups)
		if s.pins == nil && s.mayRenew() {
			s.pins = &pins{}
		}
	}
	a.releaseRevive = a.ck && s.neverRestarts()
	return a, nil
}

// releasable reports whether nothing in the run reads a topic below its
// groups' commit offsets and in-flight records, so that the broker may free
// what they consumed (pop.Broker.ReleaseConsumed): every consumer is a
// simple (POP) consumer, no group consumes orderly or changes request mode,
// and the broker never restarts or stops, by its fault clocks or a fault
// schedule (a restart reloads older persisted offsets and reads again from
// there). Anything else keeps every message, as RocketMQ's commit log does
// until its retention time. A run whose consumers renew (mayRenew) also
// keeps what a renewal may still name (pins.go).
func (s *sim) releasable() bool {
	if !s.neverRestarts() {
		return false
	}
	for _, c := range s.cfg.Consumers {
		if c.Kind != Simple {
			return false
		}
	}
	for _, g := range s.cfg.Groups {
		if g.ConsumeMessageOrderly || g.RequestMode != "" || g.SwitchToPop.set() {
			return false
		}
	}
	return true
}

// mayRenew reports whether a consumer may send a changeInvisibleTime:
// injected renewals (by fault clocks or a fault schedule), the proxy's
// auto-renewal, or a RECONSUME_LATER answer. On the KV path a renewal
// writes a new in-flight record at its handle's offset whether or not the
// old record is still there (as upstream's does), so a release must keep
// what the handles clients may still send name (pins.go).
func (s *sim) mayRenew() bool {
	if s.cfg.Faults.Renew != (RenewSpec{}) || s.opts.renews {
		return true
	}
	for _, c := range s.cfg.Consumers {
		if c.Outcomes.Nacks() {
			return true
		}
		if set, ok := c.Settings.(*SimpleSettings); ok && set.AutoRenew {
			return true
		}
	}
	return false
}

// neverRestarts reports that the broker never restarts or stops, by its
// fault clocks, a fault schedule or a script: what the checkpoint path's
// revive topic needs to be freed below its revive offsets
// (pop.Broker.ReleaseRevive), as a restart resumes from the persisted
// ones.
func (s *sim) neverRestarts() bool {
	f := &s.cfg.Faults
	return !s.opts.restarts && f.BrokerRestart.Every == 0 && f.BrokerStop.Every == 0
}

// releaseFloor is the lowest offset, per queue of topic on this broker, a
// renewal may still carry (nil: the run renews nothing).
func (a *rocketMQ) releaseFloor(topic string) []int64 {
	if a.s.pins == nil {
		return nil
	}
	a.floor = a.s.pins.floor(a.idx, topic, a.floor)
	return a.floor
}

// releaseList groups the adapter's groups by topic, in first-seen order.
func releaseList(gs []rmqGroup) []topicGroups {
	var out []topicGroups
	for _, g := range gs {
		i := slices.IndexFunc(out, func(t topicGroups) bool { return t.topic == g.topic })
		if i < 0 {
			out, i = append(out, topicGroups{topic: g.topic}), len(out)
		}
		out[i].groups = append(out[i].groups, g.name)
	}
	return out
}

// rocketMQ is the run's engine as the RocketMQ adapter: RocketMQ's client
// kinds (pop-push, simple, pull) need it.
func (s *sim) rocketMQ(b int32) *rocketMQ {
	switch a := s.eng.(type) {
	case *rocketMQ:
		return a
	case *rocketCluster:
		return a.bs[b]
	}
	panic("sim: a RocketMQ client on another engine")
}

// emit traces an engine event at now, its queue in the cluster's numbers.
func (a *rocketMQ) emit(now clock.Time, e model.Event) {
	t := a.s.tr
	t.cur = e // see emitCur
	a.rt.traced(a.idx, &t.cur)
	t.emitCur(now)
}

// event clears the tracer's scratch slot for an event of kind k and
// returns it, for the four events of nearly every request (produce, lease,
// acked, parked) to be written in place and traced by emitEvent: emit's
// 160-byte argument costs a copy into the call and another into the slot.
// Nothing may be traced between the two calls.
func (a *rocketMQ) event(k model.EventKind) *model.Event {
	e := &a.s.tr.cur
	*e = model.Event{Kind: k}
	return e
}

// emitEvent traces the event written in place (event) at now, as emit.
func (a *rocketMQ) emitEvent(now clock.Time) {
	t := a.s.tr
	a.rt.traced(a.idx, &t.cur)
	t.emitCur(now)
}

// arm asks for one of the broker's timers.
func (a *rocketMQ) arm(out *Outcome, timer int32, t clock.Time) { out.arm(a.tbase+timer, t) }

// Start starts the broker's clock and arms the periodic work of its path.
// The checkpoint path's work is re-armed after every call (armCheckpoint),
// since a pop, an ack or a put may bring it forward.
func (a *rocketMQ) Start(now clock.Time, out *Outcome) {
	if a.ck {
		a.checkpoint(now, out) // the broker's clock starts here
		return
	}
	a.arm(out, rmqRevive, now.Add(pop.ReviveIdleInterval*clock.Millisecond))
	if a.cache {
		a.arm(out, rmqCacheCleanup, now.Add(pop.CacheCleanupInterval*clock.Millisecond))
	}
}

// armCheckpoint asks for CheckpointTick when the broker next has
// checkpoint-path work (an earlier arming stands). It is called after
// every request and put, so the KV path's test is inlined at each.
func (a *rocketMQ) armCheckpoint(out *Outcome) {
	if a.ck {
		a.armCheckpointTick(out)
	}
}

// armCheckpointTick is armCheckpoint on the checkpoint path.
func (a *rocketMQ) armCheckpointTick(out *Outcome) {
	if t, ok := a.b.NextCheckpointTick(); ok {
		a.arm(out, rmqCheckpoint, t)
	}
}

func (a *rocketMQ) SetFaults(f EngineFaults) {
	if err := a.b.SetFaults(pop.Faults{Seed: f.Seed + uint64(a.idx), RetryWritePPM: f.RedeliveryWritePPM, ReviveReadPPM: f.RedeliveryReadPPM, LockBusyPPM: f.LockBusyPPM}); err != nil {
		panic("sim: setting the broker's faults: " + err.Error())
	}
	a.lockFaults = f.LockBusyPPM > 0
}

// lockBusy is the broker's count of pops that found their lock busy, 0
// while no fault can make it grow (lockFaults).
func (a *rocketMQ) lockBusy() int64 {
	if !a.lockFaults {
		return 0
	}
	return a.b.Stats().LockBusy
}

func (a *rocketMQ) CheckInvariants() error { return a.b.CheckInvariants() }

// SettleTime: with the cache on, the fixed commit offset (apache/rocketmq
// #10949 fixed) reaches the end of a drained queue at the next cache
// cleanup, up to CacheCleanupInterval after the last ack.
func (a *rocketMQ) SettleTime() clock.Duration {
	if a.cache {
		return pop.CacheCleanupInterval*clock.Millisecond + clock.Millisecond
	}
	return 0
}

// Store puts a produced message; arrivals wake parked pops and held pulls.
// storesCopies: the broker writes a deep copy of a put message into its
// log (pop.Broker.PutInto), never the pointer.
func (*rocketMQ) storesCopies() bool { return true }

func (a *rocketMQ) Store(now clock.Time, producer int32, m *model.Message, out *Outcome) bool {
	res := pop.PutResult{Woken: a.woken}
	a.woken = nil // a re-entrant Store must not reuse what this one reads
	a.b.PutInto(now, m, &res)
	if res.Code != model.Success {
		a.woken = res.Woken[:0]
		a.emit(now, model.Event{Kind: model.EvProduceFailed, Client: producer, Msg: m.ID, Code: int32(res.Code)})
		return false
	}
	e := a.event(model.EvProduce)
	e.Client, e.Msg, e.Topic, e.Queue, e.Offset = producer, m.ID, m.Topic, m.QueueID, res.Offset
	a.emitEvent(now)
	a.armOrder(out)
	a.wake(now, res.Woken, out)
	a.wakePulls(now, res.PullWoken, out)
	if len(a.holds) > 0 {
		a.armHoldCheck(out) // a message no hold's filter matched makes holds due at the next check
	}
	a.armCheckpoint(out)
	a.woken = res.Woken[:0] // its own list again, once nothing reads it (no defer: a panic ends the run)
	return true
}

func (a *rocketMQ) Serve(now clock.Time, r Request, out *Outcome) {
	switch r := r.(type) {
	case *popReq:
		livePop(r, "the engine")
		a.pop(now, r, out)
	case *receiveReq:
		r.pop.BornTime = now // the proxy's clock stamps it as it reaches the proxy (local mode: the broker's)
		a.receive(now, r, out)
	case *ackReq:
		a.ack(now, r, out)
	case *batchAckReq:
		a.batchAck(now, r, out)
	case *changeReq:
		a.change(now, r, out)
	case *pullReq:
		a.pull(now, r, out)
	case *offsetQuery:
		r.res = a.b.QueryConsumerOffset(&r.req)
	case *offsetCommit:
		r.res = a.b.UpdateConsumerOffset(&r.req)
	case *sendBack:
		a.sendBack(now, r, out)
	case *assignQuery:
		r.res = a.queryAssignment(&r.req)
	default:
		panic("sim: a request the RocketMQ engine does not serve")
	}
	a.armCheckpoint(out)
	a.armOrder(out) // after every request; not deferred, which cost more than the call (a panic ends the run)
}

// Requests of RocketMQ's clients. Each carries the broker's request and
// the broker's answer.

// popReq is the push consumer's pop. The client reuses it once it has
// taken its answer (pushConsumer.recyclePop): the messages it holds are
// copies, so nothing refers to an answered pop any more.
type popReq struct {
	reqBase
	req    pop.PopRequest
	res    pop.PopResult
	parked bool // the broker parked it at least once (traced once)
	// used is the most messages an answer of it held: how far its
	// answer's message slots were written (recyclePop clears them).
	used int
	// freed: the client recycled it. With the invariants build tag a
	// recycled pop is never reused and any later use of it panics
	// (livePop), so a premature recycle shows.
	freed bool
	// Room for the common answer, one message read by one stage (res
	// starts on it), so that a new pop's first answer costs no allocation
	// of its own; a reused pop keeps whatever storage its earlier answers
	// grew.
	msgRoom   [1]pop.PoppedMessage
	stageRoom [1]pop.PopStage
}

// livePop panics, with the invariants build tag, when r was recycled:
// something still used it after its client let it go.
func livePop(r *popReq, where string) {
	if invariantsOn && r.freed {
		panic("sim: a recycled pop request used by " + where)
	}
}

// receiveReq is the simple consumer's receive, through its proxy.
type receiveReq struct {
	reqBase
	px          *proxy.Proxy
	maxAttempts int32
	pop         pop.PopRequest
	res         proxy.ReceiveResult
	parked      bool
}

// ackReq is an ack, fire and forget; recycled once served.
type ackReq struct {
	reqBase
	req         pop.AckRequest
	msg         model.MsgID
	lease       model.LeaseID
	deliveredAt clock.Time
}

// changeReq is a renewal (changeInvisibleTime).
type changeReq struct {
	reqBase
	req   pop.ChangeInvisibleTimeRequest
	res   pop.ChangeInvisibleTimeResult
	h     *popHeld // the message, when its client holds it
	msg   model.MsgID
	lease model.LeaseID
	why   changePurpose
	// keepDeadline: renew for exactly the time the lease has left when the
	// request reaches the engine (the injected same-deadline edge).
	keepDeadline bool
	// renewal: the proxy's managed registration the handle came from (the
	// auto-renewal's id for changeRenew; 0 when the client's own handle).
	renewal uint64
	pin     int32 // its handle's pin until the engine has it (pins.go)
}

// pullReq is the Pull baseline's pull.
type pullReq struct {
	reqBase
	pq     *pullQueue
	gen    uint32
	offset int64
	req    pop.PullRequest
	res    pop.PullResult
}

// Requests served in place, without the network.
type (
	offsetQuery struct {
		syncReq
		req pop.QueryConsumerOffsetRequest
		res pop.QueryConsumerOffsetResult
	}
	offsetCommit struct {
		syncReq
		req pop.UpdateConsumerOffsetRequest
		res pop.UpdateConsumerOffsetResult
	}
	// sendBack writes a consumer's message to its DLQ topic (created with
	// one queue on first use).
	sendBack struct {
		syncReq
		group string
		msg   *model.Message
		res   pop.PutResult
	}
)

// syncReq is the common part of a request served in place: it is never
// lost.
type syncReq struct{ reqBase }

func (*syncReq) lost(*model.Event, model.Reason) bool { return false }

func (r *popReq) lost(e *model.Event, why model.Reason) bool {
	livePop(r, "a loss")
	lostReceive(e, why, len(r.res.Messages))
	return true
}

func (r *receiveReq) lost(e *model.Event, why model.Reason) bool {
	lostReceive(e, why, len(r.res.Pop.Messages))
	return true
}

// lostReceive is a receive's loss: the messages its answer carried (none
// when the request itself was lost).
func lostReceive(e *model.Event, why model.Reason, n int) {
	e.Kind, e.Reason = model.EvReceiveLost, why
	if why != model.RRequest && why != model.RTimeout {
		e.Count = int32(n)
	}
}

func (r *ackReq) lost(e *model.Event, why model.Reason) bool {
	e.Kind, e.Msg, e.Lease = model.EvAckLost, r.msg, r.lease
	if why == model.RResponse {
		e.Kind = model.EvAckResponseLost
	} else {
		e.Reason = why
	}
	return true
}

func (r *changeReq) lost(e *model.Event, why model.Reason) bool {
	e.Kind, e.Msg, e.Lease, e.Reason = model.EvRenewLost, r.msg, r.lease, why
	return true
}

// lost: the Pull baseline traces no lost pull; the Pull side of a
// broker-assigned push consumer traces it as a pull with the loss's
// reason and the messages its answer carried (the broker read them and
// moved the pull offset past them: the KV path's pops start there).
func (r *pullReq) lost(e *model.Event, why model.Reason) bool {
	if !r.pq.p.assigned {
		return false
	}
	e.Kind, e.Reason = model.EvPull, why
	e.Topic, e.Queue, e.Offset = r.pq.p.c.g.topic, r.pq.q, r.offset
	if why != model.RRequest && why != model.RTimeout {
		e.Count = int32(len(r.res.Messages))
	}
	return true
}

// takeAck returns an ack the engine has served, as it was, or a new one,
// for fillAck to write every field of but its request, which the caller
// writes whole (a recycled ack keeps what its last use left: clearing its
// 200 bytes cost more than writing them).
func (s *sim) takeAck() *ackReq {
	if r := takeFree(&s.freeAcks); r != nil {
		return r
	}
	return new(ackReq)
}

// fillAck writes every field of r but its request: an ack of held
// message h under lease, sent with handle.
func (s *sim) fillAck(r *ackReq, h *popHeld, handle *model.ReceiptHandle, lease model.LeaseID) {
	// every field set one by one, without a literal's temporary and its
	// copy
	r.msg, r.lease, r.deliveredAt = h.msg.ID, lease, h.deliveredAt
	r.reqBase = reqBase{c: h.c, epoch: h.c.epoch, loss: lossAck, broker: s.rt.brokerOf(handle.BrokerName)}
}

// recycle keeps r, as it is, for takeAck: nothing refers to an ack the
// engine served.
func (r *ackReq) recycle(s *sim) { s.freeAcks = append(s.freeAcks, r) }

// pop serves a push consumer's pop (or re-runs it after a wakeup).
func (a *rocketMQ) pop(now clock.Time, r *popReq, out *Outcome) {
	res := &r.res
	busy := a.lockBusy()
	a.b.Pop(now, &r.req, res)
	r.used = max(r.used, len(res.Messages)) // a call only appends to its answer's messages
	a.tracePopLapses(now, res)
	a.traceLeases(now, r.c, r.req.ConsumerGroup, res)
	a.wake(now, res.Woken, out)
	if a.parked(now, r, &r.req, res, &r.parked, a.lockBusy() > busy, out) {
		return
	}
	out.answered(r)
}

// receive serves a simple consumer's receive: the pop, the re-runs it
// wakes, then the proxy's result filter.
func (a *rocketMQ) receive(now clock.Time, r *receiveReq, out *Outcome) {
	res := &r.res.Pop
	busy := a.lockBusy()
	a.b.Pop(now, &r.pop, res)
	a.tracePopLapses(now, res)
	a.traceLeases(now, r.c, r.pop.ConsumerGroup, res)
	a.wake(now, res.Woken, out)
	if a.parked(now, r, &r.pop, res, &r.parked, a.lockBusy() > busy, out) {
		return
	}
	r.px.Filter(now, r.pop.ConsumerGroup, r.maxAttempts, &r.res)
	for i := range r.res.Forwarded {
		a.forwarded(now, r.c, &r.res.Forwarded[i], out)
	}
	out.answered(r)
}

// parked handles a pop the broker parked for long polling: it waits in
// polls for its wakeup, traced once.
func (a *rocketMQ) parked(now clock.Time, r Request, req *pop.PopRequest, res *pop.PopResult, traced *bool, lockBusy bool, out *Outcome) bool {
	if res.Status != pop.PopSuspended {
		return false
	}
	a.park(now, r, req, res, traced, lockBusy, out)
	return true
}

// park is parked for a pop the broker parked.
func (a *rocketMQ) park(now clock.Time, r Request, req *pop.PopRequest, res *pop.PopResult, traced *bool, lockBusy bool, out *Outcome) {
	a.polls.put(res.PollID, r)
	a.armPollTick(out)
	if !*traced || lockBusy { // a lock-busy park is traced every time: a concurrent request held the lock
		*traced = true
		a.traceParked(now, r.base().c.idx, req, lockBusy)
	}
}

// traceParked traces a parked pop of client c. With several brokers an
// all-queue pop waits on its broker's queues only, so it is traced as
// parked on each of them (one receive parked on several queues, as a Kafka
// share fetch on its partitions): an arrival on another broker owes it
// nothing.
func (a *rocketMQ) traceParked(now clock.Time, c int32, req *pop.PopRequest, lockBusy bool) {
	var why model.Reason
	if lockBusy {
		why = model.RLockBusy
	}
	if !a.rt.multi() || req.QueueID >= 0 {
		e := a.event(model.EvParked)
		e.Client, e.Topic, e.Queue, e.Deadline, e.Reason = c, req.Topic, req.QueueID, req.BornTime.Add(req.PollTime), why
		a.emitEvent(now)
		return
	}
	e := model.Event{Kind: model.EvParked, Client: c, Topic: req.Topic, Deadline: req.BornTime.Add(req.PollTime), Reason: why}
	for q := range a.rt.per[e.Topic] {
		e.Queue = q
		a.emit(now, e)
	}
}

// traceLeases traces the leases a pop granted and the leases its writes
// overwrote.
func (a *rocketMQ) traceLeases(now clock.Time, c *consumer, group string, res *pop.PopResult) {
	if len(res.Messages) > 0 || len(res.Replaced) > 0 { // half the pops find nothing and park
		a.traceGranted(now, c, group, res)
	}
}

// traceGranted is traceLeases for a pop that granted or overwrote leases.
func (a *rocketMQ) traceGranted(now clock.Time, c *consumer, group string, res *pop.PopResult) {
	for i := range res.Messages {
		m := &res.Messages[i]
		e := a.event(model.EvLease)
		e.Client, e.Msg, e.Lease = c.idx, m.Message.ID, m.Lease
		e.Topic, e.Queue, e.Offset = livesIn(m, group), m.Handle.QueueID, m.Handle.QueueOffset
		e.Attempt, e.Deadline = m.Message.ReconsumeTimes, m.Deadline
		a.emitEvent(now)
	}
	for _, l := range res.Replaced {
		a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Lease: l, Reason: model.RReplaced})
	}
}

// livesIn is the topic a popped message lives in: the retry topic its
// handle names for a retry message shown under its original topic, the
// topic it was shown under otherwise (a retry topic's own name too, when
// the #11195 bug leaks it): the broker's RealTopic, built only for a
// message the broker did not fill it in (a test's). The broker's is
// taken inlined, at the two calls of every delivery.
func livesIn(m *pop.PoppedMessage, group string) string {
	if m.RealTopic != "" {
		return m.RealTopic
	}
	return builtLivesIn(m, group)
}

// builtLivesIn is livesIn for a message the broker did not fill in. Not
// inlined: inside livesIn it would put livesIn over the inlining budget.
//
//go:noinline
func builtLivesIn(m *pop.PoppedMessage, group string) string {
	if model.IsRetryTopic(m.Message.Topic) {
		return m.Message.Topic
	}
	return m.Handle.RealTopic(m.Message.Topic, group)
}

// forwarded traces a message the proxy sent to the DLQ instead of
// returning it, or acked because its group does not subscribe to its tag
// (NO_MATCH): the send-back or the drop, then the proxy's ack of the
// original.
func (a *rocketMQ) forwarded(now clock.Time, c *consumer, f *proxy.Forwarded, out *Outcome) {
	// The proxy took the lease for the client: a delivery to the meter.
	a.s.meter.delivered(c.g, f.Msg, now)
	if f.Put.Code != model.Success {
		return // the lease runs out and the message comes back
	}
	if f.NoMatch {
		a.s.noMatch(now, c, f.Msg, f.Lease)
	} else {
		a.wake(now, f.Put.Woken, out)
		a.wakePulls(now, f.Put.PullWoken, out)
		a.s.cov.hit("dlq")
		a.emit(now, model.Event{Kind: model.EvDLQ, Client: c.idx, Msg: f.Msg, Lease: f.Lease, Topic: f.DLQTopic, Queue: 0, Offset: f.Put.Offset, Attempt: f.ReconsumeTimes})
		a.s.meter.finish(c.g, f.Msg)
	}
	a.emit(now, model.Event{Kind: model.EvAck, Client: c.idx, Msg: f.Msg, Lease: f.Lease})
	a.traceLapses(now, f.Ack.Lapsed, 0)
	a.emit(now, model.Event{Kind: model.EvAcked, Client: c.idx, Msg: f.Msg, Lease: f.Lease, Ended: ackEnded(&f.Ack), Code: int32(f.Ack.Code)})
	a.wake(now, f.Ack.Woken, out)
}

// tracePopLapses traces the FIFO leases that lapsed in a pop call and the
// ones its pending admin reset cleared, before the leases it granted.
func (a *rocketMQ) tracePopLapses(now clock.Time, res *pop.PopResult) {
	if len(res.Lapsed) > 0 || len(res.Cleared) > 0 { // FIFO groups' only
		a.tracePopLapsed(now, res)
	}
}

// tracePopLapsed is tracePopLapses for a pop with lapses.
func (a *rocketMQ) tracePopLapsed(now clock.Time, res *pop.PopResult) {
	a.traceLapses(now, res.Lapsed, 0)
	for _, l := range res.Cleared {
		a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Lease: l, Reason: model.RReset})
	}
}

// traceLapses traces FIFO leases that ended in place: their queue stopped
// blocking (or a re-entrant retry took it over: r=reattempt). A lapse of
// lease skip is left out (the caller traces it after its answer).
func (a *rocketMQ) traceLapses(now clock.Time, ls []pop.Lapse, skip model.LeaseID) {
	if len(ls) > 0 { // FIFO groups' only: the test inlined at every call
		a.traceLapsed(now, ls, skip)
	}
}

// traceLapsed is traceLapses for some lapses.
func (a *rocketMQ) traceLapsed(now clock.Time, ls []pop.Lapse, skip model.LeaseID) {
	for i := range ls {
		l := &ls[i]
		if l.Lease == skip {
			continue
		}
		e := model.Event{Kind: model.EvLapse, Client: -1, Msg: l.Msg, Lease: l.Lease}
		if l.Reattempt {
			e.Reason = model.RReattempt
		}
		a.s.cov.hit("lapse")
		a.emit(now, e)
	}
}

// orderlyPast: an orderly ack that ended no lease but that the commit
// offset has passed (the broker lost its order state in a restart, or a
// later lease of the message was acked first): the message is done.
func (a *rocketMQ) orderlyPast(req *pop.AckRequest, code model.ResponseCode) bool {
	return code == model.Success && req.Handle.ReviveQueueID == model.PopOrderReviveQueue &&
		a.b.ConsumerOffsets(req.ConsumerGroup, req.Topic, req.QueueID).Commit > req.Offset
}

// armOrder arms the orderly timer at the engine's next OrderTick: after
// every call, since pops, acks, renewals and the table's flushes move it
// (a broker without orderly state, pop.Broker.OrderIdle, has none: most
// runs have no FIFO group).
func (a *rocketMQ) armOrder(out *Outcome) {
	if !a.b.OrderIdle() {
		a.armOrderTick(out)
	}
}

// armOrderTick is armOrder for a broker with orderly state.
func (a *rocketMQ) armOrderTick(out *Outcome) {
	if t, ok := a.b.NextOrderTick(); ok {
		a.arm(out, rmqOrder, t)
	}
}

// wake re-runs woken parked pops once the call that woke them has
// returned (RocketMQ resubmits them to the pull executor). ws belongs to a
// result no re-run writes into, so its elements can be referenced.
func (a *rocketMQ) wake(now clock.Time, ws []pop.Wakeup, out *Outcome) {
	if len(ws) > 0 { // most calls wake none: the test inlined at every call
		a.rerun(now, ws, out)
	}
}

// rerun is wake for some woken pops.
func (a *rocketMQ) rerun(now clock.Time, ws []pop.Wakeup, out *Outcome) {
	for i := range ws {
		w := &ws[i]
		r := a.polls.take(w.ID)
		if r == nil {
			continue // dropped by a crash (Disconnect) or a broker restart
		}
		switch r := r.(type) {
		case *popReq:
			livePop(r, "a wakeup")
			adoptParked(&r.req, &w.Request)
			a.pop(now, r, out)
		case *receiveReq:
			adoptParked(&r.pop, &w.Request)
			a.receive(now, r, out)
		}
	}
}

// adoptParked makes a woken request q the broker's copy of it, w
// (pop.Wakeup.Request): q's own fields but for BornTime, defaulted at its
// first arrival, and a negative QueueID made -1, so only those two are
// copied (the whole request is 150 bytes, six of its fields strings).
// Nothing writes a request while it is parked.
func adoptParked(q, w *pop.PopRequest) {
	q.BornTime, q.QueueID = w.BornTime, w.QueueID
	if invariantsOn && *q != *w {
		panic(fmt.Sprintf("sim: a woken request %+v is not the one parked, %+v", *q, *w))
	}
}

// wakePulls re-runs held pulls the broker handed back
// (executeRequestWhenWakeup) and answers them.
func (a *rocketMQ) wakePulls(now clock.Time, ws []pop.PullWakeup, out *Outcome) {
	if len(ws) > 0 { // a Pull consumer's only
		a.rerunPulls(now, ws, out)
	}
}

// rerunPulls is wakePulls for some woken pulls.
func (a *rocketMQ) rerunPulls(now clock.Time, ws []pop.PullWakeup, out *Outcome) {
	for i := range ws {
		r := a.holds[ws[i].ID]
		if r == nil {
			continue // dropped by a broker restart
		}
		delete(a.holds, ws[i].ID)
		a.b.RerunPull(now, &ws[i].Request, &r.res)
		out.answered(r)
	}
}

func (a *rocketMQ) armPollTick(out *Outcome) {
	if t, ok := a.b.NextPollExpiry(); ok {
		a.arm(out, rmqPollExpiry, t)
	}
}

func (a *rocketMQ) armHoldCheck(out *Outcome) {
	if t, ok := a.b.NextHoldCheck(); ok {
		a.arm(out, rmqHoldCheck, t)
	}
}

// ack serves an ack; its clients ignore the answer, so only the answer's
// loss matters to them.
func (a *rocketMQ) ack(now clock.Time, r *ackReq, out *Outcome) {
	a.ackRequests++
	res := a.b.Ack(now, &r.req)
	a.traceLapses(now, res.Lapsed, 0)
	ended := ackEnded(&res)
	e := a.event(model.EvAcked)
	e.Client, e.Msg, e.Lease, e.Ended, e.Code = r.c.idx, r.msg, r.lease, ended, int32(res.Code)
	a.emitEvent(now)
	if len(a.selfEnded) > 0 && a.endedSelf(r.lease, res.Code) { // the checkpoint path's only
		ended = r.lease
	}
	if ended != 0 || a.orderlyPast(&r.req, res.Code) {
		a.s.meter.acked(r.c.g, r.msg, r.deliveredAt, now)
	}
	a.wake(now, res.Woken, out)
	out.answered(r)
}

// endedSelf reports whether a successful ack of lease is one of a lease
// its renewal ended at once (selfEnded), and forgets it.
func (a *rocketMQ) endedSelf(lease model.LeaseID, code model.ResponseCode) bool {
	if _, self := a.selfEnded[lease]; self && code == model.Success {
		delete(a.selfEnded, lease)
		return true
	}
	return false
}

// ackEnded is the lease an ack ended, as the trace names it (Ended): the
// record it deleted (KV) or the lease it ended in the checkpoint buffer
// (Removed), or the lease of the ack message it wrote, which the engine
// promises to skip when a revive round pairs it with its checkpoint
// (Pending). docs/trace.md, "RocketMQ's two paths".
func ackEnded(r *pop.AckResult) model.LeaseID {
	if r.Removed != 0 {
		return r.Removed
	}
	return r.Pending
}

// change serves a renewal.
func (a *rocketMQ) change(now clock.Time, r *changeReq, out *Outcome) {
	if r.keepDeadline {
		// Ask for exactly the time left, so the new record's deadline
		// equals the old one (apache/rocketmq#10276).
		left := max(r.req.Handle.NextVisibleTime()-now.Millis(), 0)
		r.req.InvisibleTime = clock.MillisDuration(left)
	}
	r.res = a.b.ChangeInvisibleTime(now, &r.req)
	a.s.pins.drop(&r.pin)
	res := &r.res
	a.traceLapses(now, res.Lapsed, res.Lease)
	// A renewal that keeps its deadline writes the new record over the old
	// one: the lease it renews is the one it removed. On the checkpoint
	// path the old lease's ack may be pending, as an ack's.
	ended, replaced := res.Removed, res.Replaced
	if ended == 0 {
		ended = res.Pending
	}
	if ended == 0 && replaced == r.lease {
		ended, replaced = replaced, 0
	}
	e := model.Event{Kind: model.EvRenewed, Client: r.c.idx, Msg: r.msg, Lease: r.lease, Ended: ended, Code: int32(res.Code),
		Topic: r.req.Topic, Queue: r.req.QueueID, Offset: r.req.Offset}
	if res.Code == model.Success && res.Lease != 0 {
		e.Next, e.Deadline = res.Lease, res.Deadline
		if res.Pending != 0 && res.Pending == res.Lease {
			if a.selfEnded == nil {
				a.selfEnded = map[model.LeaseID]struct{}{}
			}
			a.selfEnded[res.Lease] = struct{}{}
		}
	}
	a.emit(now, e)
	if replaced != 0 {
		a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Msg: r.msg, Lease: replaced, Next: res.Lease, Reason: model.RReplaced})
	}
	for i := range res.Lapsed {
		if l := &res.Lapsed[i]; l.Lease == res.Lease && l.Lease != 0 {
			a.traceLapses(now, res.Lapsed[i:i+1], 0) // a renewal to now lapses its own lease at once
		}
	}
	out.answered(r)
}

// pull serves a pull; one that finds nothing is held until an arrival or
// the hold check hands it back.
func (a *rocketMQ) pull(now clock.Time, r *pullReq, out *Outcome) {
	a.b.Pull(now, &r.req, &r.res)
	if r.res.Status == pop.PullSuspended {
		a.holds[r.res.HoldID] = r
		a.armHoldCheck(out)
		return
	}
	out.answered(r)
}

// sendBack writes a message to a DLQ topic, creating it with one queue on
// first use, as the broker does on the first send-back.
func (a *rocketMQ) sendBack(now clock.Time, r *sendBack, out *Outcome) {
	if a.b.MaxOffset(r.msg.Topic, 0) < 0 {
		if err := a.b.CreateTopic(pop.TopicConfig{Name: r.msg.Topic, ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
			panic("sim: cannot create the DLQ topic: " + err.Error())
		}
	}
	r.res = a.b.Put(now, r.msg)
	a.wake(now, r.res.Woken, out)
	a.wakePulls(now, r.res.PullWoken, out)
}

// Tick runs one of the broker's periodic jobs.
func (a *rocketMQ) Tick(now clock.Time, timer int32, out *Outcome) {
	defer a.armOrder(out)
	switch timer {
	case rmqOrder:
		r := a.b.OrderTick(now)
		a.traceLapses(now, r.Lapsed, 0)
		a.wake(now, r.Woken, out)
	case rmqRevive:
		a.revive(now, out)
	case rmqCacheCleanup:
		a.cacheCleanup(now, out)
	case rmqPollExpiry:
		a.wake(now, a.b.PollTick(now), out)
		a.armPollTick(out)
	case rmqHoldCheck:
		a.wakePulls(now, a.b.CheckHoldRequest(now), out)
		a.armHoldCheck(out)
	case rmqCheckpoint:
		a.checkpoint(now, out)
		return
	}
	a.armCheckpoint(out)
}

// checkpoint runs the checkpoint path's periodic work due by now (the
// timer, the buffer's scans, the revive rounds) and re-arms it.
func (a *rocketMQ) checkpoint(now clock.Time, out *Outcome) {
	r := a.b.CheckpointTick(now)
	a.tracePutFailures(now, r.Failures)
	a.traceRevivals(now, r.Revivals)
	a.wake(now, r.Woken, out)
	a.wakePulls(now, r.PullWoken, out)
	if a.releaseRevive && now >= a.releasedAt.Add(clock.Duration(pop.ReviveIdleInterval)*clock.Millisecond) {
		a.releasedAt = now // at most once per ReviveIdleInterval, as on the KV path
		a.released += a.b.ReleaseRevive()
	}
	a.armCheckpoint(out)
}

// revive is one pass of the KV revive loop, every ReviveIdleInterval or at
// once after a full page.
func (a *rocketMQ) revive(now clock.Time, out *Outcome) {
	r := a.b.Revive(now)
	a.tracePutFailures(now, r.Failures)
	a.traceRevivals(now, r.Revivals)
	a.wake(now, r.Woken, out)
	a.wakePulls(now, r.PullWoken, out)
	next := clock.Duration(pop.ReviveIdleInterval) * clock.Millisecond
	if a.release != nil && now >= a.releasedAt.Add(next) {
		// At most once per idle interval: back-to-back rounds (full
		// pages) would repeat its scan of the in-flight records.
		a.releasedAt = now
		for _, t := range a.release {
			a.released += a.b.ReleaseConsumed(t.topic, t.groups, a.releaseFloor(t.topic))
		}
	}
	if r.FullPage {
		next = 0
	}
	a.arm(out, rmqRevive, now.Add(next))
}

func (a *rocketMQ) cacheCleanup(now clock.Time, out *Outcome) {
	r := a.b.CleanupCache(now)
	a.tracePutFailures(now, r.Failures)
	if r.Flushed > 0 {
		a.emit(now, model.Event{Kind: model.EvCacheFlush, Client: -1, Count: int32(r.Flushed)})
	}
	a.traceRevivals(now, r.Revives)
	a.wake(now, r.Woken, out)
	a.wakePulls(now, r.PullWoken, out)
	a.arm(out, rmqCacheCleanup, now.Add(pop.CacheCleanupInterval*clock.Millisecond))
}

// traceRevivals traces what revive did to each lease. A checkpoint-path
// lease paired with its ack message (ReviveAcked) writes nothing: the
// ack's answer already named it ended. One whose ack message a round cut
// off at reviveScanTime (by design, default settings) is reopened first,
// so that its revive is a named redelivery (revive_cut_off); one whose ack
// message the round missed otherwise is left as it is: by default the
// engine names no such lease pending, so its revive is the checker's catch
// (the #3787 switch).
func (a *rocketMQ) traceRevivals(now clock.Time, rs []pop.Revival) {
	for i := range rs {
		rv := &rs[i]
		e := model.Event{Client: -1, Msg: rv.Msg, Lease: rv.Lease}
		if rv.Outcome == pop.ReviveAcked {
			continue
		}
		if rv.Unpaired == pop.AckCutOff {
			a.s.cov.hit("ack-cut-off")
			r := &rv.Record
			a.emit(now, model.Event{Kind: model.EvLeaseReopened, Client: -1, Group: r.GroupID, Msg: rv.Msg, Lease: rv.Lease,
				Topic: r.TopicID, Queue: r.QueueID, Offset: r.Offset, Deadline: rv.Deadline, Reason: model.RAckCutOff})
		}
		switch rv.Outcome {
		case pop.ReviveLost:
			e.Kind, e.Reason = model.EvLeaseLost, model.RReplaced
		case pop.Revived:
			cp := rv.Copy
			e.Kind, e.Topic, e.Queue, e.Offset, e.Attempt = model.EvRevive, cp.Topic, cp.QueueID, cp.Offset, rv.CopyReconsumeTimes
			a.s.meter.revived(now.Sub(rv.Deadline), rv.Deadline)
		case pop.ReviveSkipped:
			e.Kind = model.EvReviveSkipped
		case pop.ReviveRetried:
			e.Kind, e.Next, e.Deadline = model.EvReviveRetried, rv.NewLease, rv.NextDeadline
			a.s.cov.hit("revive-retried")
		case pop.ReviveDropped:
			e.Kind = model.EvReviveDropped
			a.s.cov.hit("revive-dropped")
		}
		a.emit(now, e)
		if rv.Replaced != 0 {
			a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Msg: rv.Msg, Lease: rv.Replaced, Next: rv.NewLease, Reason: model.RReplaced})
		}
	}
}

// tracePutFailures traces the retry-topic writes the broker's faults
// failed during the call that just returned (revive or cache cleanup).
func (a *rocketMQ) tracePutFailures(now clock.Time, fs []pop.WriteFailure) {
	for i := range fs {
		a.s.cov.hit("revive-put-failure")
		a.emit(now, model.Event{Kind: model.EvPutFailure, Client: -1, Topic: fs[i].Topic, Queue: fs[i].QueueID})
	}
}

// Disconnect drops a crashed client's parked pops; its held pulls stay
// (upstream re-runs them; only the answer is lost).
func (a *rocketMQ) Disconnect(now clock.Time, c *consumer, out *Outcome) {
	a.polls.deleteIf(func(r Request) bool { return r.base().c == c })
	a.b.Disconnect(c.clientID)
}

// Stop stops the broker gracefully and starts it again
// (BrokerController.shutdown, then a start): the long-polling service's
// shutdown wakes every parked pop, re-run and answered now (messages, or
// POLLING_TIMEOUT at once since nothing parks any more), the commit
// offsets are persisted, and the broker restarts as Restart does (cache or
// buffer and held pulls lost).
func (a *rocketMQ) Stop(now clock.Time, out *Outcome) {
	a.wake(now, a.b.StopPolling(now), out)
	a.b.FlushConsumerOffsets(now)
	a.restart(now, out)
}

// Restart restarts the broker: its cache (KV) or buffer (checkpoint),
// parked pops and held pulls are lost, never answered (their clients time
// out). On the checkpoint path the merged acks the buffer had not written
// are lost too: their leases are live again (lease-reopened), and their
// durable checkpoints will revive them.
func (a *rocketMQ) Restart(now clock.Time, out *Outcome) {
	a.restart(now, out)
}

func (a *rocketMQ) restart(now clock.Time, out *Outcome) {
	defer a.armOrder(out)
	// The simulator's broker restart keeps every commit offset (as a
	// graceful stop persists them); a crash that loses the last
	// flushConsumerOffsetInterval of commits is the engine's Restart alone
	// (pop/testdata/script/offsets_flush.txt), not simulated yet.
	a.b.FlushConsumerOffsets(now)
	r := a.b.Restart(now)
	a.traceLapses(now, r.Lapsed, 0)
	for _, l := range r.LostLeases {
		a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Lease: l, Reason: model.RRestart})
	}
	a.traceReopened(now, r.ReopenedLeases)
	for _, w := range r.DroppedPolls {
		a.polls.del(w.ID)
		a.s.cov.hit("dropped-polls")
	}
	for _, w := range r.DroppedPulls {
		delete(a.holds, w.ID)
	}
	a.emit(now, model.Event{Kind: model.EvBrokerRestart, Client: -1, Count: int32(len(r.DroppedPolls))})
	a.armCheckpoint(out)
}

// traceReopened traces the leases a restart reopened, with what the
// checker needs to bring back a message it had forgotten: the group, the
// place and the deadline, from the broker's snapshot (restarts are rare).
func (a *rocketMQ) traceReopened(now clock.Time, ls []model.LeaseID) {
	if len(ls) == 0 {
		return
	}
	live := a.b.State().Checkpoint.Leases // in lease order
	for _, l := range ls {
		i := sort.Search(len(live), func(i int) bool { return live[i].Lease >= l })
		if i == len(live) || live[i].Lease != l {
			panic(fmt.Sprintf("sim: the broker reopened lease %d but does not hold it", l))
		}
		x := &live[i]
		m, ok := a.b.Message(x.Topic, x.QueueID, x.Offset)
		if !ok {
			panic(fmt.Sprintf("sim: the broker reopened lease %d of a message it does not hold (%s/%d@%d)", l, x.Topic, x.QueueID, x.Offset))
		}
		a.s.cov.hit("lease-reopened")
		a.emit(now, model.Event{Kind: model.EvLeaseReopened, Client: -1, Group: x.Group, Msg: m.ID, Lease: l,
			Topic: x.Topic, Queue: x.QueueID, Offset: x.Offset, Deadline: clock.FromMillis(x.Deadline)})
	}
}

// Status reports the leases in flight and, per group, every queue of its
// topic and (for POP groups) of its retry topics that exist. A
// checkpoint-path lease whose ack message waits for its revive round is
// not in flight: the ack's answer ended it (docs/trace.md).
func (a *rocketMQ) Status(positions bool, dst []Position) (int, []Position) {
	return a.status(positions, dst[:0])
}

// status appends the broker's positions to dst.
func (a *rocketMQ) status(positions bool, dst []Position) (int, []Position) {
	if !positions {
		return a.inFlight(), dst
	}
	for _, g := range a.groups {
		dst = a.positions(g, g.topic, dst)
		if g.pull {
			continue
		}
		for _, t := range g.retry {
			if a.b.MaxOffset(t, 0) >= 0 {
				dst = a.positions(g, t, dst)
			}
		}
	}
	return a.inFlight(), dst
}

func (a *rocketMQ) inFlight() int { return a.b.InFlightCount() - a.b.PendingAckCount() }

// positions appends one group's positions on every queue of topic t: POP
// groups read at the volatile pop offset (the commit offset when there is
// none), the Pull baseline at its committed offset. The checkpoint path
// keeps no pull offset of its own: one there is a pull consumer's, left
// behind by a group switched to POP, and its pops read from the commit
// offset.
func (a *rocketMQ) positions(g rmqGroup, t string, dst []Position) []Position {
	for q := int32(0); ; q++ {
		hi := a.b.MaxOffset(t, q)
		if hi < 0 {
			return dst
		}
		o := a.b.ConsumerOffsets(g.name, t, q)
		read := o.Commit
		if !g.pull && !a.ck && o.Pull >= 0 {
			read = o.Pull
		}
		dst = append(dst, Position{Group: g.name, Topic: t, Queue: a.rt.global(a.idx, t, q), Max: hi, Consumed: read, Commit: o.Commit, Durable: o.Commit})
	}
}

// Counters are pop.Stats under their names: the broker's work (store
// writes and reads of each kind) and outcomes, for the run summary.
func (a *rocketMQ) Counters() map[string]int64 {
	st := a.b.Stats() // cheap: the broker cost model reads them around every request
	return map[string]int64{
		"popped": st.Popped, "pop_requests": st.PopRequests, "acked": st.Acked, "ack_misses": st.AckMisses,
		"changed": st.Changed, "revived": st.Revived, "revive_skipped": st.ReviveSkipped, "revive_failed": st.ReviveFailed,
		"may_be_lost": st.MayBeLost, "restarts": st.Restarts,
		"revive_paired": st.RevivePaired, "ck_re_puts": st.CkRePuts, "cks_unwritten": st.CksUnwritten, "acks_merged": st.AcksMerged,
		"read_calls": st.ReadCalls, "read_messages": st.ReadMessages, "retry_puts": st.RetryPuts,
		"record_puts": st.RecordPuts, "record_deletes": st.RecordDeletes, "record_reads": st.RecordReads,
		"ck_puts": st.CkPuts, "ack_puts": st.AckPuts, "batch_ack_puts": st.BatchAckPuts,
		"timer_deliveries": st.TimerDeliveries, "revive_reads": st.ReviveReads,
		"ack_requests": a.ackRequests, "batch_ack_requests": a.batchAckRequests,
	}
}

// popLockKey is the lock a pop takes under the broker cost model: the KV
// path locks group@topic for the whole pop (PopConsumerLockService); the
// checkpoint path locks one queue while it reads it (QueueLockManager),
// which only a pop that names its queue holds for its whole service.
func (a *rocketMQ) popLockKey(r Request) string {
	var req *pop.PopRequest
	switch r := r.(type) {
	case *popReq:
		req = &r.req
	case *receiveReq:
		req = &r.pop
	default:
		return ""
	}
	if !a.ck {
		return req.ConsumerGroup + "@" + req.Topic
	}
	if req.QueueID < 0 {
		return ""
	}
	return req.ConsumerGroup + "@" + req.Topic + "@" + itoa(int64(req.QueueID))
}
