package pop

import (
	"strings"
	"unsafe"

	"popsim/model"
)

// A revive-topic message is read by every revive round from the revive
// offset on, so a message whose CK is not due yet is read by many rounds.
// Its body and properties never change once stored, so the first read
// decodes them and keeps the result beside the message (queue.revs);
// later reads use it. The cache is a pure function of the stored bytes:
// it survives a restart exactly as the messages do, and a message written
// by any other path (a client's Put to the revive topic) is decoded from
// its bytes like the rest.

// The engine's own CK, ack and bAck messages are not decoded at all: the
// engine has their typed form when it writes them, so it keeps that
// (copied, as the body is a snapshot) beside the message instead
// (revivePrefill). It is what decoding the body gives, field for field:
// the JSON round trip is exact (model's encoders and decoders), the lease
// and deliver time are the values the engine wrote into the message's
// properties, the revive offset is read from the stored message, and the
// invariants build checks each one against decodeRevive.
//
// Nor are they encoded: the engine stores them unbuilt, without their
// unique id, body and properties, which only a reader other than the
// revive service (a pull, a pop, Message, State's timer list, a failed
// write's report) ever looks at. The typed form holds all it takes to
// build them (fill), and a queue read builds them in place the first
// time it reaches the message (queue.msg).

// reviveBody is a stored revive-topic message, decoded: what every kind
// has, and the kind's own part (c or a), each allocated with its header.
// A CK and an ack hold different fields, so each takes only the bytes of
// its own (a CK's is 232 with its ref, an ack's 64).
type reviveBody struct {
	bad  bool // the body does not decode: a read aborts the round
	skip bool // a CK without topic or group: skipped, endTime unmoved
	// unbuilt: the engine wrote the message and has not built its unique
	// id, body and properties yet (fill). Not part of the decoding.
	unbuilt bool
	// bound: the engine keeps this body for its own CK message and c.own
	// is the ckRef of c.lease, live until dropped: what byFirst holds
	// under the lease, kept here so a round reading the message need not
	// look it up (ckRefOf). Not part of the decoding (assertPrefill).
	bound bool
	// kind, rq, seq and born are the engine's message as the timer holds
	// it until its delivery (timerStore; putRevive): its tag, revive
	// queue, put order and born time, kept in the body's first words
	// rather than in a holder of their own, so that a delivery reads one
	// record, not two, written a revive window (~60 s) before. Not part of
	// the decoding (zero in a decoded body). The queue fits 16 bits: no
	// store accepts a revive queue id of 65535 or more (reviveQueue).
	kind reviveKind
	// part says which body holds this header: a CK's (ckBody), an ack's
	// or bAck's (ackBody), or none (a message that decodes to neither,
	// whose header stands alone); c and a give the body.
	part bodyPart
	rq   uint16
	// (Beside the other flags: one word for the seven.)
	deliver int64 // TIMER_DELIVER_MS (0 when absent)
	seq     uint64
	born    int64
	// mk is the body's merge key and its hash: its CK's (for an ack, the
	// CK it names), held by the key's entry in the merge-key table when
	// the engine had one as it wrote the message (keyOf), not copied
	// into each body: 16 bytes less of every CK and ack body in flight.
	mk *mkKey
}

// bodyPart is the body a reviveBody heads (reviveBody.part).
type bodyPart uint8

const (
	noPart      bodyPart = iota
	ckPart               // a CK message that decodes (or a skipped CK the engine wrote, which fill needs, though no decoding has it)
	ackPart              // an ack or bAck message that decodes, its fields in an AckMsg of its own
	ackOfCkPart          // an ack or bAck the engine wrote whose fields are those of a CK the engine holds (ackPrefill)
)

// c is the CK part of a CK message's body (part ckPart), nil for any
// other. The header is the first field of its ckBody, so its address is
// the body's: the header names its body by part alone, not by a pointer
// to itself, which took 8 bytes of every body (with a's, 16).
func (d *reviveBody) c() *ckBody {
	if d.part != ckPart {
		return nil
	}
	return (*ckBody)(unsafe.Pointer(d))
}

// a is the ack part of an ack or bAck message's body (part ackPart), nil
// for any other; as c.
func (d *reviveBody) a() *ackBody {
	if d.part < ackPart {
		return nil
	}
	return (*ackBody)(unsafe.Pointer(d))
}

// The fields are in the order a message's delivery and its revive round
// read them, the ones they do not read last: each body is written at a
// pop or ack and read again a revive window (~60 s) later, when every
// cache line it spans is a miss, so the round's reads span as few lines
// as they can (a CK's header, its ckRef and the first 64 bytes of its
// CK, which hold what the round and its acks' IndexOfAck read, then the
// CK's topic and group, which the merge reads: 184 of its 232 bytes; an
// ack's header, list and AckOffset: all of its 64).

