package sim

import (
	"bufio"
	"encoding/hex"
	"io"

	"github.com/zeebo/xxh3"

	"popsim/clock"
	"popsim/model"
)

// traceHashSize is the trace hash's length in bytes: XXH3-128's. The
// hash has to tell two traces apart (a run from its replay, one build's
// from the next's), not resist someone forging a trace, so a
// non-cryptographic hash of 128 bits is enough; SHA-256, which it
// replaced at stop 36, took 6.6 % of a default run's native CPU even with
// the SHA instructions, and XXH3 costs the run about 5 M of its 645 M
// instructions (callgrind).
const traceHashSize = 16

// hashChunk is the room of the tracer's buffer of binary trace: it
// hashes the buffer once fewer than hashSlack bytes of it are left (an
// event takes 30 to 60 bytes; with its strings, names of at most 255
// bytes each, about 1 kB at most: putLong). The buffer is an array of
// hashBuf bytes, hashChunk and an event's room (model.BinaryRoom) past
// it, so that the next event's room lies in the array wherever the event
// starts below hashChunk, as the compiler sees (emitCur), and the encoder
// writes there (Put) without a slice to check and return
// (BenchmarkRunDefault: 1 595.05 -> 1 587.00 M instructions outside the
// runtime, callgrind). The checker's history keeps the few buffers its
// recent events lie in (flushHash); past 64 kB, each takes 72 kB of
// pages.
const (
	hashChunk = 64 << 10
	hashSlack = 512
	hashBuf   = hashChunk + model.BinaryRoom
)

// tracer numbers trace events, hashes their binary form and hands them to
// the checker and, when asked, to a writer (as text) and to memory. It
// never holds the whole trace unless KeepEvents is set, and it writes text
// only when a writer is given or SelfCheck captures a window.
type tracer struct {
	seq    int64
	h      *xxh3.Hasher   // the trace hash: XXH3-128 of the binary forms
	buf    *[hashBuf]byte // buf[:used]: binary events not hashed yet
	used   int            // below hashChunk-hashSlack between events
	long   []byte         // scratch for an event's form too long for Put (putLong)
	cur    model.Event    // scratch slot for the event being emitted; before enc (12 kB), so that emitCur's first store to it tests t for nil itself
	enc    model.BinaryEncoder
	text   []byte // scratch for one event's text
	w      *bufio.Writer
	werr   error
	keep   bool
	events []model.Event
	obs    *sim // its meter and checker get every event, the checker with its binary form (emit); nil: none
	// extra: some event needs more than hashing and observing (a writer,
	// KeepEvents, a self-check's checkpoints or capture window), or
	// nothing observes (obs nil), so emit looks at each (emitExtra); a
	// plain run skips them and obs's nil test with one test.
	extra bool

	// Self-check support: the running hash every ckEvery events, and the
	// text of events with Seq in [capLo, capHi).
	ckEvery      int64
	checkpoints  [][traceHashSize]byte
	capLo, capHi int64
	captured     []string
}

func newTracer(w io.Writer, keep bool, obs *sim) *tracer {
	t := &tracer{h: xxh3.New(), keep: keep, obs: obs, buf: new([hashBuf]byte), text: make([]byte, 0, 256), capLo: -1, capHi: -1}
	if w != nil {
		t.w = bufio.NewWriterSize(w, 64<<10)
	}
	t.extra = t.w != nil || keep || obs == nil
	return t
}

// selfCheck makes the tracer keep the running hash every ckEvery events
// and the text of events with Seq in [capLo, capHi).
func (t *tracer) selfCheck(every, lo, hi int64) {
	t.ckEvery, t.capLo, t.capHi = every, lo, hi
	t.extra = t.extra || every > 0 || lo < hi
}

// emitAt stamps e with now and records it.
func (t *tracer) emitAt(now clock.Time, e model.Event) {
	t.cur = e
	t.emitCur(now)
}

// emitCur stamps the event in the scratch slot with now and the next
// sequence number and records it: hashes it, and hands it to the meter
// (the latency breakdown) and to the checker, with its binary form's
// length: the checker's history keeps the form where the tracer wrote it
// (ShareBuffer), so it needs no slice of it. The hot callers copy their event argument
// into the slot themselves (t.cur = e) instead of calling emitAt: an
// inlined emitAt copies the 160-byte event twice, first into its
// parameter, and not inlined it copies it into its arguments. It is one
// call, not a small one inlined around a call (sim.emit inlines it).
func (t *tracer) emitCur(now clock.Time) {
	e := &t.cur
	e.At = now
	e.Seq = t.seq
	t.seq++
	if invariantsOn && t.used >= hashChunk-hashSlack {
		panic("sim: the tracer's buffer was not hashed at its end")
	}
	u := t.used & (hashChunk - 1) // t.used itself: the mask shows the compiler the room in the array, which a bound did not (3.0 M instructions a default run)
	n := t.enc.Put((*[model.BinaryRoom]byte)(t.buf[u:u+model.BinaryRoom]), e)
	if n == 0 {
		n = t.putLong(e)
	}
	// n: the event's binary form, which the checker's history finds in the buffer it shares (ShareBuffer)
	if t.used += n; t.used >= hashChunk-hashSlack {
		t.flushHash()
	}
	if t.extra && !t.emitExtra(e) {
		return // nothing observes
	}
	s := t.obs // sim.observe written out: a call fewer an event
	s.meter.observe(e)
	s.chk.ObserveShared(e, n)
}

// emitExtra writes e's text, captures it, keeps it and takes a hash
// checkpoint, as asked, and reports whether anything observes e (obs).
func (t *tracer) emitExtra(e *model.Event) bool {
	captured := e.Seq >= t.capLo && e.Seq < t.capHi
	if t.w != nil && t.werr == nil || captured {
		t.text = e.AppendText(t.text[:0])
		if captured {
			t.captured = append(t.captured, string(t.text))
		}
		if t.w != nil && t.werr == nil {
			t.text = append(t.text, '\n')
			_, t.werr = t.w.Write(t.text)
		}
	}
	if t.keep {
		t.events = append(t.events, *e)
	}
	if t.ckEvery > 0 && t.seq%t.ckEvery == 0 {
		t.flushHash()
		t.checkpoints = append(t.checkpoints, t.h.Sum128().Bytes())
	}
	return t.obs != nil
}

// putLong writes the binary form of e, whose strings are too long for
// Put, at t.used (first hashing the buffer if the rest of it is too
// short: an event's form takes at most about 1 kB, its names 255 bytes
// each) and returns its length.
func (t *tracer) putLong(e *model.Event) int {
	t.long = t.enc.Append(t.long[:0], e)
	if t.used+len(t.long) > hashBuf {
		t.flushHash()
	}
	return copy(t.buf[t.used:], t.long)
}

// flushHash hashes the buffered events. The checker's history shares
// the buffer (check.Checker.ShareBuffer): it takes the hashed events over
// and hands back a buffer it no longer needs.
func (t *tracer) flushHash() {
	t.h.Write(t.buf[:t.used])
	if t.obs != nil {
		t.buf = (*[hashBuf]byte)(t.obs.chk.Seal(t.buf[:t.used], hashBuf)[:hashBuf])
	}
	t.used = 0
}

// finish flushes the writer and returns the trace hash: XXH3-128 of the
// events' binary forms, concatenated, as 32 hex digits.
func (t *tracer) finish() (string, error) {
	t.flushHash()
	if t.w != nil && t.werr == nil {
		t.werr = t.w.Flush()
	}
	sum := t.h.Sum128().Bytes()
	return hex.EncodeToString(sum[:]), t.werr
}
