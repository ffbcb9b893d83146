package ref

import (
	"maps"
	"sort"
	"strconv"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// The checkpoint (FS) path, written plainly: slices searched linearly,
// the timer a slice scanned for its minimum, and every revive pull
// simulated one by one (the engine jumps over empty ones).

// ckRef is one CK the broker made, with its leases.
type ckRef struct {
	ck            model.PopCheckPoint
	first         model.LeaseID
	rq            int32
	ended         []bool
	pending       []bool
	stored, alive bool  // alive: the CK may still revive (not dropped)
	at            int64 // when the CK reaches its revive queue
	ackAt         int64 // when the last of its pending ack messages does
}

func (r *ckRef) lease(i int) model.LeaseID { return r.first + model.LeaseID(i) }

// held is a message the timer holds.
type held struct {
	due int64
	seq uint64
	msg model.Message
}

// wrapper is a PopBufferMergeService wrapper.
type wrapper struct {
	rq                   int32
	ck                   model.PopCheckPoint
	ref                  *ckRef
	bits, stored         []bool
	next                 int64
	justOffset, ckStored bool
	lock                 qk
}

type commitQ struct {
	key  qk
	ws   []*wrapper
	time int64
}

// ckState is the FS path's state.
type ckState struct {
	// durable
	refs     []*ckRef // every CK made, in creation order
	timer    []held
	timerSeq uint64
	reads    uint64
	draws    uint64
	started  bool
	startMs  int64
	lastNow  int64
	arrival  int64 // when the last revive-topic put reaches its queue
	// volatile
	buffer   []*wrapper
	commits  []*commitQ
	services []*service
	inflight map[qk]int64
	ckNumber int64
	shouldSt int64
	lastScan int64
}

func (b *Broker) reviveTopic() string { return model.ReviveTopic(b.cfg.ClusterName) }

// touch starts the broker's clock at its first call and delivers the
// timer's due messages.
func (b *Broker) touch(nowMs int64) {
	if nowMs >= b.nextFlush {
		b.flushed = maps.Clone(b.commit)
		b.nextFlush = (nowMs/b.cfg.FlushConsumerOffsetInterval + 1) * b.cfg.FlushConsumerOffsetInterval
	}
	c := &b.ck
	if !c.started {
		c.started, c.startMs = true, nowMs
		b.startServices(nowMs)
		b.ord.init()
		b.ord.nextFlush, b.ord.wheel = nowMs+pop.OrderInfoFlushInterval, nowMs
	}
	if nowMs > c.lastNow {
		c.lastNow = nowMs
	}
	b.deliverTimer(nowMs)
	b.flushOrder(nowMs)
}

func (b *Broker) startServices(startMs int64) {
	c := &b.ck
	c.shouldSt = startMs - 1
	c.buffer, c.commits = nil, nil
	c.lastScan = startMs - pop.BufferScanInterval
	c.inflight = map[qk]int64{}
	c.ckNumber = 0
	c.services = nil
	for i := int32(0); i < b.cfg.ReviveQueueNum; i++ {
		c.services = append(c.services, &service{qid: i, slow: 1, due: startMs + b.cfg.ReviveInterval, offset: b.reviveCommitted(i)})
	}
}

func (b *Broker) reviveCommitted(rq int32) int64 {
	if v, ok := b.commit[qk{model.ReviveGroup, b.reviveTopic(), rq}]; ok {
		return v
	}
	return -1
}

// ---- the revive topic and the timer ----

// reviveQ returns revive queue rq, creating the topic (reviveQueueNum
// queues, or enough for rq) when needed; nil for an impossible queue id.
func (b *Broker) reviveQ(rq int32) *queue {
	if rq < 0 || rq >= 65535 {
		return nil
	}
	name := b.reviveTopic()
	n := b.cfg.ReviveQueueNum
	if rq+1 > n {
		n = rq + 1
	}
	t := b.topics[name]
	if t == nil || int32(len(t.queues)) < n {
		c := pop.TopicConfig{Name: name, ReadQueueNums: n, WriteQueueNums: n, Perm: pop.PermRead | pop.PermWrite}
		if t != nil {
			c.ReadQueueNums, c.WriteQueueNums = max(n, t.cfg.ReadQueueNums), max(n, t.cfg.WriteQueueNums)
		}
		b.createTopic(c)
		t = b.topics[name]
	}
	return t.queues[rq]
}

// reviveQPeek is revive queue rq if it exists, else an empty queue.
func (b *Broker) reviveQPeek(rq int32) *queue {
	if t := b.topics[b.reviveTopic()]; t != nil && rq >= 0 && int(rq) < len(t.queues) {
		return t.queues[rq]
	}
	return &queue{}
}

// slotDue is the first multiple of the timer precision at or after x.
func (b *Broker) slotDue(x int64) int64 {
	p := b.cfg.TimerPrecisionMs
	d := x / p * p
	if d < x {
		d += p
	}
	return d
}

func (b *Broker) refuses(nowMs, deliverMs int64) bool {
	if b.cfg.Bugs.DelayLevelTimer {
		return false
	}
	return deliverMs > nowMs && (!b.cfg.TimerWheelEnable || deliverMs-nowMs > b.cfg.TimerMaxDelaySec*1000)
}

// putRevive writes a revive-topic message: refused, failed (a fault),
// held by the timer, or stored at once.
func (b *Broker) putRevive(nowMs int64, msg *model.Message, deliverMs int64, fails *[]pop.WriteFailure) int {
	if b.refuses(nowMs, deliverMs) || refusedTopic(msg.Topic) {
		return 2
	}
	q := b.reviveQ(msg.QueueID)
	b.writes++
	if b.fails(msg) || q == nil {
		b.stats.PutFailures++
		*fails = append(*fails, pop.WriteFailure{Ordinal: b.writes, Topic: msg.Topic, QueueID: msg.QueueID, UniqKey: msg.UniqKey})
		return 1
	}
	switch {
	case b.cfg.Bugs.DelayLevelTimer:
		d := deliverMs - nowMs
		lvl := pop.DelayLevelsMs[len(pop.DelayLevelsMs)-1]
		for i := len(pop.DelayLevelsMs) - 1; i >= 0; i-- {
			if pop.DelayLevelsMs[i] > d {
				lvl = pop.DelayLevelsMs[i]
			}
		}
		_ = msg.SetProperty(model.PropertyTimerDeliverMs, strconv.FormatInt(nowMs+lvl, 10))
		b.hold(nowMs+lvl, msg)
		b.ck.arrival = nowMs + lvl
	case deliverMs > nowMs:
		b.hold(b.slotDue(deliverMs), msg)
		b.ck.arrival = b.slotDue(deliverMs)
	default:
		storeRevive(q, msg, nowMs)
		b.ck.arrival = nowMs
	}
	return 0
}

func (b *Broker) hold(due int64, msg *model.Message) {
	b.ck.timerSeq++
	b.ck.timer = append(b.ck.timer, held{due: due, seq: b.ck.timerSeq, msg: *msg})
}

func storeRevive(q *queue, msg *model.Message, ms int64) {
	m := *msg
	m.QueueOffset = q.max()
	m.StoreTimestamp = ms
	q.msgs = append(q.msgs, &m)
}

// deliverTimer stores every held message due by nowMs, earliest (then
// first held) first.
func (b *Broker) deliverTimer(nowMs int64) {
	for {
		i := -1
		for j, h := range b.ck.timer {
			if h.due <= nowMs && (i < 0 || h.due < b.ck.timer[i].due || h.due == b.ck.timer[i].due && h.seq < b.ck.timer[i].seq) {
				i = j
			}
		}
		if i < 0 {
			return
		}
		h := b.ck.timer[i]
		b.ck.timer = append(b.ck.timer[:i], b.ck.timer[i+1:]...)
		b.stats.TimerDeliveries++
		storeRevive(b.reviveQ(h.msg.QueueID), &h.msg, h.due)
	}
}

func (b *Broker) reviveMsg(nowMs int64, rq int32, tag, uniq string, body []byte, deliverMs int64) model.Message {
	m := model.Message{Topic: b.reviveTopic(), QueueID: rq, Tags: tag, UniqKey: uniq, BornTimestamp: nowMs, Body: body}
	_ = m.SetProperty(model.PropertyTimerDeliverMs, strconv.FormatInt(deliverMs, 10))
	return m
}

func (b *Broker) writeCk(nowMs int64, ck *model.PopCheckPoint, rq int32, first model.LeaseID, fails *[]pop.WriteFailure) int {
	d := ck.ReviveTime() - pop.AckTimeInterval
	if b.refuses(nowMs, d) {
		return 2
	}
	m := b.reviveMsg(nowMs, rq, model.CkTag, ck.UniqueID(), ck.AppendJSON(nil), d)
	if ck.Num > 0 {
		_ = m.SetProperty(pop.PropertyLease, strconv.FormatUint(uint64(first), 10))
	}
	b.stats.CkPuts++
	return b.putRevive(nowMs, &m, d, fails)
}

func (b *Broker) writeAckMsg(nowMs int64, a *model.AckMsg, rq int32, d int64, fails *[]pop.WriteFailure) int {
	if b.refuses(nowMs, d) {
		return 2
	}
	m := b.reviveMsg(nowMs, rq, model.AckTag, a.UniqueID(), a.AppendJSON(nil), d)
	b.stats.AckPuts++
	return b.putRevive(nowMs, &m, d, fails)
}

func (b *Broker) writeBatchAckMsg(nowMs int64, a *model.BatchAckMsg, rq int32, d int64, fails *[]pop.WriteFailure) int {
	if b.refuses(nowMs, d) {
		return 2
	}
	m := b.reviveMsg(nowMs, rq, model.BatchAckTag, a.UniqueID(), a.AppendJSON(nil), d)
	b.stats.BatchAckPuts++
	return b.putRevive(nowMs, &m, d, fails)
}

// ---- leases ----

func (b *Broker) makeRef(ck *model.PopCheckPoint, rq int32) *ckRef {
	r := &ckRef{ck: *ck, first: b.lastLease + 1, rq: rq, ended: make([]bool, ck.Num), pending: make([]bool, ck.Num), alive: true}
	b.lastLease += model.LeaseID(ck.Num)
	b.ck.refs = append(b.ck.refs, r)
	return r
}

// endLease ends lease i of r, returning it (0 when it had ended).
func endLease(r *ckRef, i int) model.LeaseID {
	if r == nil || i < 0 || i >= len(r.ended) || r.ended[i] {
		return 0
	}
	r.ended[i] = true
	return r.lease(i)
}

// forget drops r (its CK will not revive) and returns its live leases.
func (b *Broker) forget(r *ckRef) []model.LeaseID {
	var out []model.LeaseID
	for i := range r.ended {
		if l := endLease(r, i); l != 0 {
			out = append(out, l)
		}
	}
	r.alive = false
	return out
}

// refByLease finds the live CK whose first lease is l.
func (b *Broker) refByLease(l model.LeaseID) *ckRef {
	for _, r := range b.ck.refs {
		if r.alive && r.first == l && len(r.ended) > 0 {
			return r
		}
	}
	return nil
}

// pairing finds the newest live CK with merge key key on revive queue rq
// whose lease at ackOffset is live; none when that lease already has an
// ack message pending.
func (b *Broker) pairing(key string, rq int32, ackOffset, ackAt int64) (*ckRef, int) {
	// The round's map keeps the last CK read under a key: of the CKs
	// reaching the queue before the ack, the ack meets the last to arrive
	// (the newest of equals). An unwritten CK arrives ackTimeInterval
	// before its revive time.
	var best *ckRef
	bi := -1
	for j := len(b.ck.refs) - 1; j >= 0; j-- {
		r := b.ck.refs[j]
		if !r.alive || r.rq != rq || r.ck.MergeKey() != key {
			continue
		}
		i := r.ck.IndexOfAck(ackOffset)
		if i < 0 || i >= len(r.ended) || r.ended[i] {
			continue
		}
		if a := arrivalOf(b, r); a <= ackAt && (best == nil || a > arrivalOf(b, best)) {
			best, bi = r, i
		}
	}
	if best == nil || best.pending[bi] {
		return nil, -1
	}
	return best, bi
}

func arrivalOf(b *Broker, r *ckRef) int64 {
	if r.stored {
		return r.at
	}
	return b.slotDue(r.ck.ReviveTime() - pop.AckTimeInterval)
}

// markPending: an ack message reaching the queue at ackAt will end lease
// i of r when a round pairs it.
func (r *ckRef) markPending(i int, ackAt int64) model.LeaseID {
	r.pending[i] = true
	r.ackAt = max(r.ackAt, ackAt)
	return r.lease(i)
}

func (b *Broker) liveLeases() int {
	n := 0
	for _, r := range b.ck.refs {
		if r.alive {
			for _, e := range r.ended {
				if !e {
					n++
				}
			}
		}
	}
	return n
}

// ---- the in-flight counter ----

func (b *Broker) inflightAdd(k qk, n int64) {
	if n > 0 {
		b.ck.inflight[k] += n
	}
}

func (b *Broker) inflightSub(k qk, popTime, n int64) {
	if popTime < b.ck.shouldSt {
		return
	}
	if v, ok := b.ck.inflight[k]; ok {
		if v-n <= 0 {
			delete(b.ck.inflight, k)
		} else {
			b.ck.inflight[k] = v - n
		}
	}
}

// ---- pop ----

// readF is a store read with a filter-package subscription (tags code,
// then commit log), with the offset-correction statuses.
func (b *Broker) readF(q *queue, offset int64, n int, f *filter.Filter) readResult {
	lo, hi := q.min, q.max()
	var r readResult
	switch {
	case hi == 0:
		r = readResult{status: stNoMessageInQueue, next: 0}
	case offset < lo:
		r = readResult{status: stOffsetTooSmall, next: lo}
	case offset == hi:
		r = readResult{status: stOffsetOverflowOne, next: offset}
	case offset > hi && lo == 0:
		r = readResult{status: stOffsetOverflowBadly, next: 0}
	case offset > hi:
		r = readResult{status: stOffsetOverflowBadly, next: hi}
	default:
		r.status = stNoMatchedMessage
		o := offset
		for ; o < hi && o-offset < max(800, int64(n)) && len(r.msgs) < n; o++ {
			if m := q.at(o); f.MatchConsumeQueue(filter.TagsCode(m.Tags)) && f.MatchCommitLog(m) {
				r.msgs = append(r.msgs, m)
			}
		}
		r.next = o
		if len(r.msgs) > 0 {
			r.status = stFound
		}
	}
	b.stats.ReadCalls++
	b.stats.ReadMessages += int64(len(r.msgs))
	return r
}

// fsPop serves a validated pop on the FS path.
func (b *Broker) fsPop(nowMs int64, req *pop.PopRequest, f *filter.Filter) pop.PopResult {
	c := &b.ck
	c.draws++
	randomQ := pop.RandomQ(b.cfg.Seed, c.draws)
	if req.Order {
		return b.orderPopFS(nowMs, req, f, randomQ)
	}
	p := &popping{popTime: nowMs, invisible: req.InvisibleTime.Millis(), ff: f}
	rq := int32(c.ckNumber % int64(b.cfg.ReviveQueueNum))
	c.ckNumber++
	needRetry, rot := b.fsChoice(req, randomQ)
	retryTopic := model.BuildPopRetryTopic(req.Topic, req.ConsumerGroup, b.cfg.EnableRetryTopicV2)
	if b.cfg.EnableRetryTopicV2 && b.cfg.RetrieveMessageFromPopRetryTopicV1 && randomQ%2 == 0 {
		retryTopic = model.BuildPopRetryTopicV1(req.Topic, req.ConsumerGroup)
	}
	var fails []pop.WriteFailure
	allQueues := func(name string) {
		if t := b.topics[name]; t != nil {
			for _, q := range b.scanOrder(t.cfg.ReadQueueNums, int64(rot)) {
				b.fsStage(nowMs, req, p, name, q, f, rq, &fails)
			}
		}
	}
	if needRetry {
		allQueues(retryTopic)
	}
	if req.QueueID < 0 {
		allQueues(req.Topic)
	} else {
		b.fsStage(nowMs, req, p, req.Topic, req.QueueID, f, rq, &fails)
	}
	if !needRetry && p.found < req.MaxMsgNums {
		allQueues(retryTopic)
	}
	res := b.respond(nowMs, req, p)
	res.ReviveQid, res.Failures = rq, fails
	if res.Status == pop.PopSuspended && res.RestNum > 0 {
		if w, ok := b.wakeOne(pollKey{req.Topic, req.ConsumerGroup, req.QueueID}, nil, true); ok {
			res.Woken = append(res.Woken, w)
		}
	}
	return res
}

// fsPopOffset is getPopOffset.
func (b *Broker) fsPopOffset(k qk, q *queue, initMode int32, init bool) int64 {
	o := b.queryOffset(k)
	if o < 0 {
		o = initOffset(q, k.topic, initMode, b.cfg.InitPopOffsetByCheckMsgInMem)
		if init {
			b.commit[k] = o
		}
	}
	if init {
		if v, ok := b.reset[k]; ok {
			delete(b.reset, k)
			b.dropCommitQ(k)
			b.clearBlock(k)
			b.commit[k] = v
			return v
		}
	}
	if cq := b.commitQOf(k); cq != nil && len(cq.ws) > 0 && cq.ws[len(cq.ws)-1].next > o {
		return cq.ws[len(cq.ws)-1].next
	}
	return o
}

// fsStage is popMsgFromQueue.
func (b *Broker) fsStage(nowMs int64, req *pop.PopRequest, p *popping, name string, qid int32, f *filter.Filter, rq int32, fails *[]pop.WriteFailure) {
	q := b.queue(name, qid)
	if q == nil {
		return
	}
	k := qk{req.ConsumerGroup, name, qid}
	offset := b.fsPopOffset(k, q, req.InitMode, false)
	if b.busy() {
		b.stats.LockBusy++
		p.rest += q.max() - offset
		return
	}
	if b.cfg.EnablePopMessageThreshold && b.ck.inflight[k] > b.cfg.PopInflightMessageThreshold {
		p.rest += q.max() - offset
		return
	}
	offset = b.fsPopOffset(k, q, req.InitMode, true)
	if p.found >= req.MaxMsgNums {
		p.rest += q.max() - offset
		return
	}
	remain := int(req.MaxMsgNums - p.found)
	start := offset
	r := b.readF(q, offset, remain, f)
	if r.status == stOffsetTooSmall || r.status == stOffsetOverflowBadly || r.status == stOffsetFoundNull {
		b.commit[k] = r.next
		r = b.readF(q, r.next, remain, f)
	}
	if r.status == stFound {
		ck := model.PopCheckPoint{Num: int8(len(r.msgs)), PopTime: p.popTime, InvisibleTime: p.invisible, StartOffset: start,
			CID: req.ConsumerGroup, Topic: name, QueueID: qid, BrokerName: b.cfg.BrokerName}
		for _, m := range r.msgs {
			ck.QueueOffsetDiff = append(ck.QueueOffsetDiff, int32(m.QueueOffset-start))
		}
		for !b.cfg.Bugs.SameMillisChangeInvisible && b.keyTaken(ck.MergeKey()) {
			ck.PopTime++ // the fix: a pop after a restart never takes a renewal's key either
		}
		ref := b.bufferCk(nowMs, &ck, rq, r.next)
		if ref == nil {
			ref = b.writeCkJustOffset(nowMs, &ck, rq, r.next, fails)
		}
		if ref == nil {
			p.rest += int64(len(r.msgs))
			return
		}
		b.fsCollect(req, p, k, start, ck.PopTime, r, ref, rq)
	} else if r.status == stNoMatchedMessage || r.status == stOffsetFoundNull {
		ck := model.PopCheckPoint{PopTime: p.popTime, InvisibleTime: p.invisible, StartOffset: start, CID: req.ConsumerGroup,
			Topic: name, QueueID: qid, BrokerName: b.cfg.BrokerName}
		b.enqueue(&wrapper{rq: rq, ck: ck, next: r.next, justOffset: true, ckStored: true, lock: k})
	}
	p.rest += q.max() - r.next
	b.inflightAdd(k, int64(len(r.msgs)))
}

// fsCollect adds a found read to the response.
func (b *Broker) fsCollect(req *pop.PopRequest, p *popping, k qk, start, popTime int64, r readResult, ref *ckRef, rq int32) {
	flag := model.RetryFlagOf(k.topic)
	var offs []int64
	for i, m := range r.msgs {
		offs = append(offs, m.QueueOffset)
		shown := deepCopy(m)
		shown.Topic = req.Topic
		p.msgs = append(p.msgs, pop.PoppedMessage{Message: shown, RealTopic: m.Topic, Lease: ref.lease(i), Deadline: clock.FromMillis(popTime + p.invisible),
			Handle: model.ReceiptHandle{CkQueueOffset: start, PopTime: popTime, InvisibleTime: p.invisible, ReviveQueueID: rq,
				RetryFlag: flag, BrokerName: b.cfg.BrokerName, QueueID: k.qid, QueueOffset: m.QueueOffset, CommitLogOffset: -1}})
	}
	p.found += int32(len(r.msgs))
	p.start = append(p.start, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: []int64{start}})
	p.msgInfos = append(p.msgInfos, model.OffsetInfo{RetryFlag: flag, QueueID: k.qid, Offsets: offs})
}

