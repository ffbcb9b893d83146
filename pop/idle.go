package pop

import (
	"math/bits"
)

// Idle queues: an all-queue pop (queue id -1) visits every readable queue
// of the topic in its scan order, but on most of them, in a topic of
// thousands of queues, its stage only counts a store read that finds
// nothing (the queue is empty and caught up) or, once the batch is full,
// adds nothing to restNum. Such a queue is idle; offsets.idle marks it per
// (group, topic) pair, and the pop skips marked queues by scanning the
// bitmap, doing for each one skipped what its stage would have done (one
// counted read while the batch is not full). So which queue a pop reads,
// in which order, and every counter stay exactly as a full visit leaves
// them; only the cost stops growing with the number of idle queues.
//
// A mark is set only by the scan, right after it visited the queue and
// found it idle (kvIdle, ckIdle), or on the KV path, for a queue whose
// stage left a pending commit, by the pop once it made that commit
// (markStage), and cleared by anything that could make it stop being
// idle: a write access to its offsets slot (offsets.at and row, a
// restart's crash and dropVolatile), a message written to or
// truncated from the queue (queueWritten, for every pair registered on the
// topic), a record cached for it (KV), an in-flight count added and a
// change of its commit queue in the CK buffer (FS).
// Whatever else changes (acks, revive, the buffer's commits, which go
// through offsets.at) cannot make an idle queue busy; the buffer's scan
// marks a queue it found marked again after its commits when it is still
// idle (keepIdle). CheckInvariants verifies every mark.
//
// Quiet queues: on the KV path with enablePopBufferMerge a queue whose
// records wait in the cache for their acks is caught up (caughtUp: its
// stage only counts a read while the batch is not full) but not idle: its
// commit offset is held at the smallest cached offset, so a full batch's
// stage adds the queue's backlog to restNum. offsets.quiet marks the
// queues whose stage only counts a read while the batch is not full: every
// idle queue, and on the KV path without the in-flight threshold (where
// the stage is readOnlyStage) every caught-up one. Until the batch is full
// the scan skips quiet queues, then only idle ones. A quiet mark is set
// with the idle one, and cleared with it (touch) by the same events, and
// also by any change of the queue's smallest cached offset, part of
// caughtUp, or of whether it has cached records at all (the cache touches
// the queue on add, take, removeOffset of its smallest offset, cleanupQueue
// after its deletions): removing a record above the smallest one changes
// neither. A raised commit offset (commitPending) keeps a caught-up queue
// caught up.

// touch clears k's idle and quiet marks.
func (o *offsets) touch(k qkey) {
	if int(k.pair) < len(o.idle) {
		if w, q := o.idle[k.pair], o.quiet[k.pair]; k.qid >= 0 && int(k.qid>>6) < len(w) {
			w[k.qid>>6] &^= 1 << (k.qid & 63)
			q[k.qid>>6] &^= 1 << (k.qid & 63)
		}
	}
}

// markIdle sets k's idle and quiet marks; the pair's bitmaps cover k
// (idleBits).
func (o *offsets) markIdle(k qkey) {
	o.idle[k.pair][k.qid>>6] |= 1 << (k.qid & 63)
	o.quiet[k.pair][k.qid>>6] |= 1 << (k.qid & 63)
}

// markQuiet sets k's quiet mark; the pair's bitmap covers k (idleBits).
func (o *offsets) markQuiet(k qkey) { o.quiet[k.pair][k.qid>>6] |= 1 << (k.qid & 63) }

// isIdle reports k's idle mark.
func (o *offsets) isIdle(k qkey) bool {
	if int(k.pair) >= len(o.idle) {
		return false
	}
	w := o.idle[k.pair]
	return k.qid >= 0 && int(k.qid>>6) < len(w) && w[k.qid>>6]&(1<<(k.qid&63)) != 0
}

// clearIdle clears every mark.
func (o *offsets) clearIdle() {
	for _, w := range o.idle {
		clear(w)
	}
	for _, w := range o.quiet {
		clear(w)
	}
}