// ckBody is a CK message's body: ck (ReviveOffset set) and its first
// lease, and the engine's ckRef of the CK (own), whose home the body is:
// the ref and the body are made together (newRefKeyed), read together
// at the CK's revive, and kept in one record, which spares the round a
// miss on a second one written a revive window before. own is not part
// of the body's decoding (see bound).
type ckBody struct {
	reviveBody
	own   ckRef
	ck    model.PopCheckPoint
	lease model.LeaseID
}

// ackBody is an ack or bAck message's body: the ack (a bAck's fields but
// its list), whose fields of the CK it names are those of the mock CK a
// round makes for it (ackCk), and a bAck's acked offsets, behind a
// pointer (an ack, the most of them, acks ack.AckOffset alone and has
// none; a bAck's AckOffset is -1 or 0). key uses the broker's own name
// when the ack names none. A round reads of an ack its header, list and
// acked offset (off, ack.AckOffset) alone, so the ack itself lies apart,
// behind a pointer (its names, for a message build or a mock's CK): the
// round reads a body of 64 bytes where it read 88 of 160, whose other 72
// shared the round's cache lines with the next ack's.
//
// The ack's fields but its AckOffset are those of the CK it names, and
// nearly every ack the engine writes names a CK the engine holds, whose
// body has them: such an ack's body points at that CK (part ackOfCkPart,
// src a *model.PopCheckPoint, which the engine never writes into once
// made but for its revive offset) rather than at an AckMsg copy of its
// own (part ackPart, src a *model.AckMsg), 80 bytes less of every ack in
// flight. msg gives the ack either way.
type ackBody struct {
	reviveBody
	list *[]int64       // a bAck's acked offsets; nil for an ack
	off  int64          // ack.AckOffset
	src  unsafe.Pointer // the ack's fields: see part
}

// msg is the ack (a bAck's fields but its list).
func (d *ackBody) msg() model.AckMsg {
	if d.part == ackOfCkPart {
		ck := (*model.PopCheckPoint)(d.src)
		return model.AckMsg{AckOffset: d.off, StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic, QueueID: ck.QueueID,
			PopTime: ck.PopTime, BrokerName: ck.BrokerName}
	}
	return *(*model.AckMsg)(d.src)
}

// offs is a bAck's acked offsets.
func (d *ackBody) offs() []int64 {
	if d.list == nil {
		return nil
	}
	return *d.list
}

// decodeRevive decodes a revive-topic message as readRevive reads it.
func (b *Broker) decodeRevive(m *model.Message) *reviveBody {
	deliver := deliverTime(m)
	switch m.Tags {
	case model.CkTag:
		ck, err := model.ParsePopCheckPoint(m.Body)
		switch {
		case err != nil:
			return &reviveBody{bad: true, deliver: deliver}
		case ck.Topic == "" || ck.CID == "":
			return &reviveBody{skip: true, deliver: deliver}
		}
		ck.ReviveOffset = m.QueueOffset
		d := &ckBody{ck: ck, lease: ckLeaseOf(m)}
		key := ck.MergeKey()
		d.deliver, d.mk = deliver, &mkKey{key, mkHash(key)}
		d.part = ckPart
		return &d.reviveBody
	case model.AckTag, model.BatchAckTag:
		a, offs, err := decodeAck(m)
		if err != nil {
			return &reviveBody{bad: true, deliver: deliver}
		}
		bn := a.BrokerName
		if strings.TrimSpace(bn) == "" {
			bn = b.cfg.BrokerName
		}
		d := &ackBody{src: unsafe.Pointer(&a), off: a.AckOffset}
		if m.Tags == model.BatchAckTag {
			list := offs
			d.list = &list
		}
		key := model.MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, bn)
		d.deliver, d.mk = deliver, &mkKey{key, mkHash(key)}
		d.part = ackPart
		return &d.reviveBody
	}
	return &reviveBody{deliver: deliver}
}

// ckBodySlab bodies of 232 bytes: just under 64 KiB.
const ckBodySlab = 282

// newCkBody is the body the engine keeps for the message of a CK it
// makes, holding the CK's one copy (ck's, whose QueueOffsetDiff it
// shares: the engine never writes into one): the CK's ref and wrapper
// hold d.ck (ckRef.ck), and putCk fills in the rest (ckPrefill) when it
// writes the message. d.ck is the CK as made until the message reaches
// its revive queue, which sets its ReviveOffset (finishPrefill): nothing
// reads that of a ref's or a wrapper's CK.
func (b *Broker) newCkBody(ck *model.PopCheckPoint) *ckBody {
	d := b.nextCkBody()
	b.takeCkBody(d)
	d.ck = *ck
	return d
}