// ---- the buffer ----

func (b *Broker) commitQOf(k qk) *commitQ {
	for _, cq := range b.ck.commits {
		if cq.key == k {
			return cq
		}
	}
	return nil
}

func (b *Broker) dropCommitQ(k qk) {
	for i, cq := range b.ck.commits {
		if cq.key == k {
			b.ck.commits = append(b.ck.commits[:i], b.ck.commits[i+1:]...)
			return
		}
	}
}

func (b *Broker) enqueue(w *wrapper) {
	cq := b.commitQOf(w.lock)
	if cq == nil {
		cq = &commitQ{key: w.lock}
		b.ck.commits = append(b.ck.commits, cq)
	}
	cq.time = w.ck.PopTime
	cq.ws = append(cq.ws, w)
}

func (b *Broker) buffered(key string) *wrapper {
	for _, w := range b.ck.buffer {
		if w.ck.MergeKey() == key {
			return w
		}
	}
	return nil
}

func newWrapper(ck *model.PopCheckPoint, rq int32, next int64, justOffset bool) *wrapper {
	return &wrapper{rq: rq, ck: *ck, next: next, justOffset: justOffset, bits: make([]bool, ck.Num), stored: make([]bool, ck.Num),
		lock: qk{ck.CID, ck.Topic, ck.QueueID}}
}

