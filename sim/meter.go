package sim

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
)

// Histogram range: 1us..1h, 3 significant figures.
const (
	histMin    = 1
	histMax    = int64(clock.Hour)
	histSigFig = 3
)

// meter is the simulator's own measurement of a run: latency and where it
// went, throughput, the time series and the count of messages still open
// (quiescence). The verdict (lost, duplicates, violations) is the
// checker's, from the trace.
//
// It keeps one small record per stored message for the whole run (obs:
// its latency, the parts of it, when it was stored, how often it was
// consumed; 40 bytes, about 15 once its block of 4096 is closed and
// frozen, which the newest obsKeepLive blocks are not, meterobs.go), so the warm-up can be cut after the run, where the
// data says (measure.go). While a message is open it also follows the
// trace's engine-neutral events about it (observe) to split its latency:
// when it was leased, delivered, consumed, made available again (state,
// one slot per open message, reused).
//
// Several groups may consume one topic: each is an independent consumer
// of every message it subscribes to, so the meter measures a message once
// per group. It counts in units: message id's unit for the group at
// position pos among its topic's groups (group.pos) is (id-1)*k + pos + 1,
// k being the most groups any topic has; with one group per topic (k = 1)
// a unit is the message id. Everything below that says "message" means a
// unit.
type meter struct {
	// atBroker: the run has a broker cost model; call is the pop being
	// served, whose leases are in callLeases until its service time is
	// known.
	atBroker   bool
	call       brokerCall
	callLeases []model.LeaseID
	callMsgs   []model.MsgID
	// msgs holds the messages from id msgs.base on; those below
	// msgs.base+msgs.head are closed.
	msgs msgWindow
	open int64

	start, warmEnd, safeEnd   clock.Time
	fixed                     bool // a fixed warm-up: messages produced before warmEnd are not measured
	nProduced                 int64
	nAcked, nWarmAcks         int64
	nDeliveries, nRedelivered int64
	obs                       obsStore                  // every stored message
	agg                       obsAgg                    // what the end makes of obs, fed as its blocks freeze
	state                     []msgState                // open messages' breakdown state, by meterMsg.slot
	free                      []int32                   // unused slots of state
	more                      map[model.MsgID][]attempt // older attempts of open messages that may still be acked
	spare                     *meterSpare               // arrays from a finished run, taken before allocating (nil: none; Reuse)
	reviveLag                 *hist                     // a lease's deadline to its revive (a copy written)
	last                      model.SeriesPoint         // cumulative counters at the previous sample
	series                    []model.SeriesPoint
	// crashed holds, for each message a consumer held when it crashed, the
	// crash's time, until the message's next delivery; redeliver is the
	// time from the crash to that delivery.
	crashed   map[model.MsgID]clock.Time
	redeliver *hist     // nil until a crashed message is delivered again
	hol       *holMeter // head-of-line blocking of orderly groups
	// k is the most groups consuming one topic (1 until groups is called);
	// posOf is each client's group's position on its topic, posByName
	// each group's; nGroups is how many groups the run has.
	k         int32
	posOf     []int32
	posByName map[string]int32
	nGroups   int
	// reads: the kinds of event observe hands observeEvent, meterKinds
	// until an orderly group subscribes, then every kind (the
	// head-of-line meter reads them all): one load an event.
	reads *[256]bool
}

// meterMsg is a message in the meter's window: while open (produced, not
// yet acked, sent to a DLQ or dropped) its intended send time, whether it
// was delivered, and the slot of its breakdown state. The window spans
// every message from the oldest open one, so it stays small per message.
type meterMsg struct {
	intended clock.Time
	slot     int32 // in meter.state
	open     bool
	seen     bool // delivered at least once
}

