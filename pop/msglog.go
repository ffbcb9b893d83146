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
// that what they reference can be collected.
func (l *msgLog) dropFront(n int) {
	l.n -= n
	for n > 0 {
		c := l.chunks[0]
		k := min(n, len(c)-l.head)
		clear(c[l.head : l.head+k])
		l.head += k
		n -= k
		if l.head == logChunk || l.head == len(c) && len(l.chunks) > 1 {
			l.chunks[0] = nil
			l.chunks = l.chunks[1:]
			l.head = 0
		}
	}
}
