package model

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unsafe"

	"popsim/clock"
)

// AppendBinary appends the event's compact binary form: every field in a
// fixed order, integers as varints (signed ones zig-zag encoded, as
// encoding/binary's), strings length-prefixed. Two events are equal
// exactly when their encodings are, which is what the trace hash covers;
// it is several times shorter and cheaper to produce than the text.
//
// The trace's hot path: an event whose strings are short (every event
// of a run's) is written through one binSpan, most of its integers with
// one store each (binSpan.uvarint), and the events most of a trace's are
// (bare) skip the fields they leave zero in two stores. It is a fresh
// BinaryEncoder's Append: a trace's tracer keeps one for the whole
// stream, and writes with its Put in room it keeps.
func (e *Event) AppendBinary(b []byte) []byte {
	var c BinaryEncoder
	return c.Append(b, e)
}

// BinaryEncoder appends the binary forms of a stream of events, as
// AppendBinary does, and keeps the varint of the next sequence number
// and of the last time it wrote: the next event's sequence number, one
// more than the last, is stored as kept, and its successor's varint is
// the kept one plus 2 (zig-zag) until its low seven bits would carry
// (seqRoom counts the steps left: a carry comes once in 64 events); a
// time the last event had too (half a run's events share their instant
// with the one before) is copied, and one a little later is the kept
// varint stepped (atStep); and a Topic (or Shown) that is the very
// string the last short Topic was (the same bytes in memory, of the same
// length: a string's bytes never change) is the kept word of its length
// and bytes, where the word took two or three loads and shifts to build
// (a hot topic's "hot": 15 instructions). The zero value is ready to
// use.
type BinaryEncoder struct {
	seqNext int64  // the sequence number seqW encodes
	seqW    uint32 // seqNext's varint (uvarint28Word), when seqRoom > 0
	seqK    int    // its length
	seqRoom int    // how many more successors seqW may take by adding 2
	at      clock.Time
	atW     uint64                  // at's eight-byte varint, when atOK
	atOK    bool                    // at is not negative and its varint takes eight bytes
	pairs   [pairSlots]msgLeaseWord // by message id modulo pairSlots
	topic   string                  // the last Topic of 1 to 7 bytes written; the zero value matches only an empty string without an address, whose form is topicW's zero
	topicW  uint64                  // topic's form: its length and bytes
}

// msgLeaseWord holds the varints of a message id and a lease id, one
// after the other, in a word's low bytes: a message's lease, delivery,
// consumption's start and end, ack and its answer all carry the same
// two, and after the first the encoder copies the word (msgLease). The
// zero value is right too: the two zero bytes of a pair (0, 0).
type msgLeaseWord struct {
	msg   MsgID
	extra uint32 // the varints' length in bytes, less 2
	lease LeaseID
	w     uint64
}

// pairSlots is how many message and lease pairs the encoder keeps, in
// a direct-mapped table: a power of two above the number of messages a
// run has between its lease and its ack (the default run's consumers
// hold at most a few hundred).
const pairSlots = 512

// BinaryRoom is the room Put writes an event's binary form into.
const BinaryRoom = binSpanLen

// Append appends e's binary form (AppendBinary) to b: Put's, in room
// made past b's length, or the long form.
func (c *BinaryEncoder) Append(b []byte, e *Event) []byte {
	n := len(b)
	if cap(b)-n < binSpanLen {
		b = append(b[:cap(b)], make([]byte, binSpanLen)...)
	}
	if k := c.Put((*[BinaryRoom]byte)(b[n:n+binSpanLen]), e); k > 0 {
		return b[:n+k]
	}
	return e.appendBinaryLong(b[:n])
}