// msgState is how an open message's time so far divides between waiting
// to be leased and being held under leases that did not succeed, and its
// latest delivery attempt.
type msgState struct {
	id      model.MsgID
	since   clock.Time     // start of the current span: available since, or held since
	redeliv clock.Duration // redelivery wait before since
	att     attempt        // the latest delivery attempt
	stored  clock.Time     // with a broker cost model: when the put was served
	putWait clock.Duration // with a broker cost model: the put's wait at the broker
	held    bool           // under a lease (or at a client) since since
	more    bool           // older attempts are in meter.more
}

// attempt is one lease (or, without leases, one delivery) of a message:
// the instants its consumption went through.
type attempt struct {
	lease                     model.LeaseID // follows renewals and retried revives
	client                    int32
	stage                     uint8
	redeliv                   clock.Duration // the message's redelivery wait when the lease began
	brk                       clock.Duration // with a broker cost model: its pop's wait and service
	deliverAt, startAt, endAt clock.Time
}

// Stages of an attempt.
const (
	stageLeased    uint8 = iota + 1 // the engine lent the message
	stageDelivered                  // the client has it
	stageStarted                    // a thread consumes it
	stageEnded                      // consumed successfully
	stageFailed                     // it will not be acked: failed, expired, or its lease ended undelivered
)

func (a *attempt) live() bool { return a.stage != 0 && a.stage != stageFailed }

// meterObs is what the meter keeps of every stored message for the run's
// end: its end-to-end and service latency and their parts (µs, 0: not
// measured), when it was stored, and its successful consumptions.
type meterObs struct {
	e2e, svc  uint32
	part      [nParts]uint32
	storedMs  uint32 // virtual ms since the run's start
	client    int32  // the client it was delivered to last
	successes uint8  // saturating
	flags     uint8
	group     uint16 // the consuming group's index (sim.groups)
}

// Flags of a meterObs.
const (
	obsStored       uint8 = 1 << iota // the engine stored it
	obsMeasured                       // acked: e2e and svc hold its latency
	obsWarm                           // produced during a fixed warm-up: not measured
	obsUnattributed                   // measured, but the trace did not show its parts
)

// The parts of end-to-end latency (model.Parts), by index.
const (
	partBroker = iota
	partRedelivery
	partLocal
	partProcessing
	partAck
	partAtBroker // with a broker cost model only
	nParts
)

// partOrder is the parts in the summary's order, with their names: the
// at-broker part only with a broker cost model.
func (m *meter) partOrder() []int {
	if m.atBroker {
		return []int{partBroker, partAtBroker, partRedelivery, partLocal, partProcessing, partAck}
	}
	return []int{partBroker, partRedelivery, partLocal, partProcessing, partAck}
}

var partNames = [nParts]string{model.PartBrokerWait, model.PartRedeliveryWait, model.PartLocalBuffer, model.PartProcessing, model.PartAck, model.PartAtBroker}

func newMeter(start clock.Time, w Warmup, safeEnd clock.Time) *meter {
	m := &meter{msgs: msgWindow{base: 1}, start: start, warmEnd: start, safeEnd: safeEnd,
		crashed:   map[model.MsgID]clock.Time{},
		reviveLag: newHistCounts(), hol: newHolMeter(), k: 1, reads: &meterKinds}
	if d, fixed := w.Fixed(); fixed {
		m.fixed, m.warmEnd = true, start.Add(d)
	}
	m.agg.m, m.obs.agg, m.obs.keep = m, &m.agg, obsKeepLive
	return m
}

// groups tells the meter the run's groups: their positions on their
// topics and the clients of each (s.subscribe).
func (m *meter) groups(gs []*group, clients []*consumer) {
	m.nGroups, m.posByName = len(gs), map[string]int32{}
	for _, g := range gs {
		m.k = max(m.k, g.pos+1)
		m.posByName[g.name] = g.pos
	}
	m.posOf = make([]int32, len(clients))
	for i, c := range clients {
		m.posOf[i] = c.g.pos
	}
	m.hol.unit = m.unitAt
}

// unit is message id's unit for group g.
func (m *meter) unit(g *group, id model.MsgID) model.MsgID { return m.unitAt(id, g.pos) }

