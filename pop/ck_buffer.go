package pop

import (
	"math"

	"popsim/model"
)

// PopBufferMergeService: the checkpoint path's in-memory buffer of CKs
// (merging acks into them so that a CK acked in time is never written)
// and the per-queue commit queues that decide the commit offset. Its scan
// runs every BufferScanInterval ms (CheckpointTick); everything in it is
// volatile.
//
// Iteration order: upstream walks ConcurrentHashMaps (hash order); popsim
// walks the buffer and the commit queues in the order their entries were
// first added, which is one of the orders upstream can take.

// wrapper is PopCheckPointWrapper.
type wrapper struct {
	// ck is the CK, its ref's (ckRef.ck), or a mock's own; never written
	// to.
	ck     *model.PopCheckPoint
	ref    *ckRef // nil for a mock
	mkey   string // merge key
	lock   qkey   // the lock key topic@group@qid as a queue key
	bits   uint32 // acks merged in memory
	stored uint32 // toStoreBits: merged acks already written as messages
	next   int64  // nextBeginOffset
	rq     int32
	// justOffset: the CK was written at once (or is a mock); ckStored: its
	// CK message is written (reviveQueueOffset >= 0). inBuf and inCQ: the
	// buffer (its order and its key's entry) and the commit queue of lock
	// hold it; once neither does, it is free (ckBuffer.let). (In rq's
	// word.)
	justOffset, ckStored bool
	inBuf, inCQ          bool
}

func (w *wrapper) numMask() uint32 { return uint32(1)<<uint(w.ck.Num) - 1 }

// ckDone is isCkDone: every message acked in memory.
func (w *wrapper) ckDone() bool { return w.bits&w.numMask() == w.numMask() }

// doneForFinish is isCkDoneForFinish: every merged ack is written.
func (w *wrapper) doneForFinish() bool { return (w.bits^w.stored)&w.numMask() == 0 }

// done is the predicate scan and scanCommitOffset share.
func (w *wrapper) done() bool {
	return w.justOffset && w.ckStored || w.ckDone() || w.doneForFinish() && w.ckStored
}

// commitQueue is one lock key's QueueWithTime: wrappers in pop order and
// the pop time of the last one enqueued.
type commitQueue struct {
	key  qkey
	ws   []*wrapper
	time int64
	q    *queue // the store queue of key (queues are never replaced), for keepIdle; nil if none
}

// ckBuffer is the buffer. Its wrappers are indexed by merge key in the
// broker's merge-key table (mkEntry.w), beside the refs of the key.
type ckBuffer struct {
	keys    *mkTable
	order   []*wrapper // buffered wrappers, in insertion order
	commits cqTable
	corder  []*commitQueue // commit queues in creation order
	counter int64          // buffered CKs (recomputed from the buffer every minute upstream; exact here)
	// lastScan is the last scan's time.
	lastScan int64
	// free are the wrappers neither the buffer nor a commit queue holds
	// any more, which newWrapper reuses (let).
	free []*wrapper
	// work is nextBufferWork's answer, remembered until the buffer changes.
	work workMemo
}

// workMemo remembers nextBufferWork's answer: NextCheckpointTick asks for
// it after every request, and most (an ack, a pop that finds nothing)
// change nothing it depends on. known: the answer is has and at for every
// from in [from, until]; now: a buffered wrapper is done, so that a scan
// has work at any time (the answer is from) until the next scan removes
// it. The buffer, its commit queues and the configuration unchanged,
// nextBufferWork is the first time at or after from at which a scan has
// work, and what a scan has to do, but for what is due at once, depends on
// the time alone: its answer stands for every later from up to it (for
// ever when the buffer is empty). Not so when the timer is off (a CK the
// store refuses has no time to be written at: nextBufferWork skips it),
// when it stands for its from alone. Every change forgets it
// (ckBuffer.changed), but a done wrapper buffered (addCkJustOffset's
// written CK: the only wrapper buffered done), which sets now.
type workMemo struct {
	known, now, has bool
	at, from, until int64
}

// get is the remembered answer for from, ok false when there is none.
func (m *workMemo) get(from int64) (at int64, has, ok bool) {
	switch {
	case m.now:
		return from, true, true
	case !m.known || from < m.from || from > m.until:
		return 0, false, false
	}
	return m.at, m.has, true
}