// ckPrefill makes d, a CK's body (newCkBody), the decoded body of the CK
// message putCk writes for d.ck, but for what finishPrefill reads from
// the stored message. mkey is the CK's merge key and mh its hash, e its
// entry or nil (putCk). putCk takes the common case inline (keyedBy).
func (b *Broker) ckPrefill(d *ckBody, mkey string, mh uint64, e *mkEntry) {
	ck := &d.ck
	if invariants {
		assertf(ck.ReviveOffset == 0, "CK of %s written with revive offset %d: its body would say so", mkey, ck.ReviveOffset)
	}
	if ck.Topic == "" || ck.CID == "" {
		d.skip = true // d.ck stays, for fill alone
		return
	}
	if invariants {
		assertf(mkey == ck.MergeKey() && mh == mkHash(mkey), "CK body keyed %q (hash %x), not by its merge key", mkey, mh)
	}
	if e != nil {
		if invariants {
			assertf(e.key == mkey && e.hash == mh, "CK body of key %q given the entry of %q", mkey, e.key)
		}
		d.mk = &e.mkKey
		return
	}
	d.mk = b.keyOf(mkey, mh)
}

// keyedBy is ckPrefill's common case, a CK that names its group and
// topic and whose merge-key entry e the caller holds (every pop's CK),
// taken inline: it makes d's key e's and reports true, or reports false
// for ckPrefill to do it (and, in the invariants build, to check it).
// The call of ckPrefill cost ~20 instructions a CK.
func (d *ckBody) keyedBy(e *mkEntry) bool {
	if e == nil || d.ck.Topic == "" || d.ck.CID == "" || invariants {
		return false
	}
	d.mk = &e.mkKey
	return true
}

// keyOf is merge key key (hash h) as a body holds it: its entry's in
// the merge-key table when it has one, which the body's CK's ref holds
// (or, for an ack, its CK's), else a copy of its own, carved from a
// block (a CK rewritten by a revive, whose ref is made after its
// message; an ack whose CK's entry is gone).
func (b *Broker) keyOf(key string, h uint64) *mkKey {
	if e := b.keyEntry(key, h); e != nil {
		return &e.mkKey
	}
	return b.ownKey(key, h)
}

// keyEntry is the entry of key (hash h) in the merge-key table, nil when
// none.
func (b *Broker) keyEntry(key string, h uint64) *mkEntry {
	t := &b.ckl.keys
	if e := t.last; t.lastOK && e != nil && e.hash == h && len(e.key) == len(key) && unsafe.StringData(e.key) == unsafe.StringData(key) {
		return e // the caller's lookup found key's entry (an ack's: ackKeyOf), whose string key is
	}
	return t.findHashed(key, h)
}

// ownKey is key (hash h) held apart from the table, carved from a block.
func (b *Broker) ownKey(key string, h uint64) *mkKey {
	if len(b.ckl.kslab) == 0 {
		// 341 keys of 24 bytes: an 8 KiB size class
		b.ckl.kslab = b.slabs.keys.take(341)
	}
	k := &b.ckl.kslab[0]
	b.ckl.kslab = b.ckl.kslab[1:]
	k.key, k.hash = key, h
	return k
}

// ackPrefill is the decoded body of the ack or bAck message written for
// a with acked offsets offs (a bAck's, the body's own list, not nil; nil
// for an ack), but for the deliver time. key is a.MergeKey() and h its hash
// (ackKey), or "": the body's key is that, but for an ack that names no
// broker, whose key takes this broker's name. The engine keeps the body
// for as long as the message, allocated with others.
func (b *Broker) ackPrefill(a *model.AckMsg, key string, h uint64, offs []int64) *reviveBody {
	bn := a.BrokerName
	if blankName(bn) {
		bn, key = b.cfg.BrokerName, "" // the caller's key names no broker
	}
	if key == "" {
		key = model.MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, bn)
		h = mkHash(key)
	}
	return b.ackBody(a, key, h, b.keyEntry(key, h), nil, offs)
}

