package check

import (
	"fmt"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// historyCap bounds a message's remembered trace lines: the first event
// (normally its produce) plus the most recent ones.
const historyCap = 30

// uncertainGrace is how long after its deadline a record whose existence
// the ledger cannot be sure of (made before a broker restart, or left
// ambiguous by an offset-only cache delete) may still revive. Past it, the
// record no longer keeps a settled message in memory.
const uncertainGrace = 60_000 // ms

type settleKind uint8

const (
	unsettled settleKind = iota
	settledAck
	settledDLQ
	settledDrop
)

func (k settleKind) String() string {
	return [...]string{"unsettled", "acked", "dlq", "dropped"}[k]
}

// loc is one place the message lives: the produced location or a retry
// copy. Its identity, as receipt handles see it, is (flag, queue, offset).
type loc struct {
	topic  string // "" when only a handle named it
	flag   model.RetryType
	queue  int32
	offset int64
	seq    int64 // the event that made it visible
	bornMs int64 // when (0 if forgotten)
	popped bool
	// guessed: popped only by the ledger's guess of which location a lost
	// pop response took; a later pop without a restart corrects it.
	guessed bool
	popSeq  int64
	popMs   int64 // the broker's time of the latest pop from here (handle popTime)
	// delMs is when an ack or renew last deleted a record here by the
	// ledger's reckoning (0 if never), delVt that record's deadline. A pop
	// from here seen later but made before delMs may have been the one the
	// broker's offset-only cache delete removed instead.
	delMs, delVt int64
	// lineage is "" for the message's main line, or the by-design cause
	// that forked an extra line (extra records make extra copies, which may
	// overlap the main line's leases).
	lineage string
	// cause is why a retry copy exists (the revived record's story), and
	// why the detail of an unexplained one.
	cause, why string
	bogus      bool // not a place the message lives: already a delivery-location violation
	// origin is the delivery whose lease the revived record was (-1 if
	// none). When its ack was still in flight at the revive (cause
	// ack_lost) and arrives before the copy is delivered, the cause is a
	// late ack (lease_expiry) instead.
	origin int32
}

func (l *loc) String() string {
	t := l.topic
	if t == "" {
		t = "flag" + fmt.Sprint(int32(l.flag))
	}
	return fmt.Sprintf("%s/%d@%d", t, l.queue, l.offset)
}

// record is an in-flight record the broker holds for the message, as far
// as the trace tells.
type record struct {
	id       int32
	loc      int32
	handleVt int64 // the visibility timeout its receipt handle names (ms)
	vt       int64 // the broker's current one (moves on a failed revive)
	// retriedFrom is vt before an EvReviveRetried moved it (0 if none),
	// retriedAt when: the event names only the location, so with two
	// records there it may have been the other one.
	retriedFrom, retriedAt int64
	owner                  int32 // delivery whose lease it is, -1 when unknown
	lineage                string
	// kindCause is set when the record itself exists by design as an extra:
	// renew_after_revive or stale_handle.
	kindCause string
	popMs     int64 // when the broker made it (its handle's popTime)
	pop       bool  // made by a pop (only those can sit in the broker's cache)
	fuzzy     bool  // an offset-only delete may have removed it instead of a sibling
	// superseded: a later renew of the same lease should have deleted it
	// but did not; when it revives, the newer handle's record lives on too.
	superseded bool
	fuzzCause  string
	seq        int64
}

type consumeState uint8

const (
	consumePending consumeState = iota
	consumeStarted
	consumeOK
	consumeFailed
	consumeAborted
)

// delivery is one EvDeliver and what its consumer did with the lease.
type delivery struct {
	seq         int64
	client      int32
	loc         int32
	cur         int32 // id of the lease's latest record
	cause       string
	dupCause    string // what a duplicate on this delivery is blamed on
	lineage     string
	pull        bool // a Pull consumer's delivery: no handle, no lease
	state       consumeState
	ackSent     int32
	ackDone     int32
	ackLost     bool
	ackRejected bool
	staleAck    bool
	ackedVts    []int64        // handle deadlines of accepted acks
	lastAck     lastAck        // to pair EvAckAccepted with EvAckResponseLost
	expiredAt   int64          // ms of an EvExpiredLocal, 0 if none
	pending     []pendingRenew // renews sent and not yet answered, oldest first
	vts         []int64        // deadlines of the handles this lease was given
}

type pendingRenew struct {
	vt  int64 // the deadline of the handle renewed
	seq int64 // the EvChangeSent
	h   string
}

type lastAck struct {
	kind   model.EventKind
	handle string
}

// msgState is the ledger entry of one UNIQ_KEY.
type msgState struct {
	key      string
	topic    string // produced topic: what the client must be shown
	firstSeq int64
	settled  settleKind
	phantom  bool // delivered but never produced
	inflated bool // rebuilt from a tombstone: older history is forgotten
	// okFirst is the earliest delivery consumed successfully, -1 for none,
	// -2 when that delivery was forgotten with the tombstone.
	okFirst int32
	// lastClient/lastSeq: the last delivery kept by the tombstone, for a
	// Pull re-delivery after the message was forgotten.
	lastClient   int32
	lastSeq      int64
	lostReported bool
	inSweep      bool
	nextRec      int32
	locs         []loc
	recs         []record // present records
	ghosts       []record // removed under ambiguity: may still revive
	// orphans are retry copies written for a record no delivery had made
	// yet (by deadline): a client paused past its lease receives the pop
	// after the broker revived it.
	orphans []orphan
	dels    []delivery
	hist    []model.Event
}

type orphan struct {
	loc int32 // the copy, or (retry) the record's location
	vt  int64 // the revived record's deadline, or (retry) its new one
	// retry: a failed revive of a record not seen yet. atMs: when.
	retry bool
	atMs  int64
}

// tomb is what remains of a settled message that cannot come back unless
// the broker re-pops it.
type tomb struct {
	topic      string
	how        settleKind
	okSeen     bool
	lastClient int32
	lastSeq    int64
	// locs are Checker.tombLocs at locAt .. locAt+nLocs-1.
	locAt, nLocs int32
}

// tombLoc is what a tombstone keeps of a location: enough to tell a
// broker re-pop after a restart from an unexplained one.
type tombLoc struct {
	guessed      bool
	flag         model.RetryType
	queue        int32
	offset       int64
	popMs        int64
	delMs, delVt int64
}

// pullQueue names a queue for rebalance tracking.
type pullQueue struct {
	topic string
	queue int32
}

// remember appends e to m's history. A new history reuses the buffer of a
// forgotten message when one is free (see recycleHist).
func (c *Checker) remember(m *msgState, e *model.Event) {
	if m.hist == nil {
		if n := len(c.histFree); n > 0 {
			m.hist = c.histFree[n-1]
			c.histFree = c.histFree[:n-1]
		} else {
			m.hist = make([]model.Event, 0, 8) // a clean life is about 7 events
		}
	}
	if len(m.hist) < historyCap {
		m.hist = append(m.hist, *e)
		return
	}
	copy(m.hist[1:], m.hist[2:])
	m.hist[len(m.hist)-1] = *e
}

// keyRef is what the ledger knows of a UNIQ_KEY: its live entry m, or
// (m nil) its tombstone tombSlab[tomb].
type keyRef struct {
	m    *msgState
	tomb int32
}

// msg is the live entry of key, or nil.
func (c *Checker) msg(key string) *msgState { return c.keys[key].m }

// setLive makes m the live entry of its key (replacing a tombstone).
func (c *Checker) setLive(m *msgState) {
	c.keys[m.key] = keyRef{m: m}
	c.live++
}

// newMsg returns a ledger entry holding v, reusing a forgotten entry and
// its slices' storage when one is free (see maybeForget).
func (c *Checker) newMsg(v msgState) *msgState {
	n := len(c.msgFree)
	if n == 0 {
		return &v
	}
	m := c.msgFree[n-1]
	c.msgFree = c.msgFree[:n-1]
	v.locs, v.recs, v.ghosts, v.orphans, v.dels, v.hist = m.locs[:0], m.recs[:0], m.ghosts[:0], m.orphans[:0], m.dels[:0], m.hist[:0]
	*m = v
	return m
}

// recycleHist hands the history buffer of a message being forgotten to
// the free list. Only maybeForget calls it, as the last use of m.
func (c *Checker) recycleHist(m *msgState) {
	if m.hist == nil {
		return
	}
	clear(m.hist) // drop the strings it points to
	c.histFree = append(c.histFree, m.hist[:0])
	m.hist = nil
}

func (m *msgState) history() []string {
	out := make([]string, len(m.hist))
	for i := range m.hist {
		out[i] = m.hist[i].String()
	}
	return out
}

func (m *msgState) findLoc(flag model.RetryType, q int32, off int64) int32 {
	for i := range m.locs {
		l := &m.locs[i]
		if l.flag == flag && l.queue == q && l.offset == off {
			return int32(i)
		}
	}
	return -1
}

func (m *msgState) addLoc(l loc) int32 {
	m.locs = append(m.locs, l)
	return int32(len(m.locs) - 1)
}

func (m *msgState) locsText() string {
	var b strings.Builder
	for i := range m.locs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.locs[i].String())
	}
	return "[" + b.String() + "]"
}