// bufferCk is addCk.
func (b *Broker) bufferCk(nowMs int64, ck *model.PopCheckPoint, rq int32, next int64) *ckRef {
	if !b.cfg.EnablePopBufferMerge || ck.ReviveTime()-nowMs < b.cfg.PopCkStayBufferTimeOut+1500 || int64(len(b.ck.buffer)) > b.cfg.PopCkMaxBufferSize {
		return nil
	}
	cq := b.commitQOf(qk{ck.CID, ck.Topic, ck.QueueID})
	if cq != nil && int64(len(cq.ws)) >= b.cfg.PopCkOffsetMaxQueueSize || b.buffered(ck.MergeKey()) != nil {
		return nil
	}
	w := newWrapper(ck, rq, next, false)
	w.ref = b.makeRef(ck, rq)
	b.enqueue(w)
	b.ck.buffer = append(b.ck.buffer, w)
	return w.ref
}

// writeCkJustOffset is addCkJustOffset.
func (b *Broker) writeCkJustOffset(nowMs int64, ck *model.PopCheckPoint, rq int32, next int64, fails *[]pop.WriteFailure) *ckRef {
	if b.buffered(ck.MergeKey()) != nil {
		return nil
	}
	w := newWrapper(ck, rq, next, true)
	w.ref = b.makeRef(ck, rq)
	b.storeCk(nowMs, w, fails)
	b.enqueue(w)
	b.ck.buffer = append(b.ck.buffer, w)
	return w.ref
}