// Put writes e's binary form (AppendBinary's) at the front of room and
// returns its length; or, if e's strings are longer than the room leaves
// them (maxSpanStrings), it changes nothing and returns 0: Append writes
// those. A caller that keeps the room past its buffer's end writes
// there, without a slice to check and return (sim's tracer).
func (c *BinaryEncoder) Put(room *[BinaryRoom]byte, e *Event) int {
	strs := len(e.Group) + len(e.Topic) + len(e.Shown)
	if strs > maxSpanStrings {
		return 0
	}
	s := (*binSpan)(room)
	var i int
	if e.Seq == c.seqNext && c.seqRoom > 0 {
		binary.LittleEndian.PutUint32(s[0:], c.seqW)
		i = c.seqK
		c.seqNext++
		c.seqW += 2 // the varint's first byte alone changes, and its length does not
		c.seqRoom--
	} else {
		i = c.seq(s, e.Seq)
	}
	if c.atOK && e.At == c.at {
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.atW)
		i += 8
	} else if d, w := atStep(c.at, c.atW, e.At); c.atOK && d < atStepMax && int64(w) >= 0 { // a little later: the kept varint, stepped
		c.at, c.atW = e.At, w
		binary.LittleEndian.PutUint64(s[i&spanMask:], w)
		i += 8
	} else if z := zigzag(int64(e.At)); isVarint8(z) {
		c.at, c.atW, c.atOK = e.At, spread56(z)|0x0080_8080_8080_8080, e.At >= 0
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.atW)
		i += 8
	} else {
		i = s.uvarintLong(i, z)
	}
	s[i&spanMask] = byte(e.Kind)
	if z := zigzag(int64(e.Client)); z < 0x80 {
		s[(i+1)&spanMask] = byte(z)
		i += 2
	} else if z < 1<<14 { // one among hundreds
		i = s.uvarint2(i+1, z)
	} else {
		i = s.uvarintLong(i+1, z)
	}
	if zn := zigzag(int64(e.Count)); strs == 0 && zn < 0x80 && e.bare() { // the Group's empty length, Msg and Lease, Ended, and the zeros, Count and Reason of the rest in two stores
		s[i&spanMask] = 0
		j, ok := c.keptPair(s, i+1, e.Msg, e.Lease)
		if !ok {
			j = c.newPair(s, i+1, e.Msg, e.Lease)
		}
		if e.Ended < 0x80 {
			s[j&spanMask] = byte(e.Ended)
			j++
		} else if e.Ended < 1<<28 { // an ack's answer's: the lease's id
			j = s.uvarint28(j, uint64(e.Ended))
		} else {
			j = s.uvarintLong(j, uint64(e.Ended))
		}
		// Next, the Topic's length, Queue ... Span and Code: 8 zero
		// bytes; Count, then Reason and the Shown's length.
		binary.LittleEndian.PutUint64(s[j&spanMask:], 0)
		binary.LittleEndian.PutUint32(s[(j+8)&spanMask:], uint32(zn)|uint32(e.Reason)<<8)
		return j + 11
	}
	i = s.str(i, e.Group)
	if e.Msg != 0 && e.Lease != 0 && e.Ended|e.Next == 0 { // a lease's, a delivery's: a kept pair, as a rule
		j, ok := c.keptPair(s, i, e.Msg, e.Lease)
		if !ok {
			j = c.newPair(s, i, e.Msg, e.Lease)
		}
		i = s.zeros(j, 2)
	} else {
		if e.Msg == 0 { // a request's, its answer's, a park's
			s[i&spanMask] = 0
			i++
		} else if e.Msg < 1<<28 {
			i = s.uvarint28(i, uint64(e.Msg))
		} else {
			i = s.uvarintLong(i, uint64(e.Msg))
		}
		if e.Lease|e.Ended|e.Next == 0 { // most events' (three zero bytes)
			i = s.zeros(i, 3)
		} else {
			if e.Lease < 1<<28 {
				i = s.uvarint28(i, uint64(e.Lease))
			} else {
				i = s.uvarintLong(i, uint64(e.Lease))
			}
			i = s.uvarint(i, uint64(e.Ended))
			i = s.uvarint(i, uint64(e.Next))
		}
	}
	if v, n := e.Topic, len(e.Topic); n == len(c.topic) && unsafe.StringData(v) == unsafe.StringData(c.topic) {
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.topicW)
		i += 1 + n
	} else if n >= 4 && n < 8 { // a topic's name of up to 7 bytes: strLong's cases, inline
		w := uint64(load32(v)) | uint64(load32(v[n-4:]))<<(8*(n-4))
		c.topic, c.topicW = v, uint64(n)|w<<8
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.topicW)
		i += 1 + n
	} else if n > 0 && n < 4 {
		w := uint64(v[0]) | uint64(v[n>>1])<<(8*(n>>1)) | uint64(v[n-1])<<(8*(n-1))
		c.topic, c.topicW = v, uint64(n)|w<<8
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.topicW)
		i += 1 + n
	} else {
		i = s.str(i, e.Topic)
	}
	if z := zigzag(int64(e.Queue)); z < 0x80 {
		s[i&spanMask] = byte(z)
		i++
	} else if z < 1<<14 { // one among hundreds
		i = s.uvarint2(i, z)
	} else {
		i = s.uvarintLong(i, z)
	}
	if z := zigzag(e.Offset); z < 0x80 {
		s[i&spanMask] = byte(z)
		i++
	} else if z < 1<<28 { // a message's offset
		i = s.uvarint28(i, z)
	} else {
		i = s.uvarintLong(i, z)
	}
	if uint64(e.Attempt)|uint64(e.Deadline)|uint64(e.Span)|uint64(e.Code)|uint64(e.Count) == 0 {
		i = s.zeros(i, 5) // a message's place alone: a produce, a delivery
	} else {
		i = s.uvarint(i, zigzag(int64(e.Attempt)))
		if z := zigzag(int64(e.Deadline)); isVarint8(z) {
			i = s.uvarint8(i, z)
		} else {
			i = s.uvarint(i, z)
		}
		if zs, zc, zn := zigzag(int64(e.Span)), zigzag(int64(e.Code)), zigzag(int64(e.Count)); zs|zc|zn < 0x80 {
			// a lease's, a park's, an answer's: one store
			binary.LittleEndian.PutUint32(s[i&spanMask:], uint32(zs|zc<<8|zn<<16))
			i += 3
		} else {
			i = s.uvarint(i, zs)
			i = s.uvarint(i, zc)
			i = s.uvarint(i, zn)
		}
	}
	s[i&spanMask] = byte(e.Reason)
	i++
	if v, k := e.Shown, len(e.Shown); k == 0 { // most events'
		s[i&spanMask] = 0
		i++
	} else if k == len(c.topic) && unsafe.StringData(v) == unsafe.StringData(c.topic) { // a delivery's topic name, as the Topic's above
		binary.LittleEndian.PutUint64(s[i&spanMask:], c.topicW)
		i += 1 + k
	} else if k >= 4 && k < 8 {
		w := uint64(load32(v)) | uint64(load32(v[k-4:]))<<(8*(k-4))
		binary.LittleEndian.PutUint64(s[i&spanMask:], uint64(k)|w<<8)
		i += 1 + k
	} else {
		i = s.strLong(i, v)
	}
	return i
}

