package pop

import (
	"cmp"
	"slices"

	"popsim/clock"
	"popsim/model"
)

// PopReviveService, one per revive queue (docs/rocketmq/checkpoint-path.md
// §9). A service alternates between waiting for its next round and a round
// that reads its revive queue from the revive offset, pairs acks with
// CKs in a map keyed by merge key, and then revives the CKs whose revive
// time the round has seen more than ReviveGrace past (mergeAndRevive).
//
// Time inside a round is RocketMQ's: pulls of RevivePullBatch happen back
// to back while they find messages; an empty pull sleeps ReviveEmptySleep;
// a message is visible to a pull once it is stored (timer deliveries at
// their slot, direct puts when made). The engine steps a service only at
// the pull times where something can change (a message becomes visible,
// endTime moves, the round gives up) and counts the empty pulls in
// between, which is exactly what pulling every ReviveEmptySleep would do.

// reviveService is one PopReviveService's state (volatile).
type reviveService struct {
	qid    int32
	offset int64 // the in-memory reviveOffset
	slow   int64
	// pulling: a round is reading; ending: it gave up and merges at due
	// (after the last sleep). due is the next step: a round start, a pull,
	// or the merge.
	pulling, ending bool
	due             int64
	// the round
	start, old, read int64
	endTime, firstRt int64
	noMsg            int64
	cks              roundTable // the round's map, by merge key
	all              []*roundCk // every CK read this round, replaced ones too
	jour             []revEnt   // every CK and ack read this round, in offset order
	// allBuf and jourBuf are all's and jour's storage, which a round
	// whose new offset passed their first entries leaves behind (push).
	allBuf    []*roundCk
	jourBuf   []revEnt
	mocks     map[string]*roundCk
	mockOrder []string
	msgs      int  // messages read this round
	cut       bool // reviveScanTime ended the round before a pull it made
	// slab holds the round's mocks, chunks (then free) its CKs' roundCks
	// in offset order, list the merge's order: all (and the maps and
	// slices above) are reused round after round.
	slab      []roundCk
	chunks    [][]roundCk
	free      [][]roundCk
	mockCks   []model.PopCheckPoint
	mockList  []*roundCk // the mocks by revive offset
	byMockCks []*roundCk // the CKs the mocks replaced
	// next is nextStep's answer while nextOK: it changes only with the
	// service's state, its revive queue and its queue's timer messages,
	// each of which clears nextOK (reviveChanged) when it changes.
	next   int64
	nextOK bool
	// carry: the last round's state past its new offset carryBase, what a
	// round starting after carryBase would build from reading again the
	// messages up to carryRead (carryFrom).
	carry                bool
	carryBase, carryRead int64
	warmed               uint64 // warmBatch's and warmMerge's sum, kept so that their reads are made
}

// revEnt is a CK or ack message a round read (skipped and bad ones are
// not kept). pair is the offset of the CK it is (a CK) or the one it
// paired with (an ack; -1 when none): once a round's new offset is at or
// past it, an ack pairs with no CK. d is an ack's body (for a mock), nil
// for a CK.
type revEnt struct {
	off, deliver, pair int64
	d                  *reviveBody
}

// push appends x to view, a slice of buf ending where buf does, first
// moving view to buf's start when it is full and is not there.
func push[T any](view, buf *[]T, x T) {
	v := *view
	if len(v) == cap(v) {
		if cap(v) < cap(*buf) {
			b := (*buf)[:cap(*buf)]
			n := copy(b, v)
			clear(b[n:])
			v = b[:n]
		} else {
			v = append(v, x)
			*view, *buf = v, v
			return
		}
	}
	*view = append(v, x)
}

// ckChunk is how many CK roundCks a chunk holds.
const ckChunk = 128

// newCkRoundCk is a zeroed roundCk for a CK this round reads. CKs are
// read in offset order and chunks never grow in place: a chunk whose last
// CK a round's new offset passed holds no CK a later round needs.
func (s *reviveService) newCkRoundCk() *roundCk {
	if n := len(s.chunks); n == 0 || len(s.chunks[n-1]) == cap(s.chunks[n-1]) {
		var c []roundCk
		if f := len(s.free); f > 0 {
			c, s.free = s.free[f-1], s.free[:f-1]
		} else {
			c = make([]roundCk, 0, ckChunk)
		}
		s.chunks = append(s.chunks, c)
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = (*c)[:len(*c)+1]
	return &(*c)[len(*c)-1]
}

// newRoundCk is a zeroed roundCk of this round. The slab grows by new
// chunks, never in place, so the pointers it gave out stay valid.
func (s *reviveService) newRoundCk() *roundCk {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]roundCk, 0, max(16, 2*cap(s.slab)))
	}
	s.slab = s.slab[:len(s.slab)+1]
	return &s.slab[len(s.slab)-1]
}

// newMockCk is a zeroed CK for a mock of this round, from a slab that,
// as the roundCks', grows by new chunks.
func (s *reviveService) newMockCk() *model.PopCheckPoint {
	if len(s.mockCks) == cap(s.mockCks) {
		s.mockCks = make([]model.PopCheckPoint, 0, max(4, 2*cap(s.mockCks)))
	}
	s.mockCks = s.mockCks[:len(s.mockCks)+1]
	return &s.mockCks[len(s.mockCks)-1]
}

// resetRound empties the round's state, keeping its storage.
func (s *reviveService) resetRound() {
	s.cks.reset()
	clear(s.all)
	clear(s.jour)
	s.all, s.jour = s.allBuf[:0], s.jourBuf[:0]
	for _, c := range s.chunks {
		clear(c)
		s.free = append(s.free, c[:0])
	}
	clear(s.chunks)
	s.chunks = s.chunks[:0]
	s.resetMocks()
	s.carry = false
}