// remember keeps nextBufferWork's answer at and has from from; timer is
// the configuration's TimerWheelEnable.
func (m *workMemo) remember(from, at int64, has, timer bool) {
	until := int64(math.MaxInt64)
	switch {
	case !timer:
		until = from
	case has:
		until = at
	}
	*m = workMemo{known: true, has: has, at: at, from: from, until: until}
}

// changed forgets nextBufferWork's answer: the buffer or a commit queue
// changed. A done wrapper keeps a scan due at once whatever else changes,
// until a scan (scanBuffer forgets it then).
func (f *ckBuffer) changed() {
	if !f.work.now {
		f.work.known = false
	}
}

func newCkBuffer(keys *mkTable) *ckBuffer {
	return &ckBuffer{keys: keys}
}

// lookup is the buffered wrapper with merge key key, nil when none.
func (f *ckBuffer) lookup(key []byte) *wrapper {
	if e, _ := f.keys.findBytes(key); e != nil {
		return e.w
	}
	return nil
}

// forget takes every wrapper out of the merge-key table: the buffer is
// being replaced by an empty one (a restart).
func (f *ckBuffer) forget() {
	for _, w := range f.order {
		e := w.ref.e
		e.w = nil
		f.keys.release(e)
	}
}

// queueOf is the commit queue of lock key k, nil when none.
func (f *ckBuffer) queueOf(k qkey) *commitQueue { return f.commits.get(k) }

// latest is getLatestOffset: the nextBeginOffset of the newest wrapper of
// the lock key, -1 when there is none.
func (f *ckBuffer) latest(k qkey) int64 {
	return f.queueOf(k).latest()
}

// latest is getLatestOffset of cq (nil: none).
func (cq *commitQueue) latest() int64 {
	if cq == nil || len(cq.ws) == 0 {
		return -1
	}
	return cq.ws[len(cq.ws)-1].next
}

func (f *ckBuffer) queueLen(k qkey) int64 {
	if cq := f.queueOf(k); cq != nil {
		return int64(len(cq.ws))
	}
	return 0
}

// enqueue is putOffsetQueue. It returns w's commit queue.
func (f *ckBuffer) enqueue(w *wrapper) *commitQueue {
	cq := f.queueOf(w.lock)
	if cq == nil {
		cq = &commitQueue{key: w.lock}
		f.commits.set(w.lock, cq)
		f.corder = append(f.corder, cq)
	}
	cq.time = w.ck.PopTime
	cq.ws = append(cq.ws, w)
	w.inCQ = true
	f.changed()
	return cq
}

// add buffers w, whose ref holds its merge key's entry.
func (f *ckBuffer) add(w *wrapper) {
	w.ref.e.w = w
	w.inBuf = true
	f.order = append(f.order, w)
	f.counter++
	f.changed() // a done w: see addCkJustOffset
}

// remove takes w, which the scan has taken out of order (scanBuffer), out
// of the buffer. The caller may still read w until the next newWrapper,
// which alone writes a free wrapper. Only a scan removes a wrapper, and
// forgets nextBufferWork's answer after it (scanBuffer), as it does for
// its commits and its garbage scan.
func (f *ckBuffer) remove(w *wrapper) {
	e := w.ref.e
	if invariants {
		assertf(e.w == w, "buffer: removing wrapper %q, which its key's entry does not hold", w.mkey)
	}
	e.w = nil
	f.keys.release(e)
	f.counter--
	f.let(w, &w.inBuf)
}

// let records that w's holder whose flag is held (w.inBuf or w.inCQ) let
// it go, and frees w once neither holds it: a wrapper lives a scan or
// two, and the 60 k of a run, allocated one after the other, had been
// 3.8 MB of new memory whose every line the pop writing one missed.
func (f *ckBuffer) let(w *wrapper, held *bool) {
	if invariants {
		assertf(*held, "buffer: wrapper %q let go by a holder that does not hold it", w.mkey)
	}
	*held = false
	if w.inBuf || w.inCQ {
		return
	}
	if invariants {
		assertf(w.ref == nil || w.ref.e.w != w, "buffer: wrapper %q freed while its key's entry holds it", w.mkey)
		for _, x := range f.order {
			assertf(x != w, "buffer: wrapper %q freed while buffered", w.mkey)
		}
	}
	f.free = append(f.free, w)
}

