package pop

import (
	"slices"
	"sort"
	"unsafe"

	"popsim/model"
)

// Leases on the checkpoint (FS) path. A checkpoint (CK) with n messages
// lends n leases, numbered consecutively from the CK's first; a renewal's
// CK and a re-put CK lend one. RocketMQ keeps no such identity: popsim
// records it in a ckRef per CK it made, and tags the CK message with its
// first lease (property POPSIM_LEASE) so that the revive service can name
// the leases it ends. A ckRef lives until its CK can no longer be revived:
// the revive service processed it, or it was never written (all acked in
// the buffer, or lost in a restart).

// PropertyLease is popsim's annotation on a CK message: its first lease.
const PropertyLease = "POPSIM_LEASE"

// ckRef is one CK the engine made, as its leases see it.
type ckRef struct {
	e     *mkEntry // its merge key's entry, which holds the key
	first model.LeaseID
	rq    int32 // its revive queue
	// ended: bit i set once lease first+i ended (an ack merged in the
	// buffer, or the revive service settled it). pending: an ack message
	// was written for index i (the lease lives until revive pairs it).
	ended, pending uint32
	// stored: the CK message was written (to the timer or the revive
	// queue); buffered CKs are not stored until the buffer writes them.
	// at is when it reaches its revive queue; ackAt when the last of its
	// pending ack messages does. dropped: drop forgot it. (The flags sit
	// in the word rq and the bits leave room in.) home names r once bound
	// (bindBody) until drop.
	stored, dropped bool
	at, ackAt       int64
}

// home is the body the engine keeps for the CK's message (newCkBody),
// which putCk writes: it holds the CK (ck), and the ref itself (own).
// Every ref is its body's own (newRefKeyed), so the body is found from
// the ref's address rather than from a pointer to it, which took 8
// bytes of every CK in flight.
func (r *ckRef) home() *ckBody {
	return (*ckBody)(unsafe.Add(unsafe.Pointer(r), -int(unsafe.Offsetof(ckBody{}.own))))
}

// ck is the CK as made (bitmap 0, its revive offset aside), the one
// copy, home's.
func (r *ckRef) ck() *model.PopCheckPoint { return &r.home().ck }

func (r *ckRef) lease(i int) model.LeaseID { return r.first + model.LeaseID(i) }

func (r *ckRef) live(i int) bool { return r.ended&(1<<uint(i)) == 0 }

func (r *ckRef) allEnded() bool { return r.ended == uint32(1)<<uint(r.ck().Num)-1 }

// ckLeases indexes the live ckRefs by first lease and by merge key.
type ckLeases struct {
	byFirst refIndex
	keys    mkTable
	live    int // leases not yet ended, over all refs
	pending int // live leases with an ack message pending
	// lastRef is the ref newRefIn made last, and ckBody the body putCk
	// kept last for a lease no ref holds yet: the two are bound to each
	// other (bindCkBody) whichever comes second.
	lastRef *ckRef
	ckBody  *ckBody
	wslab   []wrapper // newWrapper's current block
	kslab   []mkKey   // keyOf's current block
}

func newCkLeases() ckLeases { return ckLeases{} }

// mkEntry is what the engine holds under one merge key: the live ckRefs
// of its CKs and the buffer's wrapper, if any. One table serves both, so
// an operation looks its key up once and then holds the entry; the refs
// and the wrapper hold theirs. An entry leaves the table once it holds
// neither (dead), and a later CK with its key gets a new one.
type mkEntry struct {
	mkKey
	refs refList
	w    *wrapper // the buffered wrapper of the key (ckBuffer), nil when none
}

// deadRefs marks a dead entry's refs (refList.rest), which are none: the
// entry keeps no flag of its own, 8 bytes of every entry (48, not 56).
var deadRefs []*ckRef

// dead reports that e left the table (mkTable.release).
func (e *mkEntry) dead() bool { return e.refs.rest == &deadRefs }

// mkKey is a merge key and its hash, as an entry holds them (its first
// field) and a revive body names them (reviveBody.mk). Neither changes
// once set, not even when the entry dies.
type mkKey struct {
	key  string
	hash uint64 // mkHash(key)
}

// refList is the refs of one merge key, in the order they were made:
// nearly always one, held without a slice of its own, and the slice of
// the others, when there were ever any, behind a pointer (an entry of
// the 60 k a run makes then carries one word for it, not three).
type refList struct {
	first *ckRef
	rest  *[]*ckRef
}

// more is the refs after the first.
func (l refList) more() []*ckRef {
	if l.rest == nil {
		return nil
	}
	return *l.rest
}

func (l refList) len() int {
	if l.first == nil {
		return 0
	}
	return 1 + len(l.more())
}

