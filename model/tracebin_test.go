package model

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/clock"
)

// TestEventBinaryShapes: the shapes AppendBinary writes on paths of
// their own (bare events with no, a small or a lease's Ended, with or
// without a message, with a Count of one byte or more; events without a
// message, a message's place alone, strings of every length around the
// word copies' bounds and past maxSpanStrings, times
// of eight bytes and not) encode to the reference's bytes, at every
// offset in a buffer that is full to its capacity, so that each append
// has to grow it.
func TestEventBinaryShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var names []string
	for n := range 24 {
		names = append(names, "abcdefghijklmnopqrstuvwx"[:n]) // distinct bytes: a copy out of order shows
	}
	names = append(names, strings.Repeat("g", maxSpanStrings/3), strings.Repeat("g", maxSpanStrings/3+1),
		strings.Repeat("x", maxSpanStrings), strings.Repeat("x", maxSpanStrings+1), strings.Repeat("y", 300))
	name := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		return names[r.IntN(len(names))]
	}
	for i := 0; i < 50000; i++ {
		e := randomEvent(r)
		switch i % 4 {
		case 0: // bare: a consumption's or an ack's
			e = Event{Seq: e.Seq, At: e.At, Kind: e.Kind, Client: e.Client, Msg: e.Msg, Lease: e.Lease, Reason: e.Reason}
			switch r.IntN(3) { // Ended: none, small, an ack's answer's (the lease)
			case 1:
				e.Ended = LeaseID(r.IntN(0x100))
			case 2:
				e.Ended = e.Lease
			}
			if r.IntN(2) == 0 { // a receive's answer's Count (its varint's one-byte bounds, and past them), without a message
				e.Count = []int32{1, 16, 63, 64, -1, -64, -65, 300, math.MaxInt32, math.MinInt32}[r.IntN(10)]
				if r.IntN(2) == 0 {
					e.Msg, e.Lease, e.Ended = 0, 0, 0
				}
			}
		case 1: // a message's place alone: a produce's, a delivery's
			e.Attempt, e.Deadline, e.Span, e.Code, e.Count = 0, 0, 0, 0, 0
		case 2: // strings of every length
			e.Group, e.Topic, e.Shown = name(), name(), name()
		case 3: // small or zero times, sequence numbers, clients, queues, ids and offsets of every length
			e.At, e.Deadline = clock.Time(r.Int64N(1<<20)-1<<19), clock.Time(r.Int64()>>r.IntN(64))
			e.Seq, e.Msg, e.Lease = r.Int64()>>r.IntN(64), MsgID(r.Uint64()>>r.IntN(64)), LeaseID(r.Uint64()>>r.IntN(64))
			e.Client, e.Queue = int32(r.Uint32())>>r.IntN(32), int32(r.Uint32())>>r.IntN(32)
			if r.IntN(4) == 0 { // a request's, its answer's, a park's
				e.Msg = 0
			}
			if e.Topic != "" { // offsets of every length
				e.Offset = r.Int64() >> r.IntN(64)
			}
		}
		want := e.appendBinaryLong(nil)
		for _, pre := range []int{0, 1, 7, 100} {
			b := make([]byte, pre, pre) // full: AppendBinary must grow it
			got := e.AppendBinary(b)
			if string(got[pre:]) != string(want) || len(got) != pre+len(want) {
				t.Fatalf("event %d %+v after %d bytes:\n got %x\nwant %x", i, e, pre, got[pre:], want)
			}
		}
	}
}