// dropQueue lets go of the wrappers of cq, whose commit queue is gone.
func (f *ckBuffer) dropQueue(cq *commitQueue) {
	f.changed()
	for _, w := range cq.ws {
		f.let(w, &w.inCQ)
	}
}

// clearQueue is clearOffsetQueue (an admin reset taken by a pop, which
// has cleared the queue's idle mark: offsets.at).
func (f *ckBuffer) clearQueue(k qkey) {
	cq := f.queueOf(k)
	if cq == nil {
		return
	}
	f.commits.delete(k)
	f.dropQueue(cq)
	for i, x := range f.corder {
		if x == cq {
			f.corder = append(f.corder[:i], f.corder[i+1:]...)
			break
		}
	}
}

// Wrappers are allocated a block at a time (wrapperSlab: 63 wrappers of
// 64 bytes, with the 8-byte header Go's allocator puts before an object
// with pointers larger than 512 bytes, fill a 4 KiB size class; 64
// wrappers took the 4 864-byte one), in blocks of their own. A wrapper
// lives until the buffer and its commit queue let it go (a scan or two),
// much less than its CK's ref (the invisible time), which its CK's body
// holds (ckBody.own); allocated beside the refs, each wrapper had stayed
// for as long as they did (newWrapper). Once both let it go it is reused
// (ckBuffer.free), most recently freed first, whose lines the cache is
// likeliest to hold: a block is taken only when none is free, and goes
// once none of its entries is referenced (a restart's buffer's). The
// wrapper's CK is the ref's, which the CK's body holds (newCkBody); a
// mock's wrapper has a CK of its own.
const wrapperSlab = 63

// newWrapper builds a wrapper on revive queue rq for CK ck. mkey is the
// CK's merge key and lock its queue key (group and topic ck.CID and
// ck.Topic, queue ck.QueueID), which the caller has already.
func (b *Broker) newWrapper(ck *model.PopCheckPoint, mkey string, lock qkey, rq int32, next int64, justOffset bool) *wrapper {
	w, ok := takeLast(&b.buf.free)
	if !ok {
		if len(b.ckl.wslab) == 0 {
			b.ckl.wslab = b.slabs.wrappers.take(wrapperSlab)
		}
		w = &b.ckl.wslab[0]
		b.ckl.wslab = b.ckl.wslab[1:]
	}
	*w = wrapper{rq: rq, ck: ck, mkey: mkey, lock: lock, next: next, justOffset: justOffset}
	return w
}

// nextCkBody is the body newCkBody gives next, for a pop to build its CK
// in (d.ck) instead of building it aside for newCkBody to copy: the
// buffer takes it (takeCkBody) as it makes the CK's ref. A CK the buffer
// refuses leaves it to the next, which writes the whole of its ck.
func (b *Broker) nextCkBody() *ckBody {
	if len(b.ckBodies) == 0 {
		b.ckBodies = b.slabs.ckBodies.take(ckBodySlab)
	}
	return &b.ckBodies[0]
}

// takeCkBody takes d, the body nextCkBody gave, whose ck the caller has
// built: newCkBody without the copy.
func (b *Broker) takeCkBody(d *ckBody) {
	if invariants {
		assertf(d == &b.ckBodies[0], "CK body taken out of turn")
	}
	b.ckBodies = b.ckBodies[1:]
	d.part = ckPart
}

// newPopRef makes the ref of a pop's CK, built in d, whose merge key mkey
// (hash mh) has entry e in the merge-key table, or none (nil): then the
// entry is made (freeMergeKey found the table without it).
func (b *Broker) newPopRef(d *ckBody, rq int32, mkey string, mh uint64, e *mkEntry) *ckRef {
	if e == nil {
		e = b.ckl.keys.add(mkey, mh)
	}
	return b.newRefIn(d, rq, e)
}

