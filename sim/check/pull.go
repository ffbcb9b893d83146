package check

import (
	"fmt"
	"slices"

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
	m.places[i].leased = e.Seq + 1
	m.pulledAt = e.Seq + 1
	if m.successes > 0 && cause != CauseReconsumeLater && cause != causeFirst {
		m.lines[0].since = cause
	}
	d := m.newDelivery()
	*d = delivery{client: e.Client, held: true, m: m}
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
	p, last := m.pull, m.places[i].leased
	k := groupQueue{m.g.idx, queueKey{e.Topic, e.Queue}}
	switch {
	case p != nil && p.client == e.Client && p.failed:
		return CauseReconsumeLater
	case c.rebalances[k] > last, c.pullOwners[k].sharedSince(last):
		return CauseRebalance
	case c.restartSince(last):
		return CauseBrokerRestart
	case m.g.switched != 0 && last != 0 && m.pulledAt != last:
		return CauseModeSwitch // a pop took it last: a pull owner not yet rebalanced reads it again
	}
	c.violate(InvUnexplained, e.Seq, m, fmt.Sprintf("client %d pulled message %d again with no local retry, rebalance or restart since its last delivery (event #%d)", e.Client, m.id, last-1))
	return CauseUnexplained
}

// pullHeld is the message a Pull client's word is about, when the client
// still holds its last delivery; nil for a late word about a message
// forgotten meanwhile (another owner consumed it since): nothing to judge.
func (c *Checker) pullHeld(e *model.Event) *msgState {
	cl := c.clientOf(e)
	if !cl.known {
		return nil
	}
	m, _ := c.groups[cl.group].msgs.get(uint64(e.Msg))
	if m == nil || m.pull == nil || m.pull.client != e.Client {
		return nil
	}
	m.note(e)
	return m
}

func (c *Checker) onPullConsumed(e *model.Event) {
	m := c.pullHeld(e)
	if m == nil {
		return
	}
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
	c.success(m, 0, nil, cause)
	c.commit(m, e.Reason)
	c.settle(m, settledAck, "")
	c.release(m, d)
}

// onPullLetGo: a Pull consumer's dropped queue let the message go
// unconsumed (expired-local r=dropped, no lease): the client holds it no
// more; whoever reads the queue next owes it.
func (c *Checker) onPullLetGo(e *model.Event) {
	m := c.pullHeld(e)
	if m == nil {
		return
	}
	m.pull.failed = false
	c.release(m, m.pull.dlv)
}

// onRequestMode: the group was switched to POP mode. Until its consumers
// have all rebalanced, pulls and pops of one queue overlap, and a pop
// reads what was pulled and not committed (mode_switch).
func (c *Checker) onRequestMode(e *model.Event) {
	if e.Group == "" {
		c.violate(InvTraceForm, e.Seq, nil, "a request-mode event needs a group")
		return
	}
	g := c.group(e.Group)
	if g.switched == 0 {
		g.switched = e.Seq + 1
	}
}

func (c *Checker) onRebalance(e *model.Event) {
	cl := c.clientOf(e)
	if !cl.known {
		c.violate(InvTraceForm, e.Seq, nil, fmt.Sprintf("%s by client %d, which never subscribed", e.Kind, e.Client))
		return
	}
	k := groupQueue{cl.group, queueKey{e.Topic, e.Queue}}
	switch {
	case e.Reason == model.RPull:
		c.ownersOf(k).add(e.Client, e.Seq+1)
	case e.Reason == model.RDropped && e.Offset >= 0: // a pull queue's drop (a pop loop's has no offset)
		c.ownersOf(k).remove(e.Client, e.Seq+1)
	}
	if c.rebalances == nil {
		c.rebalances = map[groupQueue]int64{}
	}
	c.rebalances[k] = e.Seq + 1
}

// owners are the clients that pull a queue the broker assigns in PULL
// mode. Each member applies a new assignment at its own rebalance, so a
// queue's new owner may start (from the committed offset) before its old
// owner drops it: while both pull it, each reads what the other read.
type owners struct {
	clients []int32
	// shared is the trace position (Seq+1) at which the queue last got a
	// second owner, unshared where it last went back to one (0: shared
	// now, or never).
	shared, unshared int64
}

func (c *Checker) ownersOf(k groupQueue) *owners {
	if c.pullOwners == nil {
		c.pullOwners = map[groupQueue]*owners{}
	}
	o := c.pullOwners[k]
	if o == nil {
		o = &owners{}
		c.pullOwners[k] = o
		c.ownerList = append(c.ownerList, o)
	}
	return o
}

func (o *owners) add(client int32, at int64) {
	if slices.Contains(o.clients, client) {
		return
	}
	o.clients = append(o.clients, client)
	if len(o.clients) == 2 {
		o.shared, o.unshared = at, 0
	}
}

func (o *owners) remove(client int32, at int64) {
	i := slices.Index(o.clients, client)
	if i < 0 {
		return
	}
	o.clients = slices.Delete(o.clients, i, i+1)
	if len(o.clients) == 1 {
		o.unshared = at
	}
}

// sharedSince reports whether the queue had two owners at some time from
// trace position t on.
func (o *owners) sharedSince(t int64) bool {
	return o != nil && o.shared != 0 && (len(o.clients) > 1 || o.unshared >= t)
}

// crashOwner: a crashed client pulls nothing more (its queues are not
// dropped one by one).
func (c *Checker) crashOwner(e *model.Event) {
	for _, o := range c.ownerList {
		o.remove(e.Client, e.Seq+1)
	}
}
