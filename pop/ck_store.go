package pop

import (
	"math"
	"slices"
	"strconv"

	"popsim/model"
)

// The checkpoint path's store: the revive topic (rmq_sys_REVIVE_LOG_
// <cluster>, reviveQueueNum queues) as a real topic of the message store,
// and the timer wheel (TimerMessageStore) that holds CK and ack messages
// until their deliver time. Both are durable: a restart keeps them.
//
// The timer, as RocketMQ's with timerPrecisionMs slots: a message whose
// deliver time X is after the put is held and delivered into its revive
// queue at the first slot boundary at or after X (HookUtils rounds X down
// to a slot, or one slot down when X is on a boundary, and the slot is
// dequeued once the clock has passed it); messages of one delivery time go
// in the order they were put. A deliver time at or before the put goes to
// the revive queue at once; one more than timerMaxDelaySec ahead is
// refused (WHEEL_TIMER_MSG_ILLEGAL). The engine brings the timer up to date
// at the start of every call (advanceTimer), so a direct put never
// overtakes a timer delivery that was due before it, and NextCheckpointTick
// includes the next delivery.

// reviveKind is the tag of one of the engine's revive-topic messages, in
// a byte: the timer holds most of them.
type reviveKind uint8

const (
	ckKind reviveKind = iota
	ackKind
	batchAckKind
)

var reviveTags = [...]string{ckKind: model.CkTag, ackKind: model.AckTag, batchAckKind: model.BatchAckTag}

// tag is the message's tag (TAGS).
func (k reviveKind) tag() string { return reviveTags[k] }

// timerDue is the delivery time of a timer message with deliver time x.
func (b *Broker) timerDue(x int64) int64 {
	p := b.cfg.TimerPrecisionMs
	if x%p == 0 {
		return x
	}
	if x < 0 {
		return x / p * p
	}
	return (x/p + 1) * p
}

// reviveTopicName is rmq_sys_REVIVE_LOG_<cluster>.
func (b *Broker) reviveTopicName() string { return b.reviveTopic }

// reviveQueue returns revive queue rq, creating the revive topic (with
// reviveQueueNum queues, more if rq is beyond them: the store makes a
// queue for any queue id it is given) when needed; nil for a queue id no
// store accepts. It inlines: every revive-topic put and timer delivery
// asks, and all but the first find the queue made (reviveQs).
func (b *Broker) reviveQueue(rq int32) *queue {
	if qs := b.reviveQs; uint32(rq) < uint32(len(qs)) {
		return qs[rq]
	}
	return b.reviveQueueMade(rq)
}

// reviveQueueMade is reviveQueue once the queue may have to be made.
func (b *Broker) reviveQueueMade(rq int32) *queue {
	if rq < 0 || rq >= 65535 {
		return nil
	}
	name := b.reviveTopicName()
	t := b.reviveT
	n := max(b.cfg.ReviveQueueNum, rq+1)
	if t == nil || int32(len(t.queues)) < n {
		c := TopicConfig{Name: name, ReadQueueNums: n, WriteQueueNums: n, Perm: PermRead | PermWrite}
		if t != nil {
			c.ReadQueueNums, c.WriteQueueNums = max(n, t.cfg.ReadQueueNums), max(n, t.cfg.WriteQueueNums)
		}
		b.createTopic(c)
		t = b.reviveT
	}
	return t.queues[rq]
}

// reviveQueuePeek is revive queue rq without creating anything: an empty
// queue when the revive topic or the queue does not exist yet.
func (b *Broker) reviveQueuePeek(rq int32) *queue {
	if t := b.reviveT; t != nil && rq >= 0 && int(rq) < len(t.queues) {
		return t.queues[rq]
	}
	return &emptyQueue
}

var emptyQueue queue

// putStatus is what a revive-topic put did.
type putStatus uint8

const (
	putOK      putStatus = iota // written to the revive queue, or to the timer
	putFailed                   // the store write failed (a fault)
	putRefused                  // the timer refused it: more than timerMaxDelaySec ahead, or the wheel is off
)