// rec returns the present record with id, or nil.
func (m *msgState) rec(id int32) *record {
	for i := range m.recs {
		if m.recs[i].id == id {
			return &m.recs[i]
		}
	}
	return nil
}

// findRec is the index of the present record at li whose handle names vt.
func (m *msgState) findRec(li int32, vt int64) int {
	for i := range m.recs {
		if m.recs[i].loc == li && m.recs[i].handleVt == vt {
			return i
		}
	}
	return -1
}

func (m *msgState) hasGhost(li int32, vt int64) bool {
	for i := range m.ghosts {
		if m.ghosts[i].loc == li && m.ghosts[i].vt == vt {
			return true
		}
	}
	return false
}

// firstAt is the index of the first present record at li, or -1.
func (m *msgState) firstAt(li int32) int {
	for i := range m.recs {
		if m.recs[i].loc == li {
			return i
		}
	}
	return -1
}

// addRec stores a record. One already under the same key (location and
// deadline) is replaced, as the broker's put replaces it.
func (m *msgState) addRec(r record) int32 {
	r.id = m.nextRec
	m.nextRec++
	for i := range m.recs {
		if m.recs[i].loc == r.loc && m.recs[i].vt == r.vt {
			m.recs[i] = r
			return r.id
		}
	}
	m.recs = append(m.recs, r)
	return r.id
}