// resetMocks forgets the round's mocks and merge list.
func (s *reviveService) resetMocks() {
	if s.mocks == nil {
		s.mocks = map[string]*roundCk{}
	}
	clear(s.mocks)
	clear(s.slab)
	clear(s.mockList)
	clear(s.byMockCks)
	clear(s.mockCks)
	s.mockOrder, s.slab, s.mockList, s.byMockCks, s.mockCks = s.mockOrder[:0], s.slab[:0], s.mockList[:0], s.byMockCks[:0], s.mockCks[:0]
}

// carryFrom keeps, of the round that ended with new offset base, what a
// round starting after base would build again from the messages up to
// s.read, but for what depends on its time (the mocks, firstRt): the CKs
// past base with their bits (an ack pairs with a CK before it, so the
// acks that set them are past base too) and the replacements among them
// (a mock's is the merge's, not the reading's); the map without the CKs
// at or before base (a key whose last CK was one has none); the acks
// past base (one whose CK is at or before base pairs with none: its
// revEnt.pair says so). Each of those is sliced or walked past base
// alone. A chunk whose CKs are all at or before base is free again.
func (b *Broker) carryFrom(s *reviveService, base int64) {
	i := 0
	for ; i < len(s.all) && s.all[i].off <= base; i++ {
		if rc := s.all[i]; !rc.replaced || rc.byMock {
			s.cks.remove(rc.key, rc.hash)
		}
	}
	clear(s.all[:i])
	s.all = s.all[i:]
	for _, rc := range s.byMockCks {
		if rc.off > base {
			rc.replaced, rc.byMock = false, false
		}
	}
	k := 0
	for k < len(s.jour) && s.jour[k].off <= base {
		k++
	}
	clear(s.jour[:k])
	s.jour = s.jour[k:]
	f := 0
	for ; f < len(s.chunks); f++ {
		c := s.chunks[f]
		if len(c) < cap(c) || c[len(c)-1].off > base {
			break
		}
		clear(c)
		s.free = append(s.free, c[:0])
	}
	n := copy(s.chunks, s.chunks[f:])
	clear(s.chunks[n:])
	s.chunks = s.chunks[:n]
	if len(s.chunks) == 1 && len(s.all) == 0 { // the last chunk, part full, all passed
		clear(s.chunks[0])
		s.chunks[0] = s.chunks[0][:0]
	}
	s.resetMocks()
	s.carry, s.carryBase, s.carryRead = true, base, s.read
}

// carriedEnd is the endTime a round reading jour's messages (all past
// base) gives: the latest deliver time of its CKs and of its acks but,
// unless EnableSkipLongAwaitingAck, those that pair with no CK, whose
// pair is at or before base. (Deliver times do not rise with offsets:
// acks come straight, CKs at their timer slot.)
func (s *reviveService) carriedEnd(base int64, skipAcks bool) int64 {
	var end int64
	for j := range s.jour {
		if e := &s.jour[j]; (e.pair > base || skipAcks && e.d != nil) && e.deliver > end {
			end = e.deliver
		}
	}
	return end
}

// roundCk is a CK read by a round, with the leases it carries. ck is
// the CK as its message's decoded body keeps it (which nothing writes
// to), or a mock's, made by the round (newMockCk); bits is its bitmap,
// with the indexes the round's acks acked set.
type roundCk struct {
	ck       *model.PopCheckPoint
	ref      *ckRef
	off      int64 // ck.ReviveOffset
	key      string
	hash     uint64 // mkHash(key)
	bits     int32
	mock     bool
	replaced bool // another CK with its merge key replaced it in the map
	byMock   bool // the merge's mock of its merge key replaced it
	// one says that ck's offset list holds one offset, StartOffset+d0
	// (start is ck.StartOffset): all that IndexOfAck reads of it, taken
	// with the CK (setAckIndex) so that its acks, read later in the round,
	// find their index here (indexOfAck) and not in the body, written a
	// revive window before and, a thousand messages after the CK's read,
	// out of the cache again.
	one   bool
	d0    int32
	start int64
}

// setAckIndex keeps in rc what indexOfAck needs of ck, its CK, when its
// offset list holds one offset.
func (rc *roundCk) setAckIndex(ck *model.PopCheckPoint) {
	if len(ck.QueueOffsetDiff) == 1 {
		rc.one, rc.d0, rc.start = true, ck.QueueOffsetDiff[0], ck.StartOffset
	}
}

// indexOfAck is rc.ck.IndexOfAck(o), from rc's own fields when it has
// them (setAckIndex).
func (rc *roundCk) indexOfAck(o int64) int {
	if !rc.one {
		return rc.ck.IndexOfAck(o)
	}
	i := 0
	if o < rc.start || int32(o-rc.start) != rc.d0 {
		i = -1
	}
	if invariants {
		assertf(i == rc.ck.IndexOfAck(o), "revive round: offset %d of a CK from %d at index %d, its IndexOfAck %d", o, rc.start, i, rc.ck.IndexOfAck(o))
	}
	return i
}

// ReviveRound summarises one finished revive round.
type ReviveRound struct {
	ReviveQueue int32
	Start, End  clock.Time
	// OldOffset and NewOffset are the revive offset before and after;
	// Read the messages the round read, Cks the CKs in its map.
	OldOffset, NewOffset int64
	Read, Cks            int
}