// atStep is the eight-byte varint of time at, from the kept time
// last >= 0 and its varint w, when at is d = at-last µs later, 0 <= d <
// atStepMax, and the varint still takes eight bytes (the word's top bit
// is clear; else at's zig-zag form reached 1<<56): w plus the spread
// 7-bit groups of 2d (at's zig-zag form less last's), whose carries
// pass through the continuation bits, set in w's first seven bytes (a
// group's carry clears its byte's and carries into the next group),
// which it sets again. It is about half the instructions of spread56;
// a run's times mostly step by less than a millisecond. Past atStepMax,
// or with at before last, d is out of range and w meaningless.
func atStep(last clock.Time, w uint64, at clock.Time) (d, next uint64) {
	d = uint64(at - last)
	z := d << 1
	return d, (w + (z&0x7f | z&0x3f80<<1)) | 0x0080_8080_8080_8080
}

// atStepMax bounds the steps atStep takes: 2d fits two 7-bit groups.
const atStepMax = 1 << 13

// seq writes v at the front of s and returns its length, and keeps the
// varint of v+1 for the next event when v is not negative and below
// 1<<27: its zig-zag form's low seven bits, even, take up to
// (0x7e-low)/2 additions of 2 before they carry.
func (c *BinaryEncoder) seq(s *binSpan, v int64) int {
	z := zigzag(v)
	if z >= 1<<28 {
		c.seqRoom = 0
		return s.uvarintLong(0, z)
	}
	w, k := uvarint28Word(uint32(z))
	binary.LittleEndian.PutUint32(s[0:], w)
	c.seqNext, c.seqW, c.seqK, c.seqRoom = v+1, w+2, k, 0
	if v >= 0 {
		c.seqRoom = int(0x7e-z&0x7f) / 2
	}
	return k
}