func (b *Broker) storeCk(nowMs int64, w *wrapper, fails *[]pop.WriteFailure) {
	if !w.ckStored && b.writeCk(nowMs, &w.ck, w.rq, w.ref.first, fails) == 0 {
		w.ckStored, w.ref.stored, w.ref.at = true, true, b.ck.arrival
	}
}

func allSet(bs []bool) bool {
	for _, x := range bs {
		if !x {
			return false
		}
	}
	return true
}

func sameBits(a, c []bool) bool {
	for i := range a {
		if a[i] != c[i] {
			return false
		}
	}
	return true
}

func wrapperDone(w *wrapper) bool {
	return w.justOffset && w.ckStored || allSet(w.bits) || sameBits(w.bits, w.stored) && w.ckStored
}

// merge is addAk: the leases it ended, and whether the buffer took it.
func (b *Broker) merge(nowMs int64, a *model.AckMsg, offsets []int64) ([]model.LeaseID, bool) {
	if !b.cfg.EnablePopBufferMerge {
		return nil, false
	}
	w := b.buffered(a.MergeKey())
	if w == nil || w.justOffset || w.ck.ReviveTime()-nowMs < b.cfg.PopCkStayBufferTimeOut+1500 || nowMs-w.ck.PopTime > b.cfg.PopCkStayBufferTime-1500 {
		return nil, false
	}
	var ended []model.LeaseID
	for _, o := range offsets {
		i := w.ck.IndexOfAck(o)
		if i < 0 || i >= int(w.ck.Num) {
			continue
		}
		w.bits[i] = true
		if l := endLease(w.ref, i); l != 0 {
			ended = append(ended, l)
		}
		b.stats.AcksMerged++
	}
	return ended, true
}