// at is the i-th ref, i in [0, len()).
func (l refList) at(i int) *ckRef {
	if i == 0 {
		return l.first
	}
	return (*l.rest)[i-1]
}

func (l *refList) add(r *ckRef) {
	if l.first == nil {
		l.first = r
		return
	}
	if l.rest == nil {
		l.rest = new([]*ckRef)
	}
	*l.rest = append(*l.rest, r)
}

// remove takes r out, keeping the others' order.
func (l *refList) remove(r *ckRef) {
	if l.first == r && l.rest == nil { // the usual list: r alone
		l.first = nil
		return
	}
	more := l.more()
	if l.first == r {
		if len(more) == 0 {
			l.first = nil
			return
		}
		l.first = more[0]
		*l.rest = slices.Delete(more, 0, 1)
		return
	}
	if i := slices.Index(more, r); i >= 0 {
		*l.rest = slices.Delete(more, i, i+1) // clears the vacated tail entry
	}
}

func (l refList) contains(r *ckRef) bool {
	return r != nil && (l.first == r || slices.Contains(l.more(), r))
}

// newRefKeyed makes the ckRef of a new CK, held by body d (newCkBody),
// whose merge key is key, granting its leases. The ref is d's own
// (ckBody.own): every body the engine makes is made for one new ref.
func (b *Broker) newRefKeyed(d *ckBody, rq int32, key string) *ckRef {
	return b.newRefIn(d, rq, b.ckl.keys.get(key))
}

// newRefIn is newRefKeyed for the caller that holds the key's entry e in
// the merge-key table (the pop's CK: freeMergeKey found it or found none,
// and the buffer made it: mkTable.add).
func (b *Broker) newRefIn(d *ckBody, rq int32, e *mkEntry) *ckRef {
	r, ck := &d.own, &d.ck
	if invariants {
		assertf(r.e == nil && r.first == 0 && r.ended == 0 && r.pending == 0 && !r.stored && !r.dropped,
			"checkpoint ref made into a ref in use (lease %d)", r.first)
		assertf(!e.dead() && b.ckl.keys.peek(e.key) == e, "checkpoint ref of %q given an entry the table does not hold", e.key)
	}
	b.keyMemo.put(ck, e) // for its acks (ackKeyOf)
	// r is zero: only what is not is written (a whole-struct store would
	// build it aside and copy it in)
	r.e, r.rq = e, rq
	r.first = b.lease.last + 1
	b.lease.last += model.LeaseID(ck.Num)
	b.ckl.byFirst.add(r)
	e.refs.add(r)
	b.ckl.live += int(ck.Num)
	if b.ckl.ckBody == d && d.lease == r.first {
		r.bindBody(d)
	}
	b.ckl.lastRef, b.ckl.ckBody = r, nil
	return r
}

// bindCkBody binds d, the body putCk keeps for a CK message of lease
// first, to the ref of that lease, whose CK d holds (ckRef.home): the one
// newRefIn made last, or the one it makes next (a renewal's and a
// re-put's CK are written before their ref is made). A body whose ref is
// neither (a buffered CK written later) stays unbound: ckRefOf finds its
// ref by lease. (A body of a put that failed, its ref never made, binds
// to no other ref.)
func (b *Broker) bindCkBody(d *ckBody, first model.LeaseID) {
	if r := b.ckl.lastRef; r != nil && r.first == first && r.home() == d && !r.dropped {
		r.bindBody(d)
		return
	}
	b.ckl.ckBody = d
}

// bindBody records that d, r's CK message's body, names r, its own
// (d.own): a revive round reading the message takes r from it instead of
// from byFirst. Once drop forgets r the body names no ref, as byFirst
// does not.
func (r *ckRef) bindBody(d *ckBody) {
	if invariants {
		assertf(r == &d.own, "CK body of lease %d bound to a ref not its own", r.first)
	}
	d.bound = true
}

// ckRefOf is the live ckRef of a CK message's first lease (d.lease), nil
// when none. It inlines the common case, a body bound to its own ref
// (ckRefLookup does the rest, and every case in the invariants build).
func (b *Broker) ckRefOf(d *ckBody) *ckRef {
	if d.bound && !d.own.dropped && !invariants {
		return &d.own
	}
	return b.ckRefLookup(d)
}

// ckRefLookup is ckRefOf past its inlined case.
func (b *Broker) ckRefLookup(d *ckBody) *ckRef {
	if !d.bound {
		return b.ckl.byFirst.get(d.lease)
	}
	r := &d.own
	if r.dropped {
		r = nil
	}
	if invariants {
		assertf(b.ckl.byFirst.get(d.lease) == r, "CK body of lease %d bound to the wrong ref", d.lease)
	}
	return r
}

