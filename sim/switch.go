package sim

import (
	"fmt"
	"slices"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// Switching a live group from Pull to POP (docs/rocketmq/clients.md §4).
//
// The Pull side: a push consumer that takes its queues from the broker
// (clientRebalance false) consumes the queues an assignment gives it in
// PULL mode by pull, as DefaultMQPushConsumer does with a PullRequest per
// MessageQueue: the Pull baseline's per-queue machinery (pull.go), held
// in pushConsumer.pull, starting each queue at the committed offset 500
// ms after the rebalance that gave it (dispatchPullRequest), pulling with
// the push consumer's 15 s suspend (BROKER_SUSPEND_MAX_TIME_MILLIS) and
// persisting offsets every persistConsumerOffsetInterval. A rebalance
// that no longer assigns a pull queue persists its offset, then drops it
// (removeUnnecessaryMessageQueue): messages pulled and not yet consumed
// are let go (ConsumeRequest checks isDropped), and a consumption that
// ends after the drop commits nothing.
//
// The switch: GroupSpec.SwitchToPop schedules the admin's
// SET_MESSAGE_REQUEST_MODE(POP) on every broker at a virtual time.
// Upstream stores the mode and notifies no one: each consumer sees it at
// its next rebalance (every 20 s), where updateMessageQueueAssignment
// drops its pull queues and starts a pop loop per POP queue. Where the
// POP reads start is the engine's: the checkpoint path from the commit
// offset (what was pulled and not committed is read again: duplicates),
// the KV path from the pull offset (what was pulled and not consumed is
// skipped). Until every consumer has rebalanced, pulls and pops of one
// queue overlap. The trace carries the switch (request-mode), so the
// checker names those redeliveries mode_switch.

// Client constants of the Pull side, RocketMQ's.
const (
	brokerSuspendMaxTime          = 15 * clock.Second // DefaultMQPushConsumerImpl.BROKER_SUSPEND_MAX_TIME_MILLIS
	persistConsumerOffsetInterval = 5 * clock.Second  // ClientConfig.persistConsumerOffsetInterval
)

// pullSide is the consumer's Pull side, made (and its commit clock
// started) when an assignment first gives it a pull queue.
func (a *assigned) pullSide(s *sim) *pullConsumer {
	p := a.p
	if p.pull == nil {
		set := &PullSettings{PollTime: brokerSuspendMaxTime, MaxReconsumeTimes: p.set.MaxReconsumeTimes, CommitInterval: persistConsumerOffsetInterval}
		p.pull = &pullConsumer{c: p.c, set: set, assigned: true}
		p.pull.start(s)
	}
	return p.pull
}

// mqOf is a pull queue as an assignment names it.
func (pq *pullQueue) mqOf(s *sim, topic string) pop.MessageQueue {
	return pop.MessageQueue{Topic: topic, BrokerName: s.rt.names[pq.broker], QueueID: pq.local}
}

// dropPulls drops the pull queues the assignment no longer gives in PULL
// mode, each after persisting its offset.
func (a *assigned) dropPulls(s *sim, pulls []pop.MessageQueue) {
	pc := a.p.pull
	if pc == nil {
		return
	}
	c := a.p.c
	for _, pq := range pc.queues {
		if pq == nil || !pq.owned || slices.Contains(pulls, pq.mqOf(s, c.g.topic)) {
			continue
		}
		pc.release(s, pq)
		s.cov.hit("rebalance")
		s.emit(model.Event{Kind: model.EvRebalance, Client: c.idx, Topic: c.g.topic, Queue: pq.q, Offset: pq.committed, Reason: model.RDropped})
	}
}

// addPulls takes the newly assigned pull queues.
func (a *assigned) addPulls(s *sim, pulls []pop.MessageQueue) {
	for _, mq := range pulls {
		pc := a.pullSide(s)
		q := s.rt.global(s.rt.brokerOf(mq.BrokerName), mq.Topic, mq.QueueID)
		if !pc.owns(q) {
			pc.gainAfter(s, q, popDispatchDelay)
		}
	}
}

// modeSwitch is a scheduled switch: its task's payload.
type modeSwitch struct {
	group, topic string
	spec         *SwitchToPop
}

// scheduleSwitches schedules the groups' switches (after every other
// start-up task, so that a run without one schedules what it did before).
func (s *sim) scheduleSwitches() {
	for i := range s.cfg.Groups {
		g := &s.cfg.Groups[i]
		if !g.SwitchToPop.set() {
			continue
		}
		if x := s.byName[g.Name]; x != nil {
			s.q.at(s.start.Add(g.SwitchToPop.At), tkAdmin, -1, 0, &modeSwitch{group: g.Name, topic: x.topic, spec: &g.SwitchToPop})
		}
	}
}

// run is the admin's SET_MESSAGE_REQUEST_MODE(POP) on every broker of the
// route, traced once.
func (m *modeSwitch) run(s *sim) {
	req := pop.SetMessageRequestModeRequest{Topic: m.topic, ConsumerGroup: m.group, Mode: pop.RequestModePop, PopShareQueueNum: m.spec.PopShareQueueNum}
	for b := range s.rt.n {
		if r := s.rocketMQ(b).b.SetMessageRequestMode(&req); r.Code != model.Success {
			panic(fmt.Sprintf("sim: switching group %s to POP on broker %d: %v %s", m.group, b, r.Code, r.Remark))
		}
	}
	s.emit(model.Event{Kind: model.EvRequestMode, Client: -1, Group: m.group, Topic: m.topic, Queue: -1, Offset: -1, Count: m.spec.PopShareQueueNum, Reason: model.RPop})
}

// checkSwitch validates a group's switchToPop: RocketMQ only, inside the
// safety phase, for a group that starts in PULL mode and whose consumers
// take their queues from the broker.
func (l *layout) checkSwitch(v *validator, p string, g *GroupSpec) {
	sw := &g.SwitchToPop
	if !sw.set() {
		return
	}
	p += ".switchToPop"
	if l.cfg.Engine.Kind != RocketMQ {
		v.add(p, "", "the %s engine has no request modes: a switch is RocketMQ's SET_MESSAGE_REQUEST_MODE", l.cfg.Engine.Kind)
		return
	}
	if sw.At <= 0 || sw.At >= l.cfg.Duration {
		v.add(p+".at", fmt.Sprintf("a time inside the safety phase, 1ms..%v", (l.cfg.Duration-clock.Millisecond).Std()), "%v", sw.At.Std())
	}
	switch m := l.startMode(g.Name); m {
	case pop.RequestModePull:
	case pop.RequestModePop:
		v.add(p, "the group in PULL mode at the start (requestMode: pull, or none with engine.defaultMessageRequestMode PULL)",
			"group %q starts in POP mode, and a switch goes from PULL to POP only: switching back to PULL is not modelled (docs/rocketmq/clients.md §4.1.1)", g.Name)
	default:
		v.add(p, "the group in PULL mode at the start (requestMode: pull, or none with engine.defaultMessageRequestMode PULL)", "group %q starts in %s mode", g.Name, m)
	}
	if g.ConsumeMessageOrderly {
		v.add(p, "a concurrent group", "group %q consumes orderly: its consumers keep client rebalance", g.Name)
	}
	n := 0
	for i := range l.cfg.Consumers {
		cs := &l.cfg.Consumers[i]
		if cs.Group != g.Name {
			continue
		}
		n++
		if set, ok := cs.Settings.(*PopPushSettings); !ok || set.ClientRebalance.On() {
			v.add(fmt.Sprintf("consumers[%d]", i), "kind pop-push with clientRebalance: false (the broker assigns its queues, PULL then POP)", "group %q switches to POP", g.Name)
		}
	}
	if n == 0 {
		v.add(p, "a group with consumers", "group %q has none", g.Name)
	}
}
