package model

import (
	"encoding/binary"
	"errors"

	"popsim/clock"
)

// AppendBinary appends the event's compact binary form: every field in a
// fixed order, integers as varints (signed ones zig-zag encoded, as
// encoding/binary's), strings length-prefixed. Two events are equal
// exactly when their encodings are, which is what the trace hash covers;
// it is several times shorter and cheaper to produce than the text.
//
// The trace's hot path: it grows b once for the longest form the event can
// take and writes the varints in place, instead of appending byte by byte.
func (e *Event) AppendBinary(b []byte) []byte {
	n := len(b)
	need := maxFixedBinary + len(e.Group) + len(e.Topic) + len(e.Shown)
	if cap(b)-n < need {
		b = append(b[:cap(b)], make([]byte, need)...)
	}
	w := b[n : n+need]
	i := putUvarint(w, 0, zigzag(e.Seq))
	i = putUvarint(w, i, zigzag(int64(e.At)))
	w[i] = byte(e.Kind)
	i = putUvarint(w, i+1, zigzag(int64(e.Client)))
	if w[i] = 0; e.Group == "" { // the common case, inline
		i++
	} else {
		i = putBinStr(w, i, e.Group)
	}
	i = putUvarint(w, i, uint64(e.Msg))
	if e.Lease|e.Ended|e.Next == 0 { // most events' (three zero bytes)
		w[i], w[i+1], w[i+2] = 0, 0, 0
		i += 3
	} else {
		i = putUvarint(w, i, uint64(e.Lease))
		i = putUvarint(w, i, uint64(e.Ended))
		i = putUvarint(w, i, uint64(e.Next))
	}
	if w[i] = 0; e.Topic == "" { // the common case, inline
		i++
	} else {
		i = putBinStr(w, i, e.Topic)
	}
	if uint64(e.Queue)|uint64(e.Offset)|uint64(e.Attempt)|uint64(e.Deadline)|uint64(e.Span)|uint64(e.Code)|uint64(e.Count) == 0 {
		binary.LittleEndian.PutUint64(w[i:], 0) // seven zero bytes, and one the next field overwrites
		i += 7
	} else {
		i = putUvarint(w, i, zigzag(int64(e.Queue)))
		i = putUvarint(w, i, zigzag(e.Offset))
		i = putUvarint(w, i, zigzag(int64(e.Attempt)))
		i = putUvarint(w, i, zigzag(int64(e.Deadline)))
		i = putUvarint(w, i, zigzag(int64(e.Span)))
		i = putUvarint(w, i, zigzag(int64(e.Code)))
		i = putUvarint(w, i, zigzag(int64(e.Count)))
	}
	w[i] = byte(e.Reason)
	if i++; e.Shown == "" {
		w[i] = 0
		i++
	} else {
		i = putBinStr(w, i, e.Shown)
	}
	return b[:n+i]
}

// maxFixedBinary bounds an event's binary form without its strings'
// bytes: 14 integers and 3 string lengths of at most 10 bytes each, and
// the kind and reason bytes.
const maxFixedBinary = 17*binary.MaxVarintLen64 + 2

// zigzag maps a signed integer to the unsigned one encoding/binary's
// AppendVarint encodes.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// putUvarint writes v at b[i:] as encoding/binary's AppendUvarint does and
// returns the index after it. Most of an event's integers are small (a
// zero field, a client, a queue) and take the inlined single-byte path.
func putUvarint(b []byte, i int, v uint64) int {
	if v < 0x80 {
		b[i] = byte(v)
		return i + 1
	}
	return putUvarintLong(b, i, v)
}

// putUvarintLong is putUvarint for v of two bytes or more.
func putUvarintLong(b []byte, i int, v uint64) int {
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

func putBinStr(b []byte, i int, s string) int {
	i = putUvarint(b, i, uint64(len(s)))
	return i + copy(b[i:], s)
}

var errShortEvent = errors.New("model: truncated or malformed binary event")

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
