package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// POP-mode queue assignment (docs/rocketmq/clients.md §1): a group's
// request mode, set on the broker by an admin before the run
// (GroupSpec.RequestMode, PopShareQueueNum), and the push consumer that
// takes its queues from the broker (PopPushSettings.ClientRebalance
// false). Such a consumer runs RocketMQ's RebalanceService: it asks
// QUERY_ASSIGNMENT 1 s after it starts (rocketmq.client.rebalance.
// minInterval from its client instance's creation), every 20 s after
// (rocketmq.client.rebalance.waitInterval; 1 s after an answer without an
// assignment), and when the broker tells it the group's membership
// changed (NOTIFY_CONSUMER_IDS_CHANGED: a member crashed or started; never
// sooner than 1 s after its last rebalance). The query is answered in
// place (no network delay or loss), from the group's live members as the
// broker's client table. Each assigned MessageQueue gets its own pop loop
// (RebalanceImpl.updateMessageQueueAssignment: a PopRequest dispatched
// 500 ms later, with its own PopProcessQueue and so its own
// popThresholdForQueue flow control): queue -1 pops every queue, a real
// queue id that queue only. A queue no longer assigned is dropped: its
// loop stops, and the messages it popped that the listener has not
// consumed, or whose result is not yet sent, are let go unacked
// (ConsumeMessagePopConcurrentlyService checks isDropped before and after
// the listener) and come back when their lease runs out.

// Client constants of the broker-assigned path, RocketMQ's.
const (
	rebalanceWaitInterval = 20000 * clock.Millisecond // rocketmq.client.rebalance.waitInterval
	rebalanceMinInterval  = 1000 * clock.Millisecond  // rocketmq.client.rebalance.minInterval
	popDispatchDelay      = 500 * clock.Millisecond   // RebalanceImpl: dispatchPopPullRequest(list, 500)
)

// DefaultOn is a switch that is on unless set to false: its zero value is
// its default, true. Its text form is true or false.
type DefaultOn uint8

const (
	defaultOnUnset DefaultOn = iota
	defaultOnTrue
	defaultOnFalse
)