func (b *Broker) newReviveServices(startMs int64) []*reviveService {
	out := make([]*reviveService, b.cfg.ReviveQueueNum)
	for i := range out {
		s := &reviveService{qid: int32(i), slow: 1, due: startMs + b.cfg.ReviveInterval}
		s.offset = b.reviveCommitted(s.qid)
		s.cks.src = &b.slabs.roundSlots
		if r, ok := takeLast(b.reviveSpare); ok {
			s.allBuf, s.jourBuf, s.free = r.all, r.jour, r.chunks
		}
		out[i] = s
	}
	return out
}

// reviveKey is the revive group's offsets slot of revive queue rq.
func (b *Broker) reviveKey(rq int32) qkey {
	return qkey{b.names.pair(model.ReviveGroup, b.reviveTopicName()), rq}
}

// reviveCommitted is the revive group's committed offset, -1 when none.
func (b *Broker) reviveCommitted(rq int32) int64 {
	if s := b.offsets.peek(b.reviveKey(rq)); s != nil && s.has&hasCommit != 0 {
		return s.commit
	}
	return -1
}

// nextStepOf is nextStep(s), remembered until s, its revive queue or its
// timer messages change.
func (b *Broker) nextStepOf(s *reviveService) int64 {
	if !s.nextOK {
		s.next, s.nextOK = b.nextStep(s), true
	} else if invariants {
		assertf(s.next == b.nextStep(s), "revive service %d: remembered next step %d, now %d", s.qid, s.next, b.nextStep(s))
	}
	return s.next
}

// reviveChanged forgets the next step of the service of revive queue rq:
// a message was written to the queue or to its timer, or left either.
func (b *Broker) reviveChanged(rq int32) {
	if rq >= 0 && int(rq) < len(b.revivers) {
		b.forgetNext(b.revivers[rq])
	}
}

// forgetNext forgets the next step of service s: nextService asks it
// again, and asks every service when s had the earliest step.
func (b *Broker) forgetNext(s *reviveService) {
	s.nextOK = false
	if s == b.svcNext || s.qid >= 64 {
		b.svcDirty = svcAll
	} else {
		b.svcDirty |= 1 << s.qid
	}
}

// nextStep is when service s next changes anything.
func (b *Broker) nextStep(s *reviveService) int64 {
	if !s.pulling || s.ending {
		return s.due
	}
	g := s.due
	best := g + (40-s.noMsg)*ReviveEmptySleep // the pull that gives up
	q := b.reviveQueuePeek(s.qid)
	switch {
	case s.read < q.min:
		return g
	case s.read < q.maxOffset():
		best = min(best, pullGrid(g, q.log.slot(int(s.read-q.min)).StoreTimestamp))
	default:
		if d, ok := b.nextTimerDueFor(s.qid); ok {
			best = min(best, pullGrid(g, d))
		}
	}
	if s.endTime != 0 {
		best = min(best, pullGrid(g, s.endTime+ReviveEndTimeMove+1))
	}
	return best
}

// pullGrid is the first pull time at or after t of a streak whose next
// pull is at g.
func pullGrid(g, t int64) int64 {
	if t <= g {
		return g
	}
	return g + (t-g+ReviveEmptySleep-1)/ReviveEmptySleep*ReviveEmptySleep
}

// stepService brings service s to time t (= nextStep(s)) and takes the
// step there.
func (b *Broker) stepService(s *reviveService, t int64, res *CheckpointResult) {
	b.forgetNext(s)
	switch {
	case s.ending:
		b.finishRound(s, t, res)
	case !s.pulling:
		if !b.cfg.TimerWheelEnable { // the round is skipped
			s.due = t + b.cfg.ReviveInterval
			return
		}
		b.startRound(s, t)
		b.reviveTopicPull(s, t, res)
	default:
		s.noMsg += (t - s.due) / ReviveEmptySleep // the empty pulls skipped
		b.reviveTopicPull(s, t, res)
	}
}

func (b *Broker) startRound(s *reviveService, t int64) {
	s.pulling, s.start = true, t
	s.old = max(s.offset, b.reviveCommitted(s.qid))
	s.read, s.endTime, s.firstRt, s.noMsg, s.msgs, s.cut = s.old+1, 0, 0, 0, 0, false
	if s.carry && s.old == s.carryBase && s.old+1 >= b.reviveQueuePeek(s.qid).min && !b.reviveNoCarry {
		b.resumeRound(s, t)
		return
	}
	s.resetRound()
}

// resumeRound starts a round from the last one's carried state (carryFrom)
// instead of reading its messages again: its first pull, at t, would read
// them all (they are stored, none is bad, and reviveScanTime cuts no
// first pull), so they count as read now. What depends on t or on the
// configuration (a script may change it between rounds) is done again:
// the endTime they give (carriedEnd), the mocks of the acks that pair
// with no CK (mockForAck), in offset order, and firstRt, the revive time
// of the first CK or mock.
func (b *Broker) resumeRound(s *reviveService, t int64) {
	s.read = s.carryRead
	s.msgs = int(s.read - s.old - 1)
	b.stats.ReviveReads += int64(s.msgs)
	s.endTime = s.carriedEnd(s.old, b.cfg.EnableSkipLongAwaitingAck) // the configuration of now
	var first *roundCk
	if len(s.all) > 0 {
		first = s.all[0]
	}
	if b.cfg.EnableSkipLongAwaitingAck {
		for j := range s.jour {
			e := &s.jour[j]
			if e.d == nil || e.pair > s.old {
				continue
			}
			if s.firstRt == 0 && first != nil && first.off < e.off {
				s.firstRt = first.ck.ReviveTime()
			}
			b.mockForAck(s, t, e.off, e.d)
		}
	}
	if s.firstRt == 0 && first != nil {
		s.firstRt = first.ck.ReviveTime()
	}
	if invariants {
		b.checkCarried(s, t)
	}
}