// unitAt is message id's unit for the group at position pos on its topic.
func (m *meter) unitAt(id model.MsgID, pos int32) model.MsgID {
	if m.k <= 1 {
		return id
	}
	return (id-1)*model.MsgID(m.k) + model.MsgID(pos) + 1
}

// unitOf is the unit a trace event is about: its client's group's, or for
// an engine's event the open unit of its message that holds its lease
// (lease ids are unique across groups); 0 when none.
func (m *meter) unitOf(e *model.Event) model.MsgID {
	if m.k <= 1 {
		return e.Msg
	}
	return m.unitOfGroup(e)
}

// unitOfGroup is unitOf when topics have several groups.
func (m *meter) unitOfGroup(e *model.Event) model.MsgID {
	switch {
	case e.Client >= 0 && int(e.Client) < len(m.posOf):
		return m.unitAt(e.Msg, m.posOf[e.Client])
	case e.Lease == 0:
		return 0
	}
	for pos := range m.k {
		u := m.unitAt(e.Msg, pos)
		if x := m.stateOf(u); x != nil && m.search(x, func(a *attempt) bool { return a.lease == e.Lease }) != nil {
			return u
		}
	}
	return 0
}

// crash notes that a consumer of group g crashed at now holding message
// id (the earliest crash counts when two held it).
func (m *meter) crash(g *group, id model.MsgID, now clock.Time) {
	u := m.unit(g, id)
	if _, ok := m.crashed[u]; !ok && m.get(u) != nil {
		m.crashed[u] = now
	}
}

// get returns message id, nil when it is closed (or never produced).
func (m *meter) get(id model.MsgID) *meterMsg {
	w := &m.msgs
	i := uint(id - w.base) // below base: past the window, as unsigned
	if i-uint(w.head) >= uint(w.end-w.head) {
		return nil // before head, or at end or later
	}
	x := &w.chunks[i/msgChunk][i%msgChunk] // w.at(i)
	if !x.open {
		return nil
	}
	return x
}

// stateOf returns open message id's breakdown state, nil when it is closed.
func (m *meter) stateOf(id model.MsgID) *msgState {
	if x := m.get(id); x != nil {
		return &m.state[x.slot]
	}
	return nil
}

// produced opens message id for group g, stored at now and meant to be
// sent at intended.
func (m *meter) produced(g *group, id model.MsgID, intended, now clock.Time) {
	id = m.unit(g, id)
	m.nProduced++
	m.obs.grow(id)
	o := m.obs.live(id)
	if o == nil {
		o = m.obs.at(id)
	}
	o.storedMs, o.flags, o.group = uint32(now.Sub(m.start).Millis()), obsStored, uint16(g.idx)
	if m.fixed && intended < m.warmEnd {
		o.flags |= obsWarm
	}
	w := &m.msgs
	if id < w.base || int(id-w.base) < w.head {
		return
	}
	w.extend(int(id - w.base))
	slot := int32(len(m.state))
	if n := len(m.free); n > 0 {
		slot, m.free = m.free[n-1], m.free[:n-1]
	} else {
		m.state = append(m.state, msgState{})
	}
	*w.at(int(id - w.base)) = meterMsg{intended: intended, slot: slot, open: true}
	m.state[slot] = msgState{id: id, since: intended}
	m.open++
}

// delivered counts a delivery to group g at now; a message delivered
// before (or already closed) counts as redelivered, and one a crashed
// consumer held records its time to come back. A traced delivery
// (EvDeliver) is counted by onDeliver; this is for the others (a message
// the proxy took a lease of for the client and forwarded).
func (m *meter) delivered(g *group, id model.MsgID, now clock.Time) {
	m.deliveredUnit(m.unit(g, id), now)
}