// takeRec removes present record i and returns it.
func (m *msgState) takeRec(i int) record {
	r := m.recs[i]
	m.recs = append(m.recs[:i], m.recs[i+1:]...)
	return r
}

func (m *msgState) recsText() string {
	if len(m.recs) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := range m.recs {
		r := &m.recs[i]
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s until %v (from event #%d)", m.locs[r.loc].String(), clock.FromMillis(r.vt), r.seq)
	}
	return b.String()
}

// leaseOf is the delivery a handle belongs to: the client's latest at li
// known by that deadline (a client may hold its own pop and a re-pop of
// one location), else its latest at li.
func (m *msgState) leaseOf(client, li int32, vt int64) int32 {
	for i := len(m.dels) - 1; i >= 0; i-- {
		if d := &m.dels[i]; d.client == client && d.loc == li && d.knows(vt) {
			return int32(i)
		}
	}
	return m.latestDelivery(client, li)
}

// renewOf is the delivery a renew answer with deadline vt belongs to: of
// the client's leases at li with a renew pending, the one that renewed a
// handle with that same deadline, else the one that sent first; with none,
// its latest at li. ambiguous: several leases were waiting.
func (m *msgState) renewOf(client, li int32, vt int64) (di int32, ambiguous bool) {
	di, n := -1, 0
	for i := range m.dels {
		d := &m.dels[i]
		if d.client != client || d.loc != li || len(d.pending) == 0 {
			continue
		}
		n++
		switch {
		case di < 0, d.pending[0].vt == vt && m.dels[di].pending[0].vt != vt:
			di = int32(i)
		case (d.pending[0].vt == vt) == (m.dels[di].pending[0].vt == vt) && d.pending[0].seq < m.dels[di].pending[0].seq:
			di = int32(i)
		}
	}
	if di < 0 {
		return m.latestDelivery(client, li), false
	}
	return di, n > 1
}

// latestDelivery is the last delivery of the message to client at li.
func (m *msgState) latestDelivery(client int32, li int32) int32 {
	for i := len(m.dels) - 1; i >= 0; i-- {
		if m.dels[i].client == client && m.dels[i].loc == li {
			return int32(i)
		}
	}
	return -1
}

// earliestOpen is the first delivery to client whose consumption is in one
// of the given states.
func (m *msgState) earliestOpen(client int32, states ...consumeState) int32 {
	for i := range m.dels {
		d := &m.dels[i]
		if d.client != client {
			continue
		}
		for _, s := range states {
			if d.state == s {
				return int32(i)
			}
		}
	}
	return -1
}

// bornMs is when the message first became visible (0 if forgotten).
func (m *msgState) bornMs() int64 {
	if len(m.locs) == 0 {
		return 0
	}
	b := m.locs[0].bornMs
	for i := range m.locs {
		b = min(b, m.locs[i].bornMs)
	}
	return b
}

func (m *msgState) unpopped() bool {
	for i := range m.locs {
		if !m.locs[i].popped {
			return true
		}
	}
	return false
}

func (d *delivery) knows(vt int64) bool {
	for _, v := range d.vts {
		if v == vt {
			return true
		}
	}
	return false
}

func (d *delivery) acked(vt int64) bool {
	for _, v := range d.ackedVts {
		if v == vt {
			return true
		}
	}
	return false
}