// addCk is PopBufferMergeService.addCk: buffer the CK without writing it.
// It returns the CK's lease ref, nil when it refused. d is the body the
// CK was built in (nextCkBody; ck is &d.ck), which it takes unless it
// refuses; lock is ck's queue key; mkey is ck's merge key, mh its hash and
// e its entry in the merge-key table, nil when the table has none
// (freeMergeKey). It inlines its refusal with buffer merge off, where
// every pop's CK comes (addCkBuffered does the rest).
func (b *Broker) addCk(nowMs int64, d *ckBody, mkey string, mh uint64, e *mkEntry, lock qkey, rq int32, next int64) *ckRef {
	if !b.cfg.EnablePopBufferMerge {
		return nil
	}
	return b.addCkBuffered(nowMs, d, mkey, mh, e, lock, rq, next)
}

// addCkBuffered is addCk with buffer merge on.
func (b *Broker) addCkBuffered(nowMs int64, d *ckBody, mkey string, mh uint64, e *mkEntry, lock qkey, rq int32, next int64) *ckRef {
	ck := &d.ck
	f := b.buf
	switch {
	case ck.ReviveTime()-nowMs < b.cfg.PopCkStayBufferTimeOut+1500,
		f.counter > b.cfg.PopCkMaxBufferSize:
		return nil
	}
	// A key conflict is possible only with SameMillisChangeInvisible: the
	// fixed engine's freeMergeKey has already moved ck off every live key.
	if f.queueLen(lock) >= b.cfg.PopCkOffsetMaxQueueSize || e != nil && e.w != nil {
		return nil
	}
	b.takeCkBody(d)
	w := b.newWrapper(ck, mkey, lock, rq, next, false)
	w.ref = b.newPopRef(d, rq, mkey, mh, e)
	b.enqueueCk(w)
	f.add(w)
	return w.ref
}

// addCkJustOffset writes the CK now and keeps its wrapper for the commit
// offset; it refuses (nil) only a merge-key conflict (a buffered CK in
// e, the CK's merge-key entry: see addCk, whose arguments it takes). With
// buffer merge off every pop takes this path.
func (b *Broker) addCkJustOffset(nowMs int64, d *ckBody, mkey string, mh uint64, e *mkEntry, lock qkey, rq int32, next int64, fails *[]WriteFailure) *ckRef {
	if e != nil && e.w != nil {
		return nil
	}
	b.takeCkBody(d)
	w := b.newWrapper(&d.ck, mkey, lock, rq, next, true)
	r := b.newPopRef(d, rq, mkey, mh, e)
	w.ref = r
	// storeWrapper of a new wrapper, with what the caller holds of it
	if b.putCk(nowMs, d, mkey, mh, r.e, rq, r.first, fails) == putOK {
		b.wrapperStored(w)
	}
	b.enqueueCk(w)
	b.buf.add(w)
	if w.done() { // written: a scan has work from now on (workMemo.now)
		b.buf.work.known, b.buf.work.now = true, true
	}
	return w.ref
}

// addCkMock queues an offset-only wrapper: a pop that found nothing to
// return still moves the commit offset past what it read.
func (b *Broker) addCkMock(ck *model.PopCheckPoint, lock qkey, rq int32, next int64) {
	var kb [keyBuf]byte
	own := new(model.PopCheckPoint)
	*own = *ck
	w := b.newWrapper(own, b.arena.strs.str(ck.AppendMergeKey(kb[:0])), lock, rq, next, true) // no ref
	w.ckStored = true
	b.enqueueCk(w)
}

// enqueueCk is putOffsetQueue: the queue's pop offset may move with it
// (ckIdle).
func (b *Broker) enqueueCk(w *wrapper) {
	b.offsets.touch(w.lock)
	if cq := b.buf.enqueue(w); cq.q == nil { // a new commit queue
		cq.q = b.queue(b.names.pairs[w.lock.pair].topic, w.lock.qid)
	}
}

// storeWrapper is putCkToStore.
func (b *Broker) storeWrapper(nowMs int64, w *wrapper, fails *[]WriteFailure) {
	if w.ckStored {
		return
	}
	if b.putCk(nowMs, w.ref.home(), w.mkey, w.ref.e.hash, w.ref.e, w.rq, w.ref.first, fails) == putOK {
		b.wrapperStored(w)
	}
}