// idleBits returns pair's idle and quiet bitmaps on topic t, covering n
// queues (both the same length). The first call for a pair registers it
// on t, so that writes to t's queues clear its marks.
func (b *Broker) idleBits(pair uint32, t *topic, n int32) (idle, quiet []uint64) {
	if idle, quiet := b.offsets.bitsOf(pair, n); idle != nil {
		return idle, quiet // every pop after the pair's first
	}
	o := &b.offsets
	for int(pair) >= len(o.idle) {
		o.idle = append(o.idle, nil)
		o.quiet = append(o.quiet, nil)
	}
	w, q := o.idle[pair], o.quiet[pair]
	if w == nil {
		w, q = []uint64{}, []uint64{}
		t.idlePairs = append(t.idlePairs, pair)
	}
	for len(w) < int(n+63)>>6 {
		w, q = append(w, 0), append(q, 0)
	}
	o.idle[pair], o.quiet[pair] = w, q
	return w, q
}

// bitsOf is idleBits' common case, which inlines: pair's bitmaps if it
// has them and they cover n queues, else nil.
func (o *offsets) bitsOf(pair uint32, n int32) (idle, quiet []uint64) {
	if int(pair) < len(o.idle) {
		if w := o.idle[pair]; w != nil && len(w) >= int(n+63)>>6 {
			return w, o.quiet[pair]
		}
	}
	return nil, nil
}

// queueWritten clears queue qid's idle mark for every pair registered on
// t: a message was written to it or truncated from it.
func (b *Broker) queueWritten(t *topic, qid int32) {
	for _, p := range t.idlePairs {
		b.offsets.touch(qkey{p, qid})
	}
}

// skipsIdle reports whether an all-queue pop of t may skip idle queues:
// not while the faults decide a tryLock per queue (the checkpoint path
// draws one for every queue it visits), nor on the revive topic, whose
// queues the store writes to directly (reviveT: the topic of that name;
// comparing the pointer spares the name's memequal, whose call made
// every caller spill its arguments).
func (b *Broker) skipsIdle(t *topic) bool {
	return (b.cfg.UsesKV() || b.faults.LockBusyPPM <= 0) && int(t.cfg.ReadQueueNums) <= len(t.queues) &&
		t != b.reviveT
}

// skipIdle does what visiting gap idle queues would have done: a store
// read each, finding nothing, while the batch is not full.
func (b *Broker) skipIdle(ctx *popContext, gap int32) {
	if ctx.found < ctx.req.MaxMsgNums {
		b.stats.ReadCalls += int64(gap)
	}
}

// An all-queue pop's visit of t's n readable queues, in the scan order
// from rotation r, when it may skip idle ones (skipsIdle), is
// skippedAll, then scanUnmarked when it does not skip them all: the latter
// runs the stage (ckQueueStage, with name, the topic's name; the pop's
// time and filter are ctx's) on each queue pair's bitmap does not mark, does
// for the skipped ones what their stages would have done (skipIdle), and
// marks a queue it finds idle after its stage. The checkpoint path uses
// them (it has no quiet queue); the KV path's popAllQueues runs the same
// loop with its stage inline.
//
// The scan of a topic whose queues are all marked, most scans (allMarked),
// is done by skippedAll, and the rest by scanUnmarked: with the loop in
// the same function, every scan paid for the loop's register spills and
// reloads (default scenario: the scan and its loop 3.3 M instructions
// less). scanUnmarked calls the stage itself, where the caller built a
// closure for it (default run: 1.7 M instructions less).

// skippedAll skips t's n readable queues of pair when the pop may skip
// idle queues (skipsIdle) and the marks it goes by (quiet ones while its
// batch is not full, else idle ones) mark them all, doing what their
// stages would have done, and reports whether it did. It calls nothing,
// so its caller's visit of a topic it skips spills no register (with the
// revive topic's name compared by memequal in skipsIdle, and this test
// in a call of its own, such a visit cost ~100 instructions).
func (b *Broker) skippedAll(ctx *popContext, t *topic, pair uint32) bool {
	if !b.skipsIdle(t) {
		return false
	}
	// only the bitmap it goes by: allMarked needs one word of it, which
	// is all bitsOf's cover test asks for any n allMarked accepts
	n, marks := t.cfg.ReadQueueNums, b.offsets.idle
	if ctx.found < ctx.req.MaxMsgNums {
		marks = b.offsets.quiet // as long as idle (CheckInvariants)
	}
	if int(pair) >= len(marks) || !allMarked(marks[pair], n) { // nil: no bitmaps yet
		return false
	}
	b.skipIdle(ctx, n)
	return true
}