// scanWork reports whether a scan at t would change anything.
func (b *Broker) scanWork(t int64) bool {
	for _, w := range b.ck.buffer {
		if wrapperDone(w) {
			return true
		}
		removeCk := w.ck.ReviveTime()-t < b.cfg.PopCkStayBufferTimeOut || t-w.ck.PopTime > b.cfg.PopCkStayBufferTime
		if (w.justOffset || removeCk) && !w.ckStored && !b.refuses(t, w.ck.ReviveTime()-pop.AckTimeInterval) {
			return true
		}
		if removeCk && w.ckStored && !sameBits(w.bits, w.stored) {
			return true
		}
	}
	for _, cq := range b.ck.commits {
		if len(cq.ws) > 0 && wrapperDone(cq.ws[0]) {
			return true
		}
		if t%pop.BufferGarbageInterval == 0 && b.garbage(cq, t) {
			return true
		}
	}
	return false
}

// garbage tells whether scanGarbage at t drops cq.
func (b *Broker) garbage(cq *commitQ, t int64) bool {
	_, g := b.groups[cq.key.group]
	return b.topics[cq.key.topic] == nil || !g || t-cq.time > pop.CommitQueueIdle
}

// scan is one PopBufferMergeService scan at t.
func (b *Broker) scan(t int64, res *pop.CheckpointResult) {
	b.ck.lastScan = t
	for _, w := range append([]*wrapper(nil), b.ck.buffer...) {
		if wrapperDone(w) {
			b.unbuffer(w)
			res.Buffer.Removed++
			if !w.ckStored {
				res.Buffer.Unwritten++
				b.stats.CksUnwritten++
				b.forget(w.ref)
			}
			continue
		}
		removeCk := w.ck.ReviveTime()-t < b.cfg.PopCkStayBufferTimeOut || t-w.ck.PopTime > b.cfg.PopCkStayBufferTime
		if w.justOffset {
			b.storeCk(t, w, &res.Failures)
			continue
		}
		if !removeCk {
			continue
		}
		b.storeCk(t, w, &res.Failures)
		if !w.ckStored {
			continue
		}
		b.writeMerged(t, w, res)
		if sameBits(w.bits, w.stored) {
			b.unbuffer(w)
			res.Buffer.Removed++
		}
	}
	for _, cq := range b.ck.commits {
		for len(cq.ws) > 0 && wrapperDone(cq.ws[0]) {
			w := cq.ws[0]
			cq.ws = cq.ws[1:]
			if w.next >= 0 {
				b.commit[w.lock] = w.next
				res.Buffer.Commits = append(res.Buffer.Commits, pop.OffsetState{Group: w.lock.group, Topic: w.lock.topic, QueueID: w.lock.qid, Commit: w.next, Pull: -1, Reset: -1})
			}
		}
	}
	if t%pop.BufferGarbageInterval == 0 {
		var kept []*commitQ
		for _, cq := range b.ck.commits {
			if !b.garbage(cq, t) {
				kept = append(kept, cq)
			}
		}
		b.ck.commits = kept
	}
}