// wrapperStored records that w's CK was written (at b.arrival).
func (b *Broker) wrapperStored(w *wrapper) {
	b.buf.changed()
	w.ckStored = true
	w.ref.stored, w.ref.at = true, b.arrival
}

// ackMerge is addAk's answer.
type ackMerge struct {
	accepted bool
	ended    []model.LeaseID // leases whose acks it merged (ended now)
}

// addAk is PopBufferMergeService.addAk: merge an ack (or a batch ack's
// offsets) into the buffered CK of its merge key. A single ack whose
// offset is not in the CK is accepted and dropped, as upstream.
func (b *Broker) addAk(nowMs int64, a *model.AckMsg, key []byte, offsets []int64) ackMerge {
	if !b.cfg.EnablePopBufferMerge {
		return ackMerge{}
	}
	w := b.buf.lookup(key)
	switch {
	case w == nil, w.justOffset,
		w.ck.ReviveTime()-nowMs < b.cfg.PopCkStayBufferTimeOut+1500,
		nowMs-w.ck.PopTime > b.cfg.PopCkStayBufferTime-1500:
		return ackMerge{}
	}
	m := ackMerge{accepted: true}
	b.buf.changed()
	for _, o := range offsets {
		i := w.ck.IndexOfAck(o)
		if i < 0 || i >= int(w.ck.Num) {
			continue // logged upstream; a single ack still counts as merged
		}
		w.bits |= 1 << uint(i)
		if l := b.end(w.ref, i); l != 0 {
			m.ended = append(m.ended, l)
		}
		b.stats.AcksMerged++
	}
	return m
}

// BufferScan reports what one PopBufferMergeService scan did.
type BufferScan struct {
	// Removed counts wrappers the scan took out of the buffer; Unwritten
	// those of them whose CK was never written (acked in time: the point
	// of the buffer).
	Removed, Unwritten int
	// Commits are the commit offsets it wrote, in order. The broker
	// reuses its storage: it is valid until the next CheckpointTick.
	Commits []OffsetState
}

// scanBuffer is PopBufferMergeService.scan at nowMs, then
// scanCommitOffset, and scanGarbage when nowMs is a garbage time (every
// BufferGarbageInterval: the scans run every 5 ms and upstream counts
// 6000 of them; popsim puts the garbage scans on multiples of 30 s).
func (b *Broker) scanBuffer(nowMs int64, res *CheckpointResult) {
	f := b.buf
	f.lastScan = nowMs
	// The scan walks order in place: it takes each wrapper out and puts it
	// back below the ones it removed if it keeps it, where it had walked
	// a copy and removed each (the oldest first, nearly all) by searching
	// order and moving the rest down (default run: scanBuffer 25.6 -> 21.6 M inclusive).
	kept, n := 0, len(f.order)
	for i := 0; i < n; i++ {
		w := f.order[i]
		f.order[i] = nil
		if !b.scanWrapper(nowMs, w, res) {
			f.order[kept] = w
			kept++
		}
	}
	for i := n; i < len(f.order); i++ { // buffered during the scan (none: a scan writes no CK it would buffer), kept unscanned
		w := f.order[i]
		f.order[i] = nil
		f.order[kept] = w
		kept++
	}
	f.order = f.order[:kept]
	b.scanCommitOffset(res)
	if nowMs%BufferGarbageInterval == 0 {
		b.scanGarbage(nowMs)
	}
	f.work = workMemo{} // the scan changed the buffer, and the next one's time
}

// scanWrapper is the scan of buffered wrapper w, which it reports it
// removed from the buffer (remove: its caller takes it out of order).
func (b *Broker) scanWrapper(nowMs int64, w *wrapper, res *CheckpointResult) bool {
	f := b.buf
	if w.done() {
		f.remove(w)
		res.Buffer.Removed++
		if !w.ckStored {
			// acked in time: the CK is never written and can never revive
			res.Buffer.Unwritten++
			b.stats.CksUnwritten++
			b.drop(w.ref)
		}
		return true
	}
	removeCk := w.ck.ReviveTime()-nowMs < b.cfg.PopCkStayBufferTimeOut || nowMs-w.ck.PopTime > b.cfg.PopCkStayBufferTime
	switch {
	case w.justOffset:
		b.storeWrapper(nowMs, w, &res.Failures)
	case removeCk:
		b.storeWrapper(nowMs, w, &res.Failures)
		if !w.ckStored {
			return false
		}
		b.writeMergedAcks(nowMs, w, res)
		if w.doneForFinish() {
			f.remove(w)
			res.Buffer.Removed++
			return true
		}
	}
	return false
}