// reviveTopicPull is one pull time of a round: read batches while they are not
// empty, then the empty pull's rules.
func (b *Broker) reviveTopicPull(s *reviveService, g int64, res *CheckpointResult) {
	q := b.reviveQueuePeek(s.qid)
	for {
		if s.read < q.min { // OFFSET_TOO_SMALL: the offset is corrected, the pull is empty
			b.commitRevive(s.qid, q.min-1)
			break
		}
		// the batch's entries, taken once for the scan and the reads (a
		// read stores nothing, so they stay where they are)
		var batch [RevivePullBatch]*model.Message
		n := 0
		for ; s.read+int64(n) < q.maxOffset() && n < RevivePullBatch; n++ {
			m := q.log.slot(int(s.read-q.min) + n)
			if m.StoreTimestamp > g {
				break
			}
			batch[n] = m
		}
		if n == 0 {
			break
		}
		s.noMsg = 0
		if g-s.start > b.cfg.ReviveScanTime {
			s.cut = true
			b.finishRound(s, g, res) // scan timeout: this batch is not read
			return
		}
		s.warmBatch(&q.revs, int(s.read-q.min), n)
		for i := 0; i < n; i++ {
			b.stats.ReviveReads++
			if !b.readRevive(s, g, batch[i], q.revs.slot(int(s.read-q.min))) {
				b.abortRound(s, g)
				return
			}
			s.read++
			s.msgs++
		}
	}
	if s.endTime != 0 && g-s.endTime > ReviveEndTimeMove {
		s.endTime = g // no timer backlog in popsim: the wheel is always caught up
	}
	if s.endTime-s.firstRt > ReviveGrace {
		b.finishRound(s, g, res)
		return
	}
	s.noMsg++
	s.due = g + ReviveEmptySleep
	if s.noMsg*ReviveEmptySleep > ReviveEmptyGiveUp {
		s.ending = true // merges after this last sleep
	}
}

// readRevive takes the revive queue's message m, whose typed form is *rev
// (queue.revs), into the round, decoding it on first use; false when its
// body does not decode (upstream's JSON exception aborts the round).
func (b *Broker) readRevive(s *reviveService, g int64, m *model.Message, rev **reviveBody) bool {
	if *rev == nil {
		*rev = b.decodeRevive(m)
	}
	d := *rev
	switch c := d.c(); {
	case d.bad:
		return false
	case d.skip:
		return true // skipped without moving endTime
	case c != nil: // a CK
		rc := s.newCkRoundCk()
		rc.ck, rc.bits, rc.ref, rc.off, rc.key, rc.hash = &c.ck, c.ck.BitMap, b.ckRefOf(c), c.ck.ReviveOffset, d.mk.key, d.mk.hash
		rc.setAckIndex(&c.ck)
		if old := s.cks.put(rc); old != nil {
			old.replaced = true
		}
		push(&s.all, &s.allBuf, rc)
		s.journal(revEnt{off: m.QueueOffset, deliver: d.deliver, pair: rc.off})
		if s.firstRt == 0 {
			s.firstRt = c.ck.ReviveTime()
		}
	case d.part >= ackPart: // an ack or bAck
		rc := s.cks.get(d.mk.key, d.mk.hash)
		e := revEnt{off: m.QueueOffset, deliver: d.deliver, pair: -1, d: d}
		if rc != nil {
			e.pair = rc.off
		}
		s.journal(e)
		if rc == nil {
			if !b.cfg.EnableSkipLongAwaitingAck {
				return true // the ack waits for its CK (#5408); endTime unmoved
			}
			b.mockForAck(s, g, m.QueueOffset, d)
		} else if a := d.a(); a.list == nil { // an ack
			if i := rc.indexOfAck(a.off); i > -1 {
				rc.bits |= 1 << uint(i)
			}
		} else {
			for _, o := range *a.list {
				if i := rc.indexOfAck(o); i > -1 {
					rc.bits |= 1 << uint(i)
				}
			}
		}
	}
	if d.deliver > s.endTime {
		s.endTime = d.deliver
	}
	return true
}

// warmBatch reads, of the typed forms of a batch of n messages of a
// revive queue from its entry i (revs), about to be read (readRevive),
// what readRevive reads first: each body's header, its merge key's hash
// (mk), the round table's slot for it, and a CK's ref and first fields. A body was written a revive window (~60 s)
// before and its key and slot are anywhere: cache misses that readRevive
// takes one after the other, each behind the last one's work, where the
// reads of this short loop are in flight at once. A form not decoded yet
// (nil) is skipped.
func (s *reviveService) warmBatch(revs *revWindow, i, n int) {
	sum := s.warmed
	for k := range n {
		d := *revs.slot(i + k)
		if d == nil || d.mk == nil {
			continue
		}
		sum += s.cks.peek(d.mk.hash)
		if c := d.c(); c != nil {
			sum += uint64(c.own.first) + uint64(c.ck.PopTime)
		}
	}
	s.warmed = sum
}

// journal appends e to the round's journal.
func (s *reviveService) journal(e revEnt) { push(&s.jour, &s.jourBuf, e) }

// decodeAck decodes an ack or bAck message and a bAck's acked offsets
// (nil for an ack, which acks its AckOffset).
func decodeAck(m *model.Message) (model.AckMsg, []int64, error) {
	if m.Tags == model.AckTag {
		a, err := model.ParseAckMsg(m.Body)
		return a, nil, err
	}
	a, err := model.ParseBatchAckMsg(m.Body)
	return a.AckMsg, a.AckOffsetList, err
}

