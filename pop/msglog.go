package pop

import (
	"reflect"

	"popsim/model"
)

// msgLog is a queue's stored messages in fixed-size chunks, so that an
// append never copies what is stored already (a growing slice of 200-byte
// messages copied each one four times on average, the largest single cost
// of a long simulation) and retention frees whole chunks. The first chunk
// grows as a slice does, up to logChunk entries, so a queue that holds a
// few messages does not pay for a full chunk; every later chunk is
// full size, from the broker's pool of released chunks when it has one,
// else carved from a new block (chunkPool). Every chunk but the last holds
// logChunk entries. The first chunk grows eightfold (logFirstGrow: 8, then
// logChunk entries) rather than doubling, so that a queue that fills a
// chunk leaves the garbage of 8 entries behind, not doubling's 8, 16 and
// 32.
//
// An entry is the message alone, 192 bytes (model.Message), and a chunk
// is 64 of them, 12 KB. A queue holds its last chunk, the one appends go
// to, however few of its messages are unconsumed, and a chunk is released
// only whole (release.go): with 256-entry chunks (48 KB, until stop 45)
// the hot topic's 500 queues held one or two each for a handful of
// messages in flight, 24 to 48 MB, which 64-entry chunks cut to a
// quarter (its 5-minute soak's peak heap 151 -> 88 MiB). A 12-KB chunk
// allocated alone would be a small object, to which the runtime adds an
// 8-byte header (a Message holds pointers) that takes it to the
// 13 568-byte size class, 10 % more; so chunks are carved four at a time
// from a block of 48 KB, six pages of the runtime's large objects
// exactly, which has none (chunkPool.carve). Until stop 43 an entry also
// held the message's typed form, which only a revive-topic queue has
// (revWindow): 208 bytes, which made the 256-entry chunk 52 KB, rounded
// up to seven pages.
//
// Every chunk is held at its full length (len == cap): the last chunk's
// entries are its first fill() ones, the rest of it zero. The last chunk
// is also in last when it is full size, so that an append, which reads
// nothing else of the log but n, head and len(chunks), does not load the
// chunk from chunks, memory the run has not touched since the queue's
// previous append (1.9 % of the hot-topic hour's time was that load), nor
// does a read of an entry in the last chunk (slot), which a pop of a
// message just stored is (2 to 3 % once an append no longer loaded it).
type msgLog struct {
	chunks [][]model.Message
	head   int // entries dropped from the front of chunks[0]
	n      int // entries held
	// last is chunks' last chunk when it is full size, else nil (no
	// chunk, or a first chunk short of full size).
	last *[logChunk]model.Message
	rel  int // chunks[:rel] were released (nil; release.go)
}

const (
	logChunkBits = 6
	logChunk     = 1 << logChunkBits
	logFirstCap  = 8
	logFirstGrow = 8 // the first chunk's growth factor, up to logChunk
)

func (l *msgLog) len() int { return l.n }

// slot is entry i (0 is the oldest held); i must be in [0, len()).
func (l *msgLog) slot(i int) *model.Message {
	if invariants {
		assertf(!l.released(i), "read of a released message: queue entry %d of %d, chunks below %d released", i, l.n, l.rel)
	}
	i += l.head
	if k := i >> logChunkBits; k < len(l.chunks)-1 || l.last == nil {
		return &l.chunks[k][i&(logChunk-1)]
	}
	return &l.last[i&(logChunk-1)] // chunks' last, not loaded from chunks (msgLog)
}

// fill is the number of entries of the last chunk that were written
// (those dropped from its front included); logChunk when there is none.
func (l *msgLog) fill() int { return l.head + l.n - (len(l.chunks)-1)<<logChunkBits }

// An append takes its zero entry in two steps: tryPush, which inlines,
// when the last chunk is full size and has room (next), else pushGrown
// (default run: 183 k appends, a new chunk every 64 entries of a queue).
// One function doing both would not inline: a call alone costs more than
// half the inliner's budget.

// tryPush appends a zero entry and returns it when the last chunk is full
// size and has room (next); nil else, and the log is unchanged.
func (l *msgLog) tryPush() *model.Message {
	if m := l.next(); m != nil {
		return l.pushed(m)
	}
	return nil
}

// pushGrown appends a zero entry and returns it, where tryPush found no
// room: it grows the log (grow).
func (l *msgLog) pushGrown(pool *chunkPool) *model.Message {
	return l.pushed(l.grow(pool, l.fill()))
}