// writeMergedAcks writes the acks merged into w that are not written yet:
// one bAck message (enablePopBatchAck, without a broker name) or one ack
// message each, delivered at the CK's revive time.
func (b *Broker) writeMergedAcks(nowMs int64, w *wrapper, res *CheckpointResult) {
	todo := w.bits &^ w.stored & w.numMask()
	if todo == 0 {
		return
	}
	b.buf.changed()
	ck := w.ck
	if b.cfg.EnablePopBatchAck {
		a := model.BatchAckMsg{AckMsg: model.AckMsg{AckOffset: 0, StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic,
			QueueID: ck.QueueID, PopTime: ck.PopTime}}
		for i := 0; i < int(ck.Num); i++ {
			if todo&(1<<uint(i)) != 0 {
				a.AckOffsetList = append(a.AckOffsetList, ck.AckOffsetByIndex(i))
			}
		}
		if b.putBatchAck(nowMs, &a, nil, w.rq, ck.ReviveTime(), &res.Failures) == putOK {
			w.stored |= todo
		}
		return
	}
	var kb [keyBuf]byte
	key := append(kb[:0], w.mkey...) // the ack's key is its CK's
	for i := 0; i < int(ck.Num); i++ {
		if todo&(1<<uint(i)) == 0 {
			continue
		}
		a := model.AckMsg{AckOffset: ck.AckOffsetByIndex(i), StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic,
			QueueID: ck.QueueID, PopTime: ck.PopTime, BrokerName: ck.BrokerName}
		if b.putAck(nowMs, &a, key, w.rq, ck.ReviveTime(), &res.Failures) == putOK {
			w.stored |= 1 << uint(i)
		}
	}
}

// scanCommitOffset commits, queue by queue, the nextBeginOffset of every
// done wrapper at the head of its commit queue; a head that is not done
// holds back the ones behind it. The queue lock is always free: popsim's
// broker is single-threaded.
func (b *Broker) scanCommitOffset(res *CheckpointResult) {
	f := b.buf
	for _, cq := range f.corder {
		if len(cq.ws) == 0 || !cq.ws[0].done() {
			continue
		}
		idle := b.offsets.isIdle(cq.key)
		n := 0
		for n < len(cq.ws) && cq.ws[n].done() {
			w := cq.ws[n]
			if w.next >= 0 {
				b.commitOffset(w.lock, w.next)
				p := &b.names.pairs[w.lock.pair]
				res.Buffer.Commits = append(res.Buffer.Commits, OffsetState{Group: p.group, Topic: p.topic, QueueID: w.lock.qid, Commit: w.next, Pull: -1, Reset: -1})
			}
			f.let(w, &w.inCQ) // the queue drops it below
			n++
		}
		cq.ws = dropFront(cq.ws, n)
		b.offsets.touch(cq.key) // the newest wrapper may be gone (ckIdle)
		if idle {
			b.keepIdle(cq)
		}
	}
}

// keepIdle marks queue k idle again if it still is after the scan
// committed its done wrappers' offsets (and cleared its mark): the queue
// was idle before, and the commits, the newest wrapper's nextBeginOffset
// at the queue's end, usually leave it so. Without it the next all-queue
// pop ran the queue's stage to find it idle again (default run: 38 k of
// 98.7 k stages found nothing).
// cq is the queue's commit queue, whose newest wrapper ckIdle reads.
func (b *Broker) keepIdle(cq *commitQueue) {
	k := cq.key
	if q := cq.q; q != nil && b.ckIdleAt(k, b.offsets.peek(k), q, cq.latest()) {
		b.offsets.markIdle(k)
	}
}