// scanUnmarked is the scan past skippedAll (the note above).
func (b *Broker) scanUnmarked(ctx *popContext, name string, t *topic, pair uint32, n int32, r int64) {
	// a call: bitsOf inlined here spilled more than the call costs
	idle, quiet := b.idleBits(pair, t, n)
	var sc queueScan // made for the first queue the marks leave (n > 0 then)
	for pos := int32(0); ; {
		marks := idle
		if ctx.found < ctx.req.MaxMsgNums {
			marks = quiet
		}
		if allMarked(marks, n) { // what sc.next would find: no queue
			b.skipIdle(ctx, n-pos)
			return
		}
		if sc.n == 0 {
			sc = b.newQueueScan(n, r)
		}
		at, qid, ok := sc.next(marks, pos)
		b.skipIdle(ctx, at-pos)
		if !ok {
			return
		}
		b.ckQueueStage(ctx, name, pair, t, qid)
		// the checkpoint path has no quiet queue (a quiet queue is a KV
		// read-only stage's): ckIdle is its only mark, asked of ckIdleAt
		// here with the newest wrapper's offset (a call less a stage)
		if k := (qkey{pair, qid}); b.ckIdleAt(k, b.offsets.peek(k), t.queues[qid], b.buf.latest(k)) {
			b.offsets.markIdle(k)
		}
		pos = at + 1
	}
}

// The marks a queue deserves after an all-queue stage (kvMarks on the
// KV path; the checkpoint path marks idle queues only, ckIdle).
const (
	markedNone = iota
	markedQuiet
	markedIdle
)

// queueIdle reports whether queue k (q) is idle for the broker's pop
// path: kvIdle on the KV path, ckIdle on the checkpoint path.
func (b *Broker) queueIdle(k qkey, q *queue) bool {
	if b.cfg.UsesKV() {
		return b.kvIdle(k, b.offsets.peek(k), q)
	}
	return b.ckIdle(k, b.offsets.peek(k), q)
}

// kvQuiet reports that a KV all-queue stage on queue k (q) is
// readOnlyStage's (no in-flight threshold) and, while the batch is not
// full, only counts a read: the queue is caught up.
func (b *Broker) kvQuiet(k qkey, q *queue) bool {
	if !b.cfg.UsesKV() || b.inflightThreshold() {
		return false
	}
	s := b.offsets.peek(k)
	return s != nil && b.caughtUp(k, s, q)
}

// kvIdle reports that a KV stage on queue q (key k, slot s) would only
// count a read (caughtUp) while the batch is not full and add nothing to
// restNum once it is: pull and commit offsets at the queue's end, no
// pending reset, the pending commit there too (with the #10949 fix), no
// cached record of the queue, and an in-flight threshold that lets the
// stage run.
func (b *Broker) kvIdle(k qkey, s *slot, q *queue) bool {
	m := q.maxOffset()
	if s == nil || s.has&(hasPull|hasReset|hasCommit) != hasPull|hasCommit || s.pull != m || s.commit != m {
		return false
	}
	if b.cfg.EnablePopBufferMerge && b.cache.count(k) != 0 || b.inflightThreshold() && b.cfg.PopInflightMessageThreshold <= 0 {
		return false
	}
	return b.cfg.Bugs.CommitOffsetLag || s.has&hasPending != 0 && s.pending == m
}

// ckIdle reports the same of a checkpoint-path stage (ckQueueStage): a
// commit offset and no pending reset, the pop offset (the commit offset,
// or the newest wrapper's nextBeginOffset when further: getPopOffset) at
// the queue's end, neither of them beyond it, and an in-flight count the
// threshold lets through. Its read is then OFFSET_OVERFLOW_ONE
// (NO_MESSAGE_IN_QUEUE for a queue never written): no offset correction,
// no mock CK, nothing to restNum. The commit offset usually trails the
// newest wrapper until the buffer's next scan commits it, so a queue is
// idle as soon as a pop has read it to its end. What moves the newest
// wrapper (a wrapper enqueued, wrappers leaving the commit queue, a commit
// queue dropped) clears the queue's mark.
func (b *Broker) ckIdle(k qkey, s *slot, q *queue) bool {
	return b.ckIdleAt(k, s, q, b.buf.latest(k))
}