// pushed counts m, the log's next entry, and returns it.
func (l *msgLog) pushed(m *model.Message) *model.Message {
	l.n++
	if invariants {
		assertf(reflect.ValueOf(m).Elem().IsZero(), "log entry %d pushed not zero", l.n-1)
		assertf(l.last == nil || &l.last[0] == &l.chunks[len(l.chunks)-1][0], "log's last chunk is not its chunks' last")
	}
	return m // zero: a chunk's room beyond its entries is never written
}

// next is the entry the log's next tryPush will return when it is in the
// last chunk, which is full size; nil else (no room in a full-size chunk,
// or a first chunk short of full size).
func (l *msgLog) next() *model.Message {
	if j := uint(l.fill()); j < logChunk && l.last != nil {
		return &l.last[j]
	}
	return nil
}

// grow returns entry j of the last chunk, for a log whose last chunk is
// not a full-size one with room for it (tryPush): a new chunk from pool
// after a full-size one that is full, the first chunk when it has room,
// else the first chunk grown logFirstGrow-fold, into a chunk from pool
// when it grows to full size, or to half of logChunk or more and pool has
// one (a queue that holds a few messages keeps a small chunk).
func (l *msgLog) grow(pool *chunkPool, j int) *model.Message {
	k := len(l.chunks) - 1
	if k < 0 {
		l.chunks = append(l.chunks, make([]model.Message, logFirstCap))
		return &l.chunks[0][0]
	}
	c := l.chunks[k]
	switch {
	case j == logChunk:
		c, j = pool.take()[:logChunk], 0
		l.chunks = append(l.chunks, c)
	case j == len(c):
		if n := min(logFirstGrow*len(c), logChunk); n == logChunk || n >= logChunk/2 && pool.has() {
			c = pool.take()[:n] // a full-size chunk is carved, never made alone
		} else {
			c = make([]model.Message, n)
		}
		copy(c, l.chunks[k])
		l.chunks[k] = c
	}
	if len(c) == logChunk {
		l.last = (*[logChunk]model.Message)(c)
	}
	return &c[j]
}

// chunkPool is a broker's full-size log chunks that no queue holds any
// more (released, or dropped from a log's front), cleared, for any of its
// queues' push to reuse instead of allocating: a long run that releases
// what it consumed (release.go) writes new messages into the chunks of
// the consumed ones. No entry of a pooled chunk is read or written: every
// read of a log entry goes through msgLog.slot, which never reaches a
// released or dropped chunk (the queue's chunks slot holds nil, or the
// chunk left chunks), and nothing keeps a pointer into a log past the call
// that took it (getResult's msgs are cleared after each pop). With the
// invariants build tag a pooled chunk is filled with poison, which take
// checks is intact before clearing it.
type chunkPool struct {
	free  [][]model.Message
	held  int    // full-size chunks the logs hold
	spare *Spare // where take goes when free is empty (nil: none; Broker.UseSpare)
	// block is the rest of the block that carve cuts new chunks from.
	block []model.Message
}

// logBlock is how many chunks carve cuts from one allocation: 48 KB, a
// large object of six 8-KB pages (msgLog says why).
const logBlock = 4

// The pool keeps at most as many chunks as the logs hold, or
// chunkPoolMin (3 MB of chunks): what it keeps at most doubles the logs'
// memory, as a collection cycle's garbage may, and a run that has
// released most of what it stored (a drain) lets the rest go to the
// collector.
const chunkPoolMin = 256

// has reports whether take has a pooled or spare chunk to give.
func (p *chunkPool) has() bool {
	return len(p.free) > 0 || p.spare != nil && len(p.spare.chunks) > 0
}

// take returns an empty chunk with room for logChunk entries: a pooled
// one, else a spare one, else a new one (carve).
func (p *chunkPool) take() []model.Message {
	p.held++
	free := &p.free
	if len(*free) == 0 && p.spare != nil {
		free = &p.spare.chunks
	}
	k := len(*free) - 1
	if k < 0 {
		return p.carve()
	}
	c := (*free)[k]
	(*free)[k] = nil
	*free = (*free)[:k]
	if invariants {
		for i := range c {
			assertf(reflect.DeepEqual(c[i], poisonMsg), "pooled log chunk written to: entry %d is %+v", i, c[i])
		}
		clear(c)
	}
	return c[:0]
}

// carve cuts a new chunk from the pool's block, allocating the next block
// when it is used up: the chunk's capacity ends where the next one's
// starts, so that its appends never reach it. A block lives as long as
// any of its chunks does.
func (p *chunkPool) carve() []model.Message {
	if len(p.block) == 0 {
		p.block = make([]model.Message, logBlock*logChunk)
	}
	c := p.block[:0:logChunk]
	p.block = p.block[logChunk:]
	return c
}