// putRevive writes the engine's revive-topic message of kind kind for
// revive queue rq, born now, with deliver time deliverMs: to the timer
// when it is later than now, else to the revive queue at once. The
// message is stored unbuilt: rev is its typed form (revivePrefill), but
// for its deliver time, which putRevive sets, and builds its unique id,
// body and properties only if something reads them (reviveBody.fill). A
// failed write is appended to fails.
func (b *Broker) putRevive(nowMs int64, rq int32, kind reviveKind, deliverMs int64, rev *reviveBody, fails *[]WriteFailure) putStatus {
	topic := b.reviveTopicName()
	if b.timerRefuses(nowMs, deliverMs) || storeRefusesTopic(topic) {
		return putRefused
	}
	q := b.reviveQueue(rq)
	ord, fail := b.writeFailsTo(topic, rq, false) // rmq_sys_REVIVE_LOG_…: no retry topic
	if fail || q == nil {
		b.stats.PutFailures++
		*fails = append(*fails, WriteFailure{Ordinal: ord, Topic: topic, QueueID: rq, UniqKey: rev.uniqueID(kind.tag())})
		return putFailed
	}
	rev.unbuilt = true
	rev.kind, rev.rq, rev.born = kind, uint16(rq), nowMs // rq < 65535: q is not nil
	// the message's TIMER_DELIVER_MS (with DelayLevelTimer, the level's)
	rev.deliver = deliverMs
	switch {
	case b.cfg.Bugs.DelayLevelTimer:
		// #3787: a delay level from now, the revive service seeing that time
		b.arrival = nowMs + delayLevel(deliverMs-nowMs)
		rev.deliver = b.arrival
	case deliverMs > nowMs:
		b.arrival = b.timerDue(deliverMs)
	default:
		b.appendRevive(q, rev, nowMs)
		b.arrival = nowMs
		return putOK
	}
	// The service's next step depends on the timer only through the
	// queue's next message (nextStep): it is forgotten only when rev is
	// that message, where every CK and ack put to the timer had forgotten
	// it (nearly all are due after their queue's next: the default run's
	// services' next steps were asked 5.3 k times instead of 126 k). So is
	// touchBy: only a queue's next message can be the timer's first.
	if b.timer.add(rev, b.arrival) {
		b.reviveChanged(rq)
		b.touchBy = min(b.touchBy, b.arrival)
	}
	return putOK
}

// timerRefuses reports that the store refuses a message with deliver time
// deliverMs put at nowMs (HookUtils.transformTimerMessage).
func (b *Broker) timerRefuses(nowMs, deliverMs int64) bool {
	if b.cfg.Bugs.DelayLevelTimer {
		return false // delay levels have no such limit
	}
	return deliverMs > nowMs && (!b.cfg.TimerWheelEnable || deliverMs-nowMs > b.cfg.TimerMaxDelaySec*1000)
}

// delayLevel is ScheduleMessageService.computeDelayLevel's delay: the
// smallest level longer than d, the longest level beyond them.
func delayLevel(d int64) int64 {
	for _, l := range DelayLevelsMs {
		if l > d {
			return l
		}
	}
	return DelayLevelsMs[len(DelayLevelsMs)-1]
}

// appendRevive stores the engine's message rev (its typed form, with its
// revive queue, tag and born time) in revive queue q, stamped at ms.
func (b *Broker) appendRevive(q *queue, rev *reviveBody, ms int64) {
	m := q.log.tryPush() // zero: both return a zero entry
	if m == nil {
		m = q.log.pushGrown(&b.logPool)
	}
	d := q.pushRev()
	rq := int32(rev.rq)
	b.reviveChanged(rq)
	m.Topic, m.QueueID, m.Tags, m.BornTimestamp = b.reviveTopicName(), rq, rev.kind.tag(), rev.born
	m.QueueOffset = q.maxOffset() - 1
	m.StoreTimestamp = ms
	*d = b.finishPrefill(rev, m)
}

// advanceTimer delivers every timer message due at or before nowMs, each
// stamped with its delivery time: revive queue by revive queue, each one's
// in (due, put) order. Upstream's wheel delivers in (due, put) order over
// all queues, which interleaves them, but a delivery writes only its own
// revive queue, and what else it changes (the count, the services' next
// steps forgotten) does not depend on the order: the queues end as that
// order leaves them. Taking one queue at a time spares the search of every
// queue's first message that each delivery in that order takes
// (timerStore.min after removeMin). Only a delivery that creates the revive
// topic's queues (reviveQueue) could tell the orders apart, so while the
// topic lacks a queue of the timer's, the order over all queues is kept.
func (b *Broker) advanceTimer(nowMs int64) {
	if t := b.reviveT; t == nil || len(t.queues) < len(b.timer.queues) {
		for {
			m, due, ok := b.timer.min()
			if !ok || due > nowMs {
				return
			}
			b.deliverTimer(m, due)
		}
	}
	for rq := range b.timer.queues {
		if m, due, ok := b.timer.minFor(int32(rq)); ok && due <= nowMs {
			b.deliverQueue(b.reviveQueue(int32(rq)), m, due, nowMs)
		}
	}
}

// deliverTimer delivers m, the first message of its revive queue's timer,
// due at due, to the queue.
func (b *Broker) deliverTimer(m *reviveBody, due int64) {
	b.deliverQueue(b.reviveQueue(int32(m.rq)), m, due, math.MinInt64)
}

// deliverQueue delivers m, the first message of revive queue q's timer,
// due at due, then the queue's next ones due at or before nowMs: a
// queue's deliveries in a loop of their own, which finds the queue once
// and calls removeMin and appendRevive itself (default run: a call of
// deliverTimer a delivery cost ~30 instructions more).
func (b *Broker) deliverQueue(q *queue, m *reviveBody, due, nowMs int64) {
	rq := int32(m.rq)
	for {
		b.timer.removeMin(m)
		b.stats.TimerDeliveries++ // appendRevive marks the revive queue changed
		b.appendRevive(q, m, due)
		var ok bool
		if m, due, ok = b.timer.minFor(rq); !ok || due > nowMs {
			return
		}
	}
}

