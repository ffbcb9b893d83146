package pop

import (
	"slices"
	"strconv"
	"strings"

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

// timerMsg is a message held by the timer, with its decoded body when the
// engine wrote it (revivePrefill).
type timerMsg struct {
	due int64 // delivery time, ms
	seq uint64
	msg timerBody
	rev *reviveBody
	// next links the holder in the store's free list once delivered
	next *timerMsg
}

// timerBody is a revive-topic message the timer holds, by the fields in
// which the engine's revive messages (reviveMessage) differ: every other
// field is zero but the topic, the revive topic's. It is half the size
// of the message, and the timer holds most of the CK and ack messages
// written.
type timerBody struct {
	QueueID       int32
	BornTimestamp int64
	Tags, UniqKey string
	Body          []byte
	Properties    []model.Property
}

// timerBodyOf is msg's timerBody.
func timerBodyOf(msg *model.Message) timerBody {
	return timerBody{QueueID: msg.QueueID, BornTimestamp: msg.BornTimestamp, Tags: msg.Tags, UniqKey: msg.UniqKey, Body: msg.Body,
		Properties: msg.Properties}
}

// message is the message again, in topic.
func (t *timerBody) message(topic string) model.Message {
	return model.Message{Topic: topic, QueueID: t.QueueID, BornTimestamp: t.BornTimestamp, Tags: t.Tags, UniqKey: t.UniqKey, Body: t.Body,
		Properties: t.Properties}
}

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
// store accepts.
func (b *Broker) reviveQueue(rq int32) *queue {
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

// putRevive writes msg (a CK, ack or bAck message for revive queue
// msg.QueueID) with deliver time deliverMs: to the timer when it is
// later than now, else to the revive queue at once. rev is msg's body,
// decoded (revivePrefill), but for its deliver time, which putRevive
// sets. A failed write is appended to fails.
func (b *Broker) putRevive(nowMs int64, msg *model.Message, deliverMs int64, rev *reviveBody, fails *[]WriteFailure) putStatus {
	if b.timerRefuses(nowMs, deliverMs) || storeRefusesTopic(msg.Topic) {
		return putRefused
	}
	if invariants {
		assertf(msg.Topic == b.reviveTopicName(), "revive message for topic %s", msg.Topic)
	}
	q := b.reviveQueue(msg.QueueID)
	ord, fail := b.writeFails(msg)
	if fail || q == nil {
		b.stats.PutFailures++
		*fails = append(*fails, WriteFailure{Ordinal: ord, Topic: msg.Topic, QueueID: msg.QueueID, UniqKey: msg.UniqKey})
		return putFailed
	}
	if b.cfg.Bugs.DelayLevelTimer {
		// #3787: a delay level from now, the revive service seeing that time
		due := nowMs + delayLevel(deliverMs-nowMs)
		_ = msg.SetProperty(model.PropertyTimerDeliverMs, itoa(due))
		rev.deliver = due
		b.timer.add(b.timer.hold(due, msg, rev))
		b.reviveChanged(msg.QueueID)
		b.arrival = due
		return putOK
	}
	rev.deliver = deliverMs // the message's TIMER_DELIVER_MS
	if deliverMs > nowMs {
		b.arrival = b.timerDue(deliverMs)
		b.timer.add(b.timer.hold(b.arrival, msg, rev))
		b.reviveChanged(msg.QueueID)
		return putOK
	}
	b.appendRevive(q, msg, nowMs, rev)
	b.arrival = nowMs
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

// appendRevive stores msg in revive queue q, stamped at ms, with its
// decoded body rev when the engine wrote it (nil: decoded when read).
func (b *Broker) appendRevive(q *queue, msg *model.Message, ms int64, rev *reviveBody) {
	sl := q.log.push(&b.logPool)
	b.reviveChanged(msg.QueueID)
	m := &sl.msg
	*m = *msg
	m.QueueOffset = q.maxOffset() - 1
	m.StoreTimestamp = ms
	if rev != nil {
		sl.rev = b.finishPrefill(rev, m)
	}
}

// advanceTimer delivers every timer message due at or before nowMs, in
// (due, put) order, each stamped with its delivery time.
func (b *Broker) advanceTimer(nowMs int64) {
	for {
		t, ok := b.timer.min()
		if !ok || t.due > nowMs {
			return
		}
		b.timer.removeMin(t)
		b.reviveChanged(t.msg.QueueID)
		b.stats.TimerDeliveries++
		msg := t.msg.message(b.reviveTopicName())
		b.appendRevive(b.reviveQueue(t.msg.QueueID), &msg, t.due, t.rev)
		b.timer.release(t)
	}
}

// nextTimerDue is the next timer delivery, if any.
func (b *Broker) nextTimerDue() (int64, bool) {
	t, ok := b.timer.min()
	if !ok {
		return 0, false
	}
	return t.due, true
}

// nextTimerDueFor is the next timer delivery into revive queue rq.
func (b *Broker) nextTimerDueFor(rq int32) (int64, bool) {
	t, ok := b.timer.minFor(rq)
	if !ok {
		return 0, false
	}
	return t.due, true
}

// reviveMessage builds a revive-topic message: tag, body, uniq key and
// deliver time (its decimal text), born now, with room for props
// properties (a CK's lease besides the deliver time).
func (b *Broker) reviveMessage(nowMs int64, rq int32, tag, uniq string, body []byte, deliver string, props int) model.Message {
	m := model.Message{Topic: b.reviveTopicName(), QueueID: rq, Tags: tag, UniqKey: uniq, BornTimestamp: nowMs, Body: body}
	m.Properties = append(b.arena.propList(props), model.Property{Key: model.PropertyTimerDeliverMs, Value: deliver})
	return m
}

// The strings of one revive-topic message (its unique id, deliver time,
// lease, and the merge key the engine keeps beside it) are built side by
// side on the stack and made into one string, which they share, carved
// from the arena's string blocks (strArena): they live as long as the
// message, as do the strings of the messages written around it.

// revBuf is room on the stack for them.
const revBuf = 320

// ackStrings appends to b, after the unique id it holds (b[:u]), the
// deliver time, and returns the two strings.
func (sa *strArena) ackStrings(b []byte, u int, deliverMs int64) (uniq, deliver string) {
	b = model.AppendDec(b, deliverMs)
	all := sa.str(b)
	return all[:u], all[u:]
}

// ackKey is the merge key the decoded body of an ack or bAck message
// for a keeps, and its hash: a's merge key (key, or built from a when key
// is nil) as internKey keeps it, or "" when a names no broker (the body's
// key then names this broker: ackPrefill builds it).
func (b *Broker) ackKey(a *model.AckMsg, key []byte) (string, uint64) {
	if strings.TrimSpace(a.BrokerName) == "" {
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
// by the same key (findAcked, newRefInto).
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

// putCk writes a CK message (buildCkMsg): deliver time reviveTime - 1000,
// tagged with its first lease when it has leases. mkey is ck's merge key
// and mh its hash.
func (b *Broker) putCk(nowMs int64, ck *model.PopCheckPoint, mkey string, mh uint64, rq int32, first model.LeaseID, fails *[]WriteFailure) putStatus {
	deliver := ck.ReviveTime() - AckTimeInterval
	if b.timerRefuses(nowMs, deliver) {
		return putRefused
	}
	body := ck.AppendJSON(b.arena.body(jsonCap(len(ck.QueueOffsetDiff), ck.Topic, ck.CID, ck.BrokerName)))
	body = b.arena.used(body)
	var buf [revBuf]byte
	sb := ck.AppendUniqueID(buf[:0])
	u := len(sb)
	sb = model.AppendDec(sb, deliver)
	dl := len(sb)
	if ck.Num > 0 {
		sb = model.AppendUdec(sb, uint64(first))
	}
	all := b.arena.strs.str(sb)
	strs := [3]string{all[:u], all[u:dl], all[dl:]}
	m := b.reviveMessage(nowMs, rq, model.CkTag, strs[0], body, strs[1], 2)
	if ck.Num > 0 {
		// SetProperty(PropertyLease, lease) on a message whose only
		// property is its deliver time: the two in key order
		lease := model.Property{Key: PropertyLease, Value: strs[2]}
		if PropertyLease < model.PropertyTimerDeliverMs {
			m.Properties = append(m.Properties[:0], lease, m.Properties[0])
		} else {
			m.Properties = append(m.Properties, lease)
		}
	}
	b.stats.CkPuts++
	d := b.ckPrefill(ck, mkey, mh)
	if ck.Num > 0 && !d.skip {
		d.lease = first // the message's POPSIM_LEASE
		b.bindCkBody(d, first)
	}
	return b.putRevive(nowMs, &m, deliver, d, fails)
}

// putAck writes an ack message with deliver time deliverMs. key is
// a.MergeKey() when the caller has it, else nil.
func (b *Broker) putAck(nowMs int64, a *model.AckMsg, key []byte, rq int32, deliverMs int64, fails *[]WriteFailure) putStatus {
	if b.timerRefuses(nowMs, deliverMs) {
		return putRefused
	}
	body := a.AppendJSON(b.arena.body(jsonCap(0, a.Topic, a.ConsumerGroup, a.BrokerName)))
	body = b.arena.used(body)
	var buf [revBuf]byte
	sb := a.AppendUniqueID(buf[:0])
	uniq, deliver := b.arena.strs.ackStrings(sb, len(sb), deliverMs)
	m := b.reviveMessage(nowMs, rq, model.AckTag, uniq, body, deliver, 1)
	b.stats.AckPuts++
	mkey, mh := b.ackKey(a, key)
	d := b.ackPrefill(a, mkey, mh, nil)
	d.one[0] = a.AckOffset
	d.offs = d.one[:]
	return b.putRevive(nowMs, &m, deliverMs, d, fails)
}

// putBatchAck writes a bAck message with deliver time deliverMs. key is
// a.MergeKey() when the caller has it, else nil.
func (b *Broker) putBatchAck(nowMs int64, a *model.BatchAckMsg, key []byte, rq int32, deliverMs int64, fails *[]WriteFailure) putStatus {
	if b.timerRefuses(nowMs, deliverMs) {
		return putRefused
	}
	body := a.AppendJSON(b.arena.body(jsonCap(len(a.AckOffsetList), a.Topic, a.ConsumerGroup, a.BrokerName)))
	body = b.arena.used(body)
	var buf [revBuf]byte
	sb := a.AppendUniqueID(buf[:0])
	uniq, deliver := b.arena.strs.ackStrings(sb, len(sb), deliverMs)
	m := b.reviveMessage(nowMs, rq, model.BatchAckTag, uniq, body, deliver, 1)
	b.stats.BatchAckPuts++
	offs := slices.Clone(a.AckOffsetList)
	if offs == nil {
		offs = []int64{} // the body says [], which decodes as empty, not null
	}
	mkey, mh := b.ackKey(&a.AckMsg, key)
	return b.putRevive(nowMs, &m, deliverMs, b.ackPrefill(&a.AckMsg, mkey, mh, offs), fails)
}

// jsonCap is room enough for the JSON of a CK or ack with n list entries
// and these names, so the body is built in one window of the arena.
func jsonCap(n int, names ...string) int {
	c := 160 + 12*n
	for _, s := range names {
		c += len(s) + 8 // quotes and escapes of the usual names
	}
	return c
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