// deliveredUnit counts a delivery of unit u at now (delivered's, and
// onDeliver's for a traced one) and returns the unit's record, nil when
// it is closed.
func (m *meter) deliveredUnit(u model.MsgID, now clock.Time) *meterMsg {
	if len(m.crashed) > 0 { // as close: most runs' consumers never crash holding one
		m.redelivered(u, now)
	}
	x := m.get(u)
	m.countDelivery(x)
	return x
}

// countDelivery counts a delivery of the message whose record is x (nil
// when closed), as a redelivery too when x was delivered before or is
// closed. Small enough to be inlined.
func (m *meter) countDelivery(x *meterMsg) {
	m.nDeliveries++
	if x != nil && !x.seen {
		x.seen = true
	} else {
		m.nRedelivered++
	}
}

// redelivered records, when a crashed consumer held message id, how long
// it took to come back (delivered at now).
func (m *meter) redelivered(id model.MsgID, now clock.Time) {
	if t, ok := m.crashed[id]; ok {
		delete(m.crashed, id)
		if m.redeliver == nil {
			m.redeliver = m.newCounts()
		}
		m.redeliver.record(int64(clampUs(now.Sub(t))))
	}
}

// acked records a successful ack (or a pull consumer's success) by group
// g at now of a message delivered at deliveredAt: the first closes the
// message and measures it.
func (m *meter) acked(g *group, id model.MsgID, deliveredAt, now clock.Time) {
	id = m.unit(g, id)
	x := m.get(id)
	if x == nil {
		return
	}
	m.measure(id, x, deliveredAt, now)
	m.close(id)
	m.nAcked++
	if now >= m.warmEnd && now < m.safeEnd {
		m.nWarmAcks++
	}
}

// measure records message id's latency, acked at now, and its parts from
// the attempt delivered at deliveredAt:
//
//	broker wait      intended send → delivered, less the redelivery wait
//	redelivery wait  leases that did not succeed, each from its start until
//	                 the message was available again (or leased again)
//	local buffer     delivered → consume start
//	processing       consume start → consume end
//	ack              consume end → the ack accepted
//
// They add up to the end-to-end latency exactly.
func (m *meter) measure(id model.MsgID, x *meterMsg, deliveredAt, now clock.Time) {
	o := m.obs.live(id)
	if o == nil {
		o = m.obs.at(id)
	}
	o.e2e, o.svc = clampUs(now.Sub(x.intended)), clampUs(now.Sub(deliveredAt))
	o.flags |= obsMeasured
	a := m.attemptAt(&m.state[x.slot], deliveredAt)
	if a == nil {
		o.flags |= obsUnattributed
		return
	}
	parts := [nParts]clock.Duration{
		partBroker:     deliveredAt.Sub(x.intended) - a.redeliv,
		partRedelivery: a.redeliv,
		partLocal:      a.startAt.Sub(deliveredAt),
		partProcessing: a.endAt.Sub(a.startAt),
		partAck:        now.Sub(a.endAt),
	}
	if m.atBroker {
		parts[partAtBroker] = m.state[x.slot].putWait + a.brk
		parts[partBroker] -= parts[partAtBroker]
	}
	if parts[0]|parts[1]|parts[2]|parts[3]|parts[4]|parts[5] < 0 { // one test of the signs, not one a part
		o.flags |= obsUnattributed
		return
	}
	o.part = [nParts]uint32{clampUs(parts[0]), clampUs(parts[1]), clampUs(parts[2]), clampUs(parts[3]), clampUs(parts[4]), clampUs(parts[5])}
}

// attemptAt returns the attempt delivered at deliveredAt that was consumed
// successfully, the latest when several were.
func (m *meter) attemptAt(x *msgState, deliveredAt clock.Time) *attempt {
	if a := &x.att; a.stage == stageEnded && a.deliverAt == deliveredAt {
		return a
	}
	if x.more {
		old := m.more[x.id]
		for i := len(old) - 1; i >= 0; i-- {
			if a := &old[i]; a.stage == stageEnded && a.deliverAt == deliveredAt {
				return a
			}
		}
	}
	return nil
}