// nextTimerDue is the next timer delivery, if any.
func (b *Broker) nextTimerDue() (int64, bool) {
	_, due, ok := b.timer.min()
	return due, ok
}

// nextTimerDueFor is the next timer delivery into revive queue rq.
func (b *Broker) nextTimerDueFor(rq int32) (int64, bool) {
	_, due, ok := b.timer.minFor(rq)
	return due, ok
}

// ackKey is the merge key the decoded body of an ack or bAck message
// for a keeps, and its hash: a's merge key (key, or built from a when key
// is nil) as internKey keeps it, or "" when a names no broker (the body's
// key then names this broker: ackPrefill builds it).
func (b *Broker) ackKey(a *model.AckMsg, key []byte) (string, uint64) {
	if blankName(a.BrokerName) {
		return "", 0
	}
	var kb [keyBuf]byte
	if key == nil {
		key = a.AppendMergeKey(kb[:0])
	}
	return b.internKey(key)
}

// internKey is merge key key as a string the engine keeps, and its hash:
// the string of key's entry in the merge-key table when it has one (the
// string its CKs' bodies keep, so that a revive round pairing an ack
// with its CK compares one pointer, not the bytes), else a copy carved
// from the arena. The table remembers the lookup, for the caller's next
// by the same key (findAcked, newRefKeyed).
func (b *Broker) internKey(key []byte) (string, uint64) {
	t := &b.ckl.keys
	e, h := t.findBytes(key)
	var s string
	if e != nil {
		s = e.key
	} else {
		s = b.arena.strs.str(key)
	}
	t.remember(s, h, e)
	return s, h
}

// putCk writes the message of the CK d holds (newCkBody; buildCkMsg):
// deliver time reviveTime - 1000, tagged with its first lease when it has
// leases. mkey is the CK's merge key and mh its hash, e its entry when
// the caller holds it (the buffer's CKs), else nil. A body is written at
// most once (a failed or refused put may be tried again).
func (b *Broker) putCk(nowMs int64, d *ckBody, mkey string, mh uint64, e *mkEntry, rq int32, first model.LeaseID, fails *[]WriteFailure) putStatus {
	ck := &d.ck
	deliver := ck.ReviveTime() - AckTimeInterval
	if b.timerRefuses(nowMs, deliver) {
		return putRefused
	}
	b.stats.CkPuts++
	if !d.keyedBy(e) {
		b.ckPrefill(d, mkey, mh, e)
	}
	if ck.Num > 0 {
		d.lease = first // the message's POPSIM_LEASE
		if !d.skip {
			b.bindCkBody(d, first)
		}
	}
	return b.putRevive(nowMs, rq, ckKind, deliver, &d.reviveBody, fails)
}

// putAck writes an ack message with deliver time deliverMs. key is
// a.MergeKey() when the caller has it, else nil.
func (b *Broker) putAck(nowMs int64, a *model.AckMsg, key []byte, rq int32, deliverMs int64, fails *[]WriteFailure) putStatus {
	if b.timerRefuses(nowMs, deliverMs) {
		return putRefused
	}
	mkey, mh := b.ackKey(a, key)
	return b.putAckKeyed(nowMs, a, mkey, mh, rq, deliverMs, fails)
}

// putAckKeyed is putAck once the timer took the deliver time, with a's
// key as ackKey returns it (mkey, hash mh).
func (b *Broker) putAckKeyed(nowMs int64, a *model.AckMsg, mkey string, mh uint64, rq int32, deliverMs int64, fails *[]WriteFailure) putStatus {
	b.stats.AckPuts++
	return b.putRevive(nowMs, rq, ackKind, deliverMs, b.ackPrefill(a, mkey, mh, nil), fails)
}

// putBatchAck writes a bAck message with deliver time deliverMs. key is
// a.MergeKey() when the caller has it, else nil.
func (b *Broker) putBatchAck(nowMs int64, a *model.BatchAckMsg, key []byte, rq int32, deliverMs int64, fails *[]WriteFailure) putStatus {
	if b.timerRefuses(nowMs, deliverMs) {
		return putRefused
	}
	b.stats.BatchAckPuts++
	offs := slices.Clone(a.AckOffsetList)
	if offs == nil {
		offs = []int64{} // the body says [], which decodes as empty, not null
	}
	mkey, mh := b.ackKey(&a.AckMsg, key)
	return b.putRevive(nowMs, rq, batchAckKind, deliverMs, b.ackPrefill(&a.AckMsg, mkey, mh, offs), fails)
}

// deliverTime reads a revive message's TIMER_DELIVER_MS (getDeliverTimeMs;
// 0 when absent).
func deliverTime(m *model.Message) int64 {
	v, ok := m.Property(model.PropertyTimerDeliverMs)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// ckLeaseOf reads a CK message's first lease (popsim's annotation).
func ckLeaseOf(m *model.Message) model.LeaseID {
	v, ok := m.Property(PropertyLease)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0
	}
	return model.LeaseID(n)
}

// keyBuf is room on the stack for a usual merge key.
const keyBuf = 160