// mockForAck is mockCkForAck: an ack whose CK has not been found for
// reviveAckWaitMs gets a mock CK (no messages) at the ack's offset, so the
// revive offset can pass it. d is the decoded body of the ack message at
// offset off.
func (b *Broker) mockForAck(s *reviveService, g int64, off int64, d *reviveBody) {
	if g-d.deliver <= b.cfg.ReviveAckWaitMs {
		return
	}
	key := d.mk.key
	am := d.a().msg()
	ck := ackCk(&am)
	ck.ReviveOffset = off
	if s.mocks[key] == nil {
		s.mockOrder = append(s.mockOrder, key)
	}
	rc := s.newRoundCk()
	rc.ck, rc.bits, rc.mock, rc.off, rc.key, rc.hash = s.newMockCk(), ck.BitMap, true, off, key, d.mk.hash
	*rc.ck = ck
	s.mocks[key] = rc
	if s.firstRt == 0 {
		s.firstRt = ck.ReviveTime()
	}
}

// abortRound ends a round that threw: no merge, the offset stays, and the
// next round starts after reviveInterval.
func (b *Broker) abortRound(s *reviveService, g int64) {
	s.pulling, s.ending = false, false
	s.due = g + b.cfg.ReviveInterval
	b.stats.ReviveRoundsAborted++
	s.carry = false // the next round reads from its start
}

// finishRound is the end of consumeReviveMessage, mergeAndRevive, and the
// wait before the next round.
func (b *Broker) finishRound(s *reviveService, g int64, res *CheckpointResult) {
	mocks := s.mockList[:0]
	for _, key := range s.mockOrder { // map.putAll(mockPointMap): the merge takes the mocks from s.mocks
		mk := s.mocks[key]
		if old := s.cks.get(key, mk.hash); old != nil {
			old.replaced, old.byMock = true, true
			s.byMockCks = append(s.byMockCks, old)
		}
		mocks = append(mocks, mk)
	}
	slices.SortFunc(mocks, func(a, b *roundCk) int { return cmp.Compare(a.off, b.off) })
	s.mockList = mocks
	// the map's CKs: those of s.all no other took the place of (nor a mock)
	cks := s.cks.n - len(s.byMockCks) + len(mocks)
	if invariants {
		s.checkMerge(cks)
	}
	// the merge's list, by revive offset, as far as the revive goes: the
	// CKs of the map in the order read, and the mocks, which are few
	newOffset := s.old
	var alive aliveMemo
	ahead := 0 // s.all[:ahead] has been read ahead (warmMerge)
	for i, j := 0, 0; ; {
		if i+warmChunk > ahead && ahead < len(s.all) {
			ahead = b.warmMerge(s, ahead)
		}
		for i < len(s.all) && s.all[i].replaced {
			i++
		}
		var rc *roundCk
		switch {
		case i < len(s.all) && (j == len(mocks) || s.all[i].off < mocks[j].off):
			rc, i = s.all[i], i+1
		case j < len(mocks):
			rc, j = mocks[j], j+1
		}
		if rc == nil || s.endTime-rc.ck.ReviveTime() <= ReviveGrace {
			break
		}
		if !alive.of(b, rc.ck) {
			b.loseCk(s, rc, g, res)
		} else {
			b.reviveCk(s, rc, g, res)
		}
		newOffset = rc.off
	}
	for _, rc := range s.all {
		if rc.off > newOffset {
			break
		}
		if rc.replaced {
			b.loseCk(s, rc, g, res) // its merge key's later CK took its place: never revived
		}
	}
	if newOffset > s.old {
		b.commitRevive(s.qid, newOffset)
	}
	s.offset = newOffset
	res.Rounds = append(res.Rounds, ReviveRound{ReviveQueue: s.qid, Start: clock.FromMillis(s.start), End: clock.FromMillis(g),
		OldOffset: s.old, NewOffset: newOffset, Read: s.msgs, Cks: cks})
	s.pulling, s.ending = false, false
	if cks == 0 {
		s.due = g + s.slow*b.cfg.ReviveInterval + b.cfg.ReviveInterval
		if s.slow < b.cfg.ReviveMaxSlow {
			s.slow++
		}
	} else {
		s.slow = 1
		s.due = g + b.cfg.ReviveInterval
	}
	b.carryFrom(s, newOffset)
}

// warmMerge reads, of the CKs s.all[from:] up to 2*warmChunk, what the
// merge reads of each CK first (its revive time and number, group and
// topic, ref and merge-key entry, and the merge-key table's slots where a
// drop will delete the entry), and returns where it stopped. A CK was
// read by the round, but its body, ref and entry were written a revive
// window (~60 s) before and are cache misses that the merge takes one CK
// after the other, each behind the last one's work, where the reads of
// this short loop are in flight at once. The merge keeps up to two
// chunks read ahead of the CK it is at, and none past the first CK it
// would stop at (one read, but not merged, would be a miss again by the
// next round).
func (b *Broker) warmMerge(s *reviveService, from int) int {
	to := min(from+2*warmChunk, len(s.all))
	sum := s.warmed
	for _, rc := range s.all[from:to] {
		ck := rc.ck
		if s.endTime-ck.ReviveTime() <= ReviveGrace { // the merge stops here, if not before
			to = len(s.all)
			break
		}
		sum += uint64(ck.Num) + uint64(len(ck.CID))
		if r := rc.ref; r != nil {
			sum += uint64(r.ended) + b.ckl.keys.warmEntry(r.e)
		}
	}
	s.warmed = sum
	return to
}