// revived records a revive that wrote a copy, lag after the deadline of
// the lease it ended; with a fixed warm-up, leases that ended during it
// are left out (an automatic warm-up is found after the run: all count).
func (m *meter) revived(lag clock.Duration, deadline clock.Time) {
	if deadline >= m.warmEnd {
		m.reviveLag.record(int64(lag))
	}
}

// finish closes a message for group g (sent to a DLQ or dropped).
func (m *meter) finish(g *group, id model.MsgID) {
	m.finishUnit(m.unit(g, id))
}

func (m *meter) finishUnit(id model.MsgID) {
	if m.get(id) != nil {
		m.close(id)
	}
}

// close closes an open message and forgets the closed ones at the front.
func (m *meter) close(id model.MsgID) {
	if len(m.crashed) > 0 {
		delete(m.crashed, id)
	}
	if m.hol.orderly != nil {
		m.hol.settled(id)
	}
	w := &m.msgs
	x := w.at(int(id - w.base))
	if st := &m.state[x.slot]; st.more {
		delete(m.more, id)
	}
	m.free = append(m.free, x.slot)
	*x = meterMsg{}
	m.open--
	if w.head == w.end || !w.at(w.head).open { // else advance does nothing: the front is open and head below msgChunk (as every advance leaves it)
		w.advance()
	}
	if st := &m.obs; st.nFrozen < len(st.blocks)-st.keep { // freeze's first test, inline: a run shorter than keep blocks never freezes
		st.freeze(w.base + model.MsgID(w.head))
	}
}

// msgWindow is the meter's window of messages, in chunks of msgChunk
// that it reuses once every message of one is closed: a window that
// spans most of a run (a message open from its start to its end) is
// allocated once, not grown by copying. A chunk is an array, so that a
// message's index in it (modulo msgChunk) takes no bounds check.
type msgWindow struct {
	chunks []*[msgChunk]meterMsg  // chunks[0][0] is message base
	spare  []*[msgChunk]meterMsg  // chunks to reuse, zeroed when taken
	more   *[]*[msgChunk]meterMsg // a finished run's chunks, taken when spare is empty (nil: none; Reuse)
	base   model.MsgID
	head   int // the first message that may be open, from base
	end    int // the window's length, from base
}

const msgChunk = 1024

// at returns the message i after base (0 <= i < end). It divides i as
// unsigned: a shift and a mask, where a signed division by a power of two
// adds a sign correction to each.
func (w *msgWindow) at(i int) *meterMsg { return &w.chunks[uint(i)/msgChunk][uint(i)%msgChunk] }

// extend makes the window reach message i after base, new messages
// closed. It inlines: a new message mostly lies in the last chunk, and
// only one past it pays the call (addChunks).
func (w *msgWindow) extend(i int) {
	if i >= len(w.chunks)*msgChunk {
		w.addChunks(i)
	}
	w.end = max(w.end, i+1)
}

// addChunks adds chunks to the window until it holds message i.
func (w *msgWindow) addChunks(i int) {
	for i >= len(w.chunks)*msgChunk {
		var c *[msgChunk]meterMsg
		if n := len(w.spare); n > 0 {
			c, w.spare = w.spare[n-1], w.spare[:n-1]
			clear(c[:])
		} else if c = takeSpare(w.more); c != nil {
			clear(c[:])
		} else {
			c = new([msgChunk]meterMsg)
		}
		w.chunks = append(w.chunks, c)
	}
}

// advance moves head past the closed messages at the front and drops the
// chunks it left.
func (w *msgWindow) advance() {
	for w.head < w.end && !w.at(w.head).open {
		w.head++
	}
	k := w.head / msgChunk
	if w.head == w.end {
		k = len(w.chunks) // all closed: start afresh at head
	}
	if k == 0 {
		return
	}
	w.spare = append(w.spare, w.chunks[:k]...)
	n := copy(w.chunks, w.chunks[k:])
	clear(w.chunks[n:])
	w.chunks = w.chunks[:n]
	if w.head == w.end {
		w.base, w.head, w.end = w.base+model.MsgID(w.head), 0, 0
		return
	}
	w.base += model.MsgID(k * msgChunk)
	w.head -= k * msgChunk
	w.end -= k * msgChunk
}