// ckIdleAt is ckIdle with l, the newest wrapper's nextBeginOffset
// (ckBuffer.latest), given by a caller that holds the queue's commit queue.
func (b *Broker) ckIdleAt(k qkey, s *slot, q *queue, l int64) bool {
	m := q.maxOffset()
	if s == nil || s.has&(hasReset|hasCommit) != hasCommit || s.commit > m {
		return false
	}
	if l > m || max(l, s.commit) != m {
		return false
	}
	return !b.cfg.EnablePopMessageThreshold || b.inflight.get(k) <= b.cfg.PopInflightMessageThreshold
}

// queueScan walks n queues in an all-queue pop's scan order (scanQueue
// from rotation r: upwards from r mod n, or downwards from r-1 mod n in
// priority mode), skipping the queues an idle bitmap marks.
type queueScan struct {
	n, start int32 // start: the queue at position 0
	desc     bool
}

func (b *Broker) newQueueScan(n int32, r int64) queueScan {
	return queueScan{n: n, start: b.scanQueue(n, r, 0), desc: b.scanDescending()}
}

// next returns the first position at or after pos whose queue is not
// marked in idle, and that queue; ok is false when there is none.
func (s *queueScan) next(idle []uint64, pos int32) (at, qid int32, ok bool) {
	if pos >= s.n {
		return s.n, 0, false
	}
	n, st := s.n, s.start
	if !s.desc { // positions [0, n-st) are queues st.., then queues 0..st-1
		if q := (st + pos) % n; q >= st {
			if c := firstClear(idle, q, n); c < n {
				return c - st, c, true
			}
			pos = n - st
		}
		if c := firstClear(idle, pos-(n-st), st); c < st {
			return n - st + c, c, true
		}
		return n, 0, false
	}
	// positions [0, st] are queues st down to 0, then queues n-1 down to st+1
	if pos <= st {
		if c := lastClear(idle, 0, st-pos+1); c >= 0 {
			return st - c, c, true
		}
		pos = st + 1
	}
	if c := lastClear(idle, st+1, n-(pos-st-1)); c > st {
		return st + n - c, c, true
	}
	return n, 0, false
}

// allMarked reports that marks marks every one of n queues when they fit
// in one word (1 <= n <= 64; false for any other n, which the scan then
// checks word by word): the all-queue pop then skips them all without a
// scan, which is what most scans of a topic with a few queues come to
// (default scenario: queueScan.next runs 98.7 k times in 214.9 k scans,
// once after each stage, where it ran 313.6 k times). A check of several
// words did not pay in the hot topic's KV scans of 500 queues: out of
// line, it cost about what it saved in next (-0.3 M instructions of
// 685.8 M), and inlined, its loop spilled the scan loop's registers at
// every word (+3.2 M in the default scenario's scans, whose words are
// one); so popAllQueues' loop has no shortcut.
func allMarked(marks []uint64, n int32) bool {
	if n <= 0 || n > 64 || len(marks) == 0 {
		return false
	}
	m := ^uint64(0) >> (64 - n) // n = 64: every bit
	return marks[0]&m == m
}

// firstClear is the lowest queue in [lo, hi) not marked in idle, else hi.
func firstClear(idle []uint64, lo, hi int32) int32 {
	for q := lo; q < hi; q = q | 63 + 1 {
		w := int(q >> 6)
		if w >= len(idle) {
			return q
		}
		if x := ^idle[w] >> (q & 63); x != 0 {
			return min(q+int32(bits.TrailingZeros64(x)), hi)
		}
	}
	return hi
}

// lastClear is the highest queue in [lo, hi) not marked in idle, else
// lo-1.
func lastClear(idle []uint64, lo, hi int32) int32 {
	for q := hi - 1; q >= lo; q = q&^63 - 1 {
		w := int(q >> 6)
		if w >= len(idle) {
			return q
		}
		if x := ^idle[w] << (63 - q&63); x != 0 {
			return max(q-int32(bits.LeadingZeros64(x)), lo-1)
		}
	}
	return lo - 1
}