func (b *Broker) unbuffer(w *wrapper) {
	for i, x := range b.ck.buffer {
		if x == w {
			b.ck.buffer = append(b.ck.buffer[:i], b.ck.buffer[i+1:]...)
			return
		}
	}
}

func (b *Broker) writeMerged(t int64, w *wrapper, res *pop.CheckpointResult) {
	ck := &w.ck
	var todo []int
	for i := range w.bits {
		if w.bits[i] && !w.stored[i] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return
	}
	if b.cfg.EnablePopBatchAck {
		a := model.BatchAckMsg{AckMsg: model.AckMsg{StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic, QueueID: ck.QueueID, PopTime: ck.PopTime}}
		for _, i := range todo {
			a.AckOffsetList = append(a.AckOffsetList, ck.AckOffsetByIndex(i))
		}
		if b.writeBatchAckMsg(t, &a, w.rq, ck.ReviveTime(), &res.Failures) == 0 {
			for _, i := range todo {
				w.stored[i] = true
			}
		}
		return
	}
	for _, i := range todo {
		a := model.AckMsg{AckOffset: ck.AckOffsetByIndex(i), StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic,
			QueueID: ck.QueueID, PopTime: ck.PopTime, BrokerName: ck.BrokerName}
		if b.writeAckMsg(t, &a, w.rq, ck.ReviveTime(), &res.Failures) == 0 {
			w.stored[i] = true
		}
	}
}

// ---- ack, batch ack, changeInvisibleTime ----

func (b *Broker) fsAck(nowMs int64, req *pop.AckRequest, h model.ReceiptHandle) pop.AckResult {
	b.stats.Acked++
	a := model.AckMsg{AckOffset: req.Offset, StartOffset: h.CkQueueOffset, ConsumerGroup: req.ConsumerGroup, Topic: req.Topic,
		QueueID: req.QueueID, PopTime: h.PopTime, BrokerName: h.BrokerName}
	k := qk{req.ConsumerGroup, req.Topic, req.QueueID}
	res := pop.AckResult{Code: model.Success}
	if ended, ok := b.merge(nowMs, &a, []int64{req.Offset}); ok {
		b.inflightSub(k, h.PopTime, 1)
		if len(ended) > 0 {
			res.Removed = ended[0]
		} else {
			b.stats.AckMisses++
		}
		return res
	}
	if b.writeAckMsg(nowMs, &a, h.ReviveQueueID, h.PopTime+h.InvisibleTime, &res.Failures) == 0 {
		if r, i := b.pairing(a.MergeKey(), h.ReviveQueueID, req.Offset, b.ck.arrival); r != nil {
			res.Pending = r.markPending(i, b.ck.arrival)
		}
	}
	b.inflightSub(k, h.PopTime, 1)
	if res.Pending == 0 {
		b.stats.AckMisses++
	}
	return res
}