// On reports whether the switch is on.
func (d DefaultOn) On() bool { return d != defaultOnFalse }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DefaultOn) UnmarshalText(b []byte) error {
	on, err := strconv.ParseBool(string(b))
	if err != nil {
		return fmt.Errorf("%q: want true or false", b)
	}
	*d = defaultOnTrue
	if !on {
		*d = defaultOnFalse
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d DefaultOn) MarshalText() ([]byte, error) { return []byte(strconv.FormatBool(d.On())), nil }

// requestMode is the group's request mode as RocketMQ spells it ("" when
// the spec sets none, or spells it wrong: Validate reports that).
func (g *GroupSpec) requestMode() pop.MessageRequestMode {
	switch strings.ToLower(g.RequestMode) {
	case "pop":
		return pop.RequestModePop
	case "pull":
		return pop.RequestModePull
	}
	return ""
}

// groupSpec is the spec of the named group, nil when groups does not list
// it.
func groupSpec(groups []GroupSpec, name string) *GroupSpec {
	for i := range groups {
		if groups[i].Name == name {
			return &groups[i]
		}
	}
	return nil
}

// checkRequestMode validates a group's request mode keys.
func (l *layout) checkRequestMode(v *validator, p string, g *GroupSpec) {
	if g.RequestMode != "" && g.requestMode() == "" {
		v.add(p+".requestMode", "pop or pull", "%q", g.RequestMode)
	}
	if g.RequestMode != "" && l.cfg.Engine.Kind != RocketMQ {
		v.add(p+".requestMode", "", "the %s engine has no request modes: they are RocketMQ's (SET_MESSAGE_REQUEST_MODE)", l.cfg.Engine.Kind)
	}
	if g.PopShareQueueNum != 0 && g.requestMode() != pop.RequestModePop {
		v.add(p+".popShareQueueNum", "requestMode: pop beside it (the admin sets both at once)", "%d without requestMode pop", g.PopShareQueueNum)
	}
}

// startMode is the request mode the group's queries are answered with
// at the start: its own, else the engine's default ("" on another
// engine).
func (l *layout) startMode(group string) pop.MessageRequestMode {
	cfg, ok := l.cfg.Engine.Settings.(*pop.Config)
	if !ok {
		return ""
	}
	if g := groupSpec(l.cfg.Groups, group); g != nil && g.RequestMode != "" {
		return g.requestMode()
	}
	return cfg.DefaultMessageRequestMode
}

// setRequestMode is the admin setting the group's request mode for its
// topic before the run, when its spec has one.
func (a *rocketMQ) setRequestMode(group, topic string) error {
	g := groupSpec(a.s.cfg.Groups, group)
	if g == nil || g.RequestMode == "" {
		return nil
	}
	req := pop.SetMessageRequestModeRequest{Topic: topic, ConsumerGroup: group, Mode: g.requestMode(), PopShareQueueNum: g.PopShareQueueNum}
	if r := a.b.SetMessageRequestMode(&req); r.Code != model.Success {
		return fmt.Errorf("sim: setting group %s's request mode: %v %s", group, r.Code, r.Remark)
	}
	return nil
}

// assignQuery is QUERY_ASSIGNMENT, served in place.
type assignQuery struct {
	syncReq
	req pop.QueryAssignmentRequest
	res pop.QueryAssignmentResult
}

// assigned is a push consumer's broker-assigned queues: its rebalance
// clock and one pop loop per assigned MessageQueue. It is also the
// payload of its rebalance task.
type assigned struct {
	p     *pushConsumer
	loops []*popLoop // the assigned queues' loops
	// retired are dropped loops whose pop is still out: its answer is
	// theirs.
	retired []*popLoop
	last    clock.Time // the last rebalance (lastRebalanceTimestamp)
	at      clock.Time // when the next one is armed
	task    *task
	taskSeq uint64
}

// popLoop is one assigned MessageQueue's PopRequest and PopProcessQueue.
type popLoop struct {
	p       *pushConsumer
	mq      pop.MessageQueue
	broker  int32    // mq's broker in the route
	out     *popReq  // the outstanding pop
	next    nextPoll // its next pop (a tkPoll armed)
	waitAck int      // its PopProcessQueue's waitAckCount
	dropped bool
}

// startAssigned starts the broker-assigned path (clientRebalance false)
// and reports whether it did: the first rebalance comes minInterval after
// the client instance is created.
func (p *pushConsumer) startAssigned(s *sim) bool {
	p.asg = nil
	if p.set.ClientRebalance.On() || p.ord != nil {
		return false
	}
	p.asg = &assigned{p: p, last: s.q.now()}
	p.asg.arm(s, s.q.now().Add(rebalanceMinInterval))
	return true
}

// rebalance is the broker's NOTIFY_CONSUMER_IDS_CHANGED after p crashed
// or started: every live member of the group that takes its queues from
// the broker rebalances (the rebalancer the core calls).
func (p *pushConsumer) rebalance(s *sim) {
	for _, c := range p.c.g.members {
		if q, ok := c.cl.(*pushConsumer); ok && c.alive && q.asg != nil {
			q.asg.wakeup(s)
		}
	}
}

// arm schedules the next rebalance at t, replacing the armed one.
func (a *assigned) arm(s *sim, t clock.Time) {
	s.q.cancel(a.task, a.taskSeq)
	c := a.p.c
	a.at = t
	a.task = s.q.at(t, tkClient, c.idx, c.epoch, a)
	a.taskSeq = a.task.seq
}

// wakeup is RebalanceService.wakeup: rebalance now, but not sooner than
// minInterval after the last one.
func (a *assigned) wakeup(s *sim) {
	if t := max(s.q.now(), a.last.Add(rebalanceMinInterval)); t < a.at {
		a.arm(s, t)
	}
}

// tick is the rebalance task; one that a pause held back past a later
// arming, or that an arming replaced, does nothing.
func (a *assigned) tick(s *sim) {
	if s.q.now() < a.at {
		return
	}
	a.rebalance(s)
}

// rebalance is one round: ask the broker, apply the answer, arm the next.
func (a *assigned) rebalance(s *sim) {
	c := a.p.c
	now := s.q.now()
	a.last = now
	r := assignQuery{req: pop.QueryAssignmentRequest{Topic: c.g.topic, ConsumerGroup: c.g.name, ClientID: c.clientID,
		StrategyName: pop.StrategyAveragely, MessageModel: pop.Clustering, ClientIDs: liveClientIDs(c.g)}}
	s.serveNow(&r)
	if r.res.Code != model.Success || r.res.Null {
		a.arm(s, now.Add(rebalanceMinInterval)) // unbalanced: try again soon
		return
	}
	a.update(s, r.res.Assignments)
	a.arm(s, now.Add(rebalanceWaitInterval))
}

// liveClientIDs are the group's connected clients.
func liveClientIDs(g *group) []string {
	ids := []string{}
	for _, c := range g.members {
		if c.alive {
			ids = append(ids, c.clientID)
		}
	}
	return ids
}

// update is updateMessageQueueAssignment, in upstream's order: drop the
// pull queues no longer assigned in PULL mode (their offsets persisted
// first), drop the pop loops no longer assigned in POP mode, then take
// the new pull queues and start a loop for each new pop queue, both
// dispatched 500 ms later. PULL entries are the Pull side (switch.go).
func (a *assigned) update(s *sim, as []pop.MessageQueueAssignment) {
	want := make([]pop.MessageQueue, 0, len(as))
	var pulls []pop.MessageQueue
	for _, x := range as {
		if x.Mode == pop.RequestModePop {
			want = append(want, x.Queue)
		} else {
			pulls = append(pulls, x.Queue)
		}
	}
	a.dropPulls(s, pulls)
	kept := a.loops[:0]
	for _, l := range a.loops {
		if slices.Contains(want, l.mq) {
			kept = append(kept, l)
			continue
		}
		a.drop(s, l)
	}
	clear(a.loops[len(kept):])
	a.loops = kept
	a.addPulls(s, pulls)
	for _, mq := range want {
		if !slices.ContainsFunc(a.loops, func(l *popLoop) bool { return l.mq == mq }) {
			a.add(s, mq)
		}
	}
}

func (a *assigned) drop(s *sim, l *popLoop) {
	l.dropped = true
	if l.out != nil {
		a.retired = append(a.retired, l)
	}
	s.cov.hit("rebalance")
	s.emit(model.Event{Kind: model.EvRebalance, Client: a.p.c.idx, Topic: l.mq.Topic, Queue: s.rt.global(l.broker, l.mq.Topic, l.mq.QueueID), Offset: -1, Reason: model.RDropped})
}

func (a *assigned) add(s *sim, mq pop.MessageQueue) {
	l := &popLoop{p: a.p, mq: mq, broker: s.rt.brokerOf(mq.BrokerName)}
	a.loops = append(a.loops, l)
	s.cov.hit("rebalance")
	s.emit(model.Event{Kind: model.EvRebalance, Client: a.p.c.idx, Topic: mq.Topic, Queue: s.rt.global(l.broker, mq.Topic, mq.QueueID), Offset: -1})
	l.schedule(s, popDispatchDelay)
}

// answered returns the loop whose pop r is, clearing its outstanding pop.
func (a *assigned) answered(r *popReq) *popLoop {
	for _, l := range a.loops {
		if l.out == r {
			l.out = nil
			return l
		}
	}
	for i, l := range a.retired {
		if l.out == r {
			l.out = nil
			a.retired = slices.Delete(a.retired, i, i+1)
			return l
		}
	}
	panic("sim: a pop answer that none of the consumer's pop loops sent")
}

// schedule arms the loop's next pop after d (0: at once). A dropped loop
// pops no more (popMessage returns at once for a dropped process queue).
func (l *popLoop) schedule(s *sim, d clock.Duration) {
	if !l.dropped && l.next.sendNowWith(s, l.p.c, d, l) {
		l.pop(s)
	}
}

// poll is the loop's tkPoll.
func (l *popLoop) poll(s *sim) {
	l.next.armed = false
	if !l.dropped {
		l.pop(s)
	}
}

// pop issues the loop's pop, unless one is out or its process queue's
// flow control holds it back.
func (l *popLoop) pop(s *sim) {
	p := l.p
	if l.out != nil {
		return
	}
	if l.waitAck > p.set.PopThresholdForQueue {
		s.cov.hit("flow-control")
		l.schedule(s, pullTimeDelayWhenFlowCtl)
		return
	}
	l.out = p.sendPop(s, l)
}

// unwait: h is acked, renewed or given up, so its process queue waits
// for one message less.
func (p *pushConsumer) unwait(h *popHeld) {
	p.waitAck--
	if h.loop != nil {
		h.loop.waitAck--
	}
}

// firstHeld is w's first message: a pop's messages share their loop.
func firstHeld(w work) *popHeld {
	if b, ok := w.(*pushBatch); ok {
		return b.hs[0]
	}
	return w.(*popHeld)
}

// droppedWork lets w go when its loop was dropped (before or after the
// listener): nothing is sent, the broker revives its messages.
func (p *pushConsumer) droppedWork(s *sim, w work) bool {
	if p.asg == nil {
		return false
	}
	if l := firstHeld(w).loop; l == nil || !l.dropped {
		return false
	}
	if b, ok := w.(*pushBatch); ok {
		for _, h := range b.hs {
			p.letGoDropped(s, h)
		}
		return true
	}
	p.letGoDropped(s, w.(*popHeld))
	return true
}

func (p *pushConsumer) letGoDropped(s *sim, h *popHeld) {
	p.unwait(h)
	h.finished = true
	s.emitHeld(model.EvExpiredLocal, &h.held, model.RDropped)
}

// queryAssignment answers QUERY_ASSIGNMENT. With several brokers the
// answering broker allocates over the whole route (every broker's part,
// in broker order), as RocketMQ's does from its topic route.
func (a *rocketMQ) queryAssignment(req *pop.QueryAssignmentRequest) pop.QueryAssignmentResult {
	if !a.rt.multi() {
		return a.b.QueryAssignment(req)
	}
	var route []pop.RouteBroker
	for b := range a.rt.n {
		route = append(route, a.s.rocketMQ(b).b.Route(req.Topic)...)
	}
	return a.b.QueryAssignmentRoute(req, route)
}
