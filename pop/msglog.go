package pop

import "popsim/model"

// msgLog is a queue's stored messages in fixed-size chunks, so that an
// append never copies what is stored already (a growing slice of 200-byte
// messages copied each one four times on average, the largest single cost
// of a long simulation) and retention frees whole chunks. The first chunk
// grows as a slice does, up to logChunk entries, so a queue that holds a
// few messages does not pay for a full chunk; every later chunk is
// allocated full size. Every chunk but the last holds logChunk entries.
type msgLog struct {
	chunks [][]logSlot
	head   int // entries dropped from the front of chunks[0]
	n      int // entries held
	rel    int // chunks[:rel] were released (nil; release.go)
}

// logSlot is one stored message and, in a revive-topic queue, its decoded
// body once a revive round has read it (ck_decoded.go).
type logSlot struct {
	msg model.Message
	rev *reviveBody
}

const (
	logChunkBits = 8
	logChunk     = 1 << logChunkBits
	logFirstCap  = 8
)

func (l *msgLog) len() int { return l.n }

// slot is entry i (0 is the oldest held); i must be in [0, len()).
func (l *msgLog) slot(i int) *logSlot {
	if invariants {
		assertf(!l.released(i), "read of a released message: queue entry %d of %d, chunks below %d released", i, l.n, l.rel)
	}
	i += l.head
	return &l.chunks[i>>logChunkBits][i&(logChunk-1)]
}

// at is the message of entry i.
func (l *msgLog) at(i int) *model.Message { return &l.slot(i).msg }

// push appends a zero entry and returns it.
func (l *msgLog) push() *logSlot {
	k := len(l.chunks) - 1
	if k < 0 || len(l.chunks[k]) == logChunk {
		c := logChunk
		if k < 0 {
			c = logFirstCap
		}
		l.chunks = append(l.chunks, make([]logSlot, 0, c))
		k++
	}
	l.chunks[k] = append(l.chunks[k], logSlot{})
	l.n++
	return &l.chunks[k][len(l.chunks[k])-1]
}

// dropFront forgets the n oldest entries (n <= len()), clearing them so
// that what they reference can be collected. A released chunk (nil) was
// full: only the last chunk is ever short, and it is never released.
func (l *msgLog) dropFront(n int) {
	l.n -= n
	for n > 0 {
		c, size := l.chunks[0], len(l.chunks[0])
		if l.rel > 0 {
			size = logChunk
		}
		k := min(n, size-l.head)
		if c != nil {
			clear(c[l.head : l.head+k])
		}
		l.head += k
		n -= k
		if l.head == logChunk || l.head == size && len(l.chunks) > 1 {
			l.chunks[0] = nil
			l.chunks = l.chunks[1:]
			l.head = 0
			l.rel = max(l.rel-1, 0)
		}
	}
}
