package pop

import (
	"fmt"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// Perm bits of a topic (PermName).
const (
	PermRead  = 4
	PermWrite = 2
)

// TopicConfig describes a topic. Retry topics are created by the engine
// with one queue.
type TopicConfig struct {
	Name           string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // PermRead|PermWrite when 0
	// MessageType is the message.type attribute (TopicMessageType): ""
	// (UNSPECIFIED), NORMAL, FIFO, DELAY, TRANSACTION, MIXED or PRIORITY.
	// Only PRIORITY changes what a pop does (priority mode).
	MessageType string
}

type topic struct {
	cfg    TopicConfig
	queues []*queue
	// idlePairs are the (group, topic) pairs whose all-queue pops keep
	// idle marks for the topic's queues (idle.go).
	idlePairs []uint32
	// sendable: a producer may send to the topic's name (model.Message.
	// Validate's checks of the topic pass), fixed when the topic is made,
	// as its name is (validPut).
	sendable bool
	// flag is the name's retry flag (model.RetryFlagOf), which every
	// message a stage reads from the topic carries in its handle.
	flag model.RetryType
}

// queue is one consume queue: messages at offsets [min, max), stored by
// value. A pointer to a stored message is valid only until the queue's
// next write: hold one only within a call that does not write to the queue.
//
// What an append reads and writes of it (min, unbuilt, and the log's
// chunk count, head, n and last) is its first 64 bytes, and it is padded
// to 128 bytes, a size class whose objects start on a cache line: an
// append to a queue touches one line of it, memory the run has not
// touched since that queue's previous append (the hot topic's 500
// queues took it, and the line after, to a 112-byte object on two or
// three lines, one L2 miss an append more).
type queue struct {
	min int64
	// unbuilt: a queue of the revive topic, where the engine stores its
	// CK and ack messages unbuilt (reviveBody.fill); read them with msg.
	unbuilt bool
	log     msgLog // entry i has offset min+i
	// revs, in a queue of the revive topic (unbuilt), holds the typed form
	// of log's entry i as its entry i, and is empty in every other queue:
	// an append, truncate or release changes both (append, appendRevive,
	// truncate, release).
	revs revWindow
	_    [16]byte // to 128 bytes: see queue
}

// msg is the message of entry i, i in [0, log.len()), built first when
// the engine stored it unbuilt: every reader but the revive service's
// own, which reads the typed form, goes through it (get, at).
func (q *queue) msg(i int) *model.Message {
	m := q.log.slot(i)
	if q.unbuilt {
		if d := *q.revs.slot(i); d != nil && d.unbuilt {
			d.fill(m)
			d.unbuilt = false
		}
	}
	return m
}

// pushRev appends a nil entry to the typed forms of a revive-topic
// queue, whose log has just had one appended (an append to such a queue
// writes both, the log first), and returns it.
func (q *queue) pushRev() **reviveBody {
	d := q.revs.push()
	if invariants {
		assertf(q.unbuilt && q.revs.len() == q.log.len(), "queue (revive topic: %v) holds %d messages and %d typed forms", q.unbuilt, q.log.len(), q.revs.len())
	}
	return d
}

// release frees the log's chunks wholly below entry below (msgLog.release),
// and in a revive-topic queue the typed forms of their entries, and
// returns how many entries it freed.
func (q *queue) release(below int, b *Broker) int {
	n := q.log.release(below, &b.logPool)
	if q.unbuilt {
		q.revs.release(q.log.rel*logChunk - q.log.head)
	}
	return n
}

func (q *queue) maxOffset() int64 { return q.min + int64(q.log.len()) }

// getStatus is the message store's GetMessageStatus.
type getStatus uint8

// Statuses of a store read, with RocketMQ's names.
const (
	getFound getStatus = iota
	getNoMatchedMessage
	getMessageWasRemoving
	getOffsetFoundNull
	getOffsetOverflowBadly
	getOffsetOverflowOne
	getOffsetTooSmall
	getNoMatchedLogicQueue
	getNoMessageInQueue
)

var getStatusNames = [...]string{"FOUND", "NO_MATCHED_MESSAGE", "MESSAGE_WAS_REMOVING", "OFFSET_FOUND_NULL", "OFFSET_OVERFLOW_BADLY", "OFFSET_OVERFLOW_ONE", "OFFSET_TOO_SMALL", "NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE"}

func (s getStatus) String() string { return getStatusNames[s] }

// getResult is one store read. msgs point into the queue (see queue).
type getResult struct {
	status    getStatus
	msgs      []*model.Message
	nextBegin int64
	min, max  int64
}

// offsetCorrected: the read started where the queue holds nothing (below
// its minimum, far past its end, or at a hole): the pop commits nextBegin
// and reads again from there.
func (r *getResult) offsetCorrected() bool {
	return r.status == getOffsetTooSmall || r.status == getOffsetOverflowBadly || r.status == getOffsetFoundNull
}

// get reads up to n messages matching f from offset, as
// DefaultMessageStore.getMessage does with an ExpressionMessageFilter,
// including its offset-correction statuses: each consume-queue entry is
// matched by its tags code (MatchConsumeQueue), then by the message
// (MatchCommitLog, SQL92), inspecting at most max(800, asked) entries
// (maxFilterMessageSize over 20-byte entries), asked being the request's
// maxMsgNums. A nil f (or "*") matches everything. The messages are
// appended to dst[:0]. The read overwrites every field of r, the caller's:
// a getResult returned by value was built on the stack field by field and
// copied out in 16-byte moves that straddled those stores, and a load that
// straddles stores still in flight waits for them (a failed store
// forwarding: the copy held 0.4 % of the default scenario's native CPU).
func (q *queue) get(r *getResult, offset int64, n int, asked int64, f *pfilter.Filter, dst []*model.Message) {
	r.min, r.max, r.msgs = q.min, q.maxOffset(), dst[:0]
	if !q.locate(r, offset) {
		return
	}
	all := f.MatchesAll()
	o, limit := offset, max(maxFilterScan, asked)
	for ; o < r.max && o-offset < limit && len(r.msgs) < n; o++ {
		if m := q.msg(int(o - q.min)); all || matchStored(f, m) {
			r.msgs = append(r.msgs, m)
		}
	}
	r.nextBegin, r.status = o, getFound
	if len(r.msgs) == 0 {
		r.status = getNoMatchedMessage
	}
}

// matchStored is the store's two filter stages for a stored message: the
// consume queue's tags code, then the commit log.
func matchStored(f *pfilter.Filter, m *model.Message) bool {
	return f.MatchConsumeQueue(pfilter.TagsCode(m.Tags)) && f.MatchCommitLog(m)
}

// locate sets the status of a read at offset that cannot scan (empty
// queue, offset out of range) and reports whether the read may scan.
func (q *queue) locate(r *getResult, offset int64) bool {
	switch {
	case r.max == 0:
		r.status, r.nextBegin = getNoMessageInQueue, 0
	case offset < r.min:
		r.status, r.nextBegin = getOffsetTooSmall, r.min
	case offset == r.max:
		r.status, r.nextBegin = getOffsetOverflowOne, offset
	case offset > r.max:
		r.status, r.nextBegin = getOffsetOverflowBadly, r.max
		if r.min == 0 {
			r.nextBegin = r.min
		}
	default:
		return true
	}
	return false
}

// at returns the message at offset, or nil when it is gone or not yet written.
func (q *queue) at(offset int64) *model.Message {
	if offset < q.min || offset >= q.maxOffset() {
		return nil
	}
	return q.msg(int(offset - q.min))
}

// truncate drops messages below offset (retention).
func (q *queue) truncate(offset int64, b *Broker) int {
	if offset > q.maxOffset() {
		offset = q.maxOffset()
	}
	n := int(offset - q.min)
	if n <= 0 {
		return 0
	}
	q.log.dropFront(n, &b.logPool)
	if q.unbuilt {
		q.revs.dropFront(n)
		if invariants {
			assertf(q.revs.len() == q.log.len(), "revive queue truncated to %d messages and %d typed forms", q.log.len(), q.revs.len())
		}
	}
	q.min = offset
	return n
}

// copyMessage copies src into dst, deep-copying src's Body and Properties
// when they are not empty into dst's own storage, which it reuses.
func copyMessage(dst, src *model.Message) { copyOnto(dst, src, dst.Body[:0], dst.Properties[:0]) }

// copyOnto copies src into dst, appending src's Body and Properties, when
// they are not empty, to body and props (dst's own storage, or nil).
func copyOnto(dst, src *model.Message, body []byte, props []model.Property) {
	*dst = *src
	if len(src.Body) > 0 {
		dst.Body = append(body, src.Body...)
	}
	if len(src.Properties) > 0 {
		dst.Properties = append(props, src.Properties...)
	}
}

// copyFresh is copyMessage into a zero dst, a log entry just pushed: it
// reads nothing of dst. The entry is memory the run has not touched for a
// long while (a new chunk, or a pooled one cleared at its release), and
// copyMessage's read of dst's Body and Properties to reuse them missed the
// cache and waited, where stores alone do not: half of the put's copy's
// native time.
func copyFresh(dst, src *model.Message) { copyOnto(dst, src, nil, nil) }

// PutResult is the outcome of a produce.
type PutResult struct {
	Code   model.ResponseCode
	Remark string
	Offset int64
	// Woken are suspended pop requests this arrival woke; the driver re-runs
	// each with Pop.
	Woken []Wakeup
	// PullWoken are held pulls this arrival woke; the driver re-runs each
	// with RerunPull.
	PullWoken []PullWakeup
	// Failures holds the write's failure when the faults failed it
	// (SYSTEM_ERROR).
	Failures []WriteFailure
}

// Put stores a copy of msg at the tail of msg.QueueID (the broker keeps
// none of the caller's memory and does not modify msg) and wakes
// long-polling requests. The stored copy gets its queue offset and store
// timestamp; PutResult.Offset is the offset.
func (b *Broker) Put(now clock.Time, msg *model.Message) PutResult {
	var r PutResult
	b.putInto(now, msg, &r)
	return r
}

// PutInto is Put writing its result into res, whose Woken storage it
// reuses: a caller that keeps one result across puts allocates no wakeup
// list per put. What it keeps of res past the next PutInto it must copy.
func (b *Broker) PutInto(now clock.Time, msg *model.Message, res *PutResult) {
	b.putInto(now, msg, res)
}

// putInto is Put writing every field of res, the wakeups appended to
// res.Woken[:0]: a put's result is written in place, where it was built
// and returned by value, then copied into the caller's.
func (b *Broker) putInto(now clock.Time, msg *model.Message, res *PutResult) {
	woken := res.Woken[:0]
	b.touch(now.Millis())
	t := b.topicNamed(msg.Topic)
	switch {
	case t == nil:
		*res = PutResult{Code: model.TopicNotExist, Remark: "topic[" + msg.Topic + "] not exist, apply first please!" + faqSuggestion, Offset: -1}
		return
	case t.cfg.Perm&PermWrite == 0:
		*res = PutResult{Code: model.NoPermission, Remark: "topic " + msg.Topic + " is not writable", Offset: -1}
		return
	case msg.QueueID < 0 || msg.QueueID >= t.cfg.WriteQueueNums:
		*res = PutResult{Code: model.MessageIllegal, Remark: fmt.Sprintf("queueId %d out of range: want 0..%d", msg.QueueID, t.cfg.WriteQueueNums-1), Offset: -1}
		return
	}
	if !validPut(t, msg) {
		*res = PutResult{Code: model.MessageIllegal, Remark: msg.Validate().Error(), Offset: -1}
		return
	}
	var fail WriteFailure
	stored := b.append(now, msg, true, &fail)
	if stored == nil {
		*res = PutResult{Code: model.SystemError, Remark: "put failed (injected)", Offset: -1, Failures: []WriteFailure{fail}}
		return
	}
	b.stats.Produced++
	b.warmNext(t, msg.QueueID)
	nowMs := now.Millis()
	pulls := b.notifyPullArrival(nowMs, stored)
	res.Code, res.Remark, res.Offset, res.Failures = model.Success, "", stored.QueueOffset, nil
	res.Woken, res.PullWoken = b.notifyArrival(woken, nowMs, stored, ""), pulls
}

// warmNext prefetches (prefetchAppend) the entry the next append to the
// queue after qid in t will write (msgLog.next), and the first cache line
// of the queue after that one, which the next put's warmNext reads to
// find its entry: a producer sends to a topic's queues in turn (round
// robin, as RocketMQ's producer selects queues), and its next put goes to
// the next queue, a few events later. The write of a message to a log
// entry, memory the run has not touched for a long while, missed the
// cache on each of its three lines, and the append on the queue's line
// before them, and the put waited for them: 4.5 % of the hot-topic hour's
// time, at 500 queues. A read ahead (a load) of the same lines waited as
// long. An append that starts a chunk (one in logChunk) is not prefetched.
func (b *Broker) warmNext(t *topic, qid int32) {
	i := nextQueue(t, int(qid))
	prefetchAppend(t.queues[i].log.next(), t.queues[nextQueue(t, i)])
}

// nextQueue is the index of the queue after i in t, in turn.
func nextQueue(t *topic, i int) int {
	if i++; i == len(t.queues) {
		return 0
	}
	return i
}

// validPut is msg.Validate() == nil for a message to topic t (msg.Topic
// is t's name): the topic's part (model.ValidateSendTopic) was checked
// once, when t was made (topic.sendable), where Validate walked the
// name's characters on every put. The invariants build asserts it agrees
// with Validate on every put.
func validPut(t *topic, msg *model.Message) bool {
	ok := t.sendable && msg.FieldsValid()
	if invariants {
		err := msg.Validate()
		assertf(ok == (err == nil), "pop: validPut of %s says %v, Validate %v", msg.Topic, ok, err)
	}
	return ok
}

// append writes a copy of msg to its queue, unless the store refuses its
// topic or the faults fail the write, and returns the stored message
// (valid until the queue's next append), or nil with the failure written
// into *fail (left alone on success). A caller's message (deep) has its
// Body and Properties copied; the engine's own copies share them, as
// nothing ever modifies a stored message. The failure is not a second
// result: a WriteFailure returned in registers was spilled to the stack
// field by field and copied on in 16-byte moves straddling those stores,
// a failed store forwarding on every put.
func (b *Broker) append(now clock.Time, msg *model.Message, deep bool, fail *WriteFailure) *model.Message {
	if storeRefusesTopic(msg.Topic) {
		*fail = WriteFailure{Refused: true, Topic: msg.Topic, QueueID: msg.QueueID, Msg: msg.ID, UniqKey: msg.UniqKey}
		return nil
	}
	if ord, failed := b.writeFailsTo(msg.Topic, msg.QueueID, model.IsRetryTopic(msg.Topic)); failed {
		b.stats.PutFailures++
		*fail = WriteFailure{Ordinal: ord, Topic: msg.Topic, QueueID: msg.QueueID, Msg: msg.ID, UniqKey: msg.UniqKey}
		return nil
	}
	t := b.topicNamed(msg.Topic)
	q := t.queues[msg.QueueID]
	b.queueWritten(t, msg.QueueID)
	m := q.log.tryPush()
	if m == nil {
		m = q.log.pushGrown(&b.logPool)
	}
	if q.unbuilt {
		q.pushRev() // a client's write to the revive topic: not decoded yet
	}
	if t == b.reviveT {
		b.reviveChanged(msg.QueueID) // a client's write to the revive topic
	}
	if deep {
		copyFresh(m, msg) // push returns a zero entry
	} else {
		*m = *msg
	}
	m.QueueOffset = q.maxOffset() - 1
	m.StoreTimestamp = now.Millis()
	if invariants {
		assertWrite(q, m)
	}
	return m
}

// Truncate deletes a queue's messages below offset, as retention does, so
// consumers behind it see OFFSET_TOO_SMALL. It returns how many went.
func (b *Broker) Truncate(topicName string, qid int32, offset int64) (int, error) {
	q := b.queue(topicName, qid)
	if q == nil {
		return 0, fmt.Errorf("pop: truncate %s/%d: no such queue", topicName, qid)
	}
	t := b.topicNamed(topicName)
	b.queueWritten(t, qid)
	if t == b.reviveT {
		b.reviveChanged(qid)
	}
	return q.truncate(offset, b), nil
}