// scanGarbage drops commit queues whose topic or group is gone, or that
// were not used for CommitQueueIdle.
func (b *Broker) scanGarbage(nowMs int64) {
	f := b.buf
	keep := f.corder[:0]
	for _, cq := range f.corder {
		p := b.names.pairs[cq.key.pair]
		_, group := b.groups[p.group]
		if b.topics[p.topic] == nil || !group || nowMs-cq.time > CommitQueueIdle {
			f.commits.delete(cq.key)
			f.dropQueue(cq)
			b.offsets.touch(cq.key) // its wrappers no longer set the pop offset (ckIdle)
			continue
		}
		keep = append(keep, cq)
	}
	clear(f.corder[len(keep):])
	f.corder = keep
}

// nextBufferWork is the earliest time at or after nowMs at which a scan
// has something to do, false when the buffer is idle. It stops at the
// first work due by nowMs: nothing can come earlier.
func (b *Broker) nextBufferWork(nowMs int64) (int64, bool) {
	f := b.buf
	best, ok := int64(0), false
	at := func(t int64) {
		if !ok || t < best {
			best, ok = t, true
		}
	}
	for _, w := range f.order {
		switch {
		case w.done():
			at(nowMs)
		case w.justOffset: // a CK put to retry; a refused one only once the timer takes it
			if d := w.ck.ReviveTime() - AckTimeInterval; b.timerRefuses(nowMs, d) {
				if b.cfg.TimerWheelEnable {
					at(d - b.cfg.TimerMaxDelaySec*1000)
				}
				continue
			}
			at(nowMs)
		case w.ckStored && w.bits&^w.stored != 0:
			at(nowMs)
		default: // buffered: written once removeCk holds
			t := max(nowMs, min(w.ck.ReviveTime()-b.cfg.PopCkStayBufferTimeOut+1, w.ck.PopTime+b.cfg.PopCkStayBufferTime+1))
			if d := w.ck.ReviveTime() - AckTimeInterval; b.timerRefuses(t, d) {
				if b.cfg.TimerWheelEnable {
					at(d - b.cfg.TimerMaxDelaySec*1000)
				}
				continue
			}
			at(t)
		}
		if best <= nowMs && ok {
			return scanGrid(nowMs), true
		}
	}
	idle, anyIdle := int64(0), false
	for _, cq := range f.corder {
		if len(cq.ws) > 0 && cq.ws[0].done() {
			return scanGrid(nowMs), true
		}
		if !anyIdle || cq.time < idle {
			idle, anyIdle = cq.time, true
		}
	}
	if anyIdle {
		// an idle queue is dropped by the first garbage scan past the
		// idle time: the earliest is the oldest queue's (garbageGrid is
		// monotone)
		at(garbageGrid(max(idle+CommitQueueIdle+1, nowMs)))
	}
	if !ok {
		return 0, false
	}
	return scanGrid(max(best, nowMs)), true
}

// garbageGrid is the first garbage scan time at or after t.
func garbageGrid(t int64) int64 {
	if r := t % BufferGarbageInterval; r != 0 {
		return t + BufferGarbageInterval - r
	}
	return t
}

// scanGrid is the first scan time at or after t: scans run every
// BufferScanInterval ms (on multiples of it).
func scanGrid(t int64) int64 {
	if r := t % BufferScanInterval; r != 0 {
		return t + BufferScanInterval - r
	}
	return t
}

// dropFront removes the first n of ws. It moves the rest to the front
// when they are no more than what went, so that a queue that empties as
// fast as it fills reuses its array instead of reallocating it (amortised:
// each element moves at most once per removal of another). It moves and
// clears them one by one: a scan drops a wrapper or two from a queue, of
// none or a few, where copy and clear called runtime.typedslicecopy and
// runtime.memclrHasPointers (the default run's 42 k calls: ~90
// instructions each, ~25 now). The clearing loops count down, which the
// compiler does not turn into a call to memclrHasPointers.
func dropFront(ws []*wrapper, n int) []*wrapper {
	rest := len(ws) - n
	if rest > n {
		for i := n - 1; i >= 0; i-- {
			ws[i] = nil
		}
		return ws[n:]
	}
	for i := 0; i < rest; i++ {
		ws[i] = ws[n+i]
	}
	for i := len(ws) - 1; i >= rest; i-- {
		ws[i] = nil
	}
	return ws[:rest]
}
