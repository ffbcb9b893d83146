package check

import (
	"fmt"
	"sort"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// touch returns the live entry of e.Msg and remembers e in its history. A
// tombstone is brought back only when inflate is set (the event can make
// the message come back: a delivery, a revive, a renew).
func (c *Checker) touch(e *model.Event, inflate bool) *msgState {
	r, ok := c.keys[e.Msg]
	m := r.m
	if m == nil && ok && inflate {
		m = c.inflate(e.Msg, r.tomb)
	}
	if m != nil {
		c.remember(m, e)
	}
	return m
}

func (c *Checker) inflate(key string, ti int32) *msgState {
	t := *c.tombSlab.at(ti)
	*c.tombSlab.at(ti) = tomb{} // drop the topic string
	c.tombFree = append(c.tombFree, ti)
	m := c.newMsg(msgState{key: key, topic: t.topic, settled: t.how, inflated: true, okFirst: -1, firstSeq: -1, lastClient: t.lastClient, lastSeq: t.lastSeq})
	for i := t.locAt; i < t.locAt+t.nLocs; i++ {
		l := c.tombLocs.at(i)
		m.addLoc(loc{flag: l.flag, queue: l.queue, offset: l.offset, popped: true, guessed: l.guessed, popMs: l.popMs, delMs: l.delMs, delVt: l.delVt, origin: -1})
	}
	if t.okSeen {
		m.okFirst = -2
	}
	c.setLive(m)
	return m
}

func (c *Checker) onProduce(e *model.Event) {
	m := c.touch(e, true)
	l := loc{topic: e.Topic, flag: model.RetryFlagOf(e.Topic), queue: e.Queue, offset: e.Offset, seq: e.Seq, bornMs: e.At.Millis(), origin: -1}
	if m != nil {
		// The same UNIQ_KEY stored again (a producer retry): one more copy
		// the consumers will see, on its own line.
		l.lineage, l.cause = CauseProducerRetry, CauseProducerRetry
		m.addLoc(l)
	} else {
		m = c.newMsg(msgState{key: e.Msg, topic: e.Topic, firstSeq: e.Seq, okFirst: -1})
		c.remember(m, e)
		m.addLoc(l)
		c.setLive(m)
		c.rep.Produced++
	}
	c.wake.arrival(e, e.Topic, e.Queue, false)
}

func (c *Checker) onSettleEvent(e *model.Event) {
	m := c.touch(e, false)
	if e.Kind == model.EvDrop && e.Detail == "" {
		c.violate(InvUnnamedDrop, e.Seq, m, fmt.Sprintf("client %d dropped %s without naming the policy (EvDrop.Detail is empty): a drop must be a documented client policy", e.Client, e.Msg))
	}
	if m == nil {
		return // already settled and forgotten, or never produced
	}
	if e.Kind == model.EvDLQ {
		c.settle(m, settledDLQ, "")
	} else {
		c.settle(m, settledDrop, e.Detail)
	}
	c.maybeForget(m, e.At.Millis())
}

// settle closes the ledger of m the first time; later outcomes (a
// duplicate acked again, a copy sent to the DLQ after an ack) change nothing.
func (c *Checker) settle(m *msgState, how settleKind, policy string) {
	if m.settled != unsettled || m.phantom {
		return
	}
	m.settled = how
	switch how {
	case settledAck:
		c.rep.Acked++
	case settledDLQ:
		c.rep.DLQ++
	case settledDrop:
		if policy == "" {
			policy = "unnamed"
		}
		c.rep.Dropped++
		c.rep.DroppedByPolicy[policy]++
	}
}

// maybeForget turns a settled message into a tombstone once nothing can
// bring it back but a broker re-pop: no copy waits to be popped, no record
// may still revive, no consumer is still working on it (its outcome could
// make a duplicate).
func (c *Checker) maybeForget(m *msgState, nowMs int64) {
	if m.settled == unsettled || m.phantom {
		return
	}
	if m.unpopped() || c.openDeliveries(m) || c.mayRevive(m, nowMs) {
		if !m.inSweep {
			m.inSweep = true
			c.sweep = append(c.sweep, m)
		}
		return
	}
	t := tomb{topic: m.topic, how: m.settled, okSeen: m.okFirst != -1, lastClient: m.lastClient, lastSeq: m.lastSeq, locAt: c.tombLocs.len(), nLocs: int32(len(m.locs))}
	for i := range m.locs {
		l := &m.locs[i]
		c.tombLocs.push(tombLoc{guessed: l.guessed, flag: l.flag, queue: l.queue, offset: l.offset, popMs: l.popMs, delMs: l.delMs, delVt: l.delVt})
	}
	if n := len(m.dels); n > 0 {
		t.lastClient, t.lastSeq = m.dels[n-1].client, m.dels[n-1].seq
	}
	c.keys[m.key] = keyRef{tomb: c.putTomb(t)}
	c.live--
	if m.inSweep {
		// Still listed in c.sweep (runSweep checks identity there): the
		// entry itself must not be reused, only its history buffer.
		m.inSweep = false
		c.recycleHist(m)
		return
	}
	// Not listed anywhere and maybeForget is its caller's last use: the
	// whole entry goes to the free list.
	c.msgFree = append(c.msgFree, m)
}

// putTomb stores t in the tombstone slab, in a slot freed by inflate when
// there is one, and returns its index.
func (c *Checker) putTomb(t tomb) int32 {
	if n := len(c.tombFree); n > 0 {
		ti := c.tombFree[n-1]
		c.tombFree = c.tombFree[:n-1]
		*c.tombSlab.at(ti) = t
		return ti
	}
	return c.tombSlab.push(t)
}

func (c *Checker) runSweep(nowMs int64) {
	c.sinceSweep = 0
	list := c.sweep
	c.sweep = nil
	for _, m := range list {
		m.inSweep = false
		if c.msg(m.key) == m {
			c.maybeForget(m, nowMs)
		}
	}
}

// openDeliveries: a consumer still holds the message (not finished, not
// crashed), or a Pull consumer failed it last and will retry locally.
func (c *Checker) openDeliveries(m *msgState) bool {
	for i := range m.dels {
		d := &m.dels[i]
		busy := d.state == consumePending || d.state == consumeStarted
		retry := d.pull && d.state == consumeFailed && i == len(m.dels)-1
		if (busy || retry) && !c.crashedBetween(d.client, d.seq, 1<<62) {
			return true
		}
	}
	return false
}

// uncertain reports a record the broker may no longer hold.
// A record made before a broker restart may have been in the lost cache.
func (c *Checker) uncertain(r *record) bool {
	return r.fuzzy || len(c.restarts) > 0 && c.restarts[len(c.restarts)-1] >= r.popMs
}

// restartBetween reports a broker restart at a time (ms) in [min(a,b),
// max(a,b)]: two pops of one location are explained by it. Pop times have
// millisecond resolution, so a restart in the same millisecond counts.
func (c *Checker) restartBetween(a, b int64) bool {
	lo, hi := min(a, b), max(a, b)
	i := sort.Search(len(c.restarts), func(i int) bool { return c.restarts[i] >= lo })
	return i < len(c.restarts) && c.restarts[i] <= hi
}

// mayRevive reports a record that may still revive: any record the ledger
// is sure of, and uncertain ones (and ghosts) until uncertainGrace past
// their deadline.
func (c *Checker) mayRevive(m *msgState, nowMs int64) bool {
	for i := range m.recs {
		r := &m.recs[i]
		if !c.uncertain(r) || r.vt+uncertainGrace >= nowMs {
			return true
		}
	}
	for i := range m.ghosts {
		if m.ghosts[i].vt+uncertainGrace >= nowMs {
			return true
		}
	}
	for _, o := range m.orphans { // a late delivery may still claim it
		if o.atMs+uncertainGrace >= nowMs {
			return true
		}
	}
	return false
}

// crashedBetween reports an EvCrash of client with after < Seq < before.
func (c *Checker) crashedBetween(client int32, after, before int64) bool {
	s := c.crashes[client]
	i := sort.Search(len(s), func(i int) bool { return s[i] > after })
	return i < len(s) && s[i] < before
}

// canComeBack reports whether the message may still be delivered: a copy
// not yet popped or a record that may revive.
func (c *Checker) canComeBack(m *msgState, nowMs int64) bool {
	return m.unpopped() || c.mayRevive(m, nowMs)
}

// finishLedger reports every message that is not settled as lost, oldest
// first.
func (c *Checker) finishLedger() {
	var lost []*msgState
	for _, r := range c.keys { // collected, then sorted: order does not leak
		if m := r.m; m != nil && m.settled == unsettled && !m.phantom {
			lost = append(lost, r.m)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i].firstSeq < lost[j].firstSeq })
	c.rep.Lost = int64(len(lost))
	for _, m := range lost {
		if !m.lostReported {
			c.violate(InvLost, c.lastSeq, m, c.lostDetail(m))
		}
	}
}