// appendBinaryLong is AppendBinary for an event with long strings, field
// by field with encoding/binary's appenders: the format's definition, which
// the trace hashes of every golden run were taken over. The fast paths
// must write exactly its bytes (the tests compare them with it).
func (e *Event) appendBinaryLong(b []byte) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = binary.AppendVarint(b, e.Seq)
	b = binary.AppendVarint(b, int64(e.At))
	b = append(b, byte(e.Kind))
	b = binary.AppendVarint(b, int64(e.Client))
	b = str(b, e.Group)
	b = binary.AppendUvarint(b, uint64(e.Msg))
	b = binary.AppendUvarint(b, uint64(e.Lease))
	b = binary.AppendUvarint(b, uint64(e.Ended))
	b = binary.AppendUvarint(b, uint64(e.Next))
	b = str(b, e.Topic)
	b = binary.AppendVarint(b, int64(e.Queue))
	b = binary.AppendVarint(b, e.Offset)
	b = binary.AppendVarint(b, int64(e.Attempt))
	b = binary.AppendVarint(b, int64(e.Deadline))
	b = binary.AppendVarint(b, int64(e.Span))
	b = binary.AppendVarint(b, int64(e.Code))
	b = binary.AppendVarint(b, int64(e.Count))
	b = append(b, byte(e.Reason))
	return str(b, e.Shown)
}

// bare reports whether the integers after Client of an event without
// strings are of the shape most of a trace's are (a consumption's start
// and end, an ack and its answer, a receive's answer): only Msg, Lease,
// Ended and Count (and Reason, a byte) may be set. Append tests the
// strings and Count's varint (one byte) first.
func (e *Event) bare() bool {
	return uint64(e.Next)|uint64(e.Queue)|uint64(e.Offset)|uint64(e.Attempt)|uint64(e.Deadline)|uint64(e.Span)|uint64(e.Code) == 0
}

// keptPair writes at i the word the table keeps for msg's slot and
// returns the index after its varints, and whether they are msg's and
// lease's; when not, newPair writes theirs over it.
func (c *BinaryEncoder) keptPair(s *binSpan, i int, msg MsgID, lease LeaseID) (int, bool) {
	p := &c.pairs[msg%pairSlots]
	binary.LittleEndian.PutUint64(s[i&spanMask:], p.w)
	return i + 2 + int(p.extra), p.msg == msg && p.lease == lease
}

// newPair writes the varints of a pair the table does not hold: it writes the
// two varints and keeps their word in *p when both are below 1<<28.
func (c *BinaryEncoder) newPair(s *binSpan, i int, msg MsgID, lease LeaseID) int {
	if msg >= 1<<28 || lease >= 1<<28 {
		return s.uvarintLong(s.uvarintLong(i, uint64(msg)), uint64(lease))
	}
	mw, mk := uvarint28Word(uint32(msg))
	lw, lk := uvarint28Word(uint32(lease))
	p := &c.pairs[msg%pairSlots]
	*p = msgLeaseWord{msg: msg, extra: uint32(mk + lk - 2), lease: lease, w: uint64(mw) | uint64(lw)<<(8*mk)}
	binary.LittleEndian.PutUint64(s[i&spanMask:], p.w)
	return i + mk + lk
}

// maxFixedBinary bounds an event's binary form without its strings'
// bytes: 14 integers and 3 string lengths of at most 10 bytes each, and
// the kind and reason bytes.
const maxFixedBinary = 17*binary.MaxVarintLen64 + 2

// binSpan is the room AppendBinary writes an event with short strings
// into: the indices of its bytes are masked with spanMask, so the
// compiler can tell that every store, of up to 8 bytes, is in the array
// and omits the bounds checks. An event's form takes at most
// maxFixedBinary bytes and its strings maxSpanStrings, so the mask never
// wraps an index; it is there to be seen, not to wrap.
type binSpan [binSpanLen]byte

const (
	spanMask       = 255
	binSpanLen     = spanMask + 1 + 8
	maxSpanStrings = spanMask + 1 - maxFixedBinary
)

// zeros writes k <= 8 zero bytes at i.
func (s *binSpan) zeros(i, k int) int {
	binary.LittleEndian.PutUint64(s[i&spanMask:], 0)
	return i + k
}

// str writes v, length-prefixed, at i: inlined for an empty v.
func (s *binSpan) str(i int, v string) int {
	if v == "" {
		s[i&spanMask] = 0
		return i + 1
	}
	return s.strLong(i, v)
}