func (b *Broker) fsBatchAck(nowMs int64, a pop.BatchAck, res *pop.BatchAckResult) {
	name := model.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
	q := b.queue(name, a.QueueID)
	if q == nil {
		return
	}
	first := len(res.Offsets)
	var offs []int64
	for i := 0; i < 64*len(a.Bits); i++ {
		if a.Bits[i/64]&(1<<uint(i%64)) == 0 {
			continue
		}
		o := a.StartOffset + int64(i)
		e := pop.AckedOffset{Topic: name, QueueID: a.QueueID, Offset: o}
		if o < q.min || o > q.max() {
			res.Skipped++
			e.Skipped = true
		} else {
			offs = append(offs, o)
		}
		res.Offsets = append(res.Offsets, e)
	}
	if len(offs) == 0 {
		return
	}
	b.stats.Acked += int64(len(offs))
	m := model.BatchAckMsg{AckMsg: model.AckMsg{AckOffset: -1, StartOffset: a.StartOffset, ConsumerGroup: a.ConsumerGroup, Topic: name,
		QueueID: a.QueueID, PopTime: a.PopTime, BrokerName: b.cfg.BrokerName}, AckOffsetList: offs}
	k := qk{a.ConsumerGroup, name, a.QueueID}
	defer b.inflightSub(k, a.PopTime, int64(len(offs)))
	if ended, ok := b.merge(nowMs, &m.AckMsg, offs); ok {
		for _, l := range ended {
			off := b.offsetOfLease(l)
			for x := first; x < len(res.Offsets); x++ {
				if e := &res.Offsets[x]; !e.Skipped && e.Offset == off && e.Removed == 0 {
					e.Removed = l
					res.Deleted++
					break
				}
			}
		}
		for x := first; x < len(res.Offsets); x++ {
			if e := &res.Offsets[x]; !e.Skipped && e.Removed == 0 {
				b.stats.AckMisses++
			}
		}
		return
	}
	type hit struct {
		r *ckRef
		i int
	}
	if b.writeBatchAckMsg(nowMs, &m, a.ReviveQueueID, a.PopTime+a.InvisibleTime, &res.Failures) != 0 {
		b.stats.AckMisses += int64(len(offs))
		return
	}
	var hits []hit
	for _, o := range offs {
		r, i := b.pairing(m.MergeKey(), a.ReviveQueueID, o, b.ck.arrival)
		hits = append(hits, hit{r, i})
	}
	j := 0
	for x := first; x < len(res.Offsets); x++ {
		e := &res.Offsets[x]
		if e.Skipped {
			continue
		}
		if h := hits[j]; h.r != nil {
			e.Pending = h.r.markPending(h.i, b.ck.arrival)
			res.Pending++
		} else {
			b.stats.AckMisses++
		}
		j++
	}
}

// keyTaken: a live CK (not yet dropped) has merge key key.
func (b *Broker) keyTaken(key string) bool {
	for _, r := range b.ck.refs {
		if r.alive && r.ck.MergeKey() == key {
			return true
		}
	}
	return false
}

// offsetOfLease is the queue offset of lease l.
func (b *Broker) offsetOfLease(l model.LeaseID) int64 {
	for _, r := range b.ck.refs {
		if l >= r.first && l < r.first+model.LeaseID(len(r.ended)) {
			return r.ck.AckOffsetByIndex(int(l - r.first))
		}
	}
	panic("ref: lease without a CK")
}

func (b *Broker) fsChange(nowMs int64, req *pop.ChangeInvisibleTimeRequest, h model.ReceiptHandle, invisible int64) pop.ChangeInvisibleTimeResult {
	rq := h.ReviveQueueID
	ck := model.PopCheckPoint{Num: 1, PopTime: nowMs, InvisibleTime: invisible, StartOffset: req.Offset, CID: req.ConsumerGroup, Topic: req.Topic,
		QueueID: req.QueueID, QueueOffsetDiff: []int32{0}, BrokerName: h.BrokerName}
	for !b.cfg.Bugs.SameMillisChangeInvisible && b.keyTaken(ck.MergeKey()) {
		ck.PopTime++ // the fix: the first millisecond whose merge key no live CK has
	}
	pt := ck.PopTime
	var res pop.ChangeInvisibleTimeResult
	if b.writeCk(nowMs, &ck, rq, b.lastLease+1, &res.Failures) != 0 {
		res.Code = model.SystemError
		return res
	}
	r := b.makeRef(&ck, rq)
	r.stored, r.at = true, b.ck.arrival
	b.stats.Changed++
	a := model.AckMsg{AckOffset: req.Offset, StartOffset: h.CkQueueOffset, ConsumerGroup: req.ConsumerGroup, Topic: req.Topic,
		QueueID: req.QueueID, PopTime: h.PopTime, BrokerName: h.BrokerName}
	if ended, ok := b.merge(nowMs, &a, []int64{req.Offset}); ok {
		if len(ended) > 0 {
			res.Removed = ended[0]
		}
	} else {
		if b.writeAckMsg(nowMs, &a, rq, h.PopTime+h.InvisibleTime, &res.Failures) == 0 {
			if o, i := b.pairing(a.MergeKey(), rq, req.Offset, b.ck.arrival); o != nil {
				res.Pending = o.markPending(i, b.ck.arrival)
			}
		}
	}
	res.Code, res.PopTime, res.InvisibleTime = model.Success, clock.FromMillis(pt), clock.MillisDuration(invisible)
	res.Lease, res.Deadline, res.ReviveQid = r.first, clock.FromMillis(pt+invisible), rq
	res.OldDeleted = res.Removed != 0 || res.Pending != 0
	res.Handle = model.ReceiptHandle{CkQueueOffset: req.Offset, PopTime: pt, InvisibleTime: invisible, ReviveQueueID: rq,
		RetryFlag: model.RetryFlagOf(req.Topic), BrokerName: h.BrokerName, QueueID: req.QueueID, QueueOffset: req.Offset, CommitLogOffset: -1}
	return res
}