func (m *meter) outstanding() int64 { return m.open }

// observe follows the trace for the latency breakdown: only the events
// every engine and client emit (docs/trace.md), so it works for any. It is
// small enough to be inlined: most events are of no kind the meter reads
// (m.reads: meterKinds), and with no orderly group it passes them by.
func (m *meter) observe(e *model.Event) {
	if m.reads[e.Kind] {
		m.observeEvent(e)
	}
}

// readsAll is reads once an orderly group subscribed: every kind.
var readsAll = func() (k [256]bool) {
	for i := range k {
		k[i] = true
	}
	return k
}()

// meterKinds are the kinds of event observeEvent reads without an orderly
// group (with one, the head-of-line meter reads every kind).
var meterKinds = func() (k [256]bool) {
	for _, kind := range []model.EventKind{model.EvSubscribe, model.EvLease, model.EvDeliver, model.EvConsumeStart,
		model.EvConsumeEnd, model.EvExpiredLocal, model.EvRenewed, model.EvReviveRetried, model.EvLeaseLost,
		model.EvRevive, model.EvLapse, model.EvReleased} {
		k[kind] = true
	}
	return k
}()

// observeEvent is observe of an event the meter may read.
func (m *meter) observeEvent(e *model.Event) {
	if m.hol.orderly != nil || e.Kind == model.EvSubscribe {
		u := e.Msg
		if k := e.Kind; k == model.EvConsumeEnd || k == model.EvExpiredLocal || k == model.EvLapse {
			u = m.unitOf(e)
		}
		m.hol.observe(e, u, m.posByName)
		if m.hol.orderly != nil {
			m.reads = &readsAll
		}
	}
	switch e.Kind {
	case model.EvLease:
		if x := m.stateOf(m.unitOf(e)); x != nil {
			m.begin(x, e.At, e.Client, e.Lease)
		}
	case model.EvDeliver:
		m.onDeliver(e)
	case model.EvConsumeStart:
		if x := m.stateOf(m.unitOf(e)); x != nil {
			a := &x.att
			if !x.latest(e, stageDelivered, stageDelivered) {
				a = m.searchIn(x, e, stageDelivered, stageDelivered)
			}
			if a != nil {
				a.startAt, a.stage = e.At, stageStarted
			}
		}
	case model.EvConsumeEnd:
		m.onConsumeEnd(e)
	case model.EvExpiredLocal:
		if a := m.find(e, stageDelivered, stageEnded); a != nil {
			a.stage = stageFailed
		}
	case model.EvRenewed, model.EvReviveRetried:
		if e.Code == 0 && e.Next != 0 {
			m.follow(m.unitOf(e), e.Lease, e.Next)
		}
	case model.EvLeaseLost:
		if e.Next != 0 {
			m.follow(m.unitOf(e), e.Lease, e.Next)
		} else {
			m.available(e) // a restart forgot it: it can be leased again
		}
	case model.EvRevive, model.EvLapse:
		m.available(e)
	case model.EvCommit:
		if m.hol.orderly != nil {
			for _, id := range m.hol.passed(e, m.posByName) {
				m.finishUnit(id) // settled by the commit offset (holMeter.passed)
			}
		}
	case model.EvReleased:
		if e.Code == 0 && e.Ended != 0 {
			m.available(e)
		}
	}
}