// ackBody is ackPrefill once key names a broker, given key's entry e in
// the merge-key table (nil: none) and named, a CK whose merge-key fields
// are a's (ackNames) or nil: the test of whether e's first CK has a's
// fields is then, as a rule, one pointer compared (writeAckKeyed: the
// memo's CK, ackKeyOf), where ackNames cost ~50 instructions an ack.
func (b *Broker) ackBody(a *model.AckMsg, key string, h uint64, e *mkEntry, named *model.PopCheckPoint, offs []int64) *reviveBody {
	if invariants {
		assertf(e == b.keyEntry(key, h) && (named == nil || ackNames(a, named)), "ack body of %q given the entry %p, not the table's, or a CK not named by %+v", key, e, *a)
	}
	if len(b.ackBodies) == 0 {
		// 1024 bodies of 64 bytes: 64 KiB, page-aligned (a large
		// object), so each body is one cache line
		b.ackBodies = b.slabs.ackBodies.take(1024)
	}
	d := &b.ackBodies[0]
	b.ackBodies = b.ackBodies[1:]
	d.off = a.AckOffset
	if e == nil {
		d.mk = b.ownKey(key, h)
	} else {
		d.mk = &e.mkKey
		if r := e.refs.first; r != nil && (r.ck() == named || ackNames(a, r.ck())) {
			d.part, d.src = ackOfCkPart, unsafe.Pointer(r.ck())
		}
	}
	if d.part == noPart {
		if len(b.ackMsgs) == 0 {
			// 819 acks of 80 bytes: just under 64 KiB
			b.ackMsgs = b.slabs.ackMsgs.take(819)
		}
		m := &b.ackMsgs[0]
		b.ackMsgs = b.ackMsgs[1:]
		*m = *a
		d.part, d.src = ackPart, unsafe.Pointer(m)
	}
	if invariants {
		assertf(d.msg() == *a, "ack body holds %+v for the ack %+v", d.msg(), *a)
	}
	if offs != nil {
		list := offs // on the heap for a bAck alone
		d.list = &list
	}
	return &d.reviveBody
}

// ackCk is what a revive round reads of an ack's or bAck's fields: the
// CK it names, as mockForAck makes it (its revive offset aside).
func ackCk(a *model.AckMsg) model.PopCheckPoint {
	return model.PopCheckPoint{StartOffset: a.StartOffset, PopTime: a.PopTime, QueueID: a.QueueID, CID: a.ConsumerGroup, Topic: a.Topic,
		BrokerName: a.BrokerName}
}

// finishPrefill completes d from its message m as stored: a CK's revive
// offset. (The deliver time and a CK's first lease, which the message's
// properties hold, were set by putRevive and putCk, which wrote them.)
func (b *Broker) finishPrefill(d *reviveBody, m *model.Message) *reviveBody {
	if m.Tags == model.CkTag && !d.skip {
		d.c().ck.ReviveOffset = m.QueueOffset
	}
	if invariants {
		full := *m
		d.fill(&full)
		assertPrefill(d, b.decodeRevive(&full))
	}
	return d
}

// fill writes into m, the stored message of the engine's d (its topic,
// queue, tag, born and store times and offset), what the engine left
// unbuilt: the unique id, body and properties putCk, putAck and
// putBatchAck stand for (the message RocketMQ's buildCkMsg and
// buildAckMsg make), each in storage of its own.
func (d *reviveBody) fill(m *model.Message) {
	m.UniqKey = d.uniqueID(m.Tags)
	m.Body = d.appendBody(nil, m.Tags)
	deliver := model.Property{Key: model.PropertyTimerDeliverMs, Value: itoa(d.deliver)}
	m.Properties = []model.Property{deliver}
	if m.Tags == model.CkTag && d.c().ck.Num > 0 {
		// SetProperty(PropertyLease, lease) on a message whose only
		// property is its deliver time: the two in key order
		lease := model.Property{Key: PropertyLease, Value: string(model.AppendUdec(nil, uint64(d.c().lease)))}
		m.Properties = append(m.Properties, lease)
		if PropertyLease < model.PropertyTimerDeliverMs {
			m.Properties[0], m.Properties[1] = lease, deliver
		}
	}
}

// uniqueID is the unique id (UNIQ_KEY) of the engine's message d with
// tag tag.
func (d *reviveBody) uniqueID(tag string) string {
	var buf [keyBuf]byte
	switch tag {
	case model.CkTag:
		return string(d.c().ck.AppendUniqueID(buf[:0]))
	case model.AckTag:
		a := d.a().msg()
		return string(a.AppendUniqueID(buf[:0]))
	}
	a := model.BatchAckMsg{AckMsg: d.a().msg(), AckOffsetList: d.a().offs()}
	return string(a.AppendUniqueID(buf[:0]))
}

// appendBody appends the JSON body of the engine's message d with tag tag.
func (d *reviveBody) appendBody(b []byte, tag string) []byte {
	switch tag {
	case model.CkTag:
		ck := d.c().ck
		ck.ReviveOffset = 0 // set when read, not in the body (ckPrefill)
		return ck.AppendJSON(b)
	case model.AckTag:
		a := d.a().msg()
		return a.AppendJSON(b)
	}
	a := model.BatchAckMsg{AckMsg: d.a().msg(), AckOffsetList: d.a().offs()}
	return a.AppendJSON(b)
}