func (c *Checker) lostDetail(m *msgState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (topic %s, produced at event #%d) ended neither acked nor in the DLQ nor dropped by a named policy at the end of the trace (%v): ", m.key, m.topic, m.firstSeq, c.lastAt)
	fmt.Fprintf(&b, "%d deliveries, %s consumed successfully; copies %s", len(m.dels), yesNo(m.okFirst != -1), m.locsText())
	if m.unpopped() {
		b.WriteString(" (some never popped)")
	}
	fmt.Fprintf(&b, "; in flight: %s", m.recsText())
	switch next := c.nextRevive(m); {
	case next > c.lastAt.Millis():
		fmt.Fprintf(&b, " — it would come back at %s, after the end: it did not settle in time", msText(next))
	case next > 0:
		fmt.Fprintf(&b, " — that record expired at %s but never revived: the broker no longer has it", msText(next))
	}
	return b.String()
}

// nextRevive is the earliest deadline of a record that may still revive
// (0 if none).
func (c *Checker) nextRevive(m *msgState) int64 {
	var next int64
	for i := range m.recs {
		if r := &m.recs[i]; !c.uncertain(r) && (next == 0 || r.vt < next) {
			next = r.vt
		}
	}
	return next
}

func yesNo(b bool) string {
	if b {
		return "was"
	}
	return "was never"
}

func msText(ms int64) string { return clock.FromMillis(ms).String() }