// begin starts a new attempt of x at at. Time under a previous lease that
// no event made available again counts as redelivery wait.
func (m *meter) begin(x *msgState, at clock.Time, client int32, lease model.LeaseID) *attempt {
	if x.held {
		x.redeliv += at.Sub(x.since)
	}
	x.since, x.held = at, true
	if x.att.live() {
		if m.more == nil {
			m.more = map[model.MsgID][]attempt{}
		}
		m.more[x.id] = append(m.more[x.id], x.att)
		x.more = true
	}
	x.att = attempt{lease: lease, client: client, stage: stageLeased, redeliv: x.redeliv}
	if m.call.on {
		// The pop's wait counts as far as the message was there to wait.
		x.att.brk = max(min(m.call.start.Sub(m.call.arrived), m.call.start.Sub(max(x.since, x.stored))), 0)
		m.callLeases, m.callMsgs = append(m.callLeases, lease), append(m.callMsgs, x.id)
	}
	return &x.att
}

// onDeliver: the client has the message, under the lease the engine lent
// it; a delivery without a lease (Pull) is an attempt of its own. It counts
// the delivery too (deliveredUnit), with the unit it looks up and the
// record it needs, where sim.deliver called delivered after the event to
// look them up again.
func (m *meter) onDeliver(e *model.Event) {
	u := m.unitOf(e)
	o := m.obs.live(u)
	if o == nil {
		o = m.obs.at(u)
	}
	if o != nil {
		o.client = e.Client
	}
	mm := m.deliveredUnit(u, e.At) // for sim.deliver, the only tracer of EvDeliver
	if mm == nil {
		return
	}
	x := &m.state[mm.slot] // stateOf
	var a *attempt
	if l := &x.att; e.Lease != 0 && l.stage == stageLeased && l.lease == e.Lease {
		a = l // the latest lease, as a rule (search would find it first)
	} else if e.Lease != 0 && (x.att.stage != 0 || x.more) { // else no attempt yet: an engine that traces no lease
		a = m.search(x, func(a *attempt) bool { return a.stage == stageLeased && a.lease == e.Lease })
	}
	if a == nil {
		a = m.begin(x, e.At, e.Client, e.Lease)
	}
	a.client, a.deliverAt, a.stage = e.Client, e.At, stageDelivered
}

// onConsumeEnd counts a successful consumption and ends the attempt. A
// consumption without a lease (Pull) counts only by the client the message
// was delivered to last: an owner that lost the queue meanwhile consumed
// a message its new owner will deliver again (the checker's rule).
func (m *meter) onConsumeEnd(e *model.Event) {
	ok := e.Reason.Consumed()
	u := m.unitOf(e) // once, for the record and the attempt
	if ok {
		o := m.obs.live(u)
		if o == nil {
			o = m.obs.at(u) // a frozen record is decoded only when it may change
		}
		if o != nil && o.successes < 255 && (e.Lease != 0 || o.client == e.Client) {
			o.successes++
		}
	}
	x := m.stateOf(u)
	if x == nil {
		return
	}
	a := &x.att
	if !x.latest(e, stageStarted, stageStarted) {
		if a = m.searchIn(x, e, stageStarted, stageStarted); a == nil {
			return
		}
	}
	a.endAt, a.stage = e.At, stageFailed
	if ok {
		a.stage = stageEnded
	}
}

// find returns the latest attempt of e's client in a stage from lo to hi,
// preferring one under the lease e names (a client names the lease it
// holds, which follows a renewal only once its answer is back).
func (m *meter) find(e *model.Event, lo, hi uint8) *attempt {
	x := m.stateOf(m.unitOf(e))
	if x == nil {
		return nil
	}
	if x.latest(e, lo, hi) {
		return &x.att
	}
	return m.searchIn(x, e, lo, hi)
}

// latest reports whether x's latest attempt is find's answer for e: its
// client's, under its lease, in a stage from lo to hi. It is the common
// case (the first search would find it first), tested inline by find's
// callers that hold x already.
func (x *msgState) latest(e *model.Event, lo, hi uint8) bool {
	a := &x.att
	return a.client == e.Client && a.stage >= lo && a.stage <= hi && a.lease == e.Lease
}

