package pop

import (
	"strings"

	"popsim/model"
)

// A revive-topic message is read by every revive round from the revive
// offset on, so a message whose CK is not due yet is read by many rounds.
// Its body and properties never change once stored, so the first read
// decodes them and keeps the result beside the message (logSlot.rev);
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

// reviveBody is a stored revive-topic message, decoded.
type reviveBody struct {
	bad  bool // the body does not decode: a read aborts the round
	skip bool // a CK without topic or group: skipped, endTime unmoved
	// unbuilt: the engine wrote the message and has not built its unique
	// id, body and properties yet (fill). Not part of the decoding.
	unbuilt bool
	// bound: the engine keeps this body for its own CK message and ref
	// is the live ckRef of lease (nil once dropped): what byFirst holds
	// under lease, kept here so a round reading the message need not look
	// it up (ckRefOf). Not part of the decoding (assertPrefill). (Beside
	// the other flags: one word for the four.)
	bound   bool
	deliver int64 // TIMER_DELIVER_MS (0 when absent)
	key     string
	hash    uint64 // mkHash(key)
	// a CK: ck (ReviveOffset set) and its first lease (kept for a skipped
	// CK the engine wrote too, which fill needs, though no decoding has
	// them). An ack or bAck: in ck, the fields of the CK it names, which
	// are those of the mock CK a round makes for it (ackCk); the rest of
	// ck is zero.
	ck    model.PopCheckPoint
	lease model.LeaseID
	ref   *ckRef // see bound
	// an ack or bAck: its acked offsets; key uses the broker's own name
	// when the ack names none
	offs []int64
	one  [1]int64 // the ack's ackOffset (a bAck's is -1 or 0): offs of a single ack
}

// reviveBodyAt is the decoded form of q's message at offset o (which the
// queue holds), decoding it on first use.
func (b *Broker) reviveBodyAt(q *queue, o int64) *reviveBody {
	sl := q.log.slot(int(o - q.min))
	if sl.rev == nil {
		sl.rev = b.decodeRevive(&sl.msg)
	}
	return sl.rev
}

// decodeRevive decodes a revive-topic message as readRevive reads it.
func (b *Broker) decodeRevive(m *model.Message) *reviveBody {
	d := &reviveBody{deliver: deliverTime(m)}
	switch m.Tags {
	case model.CkTag:
		ck, err := model.ParsePopCheckPoint(m.Body)
		switch {
		case err != nil:
			d.bad = true
		case ck.Topic == "" || ck.CID == "":
			d.skip = true
		default:
			ck.ReviveOffset = m.QueueOffset
			d.ck, d.lease, d.key = ck, ckLeaseOf(m), ck.MergeKey()
			d.hash = mkHash(d.key)
		}
	case model.AckTag, model.BatchAckTag:
		a, offs, err := decodeAck(m)
		if err != nil {
			d.bad = true
			break
		}
		bn := a.BrokerName
		if strings.TrimSpace(bn) == "" {
			bn = b.cfg.BrokerName
		}
		d.ck, d.offs = ackCk(&a), offs
		d.one[0] = a.AckOffset
		if m.Tags == model.AckTag {
			d.offs = d.one[:]
		}
		d.key = model.MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, bn)
		d.hash = mkHash(d.key)
	}
	return d
}

// newCkBody is the body the engine keeps for the message of a CK it
// makes, holding the CK's one copy (ck's, whose QueueOffsetDiff it
// shares: the engine never writes into one): the CK's ref and wrapper
// hold d.ck (ckRef.ck), and putCk fills in the rest (ckPrefill) when it
// writes the message. d.ck is the CK as made until the message reaches
// its revive queue, which sets its ReviveOffset (finishPrefill): nothing
// reads that of a ref's or a wrapper's CK.
func (b *Broker) newCkBody(ck *model.PopCheckPoint) *reviveBody {
	d := b.newReviveBody()
	d.ck = *ck
	return d
}

// ckPrefill makes d, a CK's body (newCkBody), the decoded body of the CK
// message putCk writes for d.ck, but for what finishPrefill reads from
// the stored message. mkey is the CK's merge key and mh its hash.
func (b *Broker) ckPrefill(d *reviveBody, mkey string, mh uint64) {
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
	d.key, d.hash = mkey, mh
}

// newReviveBody returns a zero body, allocated with others: the engine
// keeps one per revive message it writes, for as long as the message.
func (b *Broker) newReviveBody() *reviveBody {
	if len(b.bodies) == 0 {
		// 282 bodies of 232 bytes: just under 64 KiB, the 8 pages a block
		// of 256 takes anyway
		b.bodies = make([]reviveBody, 282)
	}
	d := &b.bodies[0]
	b.bodies = b.bodies[1:]
	return d
}

// ackPrefill is the decoded body of the ack or bAck message written for
// a with acked offsets offs (the body's own list), but for the deliver
// time. key is a.MergeKey() and h its hash (ackKey), or "": the body's
// key is that, but for an ack that names no broker, whose key takes this
// broker's name.
func (b *Broker) ackPrefill(a *model.AckMsg, key string, h uint64, offs []int64) *reviveBody {
	bn := a.BrokerName
	if blankName(bn) {
		bn, key = b.cfg.BrokerName, "" // the caller's key names no broker
	}
	if key == "" {
		key = model.MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, bn)
		h = mkHash(key)
	}
	d := b.newReviveBody()
	d.ck, d.offs, d.key = ackCk(a), offs, key
	d.hash = h
	d.one[0] = a.AckOffset
	return d
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
		d.ck.ReviveOffset = m.QueueOffset
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
	if m.Tags == model.CkTag && d.ck.Num > 0 {
		// SetProperty(PropertyLease, lease) on a message whose only
		// property is its deliver time: the two in key order
		lease := model.Property{Key: PropertyLease, Value: string(model.AppendUdec(nil, uint64(d.lease)))}
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
		return string(d.ck.AppendUniqueID(buf[:0]))
	case model.AckTag:
		a := d.ackMsg()
		return string(a.AppendUniqueID(buf[:0]))
	}
	a := model.BatchAckMsg{AckMsg: d.ackMsg(), AckOffsetList: d.offs}
	return string(a.AppendUniqueID(buf[:0]))
}

// appendBody appends the JSON body of the engine's message d with tag tag.
func (d *reviveBody) appendBody(b []byte, tag string) []byte {
	switch tag {
	case model.CkTag:
		ck := d.ck
		ck.ReviveOffset = 0 // set when read, not in the body (ckPrefill)
		return ck.AppendJSON(b)
	case model.AckTag:
		a := d.ackMsg()
		return a.AppendJSON(b)
	}
	a := model.BatchAckMsg{AckMsg: d.ackMsg(), AckOffsetList: d.offs}
	return a.AppendJSON(b)
}

// ackMsg is the ack (a bAck's fields but its list) the engine's ack or
// bAck message d was written for.
func (d *reviveBody) ackMsg() model.AckMsg {
	return model.AckMsg{AckOffset: d.one[0], StartOffset: d.ck.StartOffset, ConsumerGroup: d.ck.CID, Topic: d.ck.Topic,
		QueueID: d.ck.QueueID, PopTime: d.ck.PopTime, BrokerName: d.ck.BrokerName}
}