// poisonMsg fills the entries of a pooled chunk in the invariants build:
// a stale read of one gets a message no queue holds.
var poisonMsg = model.Message{Topic: "\x00pooled log chunk", QueueID: -1, QueueOffset: -1, Body: []byte("pooled")}

// put takes back c, a chunk no log holds any more, whose entries are
// zero; the pool keeps it unless it is full (or c is a first chunk short
// of full size), and then the collector takes it.
func (p *chunkPool) put(c []model.Message) {
	if cap(c) != logChunk {
		return // a first chunk short of full size
	}
	p.held--
	if invariants {
		assertf(p.held >= 0, "log chunk pool: %d full-size chunks held", p.held)
	}
	if len(p.free) >= max(p.held, chunkPoolMin) {
		return
	}
	c = c[:logChunk]
	if invariants {
		for i := range c {
			assertf(reflect.ValueOf(&c[i]).Elem().IsZero(), "log chunk pooled with entry %d not cleared", i)
		}
	}
	p.free = append(p.free, poisoned(c))
}

// dropFront forgets the n oldest entries (n <= len()), clearing them so
// that what they reference can be collected. Every chunk but the last is
// full, and a short one (a first chunk short of full size) is the only
// one, from which n never drops more than it holds. A dropped chunk goes
// to pool (a released one is nil: it went at its release).
func (l *msgLog) dropFront(n int, pool *chunkPool) {
	l.n -= n
	for n > 0 {
		c := l.chunks[0]
		k := min(n, logChunk-l.head)
		if c != nil {
			clear(c[l.head : l.head+k])
		}
		l.head += k
		n -= k
		if l.head == logChunk {
			if c != nil {
				pool.put(c)
			}
			l.chunks[0] = nil
			l.chunks = l.chunks[1:]
			l.head = 0
			l.rel = max(l.rel-1, 0)
			if len(l.chunks) == 0 {
				l.last = nil
			}
		}
	}
}

// revWindow is a revive-topic queue's typed forms of its messages, one a
// log entry: the engine's own for its CK and ack messages, which it stores
// unbuilt (queue.msg builds them), else their body decoded once a revive
// round has read it (ck_decoded.go), nil before. They live beside the
// log, not in it, as no other queue has them (msgLog). The queue's entry i
// (0 the oldest held, as in its log) has d[lo+i-base]: entries below base
// were released with their log chunks, and the window holds none of them.
// It is one slice, not chunks: a revive queue holds few entries at a time
// (Broker.ReleaseRevive frees what its rounds have passed), 8 bytes each,
// and push moves the live part to the front of d, when d is full and the
// entries that left fill at least half of it, instead of growing it. A
// pointer to an entry is valid until the next push.
type revWindow struct {
	d    []*reviveBody
	lo   int // d[:lo] are entries that left (nil)
	base int // the queue's entries below base were released: not in d
}

// len is the entries the window accounts for: the queue's log's len.
func (w *revWindow) len() int { return w.base + len(w.d) - w.lo }

// slot is the typed form of entry i, which must be held and not released.
func (w *revWindow) slot(i int) **reviveBody {
	if invariants {
		assertf(i >= w.base && i < w.len(), "read of typed form %d: window holds %d to %d", i, w.base, w.len())
	}
	return &w.d[w.lo+i-w.base]
}

// push appends a nil entry and returns it.
func (w *revWindow) push() **reviveBody {
	if len(w.d) == cap(w.d) && w.lo > 0 && w.lo >= len(w.d)/2 {
		n := copy(w.d, w.d[w.lo:])
		clear(w.d[n:])
		w.d, w.lo = w.d[:n], 0
	}
	w.d = append(w.d, nil)
	return &w.d[len(w.d)-1]
}

// dropFront forgets the n oldest entries (msgLog.dropFront), renumbering
// the rest from 0.
func (w *revWindow) dropFront(n int) {
	if k := n - w.base; k > 0 {
		clear(w.d[w.lo : w.lo+k])
		w.lo += k
		w.base = 0
	} else {
		w.base -= n
	}
	w.reset()
}

// release forgets the entries below entry below, which their log has
// released.
func (w *revWindow) release(below int) {
	if k := below - w.base; k > 0 {
		clear(w.d[w.lo : w.lo+k])
		w.lo += k
		w.base = below
	}
	w.reset()
}

// reset starts an empty window at the front of d again.
func (w *revWindow) reset() {
	if w.lo == len(w.d) {
		w.d, w.lo = w.d[:0], 0
	}
}