// checkMerge (invariants): the merge's list, which finishRound walks
// without building it (the CKs of s.all not replaced, in the order read,
// and the mocks by revive offset), is the map (s.cks, the mocks put in)
// sorted by revive offset, and has cks entries.
func (s *reviveService) checkMerge(cks int) {
	var list, want []*roundCk
	j := 0
	for _, rc := range s.all {
		if rc.replaced {
			continue
		}
		for ; j < len(s.mockList) && s.mockList[j].off < rc.off; j++ {
			list = append(list, s.mockList[j])
		}
		list = append(list, rc)
	}
	list = append(list, s.mockList[j:]...)
	s.cks.each(func(rc *roundCk) {
		if !rc.byMock {
			want = append(want, rc)
		}
	})
	want = append(want, s.mockList...)
	slices.SortFunc(want, func(a, b *roundCk) int { return cmp.Compare(a.ck.ReviveOffset, b.ck.ReviveOffset) })
	assertf(slices.Equal(list, want) && len(list) == cks, "revive round: merged list of %d (counted %d) is not the map's %d sorted", len(list), cks, len(want))
}

// aliveMemo is ckTopicAlive for the CKs of one merge, which come mostly
// of one group and topic: the last answer is kept and given again for
// the same group and topic, while it can still be right. A merge creates
// topics (retry topics, for the copies it writes) and deletes no topic
// or group: a CK found alive stays alive, one found dead only until a
// topic is created.
type aliveMemo struct {
	cid, topic string
	topics     int // len(b.topics) when asked
	alive, ok  bool
}

func (m *aliveMemo) of(b *Broker, ck *model.PopCheckPoint) bool {
	if m.ok && sameString(ck.CID, m.cid) && sameString(ck.Topic, m.topic) && (m.alive || len(b.topics) == m.topics) {
		if invariants {
			assertf(m.alive == b.ckTopicAlive(ck), "revive merge: CK of %s/%s remembered alive=%v", ck.CID, ck.Topic, m.alive)
		}
		return m.alive
	}
	*m = aliveMemo{cid: ck.CID, topic: ck.Topic, topics: len(b.topics), alive: b.ckTopicAlive(ck), ok: true}
	return m.alive
}

// ckTopicAlive: the CK's normal topic and its group still exist.
func (b *Broker) ckTopicAlive(ck *model.PopCheckPoint) bool {
	_, g := b.groups[ck.CID]
	return g && b.topics[model.ParseNormalTopic(ck.Topic, ck.CID)] != nil
}

// loseCk ends a CK's live leases without a copy (ReviveLost).
func (b *Broker) loseCk(s *reviveService, rc *roundCk, g int64, res *CheckpointResult) {
	if rc.ref == nil {
		return
	}
	for i := 0; i < int(rc.ref.ck().Num); i++ {
		if l := b.end(rc.ref, i); l != 0 {
			rv := b.revival(rc, i, l)
			rv.Outcome = ReviveLost
			rv.Unpaired = b.unpaired(s, rc, i, g)
			b.stats.MayBeLost++
			res.Revivals = append(res.Revivals, rv)
		}
	}
	b.drop(rc.ref)
}

// revival describes lease l, index i of rc's CK.
func (b *Broker) revival(rc *roundCk, i int, l model.LeaseID) Revival {
	var rv Revival
	b.revivalInto(&rv, rc, i, l)
	return rv
}

// revivalInto is revival written into rv, a zero Revival, field by field.
func (b *Broker) revivalInto(rv *Revival, rc *roundCk, i int, l model.LeaseID) {
	ck := rc.ck
	rv.Lease, rv.Deadline = l, clock.FromMillis(ck.ReviveTime())
	r := &rv.Record
	r.PopTime, r.GroupID, r.TopicID, r.QueueID = ck.PopTime, ck.CID, ck.Topic, ck.QueueID
	r.RetryFlag, r.InvisibleTime, r.Offset = model.RetryFlagOf(ck.Topic), ck.InvisibleTime, ck.AckOffsetByIndex(i)
	r.AttemptTimes = int32(ck.ParseRePutTimes())
}

// reviveAcked is reviveCk for a CK whose every index the round paired
// with an ack, nearly every CK (default run: 60.2 k of 61.0 k): a loop
// that keeps little live, where reviveCk's, whose body keeps much, spilled
// and reloaded it at every index.
func (b *Broker) reviveAcked(rc *roundCk, res *CheckpointResult) {
	for j := 0; j < int(rc.ck.Num); j++ {
		b.revivePaired(rc, j, rc.ref.leaseOr0(j), res)
	}
	if rc.ref != nil {
		b.drop(rc.ref)
	}
}

// revivePaired is reviveCk for index j of rc (lease l), paired with an
// ack: its revival, ReviveAcked, if the index was still live.
func (b *Broker) revivePaired(rc *roundCk, j int, l model.LeaseID, res *CheckpointResult) {
	if b.end(rc.ref, j) != 0 {
		// built where it goes: a Revival is some 30 words
		res.Revivals = append(res.Revivals, Revival{})
		rv := &res.Revivals[len(res.Revivals)-1]
		b.revivalInto(rv, rc, j, l)
		rv.Outcome = ReviveAcked
		b.stats.RevivePaired++
	}
}