// TestEventBinaryLongest: events whose integers all take their longest
// varints, with strings of maxSpanStrings bytes in all (the longest a
// binSpan takes) and one more, encode to the reference's bytes.
func TestEventBinaryLongest(t *testing.T) {
	for _, total := range []int{maxSpanStrings - 1, maxSpanStrings, maxSpanStrings + 1} {
		for split := range 3 {
			lens := [3]int{total / 3, total / 3, total - 2*(total/3)}
			lens[split], lens[(split+1)%3] = lens[split]+lens[(split+1)%3], 0
			e := Event{Seq: math.MinInt64, At: math.MaxInt64, Kind: evKinds - 1, Client: math.MinInt32,
				Group: strings.Repeat("g", lens[0]), Msg: math.MaxUint32, Lease: math.MaxUint64, Ended: math.MaxUint64,
				Next: math.MaxUint64, Topic: strings.Repeat("t", lens[1]), Queue: math.MinInt32, Offset: math.MinInt64,
				Attempt: math.MinInt32, Deadline: math.MinInt64, Span: math.MinInt64, Code: math.MinInt32, Count: math.MinInt32,
				Reason: reasons - 1, Shown: strings.Repeat("s", lens[2])}
			if got, want := e.AppendBinary(nil), e.appendBinaryLong(nil); string(got) != string(want) {
				t.Fatalf("strings of %v bytes:\n got %x\nwant %x", lens, got, want)
			}
		}
	}
}

// TestUvarintWords: the word writers agree with encoding/binary on every
// bit length's bounds, and the bytes they store past the varint are
// zeros.
func TestUvarintWords(t *testing.T) {
	var vs []uint64
	for l := range 65 {
		lo := uint64(0)
		if l > 0 {
			lo = 1 << (l - 1)
		}
		hi := uint64(math.MaxUint64) >> (64 - l)
		if l == 0 {
			hi = 0
		}
		vs = append(vs, lo, hi, lo+1, hi-1, lo|hi>>1)
	}
	for _, v := range vs {
		want := binary.AppendUvarint(nil, v)
		var s binSpan
		for k := range s {
			s[k] = 0xee
		}
		n := s.uvarint(3, v) - 3
		if string(s[3:3+n]) != string(want) {
			t.Fatalf("uvarint(%#x) = %x, want %x", v, s[3:3+n], want)
		}
		if v < 1<<28 {
			w, k := uvarint28Word(uint32(v))
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], w)
			if k != len(want) || string(b[:k]) != string(want) || strings.Trim(string(b[k:]), "\x00") != "" {
				t.Fatalf("uvarint28Word(%#x) = %x, %d; want %x", v, b, k, want)
			}
		}
		if len(want) == 2 {
			var s binSpan
			if n := s.uvarint2(0, v); string(s[:n]) != string(want) {
				t.Fatalf("uvarint2(%#x) = %x, want %x", v, s[:n], want)
			}
		}
		if isVarint8(v) != (len(want) == 8) {
			t.Fatalf("isVarint8(%#x) = %v, but its varint takes %d bytes", v, isVarint8(v), len(want))
		}
		if len(want) == 8 {
			var b binSpan
			if n := b.uvarint8(0, v); n != 8 || string(b[:8]) != string(want) {
				t.Fatalf("uvarint8(%#x) = %x, want %x", v, b[:8], want)
			}
		}
		if bits.Len64(v) <= 56 && len(want) != int(varint56[bits.Len64(v)]&0x7f) {
			t.Fatalf("varint56[%d] says %d bytes, want %d", bits.Len64(v), varint56[bits.Len64(v)]&0x7f, len(want))
		}
	}
}