// strLong is str for a v that is not empty. A v of up to 16 bytes (a
// topic's or group's name) is copied without memmove: one of 8 to 16
// bytes in two loads of 8, overlapping in the middle, one of 1 to 7
// stored with its length in one word (the bytes of two loads of 4,
// overlapping, or of 1 to 3 bytes the first, middle and last).
func (s *binSpan) strLong(i int, v string) int {
	n := len(v)
	switch {
	case n >= 4 && n < 8: // the length and the bytes in one store
		w := uint64(load32(v)) | uint64(load32(v[n-4:]))<<(8*(n-4))
		binary.LittleEndian.PutUint64(s[i&spanMask:], uint64(n)|w<<8)
	case n > 0 && n < 4: // the same, the bytes the first, middle and last (repeating each other)
		w := uint64(v[0]) | uint64(v[n>>1])<<(8*(n>>1)) | uint64(v[n-1])<<(8*(n-1))
		binary.LittleEndian.PutUint64(s[i&spanMask:], uint64(n)|w<<8)
	case n >= 8 && n <= 16:
		s[i&spanMask] = byte(n)
		binary.LittleEndian.PutUint64(s[(i+1)&spanMask:], load64(v))
		binary.LittleEndian.PutUint64(s[(i+n-7)&spanMask:], load64(v[n-8:]))
	default:
		i = s.uvarint(i, uint64(n))
		copy(s[i&spanMask:], v)
		return i + n
	}
	return i + 1 + n
}

// load64 and load32 read the first 8 and 4 bytes of v, little-endian
// (the compiler makes each one load).
func load64(v string) uint64 {
	_ = v[7]
	return uint64(v[0]) | uint64(v[1])<<8 | uint64(v[2])<<16 | uint64(v[3])<<24 |
		uint64(v[4])<<32 | uint64(v[5])<<40 | uint64(v[6])<<48 | uint64(v[7])<<56
}

func load32(v string) uint32 {
	_ = v[3]
	return uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24
}

// zigzag maps a signed integer to the unsigned one encoding/binary's
// AppendVarint encodes.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// uvarint writes v at i as encoding/binary's AppendUvarint does and
// returns the index after it. Most of an event's integers are small (a
// zero field, a client, a queue) and take the inlined single-byte path.
func (s *binSpan) uvarint(i int, v uint64) int {
	if v < 0x80 {
		s[i&spanMask] = byte(v)
		return i + 1
	}
	return s.uvarintLong(i, v)
}

// uvarint2 is uvarint for v of two bytes' varint, 0x80 <= v < 1<<14 (a
// client's or a queue's among hundreds, in a large run), inlined.
func (s *binSpan) uvarint2(i int, v uint64) int {
	binary.LittleEndian.PutUint16(s[i&spanMask:], uint16(v)&0x7f|0x80|uint16(v>>7)<<8)
	return i + 2
}

// uvarint28 is uvarint for v < 1<<28, of one to four bytes (sequence
// numbers, message and lease ids), inlined; see uvarint28Word. Its
// callers test v < 1<<28 themselves and call uvarintLong otherwise: a
// wrapper doing both is over the compiler's inlining budget, and the
// call would cost more than the store.
func (s *binSpan) uvarint28(i int, v uint64) int {
	w, k := uvarint28Word(uint32(v))
	binary.LittleEndian.PutUint32(s[i&spanMask:], w)
	return i + k
}

// isVarint8 reports whether v's varint takes eight bytes, as a time's
// does (µs since 1970, zig-zag encoded, 1978 to 3111).
func isVarint8(v uint64) bool { return v>>49-1 < 0x7f }

// uvarint8 is uvarint for v whose varint takes eight bytes, inlined.
func (s *binSpan) uvarint8(i int, v uint64) int {
	binary.LittleEndian.PutUint64(s[i&spanMask:], spread56(v)|0x0080_8080_8080_8080)
	return i + 8
}

// uvarintLong is uvarint for any v: one store for v below 1<<56, byte by
// byte above.
func (s *binSpan) uvarintLong(i int, v uint64) int {
	if v < 1<<28 {
		w, k := uvarint28Word(uint32(v))
		binary.LittleEndian.PutUint32(s[i&spanMask:], w)
		return i + k
	}
	if v < 1<<56 {
		t := varint56[bits.Len64(v)]
		binary.LittleEndian.PutUint64(s[i&spanMask:], spread56(v)|t&^0x7f)
		return i + int(t&0x7f)
	}
	for v >= 0x80 {
		s[i&spanMask] = byte(v) | 0x80
		v >>= 7
		i++
	}
	s[i&spanMask] = byte(v)
	return i + 1
}