// reviveCk is reviveMsgFromCk: every index not acked is read and written
// to the retry topic; once all are done, the failed ones are re-put
// (rePutCK). The reads are local and complete at once, so the in-flight
// map and its throttle never hold anything back.
func (b *Broker) reviveCk(s *reviveService, rc *roundCk, g int64, res *CheckpointResult) {
	ck := rc.ck
	if all := uint32(1)<<uint(ck.Num) - 1; uint32(rc.bits)&all == all {
		b.reviveAcked(rc, res)
		return
	}
	var failed []int // failed indexes; readFailed[k] tells a read that threw from a failed copy
	var readFailed []bool
	for j := 0; j < int(ck.Num); j++ {
		l := rc.ref.leaseOr0(j)
		if rc.bits&(1<<uint(j)) != 0 {
			b.revivePaired(rc, j, l, res)
			continue
		}
		rv := b.revival(rc, j, l)
		rv.Unpaired = b.unpaired(s, rc, j, g)
		off := ck.AckOffsetByIndex(j)
		b.stats.ReadCalls++
		if b.reviveReadFails() {
			failed, readFailed = append(failed, j), append(readFailed, true)
			continue
		}
		if ck.BrokerName != b.cfg.BrokerName {
			// EscapeBridge reads from the broker the CK names; popsim has
			// one broker, so no other is found: "need retry"
			failed, readFailed = append(failed, j), append(readFailed, false)
			continue
		}
		var orig *model.Message
		if q := b.queue(ck.Topic, ck.QueueID); q != nil {
			orig = q.at(off)
		}
		if orig == nil { // gone: a local read that finds nothing is done
			b.end(rc.ref, j)
			rv.Outcome = ReviveSkipped
			b.stats.ReviveSkipped++
			res.Revivals = append(res.Revivals, rv)
			continue
		}
		b.stats.ReadMessages++
		if !b.reviveCopy(s, rc, j, orig, g, &rv, res) {
			failed, readFailed = append(failed, j), append(readFailed, false)
			continue
		}
		b.end(rc.ref, j)
		res.Revivals = append(res.Revivals, rv)
	}
	for k, j := range failed {
		if readFailed[k] && b.cfg.Bugs.ReviveReadFailureLosesRetry {
			// #10985: the completion callback throws at the first read that
			// failed: it and every failure after it are never re-put
			for _, j := range failed[k:] {
				rv := b.revival(rc, j, rc.ref.leaseOr0(j))
				rv.Unpaired = b.unpaired(s, rc, j, g)
				b.end(rc.ref, j)
				rv.Outcome = ReviveLost
				b.stats.MayBeLost++
				res.Revivals = append(res.Revivals, rv)
			}
			break
		}
		b.rePutCK(s, rc, j, g, res)
	}
	if rc.ref != nil {
		b.drop(rc.ref)
	}
}

// unpaired says why lease j of rc, ending at g without its ack, had an
// ack message pending that the round did not pair (AckPaired when it had
// none): the round read it not because reviveScanTime cut off the pull
// that held it (AckCutOff), or because it had not reached the revive
// queue (AckMissed).
func (b *Broker) unpaired(s *reviveService, rc *roundCk, j int, g int64) UnpairedAck {
	switch {
	case rc.ref == nil || rc.ref.pending&(1<<uint(j)) == 0:
		return AckPaired
	case s.cut && rc.ref.ackAt <= g:
		return AckCutOff
	}
	return AckMissed
}

func (r *ckRef) leaseOr0(i int) model.LeaseID {
	if r == nil {
		return 0
	}
	return r.lease(i)
}

// reviveCopy is reviveRetry: the retry copy (the KV path's copy rules),
// counted as done only when it was written.
func (b *Broker) reviveCopy(s *reviveService, rc *roundCk, j int, orig *model.Message, g int64, rv *Revival, res *CheckpointResult) bool {
	ck := rc.ck
	rv.Msg, rv.UniqKey, rv.ReconsumeTimes = orig.ID, orig.UniqKey, orig.ReconsumeTimes
	cp := b.retryCopy(orig, ck.CID, ck.Topic, ck.PopTime)
	b.stats.RetryPuts++
	var fail WriteFailure
	stored := b.append(clock.FromMillis(g), &cp, false, &fail)
	if stored == nil {
		b.stats.ReviveFailed++
		res.Failures = append(res.Failures, fail)
		return false
	}
	rv.Outcome = Revived
	rv.Copy = Location{Topic: stored.Topic, QueueID: stored.QueueID, Offset: stored.QueueOffset}
	rv.CopyReconsumeTimes = stored.ReconsumeTimes
	b.stats.Revived++
	b.inflightSub(qkey{b.names.pair(ck.CID, ck.Topic), ck.QueueID}, ck.PopTime, 1)
	res.PullWoken = append(res.PullWoken, b.notifyPullArrival(g, stored)...)
	res.Woken = b.notifyArrival(res.Woken, g, stored, ck.CID)
	return true
}