// FuzzEventBinary: any event encodes to the reference's bytes and
// decodes back to itself.
func FuzzEventBinary(f *testing.F) {
	f.Add(int64(7), int64(clock.Epoch), uint8(EvLease), int32(3), "", uint64(17), uint64(42), uint64(0), uint64(0),
		"orders", int32(2), int64(881), int32(0), int64(clock.Epoch+30), int64(0), int32(0), int32(0), uint8(0), "")
	f.Add(int64(-1), int64(-1), uint8(EvAcked), int32(-1), "billing", uint64(math.MaxUint32), uint64(1<<56), uint64(1<<28), uint64(127),
		"%DLQ%billing", int32(-1), int64(math.MinInt64), int32(math.MaxInt32), int64(1<<48), int64(-1<<55), int32(-300), int32(16), uint8(RReplaced), "orders")
	f.Add(int64(30), int64(clock.Epoch), uint8(EvReceived), int32(0), "", uint64(0), uint64(0), uint64(0), uint64(0),
		"", int32(0), int64(0), int32(0), int64(0), int64(0), int32(0), int32(1), uint8(0), "")
	f.Add(int64(31), int64(clock.Epoch), uint8(EvAcked), int32(5), "", uint64(1), uint64(200), uint64(200), uint64(0),
		"", int32(0), int64(0), int32(0), int64(0), int64(0), int32(0), int32(0), uint8(0), "")
	f.Fuzz(func(t *testing.T, seq, at int64, kind uint8, client int32, group string, msg, lease, ended, next uint64,
		topic string, queue int32, offset int64, attempt int32, deadline, span int64, code, count int32, reason uint8, shown string) {
		e := Event{Seq: seq, At: clock.Time(at), Kind: EventKind(kind % uint8(evKinds)), Client: client, Group: group,
			Msg: MsgID(msg), Lease: LeaseID(lease), Ended: LeaseID(ended), Next: LeaseID(next), Topic: topic, Queue: queue,
			Offset: offset, Attempt: attempt, Deadline: clock.Time(deadline), Span: clock.Duration(span), Code: code,
			Count: count, Reason: Reason(reason % uint8(reasons)), Shown: shown}
		got, want := e.AppendBinary([]byte{1}), e.appendBinaryLong([]byte{1})
		if string(got) != string(want) {
			t.Fatalf("%+v:\n got %x\nwant %x", e, got, want)
		}
		back, n, err := DecodeEvent(got[1:])
		if err != nil || n != len(got)-1 || back != e {
			t.Fatalf("%+v decodes to %+v, %d of %d bytes, %v", e, back, n, len(got)-1, err)
		}
		var c BinaryEncoder // a stream's next event, at the same time: from the encoder's varints
		c.Append(nil, &e)
		succ := e
		succ.Seq++
		if got, want := c.Append(nil, &succ), succ.appendBinaryLong(nil); string(got) != string(want) {
			t.Fatalf("%+v after its predecessor:\n got %x\nwant %x", succ, got, want)
		}
	})
}

// pairMsgs and pairLeases are the ids of the events that
// TestBinaryEncoderIsAppendBinary draws from pools: ids of every varint
// length, ids in the same slot of the encoder's pairs (one apart by
// pairSlots), ids the pairs cannot keep (1<<28 and above), and zero.
var (
	pairMsgs   = []MsgID{0, 1, 2, 1 + pairSlots, 1 + 2*pairSlots, 127, 128, 1<<14 + 1, 1<<21 + 1, 1<<28 - 1, 1<<28 + 1, math.MaxUint32}
	pairLeases = []LeaseID{0, 1, 127, 128, 1 << 21, 1<<28 - 1, 1 << 28, 1 << 40}
)