// end ends lease i of r and returns it, 0 when it had already ended.
func (b *Broker) end(r *ckRef, i int) model.LeaseID {
	if r == nil || i < 0 || i >= int(r.ck().Num) || !r.live(i) {
		return 0
	}
	r.ended |= 1 << uint(i)
	b.ckl.live--
	if r.pending&(1<<uint(i)) != 0 {
		b.ckl.pending--
	}
	return r.lease(i)
}

// drop forgets r: its CK can no longer be revived. It returns the leases
// still live, which end with it.
func (b *Broker) drop(r *ckRef) []model.LeaseID {
	var out []model.LeaseID
	for i := 0; i < int(r.ck().Num); i++ {
		if l := b.end(r, i); l != 0 {
			out = append(out, l)
		}
	}
	r.dropped = true
	b.ckl.byFirst.remove(r)
	r.e.refs.remove(r)
	b.ckl.keys.release(r.e)
	return out
}

// findAcked returns the ckRef and index an ack of ackOffset with merge key
// key, on revive queue rq, reaching the queue at ackAt, will pair with,
// and nil when there is none or that lease has an ack message pending
// already (a second ack of a pending lease ends nothing more). A revive
// round keeps the last CK it read under a merge key, so the ack meets,
// of the CKs with a live lease at that offset that reach the queue before
// it, the one that reaches it last (the newest among equals); a CK the
// buffer still holds is taken to reach it on time, ackTimeInterval before
// its revive time. Keys collide when a renewal comes in its pop's
// millisecond: the renewal's CK is newer, but it reaches the queue, and is
// revived, before the ack of the pop's CK arrives (ck_change.txt).
func (b *Broker) findAcked(key []byte, rq int32, ackOffset, ackAt int64) (*ckRef, int) {
	e, _ := b.ckl.keys.findBytes(key)
	return b.ackedBy(e, rq, ackOffset, ackAt)
}

// ackedBy is findAcked for the merge-key entry e of the ack's key (nil:
// the table has none).
func (b *Broker) ackedBy(e *mkEntry, rq int32, ackOffset, ackAt int64) (*ckRef, int) {
	var best *ckRef
	bi, bestAt := -1, int64(0)
	if e == nil {
		return nil, -1
	}
	rs := e.refs
	for j := rs.len() - 1; j >= 0; j-- {
		r := rs.at(j)
		if r.rq != rq {
			continue
		}
		ck := r.ck()
		i := ck.IndexOfAck(ackOffset)
		if i < 0 || i >= int(ck.Num) || !r.live(i) {
			continue
		}
		at := r.at
		if !r.stored {
			at = b.timerDue(ck.ReviveTime() - AckTimeInterval)
		}
		if at > ackAt || best != nil && at <= bestAt {
			continue
		}
		best, bi, bestAt = r, i, at
	}
	if best == nil || best.pending&(1<<uint(bi)) != 0 {
		return nil, -1
	}
	return best, bi
}

// setPending records that an ack message reaching the revive queue at
// ackAt will end lease i of r when a round pairs it, and returns the lease.
func (b *Broker) setPending(r *ckRef, i int, ackAt int64) model.LeaseID {
	r.pending |= 1 << uint(i)
	b.ckl.pending++
	r.ackAt = max(r.ackAt, ackAt)
	return r.lease(i)
}

// CkLease is one lease of the checkpoint path, for State.
type CkLease struct {
	Lease model.LeaseID
	// Group, Topic (the real topic), QueueID and Offset locate the
	// message; PopTime and Deadline (popTime + invisibleTime) are the CK's.
	Group, Topic string
	QueueID      int32
	Offset       int64
	PopTime      int64
	Deadline     int64
	ReviveQueue  int32
	// Stored: its CK was written; AckPending: an ack message for it was
	// written and the revive service has not paired it yet.
	Stored, AckPending bool
}

// ckLeasesState lists the live leases in lease order.
func (b *Broker) ckLeasesState() []CkLease {
	var out []CkLease
	for r := range b.ckl.byFirst.all() {
		if r.dropped {
			continue
		}
		ck := r.ck()
		for i := 0; i < int(ck.Num); i++ {
			if !r.live(i) {
				continue
			}
			out = append(out, CkLease{Lease: r.lease(i), Group: ck.CID, Topic: ck.Topic, QueueID: ck.QueueID,
				Offset: ck.AckOffsetByIndex(i), PopTime: ck.PopTime, Deadline: ck.ReviveTime(), ReviveQueue: r.rq,
				Stored: r.stored, AckPending: r.pending&(1<<uint(i)) != 0})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lease < out[j].Lease })
	return out
}
