package pop

import (
	"math"
	"slices"
)

// Releasing consumed messages.
//
// RocketMQ keeps a message in its commit log until retention deletes the
// file (fileReservedTime, 72 h by default), whether or not anybody will read
// it again, and so does this store: a long run's memory grows with every
// message produced. ReleaseConsumed frees the memory of the messages that a
// POP run provably never reads again, without changing any answer the
// broker gives, under a contract with its caller:
//
//   - what it releases is a whole chunk of a queue's log (logChunk
//     messages) wholly below the release watermark: the lowest of, for
//     every group the caller names, its commit and pull offsets on the
//     queue, and the offset of every in-flight record of those groups on
//     it (the KV index and its cache; a revive reads the original there).
//     A queue with a pending offset reset, or one that a named group has
//     no commit offset on yet, releases nothing;
//   - the queue's min and max offsets, and so every offset query, offset
//     correction and backlog count, stay as they were: only the messages'
//     contents go;
//   - a changeInvisibleTime writes its new record at its handle's offset
//     whether or not the old record is still there (a stale handle's, or
//     one delayed past the record's revive or ack), as upstream's does,
//     and that record's revive reads the message. The caller names, per
//     queue, the lowest offset such a request may still carry (floor: the
//     handles its clients hold, and renewals on their way); nothing at or
//     above it is released. A nil floor promises that no
//     changeInvisibleTime comes at all;
//   - the caller promises that nothing else reads the topic below those
//     offsets: no group it did not name, no Pull with explicit offsets, no
//     offset reset, no broker restart (which reloads older persisted
//     offsets), no orderly consumption. The simulator calls it only for
//     runs that have none of these (sim's rocketMQ adapter), with the
//     floor of the receipt handles its clients may still send
//     (sim/pins.go) when they renew.
//
// Only the KV path releases topics' messages: the checkpoint path's
// references to original messages (checkpoints in the buffer, in the
// revive topic and in the timer wheel, ack messages not yet paired) are not
// indexed by queue, and it returns 0 there. What the checkpoint path
// releases is its revive topic's consumed messages (ReleaseRevive).
//
// A read of a released message is a bug: with the invariants build tag it
// panics naming the queue entry (msgLog.slot) and CheckInvariants checks
// that no in-flight record points at a released message; without it the
// read indexes a nil chunk and panics too, never returning a wrong message.

// ReleaseConsumed frees the contents of topic's messages that the named
// groups have all consumed and hold no lease on, below floor[qid] for each
// queue qid (a nil floor: no limit; see above), and returns how many it
// freed. It changes no state a request can observe.
func (b *Broker) ReleaseConsumed(topic string, groups []string, floor []int64) int {
	t := b.topicNamed(topic)
	if t == nil || !b.cfg.UsesKV() || len(groups) == 0 {
		return 0
	}
	pairs := b.scratch.relPairs[:0]
	for _, g := range groups {
		p, ok := b.names.lookup(g, topic)
		if !ok {
			return 0 // a group that never popped the topic: it may start anywhere
		}
		pairs = append(pairs, p)
	}
	b.scratch.relPairs = pairs
	low := b.releaseWatermarks(t, pairs)
	n := 0
	for qid, q := range t.queues {
		w := low[qid]
		if qid < len(floor) {
			w = min(w, floor[qid])
		}
		if w > q.min {
			n += q.release(int(min(w, q.maxOffset())-q.min), b)
		}
	}
	return n
}

// ReleaseRevive frees the contents of the revive topic's messages (CKs,
// acks and bAcks) that every revive round has consumed for good, and
// returns how many it freed: on the checkpoint path, a revive queue's
// messages at or below both its revive service's in-memory reviveOffset
// and the revive group's committed offset, in whole chunks. A round reads
// from the higher of the two on (startRound), so nothing reads them again
// while the broker runs: the revive topic has no other reader, a CK or
// ack the engine keeps (a ckRef's body) is held by pointer, not by offset,
// and min and max offsets stay as they were. The caller promises no
// restart or stop follows: a restart resumes from the persisted revive
// offset, which may be older. It changes no state a request can observe.
func (b *Broker) ReleaseRevive() int {
	t := b.reviveT
	if t == nil || b.cfg.UsesKV() {
		return 0
	}
	n := 0
	for _, s := range b.revivers {
		if int(s.qid) >= len(t.queues) {
			continue
		}
		q := t.queues[s.qid]
		if w := min(s.offset, b.reviveCommitted(s.qid)) + 1; w > q.min {
			n += q.release(int(min(w, q.maxOffset())-q.min), b)
		}
	}
	return n
}

// releaseWatermarks returns, per queue of t, the lowest offset the pairs
// may still read: their commit and pull offsets (0 without a commit offset
// or with a pending reset) and their in-flight records' offsets.
func (b *Broker) releaseWatermarks(t *topic, pairs []uint32) []int64 {
	low := b.scratch.relLow[:0]
	for range t.queues {
		low = append(low, math.MaxInt64)
	}
	b.scratch.relLow = low
	for qid := range t.queues {
		for _, p := range pairs {
			k := qkey{p, int32(qid)}
			s := b.offsets.peek(k)
			switch {
			case s == nil || s.has&hasCommit == 0 || s.has&hasReset != 0:
				low[qid] = 0
			default:
				low[qid] = min(low[qid], s.commit)
				if s.has&hasPull != 0 {
					low[qid] = min(low[qid], s.pull)
				}
			}
			if o := b.cache.minOffset(k); o >= 0 {
				low[qid] = min(low[qid], o)
			}
		}
	}
	if b.index.len() > 0 {
		b.index.tree.Scan(func(r rec) bool {
			if int(r.qid) < len(low) && slices.Contains(pairs, r.pair) {
				low[r.qid] = min(low[r.qid], r.offset)
			}
			return true
		})
	}
	return low
}

// release frees the chunks wholly below entry below (entries 0..below-1),
// never the last chunk (appends go there), and returns how many entries it
// freed. A freed chunk stays in chunks as nil, so entry numbering holds,
// and goes to pool, cleared.
func (l *msgLog) release(below int, pool *chunkPool) int {
	n := 0
	for k := l.rel; k < len(l.chunks)-1; k++ {
		end := (k+1)*logChunk - l.head // entries before the end of chunk k
		if end > below {
			break
		}
		n += len(l.chunks[k]) - max(l.head-k*logChunk, 0)
		clear(l.chunks[k])
		pool.put(l.chunks[k])
		l.chunks[k] = nil
		l.rel = k + 1
	}
	return n
}

// released reports whether entry i's chunk was released.
func (l *msgLog) released(i int) bool { return (i+l.head)>>logChunkBits < l.rel }