// A BinaryEncoder writes a stream's events as AppendBinary writes each
// alone, the format's definition (appendBinaryLong): through runs of
// consecutive sequence numbers across every carry of their low seven
// bits and every change of their varint's length (up, and down when the
// numbers are negative), times repeated or not, of eight bytes or not,
// stepping a little (atStep: at its bounds, into a ninth byte, negative),
// and long events between, whose numbers the encoder does not see;
// messages' events whose ids it keeps as pairs (pairMsgs); and fresh
// encoders, whose first time may be 0.
func TestBinaryEncoderIsAppendBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var c BinaryEncoder
	var got, want []byte
	seq, at := int64(0), clock.Time(1_700_000_000_000_000)
	for i := range 200000 {
		e := randomEvent(r)
		switch r.IntN(50) {
		case 0: // a jump: to around a varint length's bound, or negative, or anywhere
			seq = []int64{1<<6 - 3, 1<<13 - 5, 1<<20 - 7, 1<<27 - 9, -1 << 13, r.Int64() >> r.IntN(64)}[r.IntN(6)]
		case 1: // a small time, or a long event
			at = clock.Time(r.Int64N(1 << 20))
		case 2:
			e.Topic = strings.Repeat("x", maxSpanStrings+1)
		case 3: // a time whose steps reach a ninth byte, take the eighth first, or carry into it, or a negative time of eight bytes
			at = clock.Time([]int64{1<<55 - r.Int64N(1<<14), 1<<48 - r.Int64N(1<<10), 3<<48 - r.Int64N(1<<10), -1<<50 - r.Int64N(1<<20)}[r.IntN(4)])
		}
		if r.IntN(2) == 0 { // a message's event: a pair the encoder may keep, or one in the same slot, bare or a lease's
			e.Msg, e.Lease = pairMsgs[r.IntN(len(pairMsgs))], pairLeases[r.IntN(len(pairLeases))]
			e.Ended, e.Next = 0, 0
			if r.IntN(2) == 0 {
				e = Event{Kind: e.Kind, Client: e.Client, Msg: e.Msg, Lease: e.Lease, Ended: LeaseID(r.IntN(2)) * e.Lease, Reason: e.Reason}
			}
		}
		if r.IntN(2) == 0 {
			at += clock.Time(r.Int64N(1000))
		} else if r.IntN(20) == 0 { // a step at atStep's bounds, or carrying through a group
			at += clock.Time([]int64{atStepMax - 1, atStepMax, atStepMax + 1, 1<<6 - 1, 1 << 6, 1<<13 - 64}[r.IntN(6)])
		}
		if r.IntN(100) == 0 {
			at = clock.Time(1_700_000_000_000_000 + r.Int64N(1<<40))
		}
		e.Seq, e.At = seq, at
		seq++
		if i%1000 == 0 { // a fresh encoder too, at times for a stream that starts at time 0
			got, want, c = got[:0], want[:0], BinaryEncoder{}
			if i%2000 == 0 {
				e.At, at = 0, 1
			}
		}
		got, want = c.Append(got, &e), e.appendBinaryLong(want)
		if string(got) != string(want) {
			t.Fatalf("event %d %+v:\n got %x\nwant %x", i, e, got, want)
		}
	}
}

// TestBinaryEncoderTopicWord checks the encoder's kept topic word
// (BinaryEncoder.topic), which it writes for a Topic or Shown that is
// the very string it last wrote as a Topic (the same bytes in memory, of
// the same length): through streams whose topics and shown names are
// drawn from names of every length the word keeps and beyond, the same
// string, a copy of it elsewhere in memory, a prefix of it (its bytes'
// address, a shorter length) and empty strings with and without an
// address, the encoder writes what AppendBinary writes alone.
func TestBinaryEncoderTopicWord(t *testing.T) {
	orders := strings.Clone("orders")
	names := []string{
		"", orders[:0], "h", "hot", strings.Clone("hot"), orders, strings.Clone(orders), orders[:3], orders[:1],
		"q.fifo", "seven77", "eight888", "%RETRY%billing_orders",
	}
	r := rand.New(rand.NewPCG(11, 12))
	var c BinaryEncoder
	var got, want []byte
	for i := range 50000 {
		e := randomEvent(r)
		e.Topic, e.Shown = names[r.IntN(len(names))], names[r.IntN(len(names))]
		if r.IntN(4) == 0 {
			e.Shown = e.Topic
		}
		e.Seq = int64(i)
		if i%5000 == 0 {
			got, want, c = got[:0], want[:0], BinaryEncoder{}
		}
		got, want = c.Append(got, &e), e.appendBinaryLong(want)
		if string(got) != string(want) {
			t.Fatalf("event %d %+v:\n got %x\nwant %x", i, e, got, want)
		}
	}
}
