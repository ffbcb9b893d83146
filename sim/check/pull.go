package check

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
)

// Pull consumers own queues instead of leasing messages: their deliveries
// carry no lease. A message comes back to a Pull consumer when its owner
// retries it locally after a failure, or when a new owner of its queue
// starts again from the committed offset (a rebalance).

// pullState is a message's last Pull delivery.
type pullState struct {
	client int32
	at     clock.Time
	failed bool   // its consumption failed: a local retry follows
	cause  string // why it was delivered
	dlv    *delivery
}

type queueKey struct {
	topic string
	queue int32
}

// pullGroupMsg finds the message a Pull client's event names.
func (c *Checker) pullMsg(e *model.Event) *msgState {
	cl := c.clientOf(e)
	if !cl.known {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("%s by client %d, which never subscribed", e.Kind, e.Client))
		return nil
	}
	return c.msgOf(c.groups[cl.group], e)
}

func (c *Checker) onPullDeliver(e *model.Event) {
	m := c.pullMsg(e)
	if m == nil {
		return
	}
	m.note(e)
	i := m.lookupPlace(placeOf(e))
	if i < 0 {
		c.violate(InvDeliveryLocation, e.Seq, m, fmt.Sprintf("client %d pulled message %d at %s, where it never lived (%s)", e.Client, m.id, placeOf(e), m.placeList()))
		i = m.placeIndex(placeOf(e), true)
	}
	if e.Shown != m.topic {
		c.violate(InvPresentedTopic, e.Seq, m, fmt.Sprintf("client %d was shown topic %q for message %d, produced on %q", e.Client, e.Shown, m.id, m.topic))
	}
	cause := causeFirst
	if _, ok := m.takeToken(i); !ok {
		cause = c.pullCause(m, e, i)
	}
	m.leased[i] = e.Seq + 1
	if m.successes > 0 && cause != CauseReconsumeLater && cause != causeFirst {
		m.lines[0].since = cause
	}
	d := &delivery{client: e.Client, held: true, m: m}
	prev := m.pull
	m.pull = &pullState{client: e.Client, at: e.At, dlv: d, cause: cause}
	c.hold(m, d) // before the old one goes, so the message is not forgotten in between
	if prev != nil {
		c.release(m, prev.dlv)
	}
	c.countDelivery(m, cause)
}

// pullCause explains a Pull redelivery at place i: a local retry of the
// same client's failure, or a rebalance or broker restart since the place
// was last delivered.
func (c *Checker) pullCause(m *msgState, e *model.Event, i int) string {
	p, last := m.pull, m.leased[i]
	switch {
	case p != nil && p.client == e.Client && p.failed:
		return CauseReconsumeLater
	case c.rebalances[groupQueue{m.g.idx, queueKey{e.Topic, e.Queue}}] > last:
		return CauseRebalance
	case c.restartSince(last):
		return CauseBrokerRestart
	}
	c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("client %d pulled message %d again with no local retry, rebalance or restart since its last delivery (event #%d)", e.Client, m.id, last-1))
	return CauseUnexplained
}

func (c *Checker) onPullConsumed(e *model.Event) {
	cl := c.clientOf(e)
	if !cl.known {
		return
	}
	// A late word about a message forgotten meanwhile (another owner
	// consumed it since) has nothing to judge.
	m, _ := c.groups[cl.group].msgs.get(uint64(e.Msg))
	if m == nil || m.pull == nil || m.pull.client != e.Client {
		return
	}
	m.note(e)
	d := m.pull.dlv
	if !e.Reason.Consumed() {
		m.pull.failed = true
		c.release(m, d)
		return
	}
	m.pull.failed = false
	d.ok = true
	cause := m.lines[0].since
	if cause == "" {
		cause = m.pull.cause
	}
	c.success(m, 0, cause)
	c.commit(m, e.Reason)
	c.settle(m, settledAck, "")
	c.release(m, d)
}

func (c *Checker) onRebalance(e *model.Event) {
	cl := c.clientOf(e)
	if !cl.known {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("%s by client %d, which never subscribed", e.Kind, e.Client))
		return
	}
	if c.rebalances == nil {
		c.rebalances = map[groupQueue]int64{}
	}
	c.rebalances[groupQueue{cl.group, queueKey{e.Topic, e.Queue}}] = e.Seq + 1
}