// rePutCK writes a one-message CK for index j's offset, with the same pop
// time, rePutTimes + 1 and, when the old CK's revive time has passed, the
// invisible time grown by CK_INTERVALS[rePutTimes]: a new lease. After
// 17 re-puts it is dropped when skipWhenCKRePutReachMaxTimes; a re-put
// whose write fails is lost (upstream ignores the put's result).
func (b *Broker) rePutCK(s *reviveService, rc *roundCk, j int, g int64, res *CheckpointResult) {
	old := rc.ck
	rv := b.revival(rc, j, rc.ref.leaseOr0(j))
	rv.Unpaired = b.unpaired(s, rc, j, g)
	b.end(rc.ref, j)
	rp := old.ParseRePutTimes()
	if rp >= len(CkRewriteIntervalsSeconds) && b.cfg.SkipWhenCKRePutReachMaxTimes {
		rv.Outcome = ReviveDropped
		b.stats.MayBeLost++
		res.Revivals = append(res.Revivals, rv)
		return
	}
	off := old.AckOffsetByIndex(j)
	ck := model.PopCheckPoint{Num: 1, PopTime: old.PopTime, InvisibleTime: old.InvisibleTime, StartOffset: off, CID: old.CID,
		Topic: old.Topic, QueueID: old.QueueID, BrokerName: old.BrokerName, QueueOffsetDiff: b.arena.int32s(1),
		RePutTimes: itoa(int64(rp + 1)), HasRePutTimes: true}
	if b.cfg.Bugs.RePutCkLosesBrokerName {
		ck.BrokerName = "" // #7412
	}
	if old.ReviveTime() <= g {
		ck.InvisibleTime += 1000 * CkRewriteIntervalsSeconds[min(rp, len(CkRewriteIntervalsSeconds)-1)]
	}
	b.stats.CkRePuts++
	var kb [keyBuf]byte
	mkey, mh := b.internKey(ck.AppendMergeKey(kb[:0]))
	d := b.newCkBody(&ck)
	if b.putCk(g, d, mkey, mh, nil, s.qid, b.lease.last+1, &res.Failures) != putOK {
		rv.Outcome = ReviveDropped
		b.stats.MayBeLost++
		res.Revivals = append(res.Revivals, rv)
		return
	}
	nr := b.newRefKeyed(d, s.qid, mkey)
	nr.stored, nr.at = true, b.arrival
	rv.Outcome, rv.NewLease, rv.NextDeadline = ReviveRetried, nr.first, clock.FromMillis(ck.ReviveTime())
	res.Revivals = append(res.Revivals, rv)
}

// reviveReadFails decides whether a revive's read of a message fails
// (Faults.ReviveReadPPM), numbering the read.
func (b *Broker) reviveReadFails() bool {
	if b.faults.ReviveReadPPM == 0 {
		return false
	}
	b.reads++
	return FaultDraw(b.faults.Seed^0x7265766976657264, b.reads) < b.faults.ReviveReadPPM
}

// commitRevive commits the revive group's offset of revive queue rq.
func (b *Broker) commitRevive(rq int32, v int64) { b.commitOffset(b.reviveKey(rq), v) }

// itoa is strconv.FormatInt(v, 10), with model.AppendDec's digits.
func itoa(v int64) string {
	var buf [20]byte
	return string(model.AppendDec(buf[:0], v))
}

// checkCarried (invariants) compares a resumed round's state at t with
// the state a round reading its messages again from s.old+1 at t builds.
func (b *Broker) checkCarried(s *reviveService, t int64) {
	x := &reviveService{qid: s.qid}
	x.resetRound()
	q := b.reviveQueuePeek(s.qid)
	for x.read = s.old + 1; x.read < s.read; x.read++ {
		i := int(x.read - q.min)
		assertf(b.readRevive(x, t, q.log.slot(i), q.revs.slot(i)), "revive queue %d: carried message %d does not decode", s.qid, x.read)
		x.msgs++
	}
	if err := sameRound(x, s, s.old); err != "" {
		panic("pop: invariant: revive queue " + itoa(int64(s.qid)) + " resumed after " + itoa(s.old) + ": " + err)
	}
}

// sameRound is "" when round states x (read again) and s (carried) agree,
// else what differs. An ack's pair at or before base is none.
func sameRound(x, s *reviveService, base int64) string {
	switch {
	case x.msgs != s.msgs:
		return "read " + itoa(int64(s.msgs)) + ", again " + itoa(int64(x.msgs))
	case x.endTime != s.endTime:
		return "endTime " + itoa(s.endTime) + ", again " + itoa(x.endTime)
	case x.firstRt != s.firstRt:
		return "firstRt " + itoa(s.firstRt) + ", again " + itoa(x.firstRt)
	case len(x.all) != len(s.all):
		return itoa(int64(len(s.all))) + " CKs, again " + itoa(int64(len(x.all)))
	case len(x.jour) != len(s.jour):
		return itoa(int64(len(s.jour))) + " CKs and acks, again " + itoa(int64(len(x.jour)))
	case x.cks.n != s.cks.n:
		return itoa(int64(s.cks.n)) + " keys, again " + itoa(int64(x.cks.n))
	case len(x.mockOrder) != len(s.mockOrder):
		return itoa(int64(len(s.mockOrder))) + " mocks, again " + itoa(int64(len(x.mockOrder)))
	}
	for i, a := range x.all {
		c := s.all[i]
		if a.ck != c.ck || a.ref != c.ref || a.bits != c.bits || a.replaced != c.replaced || c.byMock || a.off != c.off || a.key != c.key || a.hash != c.hash {
			return "CK at " + itoa(c.off) + " differs"
		}
	}
	for i := range x.jour {
		a, c := &x.jour[i], &s.jour[i]
		if a.off != c.off || a.deliver != c.deliver || a.d != c.d || (a.pair > base) != (c.pair > base) || a.pair > base && a.pair != c.pair {
			return "message at " + itoa(c.off) + " differs"
		}
	}
	var err string
	x.cks.each(func(rc *roundCk) {
		if o := s.cks.get(rc.key, rc.hash); err == "" && (o == nil || o.ck != rc.ck) {
			err = "the map's CK at " + itoa(rc.off) + " differs"
		}
	})
	for i, key := range x.mockOrder {
		a, c := x.mocks[key], s.mocks[s.mockOrder[i]]
		if key != s.mockOrder[i] || a.off != c.off || a.bits != c.bits || a.hash != c.hash || a.ck.StartOffset != c.ck.StartOffset ||
			a.ck.PopTime != c.ck.PopTime || a.ck.ReviveTime() != c.ck.ReviveTime() {
			return "mock " + key + " differs"
		}
	}
	return err
}
