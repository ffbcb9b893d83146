package model

import (
	"encoding/binary"
	"errors"

	"popsim/clock"
)

// AppendBinary appends the event's compact binary form: every field in a
// fixed order, integers as varints, strings length-prefixed. Two events
// are equal exactly when their encodings are, which is what the trace hash
// covers; it is several times shorter and cheaper to produce than the text.
func (e *Event) AppendBinary(b []byte) []byte {
	b = binary.AppendVarint(b, e.Seq)
	b = binary.AppendVarint(b, int64(e.At))
	b = append(b, byte(e.Kind))
	b = binary.AppendVarint(b, int64(e.Client))
	b = appendBinStr(b, e.Group)
	b = binary.AppendUvarint(b, uint64(e.Msg))
	b = binary.AppendUvarint(b, uint64(e.Lease))
	b = binary.AppendUvarint(b, uint64(e.Ended))
	b = binary.AppendUvarint(b, uint64(e.Next))
	b = appendBinStr(b, e.Topic)
	b = binary.AppendVarint(b, int64(e.Queue))
	b = binary.AppendVarint(b, e.Offset)
	b = binary.AppendVarint(b, int64(e.Attempt))
	b = binary.AppendVarint(b, int64(e.Deadline))
	b = binary.AppendVarint(b, int64(e.Span))
	b = binary.AppendVarint(b, int64(e.Code))
	b = binary.AppendVarint(b, int64(e.Count))
	b = append(b, byte(e.Reason))
	return appendBinStr(b, e.Shown)
}

func appendBinStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
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