// uvarint28Word is the varint of v < 1<<28 in the low bytes of a word,
// and its length: v's 7-bit groups spread over the word's bytes, and the
// continuation bits of all but the varint's last byte from a table
// indexed by v's bit length. The word's bytes past the varint are zeros,
// which the next field overwrites.
func uvarint28Word(v uint32) (uint32, int) {
	t := varint28[bits.Len32(v)]
	return spread28(v) | uint32(t), int(t >> 32)
}

// spread28 moves the four 7-bit groups of v < 1<<28 to the low bits of
// its four bytes (what x86's PDEP would do with mask 0x7f7f7f7f), in
// two halvings: 14-bit halves to 16-bit ones, then 7-bit quarters to
// bytes.
func spread28(v uint32) uint32 {
	v = v&0x3fff | v&0x0fff_c000<<2
	return v&0x007f_007f | v&0x3f80_3f80<<1
}

// spread56 is spread28 for the eight 7-bit groups of v < 1<<56, in three
// halvings.
func spread56(v uint64) uint64 {
	v = v&0x0fff_ffff | v&0x00ff_ffff_f000_0000<<4
	v = v&0x0000_3fff_0000_3fff | v&0x0fff_c000_0fff_c000<<2
	return v&0x007f_007f_007f_007f | v&0x3f80_3f80_3f80_3f80<<1
}

// varint28 and varint56 hold, for a value of bit length l (the index),
// the continuation bits of its varint (0x80 in each byte but the last)
// and the varint's length in bytes: varint28 in its upper half, varint56
// in the low seven bits (of the first byte, whose continuation bit is
// the eighth). varint28 covers every index bits.Len32 returns, varint56
// every one of bits.Len64, so that looking one up takes no bounds check.
var varint28, varint56 = varintTables()

func varintTables() (t28 [33]uint64, t56 [65]uint64) {
	for l := range len(t56) {
		n := max(1, (l+6)/7)
		cont := uint64(0)
		for k := range min(n-1, 7) {
			cont |= 0x80 << (8 * k)
		}
		if l < len(t28) {
			t28[l] = cont | uint64(n)<<32
		}
		t56[l] = cont | uint64(n)
	}
	return t28, t56
}

var errShortEvent = errors.New("model: truncated or malformed binary event")

// EventSeq reads only the Seq of the event whose binary form b begins
// with (its first field, as DecodeEvent reads it), and whether it
// decodes: for a reader that finds a kept event by Seq without decoding
// the rest.
func EventSeq(b []byte) (int64, bool) {
	d := binDecoder{b: b}
	seq := d.varint()
	return seq, !d.bad
}

// DecodeEvent reads one event's binary form from the front of b and
// returns it with the number of bytes it took.
func DecodeEvent(b []byte) (Event, int, error) {
	d := binDecoder{b: b}
	var e Event
	e.Seq = d.varint()
	e.At = clock.Time(d.varint())
	e.Kind = EventKind(d.byte())
	e.Client = int32(d.varint())
	e.Group = d.str()
	e.Msg = MsgID(d.uvarint())
	e.Lease = LeaseID(d.uvarint())
	e.Ended = LeaseID(d.uvarint())
	e.Next = LeaseID(d.uvarint())
	e.Topic = d.str()
	e.Queue = int32(d.varint())
	e.Offset = d.varint()
	e.Attempt = int32(d.varint())
	e.Deadline = clock.Time(d.varint())
	e.Span = clock.Duration(d.varint())
	e.Code = int32(d.varint())
	e.Count = int32(d.varint())
	e.Reason = Reason(d.byte())
	e.Shown = d.str()
	if d.bad || e.Kind >= evKinds || e.Reason >= reasons {
		return Event{}, 0, errShortEvent
	}
	return e, d.off, nil
}

type binDecoder struct {
	b   []byte
	off int
	bad bool
}

func (d *binDecoder) varint() int64 {
	v, n := binary.Varint(d.b[min(d.off, len(d.b)):])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.off += n
	return v
}

func (d *binDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[min(d.off, len(d.b)):])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.off += n
	return v
}

func (d *binDecoder) byte() byte {
	if d.off >= len(d.b) {
		d.bad = true
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *binDecoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)-d.off) {
		d.bad = true
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}