// searchIn is find past x's latest attempt under e's lease.
func (m *meter) searchIn(x *msgState, e *model.Event, lo, hi uint8) *attempt {
	in := func(a *attempt) bool { return a.client == e.Client && a.stage >= lo && a.stage <= hi }
	if a := m.search(x, func(a *attempt) bool { return in(a) && a.lease == e.Lease }); a != nil {
		return a
	}
	return m.search(x, in)
}

// search returns x's latest attempt for which ok holds.
func (m *meter) search(x *msgState, ok func(*attempt) bool) *attempt {
	if ok(&x.att) {
		return &x.att
	}
	if x.more {
		old := m.more[x.id]
		for i := len(old) - 1; i >= 0; i-- {
			if ok(&old[i]) {
				return &old[i]
			}
		}
	}
	return nil
}

// follow: lease next replaces lease (a renewal, a retried revive, a
// record written over).
func (m *meter) follow(id model.MsgID, lease, next model.LeaseID) {
	if x := m.stateOf(id); x != nil {
		if a := m.search(x, func(a *attempt) bool { return a.lease == lease }); a != nil {
			a.lease = next
		}
	}
}

// available: the latest lease of the message ended and the message can be
// leased again (a revive's copy, a lapse, a release, a forgotten lease).
func (m *meter) available(e *model.Event) {
	x := m.stateOf(m.unitOf(e))
	if x == nil || !x.held || e.Lease != x.att.lease {
		return
	}
	x.redeliv += e.At.Sub(x.since)
	x.since, x.held = e.At, false
	if x.att.stage == stageLeased {
		x.att.stage = stageFailed // never delivered, and now nobody can ack it
	}
}

// record appends a time-series point at at (since the start): counts since
// the previous point, and the backlog and the engine's in-flight level.
func (m *meter) record(at clock.Duration, inFlight int64) {
	p := model.SeriesPoint{
		AtMs:     at.Millis(),
		Produced: m.nProduced, Acked: m.nAcked, Redelivered: m.nRedelivered,
		Backlog: m.open, InFlight: inFlight,
	}
	d := p
	d.Produced -= m.last.Produced
	d.Acked -= m.last.Acked
	d.Redelivered -= m.last.Redelivered
	m.last = p
	m.series = append(m.series, d)
}

// clampUs is a latency as a meterObs stores it: at most the histograms'
// largest value.
func clampUs(d clock.Duration) uint32 { return uint32(min(max(int64(d), 0), histMax)) }

func record(h *hdrhistogram.Histogram, v int64) {
	if err := h.RecordValue(v); err != nil {
		panic("sim: histogram rejected a value in its range: " + err.Error())
	}
}

func latency(h *hdrhistogram.Histogram) model.Latency {
	if h.TotalCount() == 0 {
		return model.Latency{}
	}
	return model.Latency{
		Count: h.TotalCount(), Mean: int64(h.Mean() + 0.5),
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: histMaxOf(h),
	}
}

// brokerCall is the request the broker cost model is serving.
type brokerCall struct {
	on             bool
	arrived, start clock.Time
}

// putServed: with a broker cost model, message id's put waited wait and
// was served at now (for every group it was stored for).
func (m *meter) putServed(id model.MsgID, wait clock.Duration, now clock.Time) {
	for pos := range m.k {
		if x := m.stateOf(m.unitAt(id, pos)); x != nil {
			x.stored, x.putWait = now, wait
		}
	}
}

// popServing: the broker starts serving a pop that arrived at arrived.
func (m *meter) popServing(arrived, now clock.Time) {
	m.call = brokerCall{on: true, arrived: arrived, start: now}
}

// popServed: the pop's service takes svc, which its leases' attempts
// spend at the broker.
func (m *meter) popServed(svc clock.Duration) {
	for i, id := range m.callMsgs {
		if x := m.stateOf(id); x != nil && x.att.lease == m.callLeases[i] {
			x.att.brk += svc
		}
	}
	m.call = brokerCall{}
	m.callLeases, m.callMsgs = m.callLeases[:0], m.callMsgs[:0]
}
