package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"

	"popsim/model"
)

// tracer numbers trace events, hashes their canonical text and hands them
// to the checker and, when asked, to a writer and to memory. It never holds
// the whole trace unless KeepEvents is set.
type tracer struct {
	seq     int64
	h       hash.Hash
	buf     []byte
	w       *bufio.Writer
	werr    error
	keep    bool
	events  []model.Event
	observe func(*model.Event)
	cur     model.Event // scratch slot for the event being emitted

	// Self-check support: the running hash every ckEvery events, and the
	// canonical text of events with Seq in [capLo, capHi).
	ckEvery      int64
	checkpoints  [][sha256.Size]byte
	capLo, capHi int64
	captured     []string
}

func newTracer(w io.Writer, keep bool, observe func(*model.Event)) *tracer {
	t := &tracer{h: sha256.New(), keep: keep, observe: observe, buf: make([]byte, 0, 256), capLo: -1, capHi: -1}
	if w != nil {
		t.w = bufio.NewWriterSize(w, 64<<10)
	}
	return t
}

// emit stamps e with the next sequence number and records it.
func (t *tracer) emit(e *model.Event) {
	e.Seq = t.seq
	t.seq++
	t.buf = e.AppendText(t.buf[:0])
	t.buf = append(t.buf, '\n')
	t.h.Write(t.buf)
	if t.w != nil && t.werr == nil {
		_, t.werr = t.w.Write(t.buf)
	}
	if t.keep {
		t.events = append(t.events, *e)
	}
	if e.Seq >= t.capLo && e.Seq < t.capHi {
		t.captured = append(t.captured, string(t.buf[:len(t.buf)-1]))
	}
	if t.ckEvery > 0 && t.seq%t.ckEvery == 0 {
		var s [sha256.Size]byte
		t.h.Sum(s[:0])
		t.checkpoints = append(t.checkpoints, s)
	}
	if t.observe != nil {
		t.observe(e)
	}
}

// finish flushes the writer and returns the trace hash.
func (t *tracer) finish() (string, error) {
	if t.w != nil && t.werr == nil {
		t.werr = t.w.Flush()
	}
	return hex.EncodeToString(t.h.Sum(nil)), t.werr
}
