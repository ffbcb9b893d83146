package pop

import (
	"errors"
	"fmt"
	"math/bits"
	"popsim/model"
	"slices"
)

// CheckInvariants verifies cheap structural facts of the engine's state and
// returns the first violation, or nil. It is for tests and the simulator's
// self-checks; it never changes the broker. What it checks:
//
//   - names: every interned pair is found by its name, and ranks order the
//     pairs exactly as their "group@topic@" bytes do;
//   - the store: keys strictly increasing in the tree, every record on an
//     interned pair, attemptTimes within popReviveMaxAttemptTimes;
//   - the cache: its size equals the sum of its queues, its queue list and
//     its rows agree, every record sits under its own queue key and offset, and
//     each queue's slice is in strictly increasing offset order, starts at
//     a live record and counts its live ones right;
//   - bookkeeping: in-flight records never outnumber the records ever
//     created (pops, renewals, revive retries), nor ack misses the acks;
//   - leases: every in-flight record (store and cache) has a lease in
//     1..the last one granted, and no two share one;
//   - offsets: commit and pull offsets are non-negative offsets of existing
//     queues. Neither has an upper bound: an admin reset may point past the
//     end (a Pull takes it as its next offset, OFFSET_RESET), and it stays
//     there when the queue is empty (NO_MESSAGE_IN_QUEUE is not an offset
//     correction) until a read finds messages;
//   - pending commits (fixed #10949 behaviour): non-negative offsets of
//     existing queues; with the CommitOffsetLag bug none exists;
//   - idle marks (idle.go): every queue an all-queue pop would skip is
//     idle (kvIdle or ckIdle holds), on a topic its pair is registered on;
//     every idle queue is marked quiet too, and every other quiet one is
//     caught up (kvQuiet);
//   - long polling: the count equals the sum of the per-key sets and the
//     time-ordered heap's size, the heap is in (expired, id) order and
//     every request in it knows its index, every set is non-empty, sorted
//     by (expired, id) and holds only its own key, and each request in it
//     is the one the heap holds;
//   - pull holds: every held pull is in its key's list once and in the
//     due-ordered tree, due no later than its expiry, and due before it
//     once its queue grew past its offset (a filtered-out arrival);
//   - the checkpoint path: the lease table's indexes agree and count its
//     live leases, no lease is live in two CKs or above the last granted;
//     the buffer's map, order and counter agree, every buffered wrapper
//     has its CK's lease ref and the merge key of its CK, merged bits are
//     ended leases and written bits are merged ones; commit queues match
//     their map and hold wrappers of their own queue; the timer holds
//     revive-topic messages only, each due after it was put; revive
//     services are numbered by their queue, their in-memory offsets never
//     below -1; in-flight counts are positive;
//   - orderly (FIFO) state: the table is indexed once per queue in key
//     order, each batch has a lease slot per message, live leases sit on
//     unacked messages only and are counted right, and a queue lapses
//     exactly when it has live leases, at its batch's unblock time.
func (b *Broker) CheckInvariants() error {
	for _, check := range []func() error{b.checkNames, b.checkStore, b.checkCache, b.checkBookkeeping, b.checkLeases, b.checkOffsets, b.checkPending, b.checkIdle, b.checkPolls, b.checkHolds, b.checkCheckpoint, b.checkOrder, b.checkReleased, b.checkLogPool} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (b *Broker) checkNames() error {
	n := b.names
	if len(n.rank) != len(n.pairs) || len(n.pairID) != len(n.pairs)-1 {
		return fmt.Errorf("pop: invariant: %d pairs, %d ranks, %d names", len(n.pairs), len(n.rank), len(n.pairID))
	}
	byRank := make([]uint32, len(n.pairs)-1)
	seen := make([]bool, len(n.pairs)-1)
	for id := 1; id < len(n.pairs); id++ {
		p := n.pairs[id]
		if got := n.pairID[[2]string{p.group, p.topic}]; got != uint32(id) {
			return fmt.Errorf("pop: invariant: pair %d (%s@%s) is interned as %d", id, p.group, p.topic, got)
		}
		r := n.rank[id]
		if r < 0 || int(r) >= len(byRank) || seen[r] {
			return fmt.Errorf("pop: invariant: pair %d has rank %d: ranks must be a permutation of 0..%d", id, r, len(byRank)-1)
		}
		seen[r], byRank[r] = true, uint32(id)
	}
	for r := 1; r < len(byRank); r++ {
		if a, c := n.keyString(byRank[r-1]), n.keyString(byRank[r]); a >= c {
			return fmt.Errorf("pop: invariant: rank %d (%q) does not sort before rank %d (%q)", r-1, a, r, c)
		}
	}
	return nil
}

func (b *Broker) checkStore() error {
	var prev *rec
	var err error
	b.index.tree.Scan(func(r rec) bool {
		switch {
		case prev != nil && !b.index.less(*prev, r):
			err = fmt.Errorf("pop: invariant: store keys out of order: %s then %s", b.recString(prev), b.recString(&r))
		case r.pair == 0 || int(r.pair) >= len(b.names.pairs):
			err = fmt.Errorf("pop: invariant: stored record on unknown pair %d", r.pair)
		case r.attemptTimes < 0 || r.attemptTimes > b.cfg.PopReviveMaxAttemptTimes:
			err = fmt.Errorf("pop: invariant: %s: attemptTimes outside 0..%d", b.recString(&r), b.cfg.PopReviveMaxAttemptTimes)
		}
		p := r
		prev = &p
		return err == nil
	})
	return err
}

func (b *Broker) recString(r *rec) string {
	x := b.index.record(r)
	return x.String()
}

func (b *Broker) checkCache() error {
	c := b.cache
	filed := 0
	for _, r := range c.rows {
		for _, cq := range r {
			if cq != nil {
				filed++
			}
		}
	}
	if len(c.queues) != filed {
		return fmt.Errorf("pop: invariant: cache lists %d queues but its rows file %d", len(c.queues), filed)
	}
	var sum int64
	for _, cq := range c.queues {
		if c.get(cq.key) != cq {
			return fmt.Errorf("pop: invariant: cached queue %v is not the one its key maps to", cq.key)
		}
		sum += int64(cq.recs.Len())
		if err := cq.recs.check(); err != nil {
			return fmt.Errorf("pop: invariant: cached queue %v: %v", cq.key, err)
		}
		var err error
		cq.recs.Scan(func(off int64, r rec) bool {
			if r.offset != off || r.pair != cq.key.pair || r.qid != cq.key.qid {
				err = fmt.Errorf("pop: invariant: cached record %s filed under queue %v offset %d", b.recString(&r), cq.key, off)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	if sum != c.size {
		return fmt.Errorf("pop: invariant: cache size %d, but its queues hold %d records", c.size, sum)
	}
	return nil
}

func (b *Broker) checkBookkeeping() error {
	s := b.stats
	if created := s.Popped + s.Changed + s.ReviveFailed + s.CkRePuts; int64(b.InFlightCount()) > created {
		return fmt.Errorf("pop: invariant: %d in-flight records but only %d ever created (popped %d, changed %d, revive retries %d)",
			b.InFlightCount(), created, s.Popped, s.Changed, s.ReviveFailed)
	}
	if s.AckMisses > s.Acked {
		return fmt.Errorf("pop: invariant: %d ack misses out of %d acks", s.AckMisses, s.Acked)
	}
	return nil
}

func (b *Broker) checkLeases() error {
	var ls []model.LeaseID
	for _, r := range b.index.all() {
		ls = append(ls, r.Lease)
	}
	for _, r := range b.cachedRecords() {
		ls = append(ls, r.Lease)
	}
	for _, l := range b.ckLeasesState() {
		ls = append(ls, l.Lease)
	}
	ls = b.orderLeases(ls)
	slices.Sort(ls)
	for i, l := range ls {
		if l == 0 || l > b.lease.last {
			return fmt.Errorf("pop: invariant: in-flight lease %d outside 1..%d (the last granted)", l, b.lease.last)
		}
		if i > 0 && ls[i-1] == l {
			return fmt.Errorf("pop: invariant: two in-flight records hold lease %d", l)
		}
	}
	return nil
}

// queueOf returns the queue a key names, or nil.
func (b *Broker) queueOf(k qkey) *queue {
	if k.pair == 0 || int(k.pair) >= len(b.names.pairs) {
		return nil
	}
	return b.queue(b.names.pairs[k.pair].topic, k.qid)
}

func (b *Broker) checkOffsets() error {
	var err error
	b.offsets.each(func(k qkey, s *slot) {
		if q, v := b.queueOf(k), s.commit; err == nil && s.has&hasCommit != 0 && (q == nil || v < 0) {
			err = fmt.Errorf("pop: invariant: commit offset %d of %s: want a non-negative offset of an existing queue", v, b.describe(k))
		}
	})
	b.offsets.each(func(k qkey, s *slot) {
		if q, v := b.queueOf(k), s.pull; err == nil && s.has&hasPull != 0 && (q == nil || v < 0) {
			err = fmt.Errorf("pop: invariant: pull offset %d of %s: want a non-negative offset of an existing queue", v, b.describe(k))
		}
	})
	return err
}

// checkIdle verifies every idle and quiet mark (idle.go).
func (b *Broker) checkIdle() error {
	o := &b.offsets
	if len(o.quiet) != len(o.idle) {
		return fmt.Errorf("pop: invariant: quiet bitmaps for %d pairs, idle ones for %d", len(o.quiet), len(o.idle))
	}
	for p, w := range o.idle {
		if len(o.quiet[p]) != len(w) {
			return fmt.Errorf("pop: invariant: pair %d's quiet bitmap has %d words, its idle one %d", p, len(o.quiet[p]), len(w))
		}
		for i, word := range w {
			if word&^o.quiet[p][i] != 0 {
				return fmt.Errorf("pop: invariant: pair %d: queues marked idle but not quiet in word %d: %#x", p, i, word&^o.quiet[p][i])
			}
			for ; word != 0; word &= word - 1 {
				k := qkey{uint32(p), int32(i*64 + bits.TrailingZeros64(word))}
				if err := b.checkIdleMark(k); err != nil {
					return err
				}
			}
		}
		for i, word := range o.quiet[p] {
			for word &^= w[i]; word != 0; word &= word - 1 {
				k := qkey{uint32(p), int32(i*64 + bits.TrailingZeros64(word))}
				if err := b.checkQuietMark(k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkQuietMark verifies the quiet mark of a queue not marked idle.
func (b *Broker) checkQuietMark(k qkey) error {
	return b.checkMark(k, "quiet", b.kvQuiet, func() string {
		return fmt.Sprintf("caught up (offsets %+v, smallest cached offset %d)", b.offsets.peek(k), b.cache.minOffset(k))
	})
}

func (b *Broker) checkIdleMark(k qkey) error {
	return b.checkMark(k, "idle", b.queueIdle, func() string { return fmt.Sprintf("idle (offsets %+v)", b.offsets.peek(k)) })
}

// checkMark verifies that queue k, marked as kind, exists, is registered
// on its topic and is what holds says; want describes what it is not.
func (b *Broker) checkMark(k qkey, kind string, holds func(qkey, *queue) bool, want func() string) error {
	q := b.queueOf(k)
	if q == nil {
		return fmt.Errorf("pop: invariant: %s mark on %s", kind, b.describe(k))
	}
	if t := b.topics[b.names.pairs[k.pair].topic]; !slices.Contains(t.idlePairs, k.pair) {
		return fmt.Errorf("pop: invariant: %s mark on %s, whose pair is not registered on the topic", kind, b.describe(k))
	}
	if !holds(k, q) {
		return fmt.Errorf("pop: invariant: %s is marked %s but is not %s", b.describe(k), kind, want())
	}
	return nil
}

func (b *Broker) describe(k qkey) string {
	if q := b.queueOf(k); q != nil {
		p := b.names.pairs[k.pair]
		return fmt.Sprintf("%s@%s@%d (store %d~%d)", p.group, p.topic, k.qid, q.min, q.maxOffset())
	}
	return fmt.Sprintf("unknown queue %v", k)
}

func (b *Broker) checkPending() error {
	var err error
	b.offsets.each(func(k qkey, s *slot) {
		switch {
		case err != nil || s.has&hasPending == 0:
		case b.cfg.Bugs.CommitOffsetLag:
			err = fmt.Errorf("pop: invariant: a pending commit for %s with the CommitOffsetLag bug on", b.describe(k))
		case b.queueOf(k) == nil || s.pending < 0:
			err = fmt.Errorf("pop: invariant: pending commit %d of %s: want a non-negative offset of an existing queue", s.pending, b.describe(k))
		}
	})
	return err
}

func (b *Broker) checkPolls() error {
	p := b.polls
	if p.byTime.Len() != p.count {
		return fmt.Errorf("pop: invariant: %d suspended requests counted, %d in the time order", p.count, p.byTime.Len())
	}
	if err := p.byTime.check(); err != nil {
		return err
	}
	sum := 0
	var err error
	p.byTime.Scan(func(s *suspended) bool {
		set := p.set(s.qk)
		if len(set) == 0 || set[0].key() != s.key() {
			err = fmt.Errorf("pop: invariant: suspended request %d missing from its key's set %v", s.id, s.key())
			return false
		}
		if set[0] == s { // check each set once, from its earliest request
			sum += len(set)
			err = p.checkSet(set)
			if err == nil && !p.byTime.holds(p.setOf(s.qk)) {
				err = fmt.Errorf("pop: invariant: suspended set %v is not in the time order", s.key())
			}
		}
		return err == nil
	})
	if err == nil && sum != p.count {
		err = fmt.Errorf("pop: invariant: per-key sets hold %d requests, count is %d", sum, p.count)
	}
	return err
}

func (p *polling) checkSet(set []*suspended) error {
	for i, s := range set {
		if s.key() != set[0].key() || s.qk != set[0].qk {
			return fmt.Errorf("pop: invariant: request %d of key %v filed under key %v", s.id, s.key(), set[0].key())
		}
		if i > 0 && !suspendedLess(set[i-1], s) {
			return fmt.Errorf("pop: invariant: suspended set %v not sorted by (expired, id) at %d", s.key(), i)
		}
	}
	return nil
}

func (b *Broker) checkHolds() error {
	h, n := b.holds, 0
	for _, k := range h.keys {
		for _, ph := range h.byKey[k] {
			n++
			q := b.queue(k.topic, k.qid)
			switch {
			case ph.key != k:
				return fmt.Errorf("pop: invariant: held pull %d of %v filed under %v", ph.id, ph.key, k)
			case !inDue(h, ph):
				return fmt.Errorf("pop: invariant: held pull %d missing from the due order", ph.id)
			case ph.dueMs > ph.expireMs:
				return fmt.Errorf("pop: invariant: held pull %d due at %d, after its expiry %d", ph.id, ph.dueMs, ph.expireMs)
			case q == nil:
				return fmt.Errorf("pop: invariant: held pull %d on missing queue %v", ph.id, k)
			case q.maxOffset() > ph.from && ph.dueMs >= ph.expireMs:
				return fmt.Errorf("pop: invariant: held pull %d at %d, queue end %d: a message arrived, but it is not due before its expiry", ph.id, ph.from, q.maxOffset())
			}
		}
	}
	if n != h.byDue.Len() || len(h.byKey) > len(h.keys) {
		return fmt.Errorf("pop: invariant: %d held pulls listed by key, %d in the due order", n, h.byDue.Len())
	}
	return nil
}

func inDue(h *holds, ph *pullHold) bool {
	got, ok := h.byDue.Get(ph)
	return ok && got == ph
}

// check verifies the slice's order, head and live count.
func (q *offsetRecs) check() error {
	live := 0
	for i := q.head; i < len(q.recs); i++ {
		if i > q.head && q.recs[i].offset <= q.recs[i-1].offset {
			return fmt.Errorf("offsets %d then %d at %d", q.recs[i-1].offset, q.recs[i].offset, i)
		}
		if q.recs[i].lease != 0 {
			live++
		}
	}
	if live != q.live || q.head > len(q.recs) || (q.live > 0 && q.recs[q.head].lease == 0) {
		return fmt.Errorf("%d live records counted as %d, head %d of %d", live, q.live, q.head, len(q.recs))
	}
	return nil
}

func (b *Broker) checkCheckpoint() error {
	for _, check := range []func() error{b.checkCkLeases, b.checkBuffer, b.checkCommitQueues, b.checkTimer, b.checkRevivers} {
		if err := check(); err != nil {
			return err
		}
	}
	var err error
	b.inflight.each(func(k qkey, n int64) {
		if n <= 0 && err == nil {
			err = fmt.Errorf("pop: invariant: in-flight counter of %s is %d", b.describe(k), n)
		}
	})
	return err
}

func (b *Broker) checkCkLeases() error {
	live, keyed, pending, indexed := 0, 0, 0, 0
	var prev *ckRef
	for r := range b.ckl.byFirst.all() {
		if prev != nil && prev.first >= r.first {
			return fmt.Errorf("pop: invariant: checkpoint refs by lease out of order: %d after %d", r.first, prev.first)
		}
		prev = r
		if r.dropped {
			continue
		}
		indexed++
		first, ck := r.first, r.ck()
		if b.ckl.byFirst.get(first) != r || r.first == 0 || r.first+model.LeaseID(ck.Num)-1 > b.lease.last || ck.Num <= 0 {
			return fmt.Errorf("pop: invariant: checkpoint ref indexed by lease %d holds leases %d..%d (last granted %d)", first, r.first, r.first+model.LeaseID(ck.Num)-1, b.lease.last)
		}
		if r.e.key != ck.MergeKey() || r.ended>>uint(ck.Num) != 0 || r.pending>>uint(ck.Num) != 0 {
			return fmt.Errorf("pop: invariant: checkpoint ref %d: key %q for %q, ended %b, pending %b over %d", first, r.e.key, ck.MergeKey(), r.ended, r.pending, ck.Num)
		}
		for i := 0; i < int(ck.Num); i++ {
			if r.live(i) {
				live++
				if r.pending&(1<<uint(i)) != 0 {
					pending++
				}
			}
		}
		if e := b.ckl.keys.peek(r.e.key); e == nil || r.e != e || !e.refs.contains(r) || r.dropped {
			return fmt.Errorf("pop: invariant: checkpoint ref %d missing from its merge key's list", first)
		}
		if d := r.home(); d.bound && d.lease != r.first {
			return fmt.Errorf("pop: invariant: checkpoint ref %d named by a body of lease %d (bound %v)", first, d.lease, d.bound)
		}
	}
	var bad error
	entries := 0
	b.ckl.keys.each(func(e *mkEntry) {
		entries++
		if bad == nil && (e.hash != mkHash(e.key) || b.ckl.keys.peek(e.key) != e || e.dead() || e.refs.len() == 0 && e.w == nil) {
			bad = fmt.Errorf("pop: invariant: merge key %q (hash %x, found %v) has an entry (dead %v) holding %d refs and wrapper %v",
				e.key, e.hash, b.ckl.keys.peek(e.key) == e, e.dead(), e.refs.len(), e.w != nil)
		}
		keyed += e.refs.len()
	})
	if bad != nil {
		return bad
	}
	if t := &b.ckl.keys; entries != t.n || t.lastOK && (t.peek(t.lastKey) != t.last || t.lastHash != mkHash(t.lastKey)) {
		return fmt.Errorf("pop: invariant: merge-key table of %d entries counts %d, or remembers a stale lookup of %q", entries, t.n, t.lastKey)
	}
	if keyed != b.ckl.byFirst.len() || indexed != b.ckl.byFirst.len() || live != b.ckl.live || pending != b.ckl.pending {
		return fmt.Errorf("pop: invariant: %d checkpoint refs by lease, %d by merge key; %d live leases counted as %d, %d with an ack pending counted as %d",
			b.ckl.byFirst.len(), keyed, live, b.ckl.live, pending, b.ckl.pending)
	}
	return nil
}

func (b *Broker) checkBuffer() error {
	f := b.buf
	mapped := 0
	f.keys.each(func(e *mkEntry) {
		if e.w != nil {
			mapped++
		}
	})
	if mapped != len(f.order) || f.counter != int64(len(f.order)) {
		return fmt.Errorf("pop: invariant: buffer maps %d wrappers, lists %d, counts %d", mapped, len(f.order), f.counter)
	}
	for _, w := range f.order {
		switch {
		case w.ref == nil || f.keys.peek(w.mkey) != w.ref.e || w.ref.e.w != w || w.mkey != w.ck.MergeKey():
			return fmt.Errorf("pop: invariant: buffered wrapper %q is not under its merge key", w.mkey)
		case w.ck != w.ref.ck():
			return fmt.Errorf("pop: invariant: buffered wrapper %q has a CK of its own, not its ref's", w.mkey)
		case b.ckl.byFirst.get(w.ref.first) != w.ref && !w.ckStored:
			return fmt.Errorf("pop: invariant: buffered wrapper %q without the lease ref of its CK", w.mkey)
		case w.stored&^w.bits != 0 || w.bits&^w.numMask() != 0:
			return fmt.Errorf("pop: invariant: buffered wrapper %q: bits %b, written %b, over %d", w.mkey, w.bits, w.stored, w.ck.Num)
		case w.justOffset && w.bits != 0:
			return fmt.Errorf("pop: invariant: offset-only wrapper %q has merged acks %b", w.mkey, w.bits)
		}
		for i := 0; i < int(w.ck.Num); i++ {
			if w.bits&(1<<uint(i)) != 0 && w.ref.live(i) {
				return fmt.Errorf("pop: invariant: buffered wrapper %q merged an ack of lease %d, which is still live", w.mkey, w.ref.lease(i))
			}
		}
	}
	return nil
}

func (b *Broker) checkCommitQueues() error {
	f := b.buf
	if f.commits.len() != len(f.corder) {
		return fmt.Errorf("pop: invariant: %d commit queues held, %d listed", f.commits.len(), len(f.corder))
	}
	for _, cq := range f.corder {
		if f.commits.get(cq.key) != cq {
			return fmt.Errorf("pop: invariant: commit queue %s is not under its key", b.describe(cq.key))
		}
		for _, w := range cq.ws {
			if w.lock != cq.key {
				return fmt.Errorf("pop: invariant: commit queue %s holds a wrapper of %s", b.describe(cq.key), b.describe(w.lock))
			}
		}
	}
	return nil
}

func (b *Broker) checkTimer() error {
	n := 0
	var err error
	b.timer.each(func(m *reviveBody, due int64) {
		n++
		if err == nil && due < m.born {
			err = fmt.Errorf("pop: invariant: the timer holds %s due at %d, born at %d", m.uniqueID(m.kind.tag()), due, m.born)
		}
	})
	if err == nil && n != b.timer.n {
		err = fmt.Errorf("pop: invariant: the timer holds %d messages, counts %d", n, b.timer.n)
	}
	for q := range b.timer.queues {
		if err == nil {
			err = checkTimerQueue(int32(q), &b.timer.queues[q])
		}
	}
	if err == nil && b.timer.firstOK {
		cached, cachedDue := b.timer.first, b.timer.firstDue
		b.timer.firstOK = false
		if m, due, _ := b.timer.min(); m != cached || due != cachedDue {
			err = errors.New("pop: invariant: the timer's cached next message is not its next one")
		}
	}
	return err
}

// checkTimerQueue: revive queue q's slots are in strictly increasing
// delivery time, none empty, and each holds messages of q due at its time
// in put order.
func checkTimerQueue(q int32, tq *timerQueue) error {
	var last *timerSlot
	for _, s := range tq.slots[tq.head:] {
		if s.head >= len(s.msgs) || last != nil && last.due >= s.due {
			return fmt.Errorf("pop: invariant: revive queue %d's timer slot due at %d is empty or out of order", q, s.due)
		}
		for i, m := range s.msgs[s.head:] {
			if int32(m.rq) != q || i > 0 && s.msgs[s.head+i-1].seq >= m.seq {
				return fmt.Errorf("pop: invariant: revive queue %d's timer slot due at %d holds %s (queue %d) out of place", q, s.due, m.uniqueID(m.kind.tag()), m.rq)
			}
		}
		last = s
	}
	return nil
}

func (b *Broker) checkRevivers() error {
	for i, s := range b.revivers {
		if s.qid != int32(i) || s.offset < -1 || s.slow < 1 && b.cfg.ReviveMaxSlow >= 1 {
			return fmt.Errorf("pop: invariant: revive service %d: queue %d, offset %d, slow %d", i, s.qid, s.offset, s.slow)
		}
	}
	return nil
}

// checkReleased: no in-flight record points at a released message (a
// revive would read it; release.go).
func (b *Broker) checkReleased() error {
	var err error
	visit := func(r rec) bool {
		q := b.queue(b.names.pairs[r.pair].topic, r.qid)
		if q != nil && r.offset >= q.min && r.offset < q.maxOffset() && q.log.released(int(r.offset-q.min)) {
			err = fmt.Errorf("pop: invariant: in-flight record %s points at a released message", b.recString(&r))
		}
		return err == nil
	}
	b.index.tree.Scan(visit)
	for _, cq := range b.cache.queues {
		if err == nil {
			cq.recs.Scan(func(_ int64, r rec) bool { return visit(r) })
		}
	}
	return err
}

// checkLogPool: the log chunk pool counts exactly the full-size chunks
// the queues' logs hold, and none of its chunks is one a log still holds
// (a pooled chunk a log could read would be overwritten by another
// queue's appends).
func (b *Broker) checkLogPool() error {
	p := &b.logPool
	pooled := make(map[*model.Message]bool, len(p.free))
	for i, c := range p.free {
		if cap(c) != logChunk {
			return fmt.Errorf("pop: invariant: pooled log chunk %d has room for %d entries, want %d", i, cap(c), logChunk)
		}
		pooled[&c[:1][0]] = true
	}
	held := 0
	for _, name := range b.topicOrder {
		for qid, q := range b.topics[name].queues {
			for k, c := range q.log.chunks {
				if c == nil || cap(c) != logChunk {
					continue
				}
				held++
				if pooled[&c[:1][0]] {
					return fmt.Errorf("pop: invariant: chunk %d of %s queue %d's log is also in the chunk pool", k, name, qid)
				}
			}
		}
	}
	if held != p.held {
		return fmt.Errorf("pop: invariant: the logs hold %d full-size chunks, the chunk pool counts %d", held, p.held)
	}
	return nil
}