// ---- restart and state ----

func (b *Broker) fsRestart(nowMs int64, r *pop.RestartResult) {
	for _, w := range b.ck.buffer {
		if !w.ckStored {
			pending := append([]bool(nil), w.ref.pending...)
			lost := b.forget(w.ref)
			r.CachedLost += len(lost)
			for _, l := range lost {
				if !pending[l-w.ref.first] { // a pending ack's lease was reported ended
					r.LostLeases = append(r.LostLeases, l)
				}
			}
			continue
		}
		for i := range w.bits {
			if w.bits[i] && !w.stored[i] && w.ref.ended[i] {
				w.ref.ended[i] = false
				r.ReopenedLeases = append(r.ReopenedLeases, w.ref.lease(i))
			}
		}
	}
	b.startServices(nowMs)
}

func (b *Broker) checkpointState() pop.CheckpointState {
	c := &b.ck
	st := pop.CheckpointState{CkMessageNumber: c.ckNumber, ShouldStartTime: c.shouldSt, RandomDraws: c.draws, ReviveReads: c.reads}
	for _, r := range c.refs {
		if !r.alive {
			continue
		}
		for i := range r.ended {
			if !r.ended[i] {
				st.Leases = append(st.Leases, pop.CkLease{Lease: r.lease(i), Group: r.ck.CID, Topic: r.ck.Topic, QueueID: r.ck.QueueID,
					Offset: r.ck.AckOffsetByIndex(i), PopTime: r.ck.PopTime, Deadline: r.ck.ReviveTime(), ReviveQueue: r.rq,
					Stored: r.stored, AckPending: r.pending[i]})
			}
		}
	}
	sort.Slice(st.Leases, func(i, j int) bool { return st.Leases[i].Lease < st.Leases[j].Lease })
	tm := append([]held(nil), c.timer...)
	sort.Slice(tm, func(i, j int) bool {
		a, d := tm[i], tm[j]
		if a.msg.QueueID != d.msg.QueueID {
			return a.msg.QueueID < d.msg.QueueID
		}
		if a.due != d.due {
			return a.due < d.due
		}
		return a.seq < d.seq
	})
	for _, h := range tm {
		st.Timer = append(st.Timer, pop.TimerEntry{Due: h.due, ReviveQueue: h.msg.QueueID, Tag: h.msg.Tags, UniqKey: h.msg.UniqKey})
	}
	for _, w := range c.buffer {
		st.Buffer = append(st.Buffer, pop.BufferedCk{MergeKey: w.ck.MergeKey(), ReviveQueue: w.rq, FirstLease: w.ref.first, Num: w.ck.Num,
			Bits: bitsOf(w.bits), StoredBits: bitsOf(w.stored), JustOffset: w.justOffset, CkStored: w.ckStored, NextBegin: w.next})
	}
	for _, cq := range c.commits {
		s := pop.CommitQueueState{Group: cq.key.group, Topic: cq.key.topic, QueueID: cq.key.qid, Time: cq.time}
		for _, w := range cq.ws {
			s.NextBegins = append(s.NextBegins, w.next)
			s.Done = append(s.Done, wrapperDone(w))
		}
		st.CommitQueues = append(st.CommitQueues, s)
	}
	for _, s := range c.services {
		st.Revive = append(st.Revive, pop.ReviveServiceState{ReviveQueue: s.qid, Offset: s.offset, Committed: b.reviveCommitted(s.qid),
			Slow: s.slow, Pulling: s.pulling, Ending: s.ending, Due: s.due})
	}
	for k, n := range c.inflight {
		st.Inflight = append(st.Inflight, pop.InflightCount{Group: k.group, Topic: k.topic, QueueID: k.qid, Count: n})
	}
	sort.Slice(st.Inflight, func(i, j int) bool {
		a, d := st.Inflight[i], st.Inflight[j]
		if a.Group != d.Group {
			return a.Group < d.Group
		}
		if a.Topic != d.Topic {
			return a.Topic < d.Topic
		}
		return a.QueueID < d.QueueID
	})
	return st
}

func bitsOf(bs []bool) uint32 {
	var v uint32
	for i, x := range bs {
		if x {
			v |= 1 << uint(i)
		}
	}
	return v
}
