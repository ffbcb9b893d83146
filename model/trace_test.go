package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/clock"
)

// randomEvent draws an event that the text form can carry: Queue and
// Offset only with a Topic, names without spaces.
func randomEvent(r *rand.Rand) Event {
	names := []string{"", "orders", "%RETRY%billing_orders", "%DLQ%billing", "q.fifo"}
	e := Event{
		Seq: r.Int64N(1 << 40), At: clock.Epoch + clock.Time(r.Int64N(1<<42)) - clock.Time(r.Int64N(1<<20)),
		Kind: EventKind(1 + r.IntN(int(evKinds)-1)), Client: int32(r.IntN(20)) - 1,
		Group: names[r.IntN(2)*2%3], Msg: MsgID(r.Uint32()), Lease: LeaseID(r.Uint64() >> r.IntN(64)),
		Ended: LeaseID(r.IntN(3)), Next: LeaseID(r.IntN(3) * 99),
		Attempt: int32(r.IntN(5)), Code: int32(r.IntN(300)) - 1, Count: int32(r.IntN(40)),
		Reason: Reason(r.IntN(int(reasons))), Shown: names[r.IntN(len(names))],
	}
	if t := names[r.IntN(len(names))]; t != "" {
		e.Topic, e.Queue, e.Offset = t, int32(r.IntN(9))-1, r.Int64N(1<<33)-1
	}
	if r.IntN(2) == 0 {
		e.Deadline = e.At + clock.Time(r.Int64N(int64(clock.Hour)))
	}
	if r.IntN(2) == 0 {
		e.Span = clock.Duration(r.Int64N(int64(clock.Hour))) - clock.Duration(r.IntN(2))*clock.Second
	}
	return e
}

func TestEventTextRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		e := randomEvent(r)
		line := e.String()
		got, err := ParseEvent(line)
		if err != nil {
			t.Fatalf("ParseEvent(%q): %v", line, err)
		}
		if got != e {
			t.Fatalf("round trip of %q:\n got %+v\nwant %+v", line, got, e)
		}
	}
}

func TestEventBinaryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var buf []byte
	var want []Event
	for i := 0; i < 5000; i++ {
		e := randomEvent(r)
		want = append(want, e)
		buf = e.AppendBinary(buf)
	}
	for i, off := 0, 0; i < len(want); i++ {
		got, n, err := DecodeEvent(buf[off:])
		if err != nil || got != want[i] {
			t.Fatalf("event %d: got %+v, %v; want %+v", i, got, err, want[i])
		}
		if seq, ok := EventSeq(buf[off:]); !ok || seq != want[i].Seq {
			t.Fatalf("event %d: EventSeq %d, %v; want %d", i, seq, ok, want[i].Seq)
		}
		off += n
	}
	if _, ok := EventSeq(nil); ok {
		t.Fatal("EventSeq of no bytes decodes")
	}
	if _, ok := EventSeq([]byte{0x80}); ok {
		t.Fatal("EventSeq of a cut varint decodes")
	}
}

func TestEventTextForm(t *testing.T) {
	e := Event{Seq: 7, At: clock.Epoch + clock.Time(12*clock.Second+345), Kind: EvLease, Client: 3, Msg: 17, Lease: 42,
		Topic: "orders", Queue: 2, Offset: 881, Deadline: clock.Epoch + clock.Time(72*clock.Second)}
	want := "7 12.000345 lease c=3 m=17 l=42 t=orders q=2 o=881 dl=72.000000"
	if got := e.String(); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	e = Event{Seq: 8, At: clock.Epoch, Kind: EvRenew, Client: 0, Msg: 1, Lease: 2, Span: 30 * clock.Second, Reason: RNack}
	if got, want := e.String(), "8 0.000000 renew c=0 m=1 l=2 span=30s r=nack"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestParseEventErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"1 0.000000 lease", "want <seq> <time> <kind>"},
		{"x 0.000000 lease c=1", "seq"},
		{"1 0.5 lease c=1", "six decimals"},
		{"1 0.000000 bogus c=1", "unknown event kind"},
		{"1 0.000000 lease m=1", "no client"},
		{"1 0.000000 lease c=1 q=3", "without a topic"},
		{"1 0.000000 lease c=1 zz=3", "unknown field"},
		{"1 0.000000 lease c=1 c=2", "twice"},
		{"1 0.000000 lease c=1 r=maybe", "unknown reason"},
		{"1 0.000000 lease c=1 span=3m", "want seconds"},
		{"1 0.000000 lease c=1 m=-4", "not a number"},
		{"1 0.000000 lease c=1 m", "want key=value"},
	} {
		_, err := ParseEvent(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEvent(%q) = %v, want an error containing %q", tc.line, err, tc.want)
		}
	}
}

func TestKindAndReasonNames(t *testing.T) {
	for k := EvNone + 1; k < evKinds; k++ {
		if got, ok := ParseEventKind(k.String()); !ok || got != k {
			t.Errorf("kind %d %q does not parse back", k, k)
		}
	}
	for r := RNone + 1; r < reasons; r++ {
		if got, ok := ParseReason(r.String()); !ok || got != r {
			t.Errorf("reason %d %q does not parse back", r, r)
		}
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add("7 12.000345 lease c=3 m=17 l=42 t=orders q=2 o=881 dl=72.000000")
	f.Add("8 0.000000 renew c=0 m=1 l=2 span=30s r=nack")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseEvent(line)
		if err != nil {
			return
		}
		again, err := ParseEvent(e.String())
		if err != nil || again != e {
			t.Fatalf("%q parsed to %+v, whose text %q parses to %+v, %v", line, e, e.String(), again, err)
		}
	})
}

// TestEventBinaryMatchesReference: random events, events at the integer
// extremes (the longest varints) and long strings encode to the
// reference's bytes, appended to buffers with and without room to spare.
func TestEventBinaryMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	long := strings.Repeat("x", 300)
	extreme := func(r *rand.Rand) Event {
		i64 := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1, 63, 64, -64, -65, 127, 128, 1 << 62}
		i32 := []int32{math.MinInt32, math.MaxInt32, -1, 0, 1, 63, 64, -65}
		u64 := []uint64{0, 1, 1<<63 - 1, 1 << 63, math.MaxUint64}
		for k := 7; k < 64; k += 7 { // every varint length's bounds
			u64 = append(u64, 1<<k-1, 1<<k, 1<<k+1)
			i64 = append(i64, 1<<(k-1)-1, 1<<(k-1), -1<<(k-1), -1<<(k-1)-1)
		}
		pick64 := func() int64 { return i64[r.IntN(len(i64))] }
		pick32 := func() int32 { return i32[r.IntN(len(i32))] }
		pickU := func() uint64 { return u64[r.IntN(len(u64))] }
		names := []string{"", "a", long}
		return Event{Seq: pick64(), At: clock.Time(pick64()), Kind: EventKind(r.Uint32()), Client: pick32(),
			Group: names[r.IntN(3)], Msg: MsgID(pickU()), Lease: LeaseID(pickU()), Ended: LeaseID(pickU()), Next: LeaseID(pickU()),
			Topic: names[r.IntN(3)], Queue: pick32(), Offset: pick64(), Attempt: pick32(), Deadline: clock.Time(pick64()),
			Span: clock.Duration(pick64()), Code: pick32(), Count: pick32(), Reason: Reason(r.Uint32()), Shown: names[r.IntN(3)]}
	}
	var got, want []byte
	for i := 0; i < 20000; i++ {
		e := randomEvent(r)
		switch i % 3 {
		case 1:
			e = extreme(r)
		case 2: // most fields zero, as most events' are (AppendBinary writes runs of zeros at once)
			z := func(f func()) {
				if r.IntN(4) != 0 {
					f()
				}
			}
			z(func() { e.Client = 0 })
			z(func() { e.Msg = 0 })
			z(func() { e.Lease = 0 })
			z(func() { e.Ended = 0 })
			z(func() { e.Next = 0 })
			z(func() { e.Queue = 0 })
			z(func() { e.Offset = 0 })
			z(func() { e.Attempt = 0 })
			z(func() { e.Deadline = 0 })
			z(func() { e.Span = 0 })
			z(func() { e.Code = 0 })
			z(func() { e.Count = 0 })
			z(func() { e.Reason = 0 })
			if r.IntN(2) == 0 {
				e.Lease, e.Ended, e.Next = 0, 0, 0
			}
			if r.IntN(2) == 0 {
				e.Queue, e.Offset, e.Attempt, e.Deadline, e.Span, e.Code, e.Count = 0, 0, 0, 0, 0, 0, 0
			}
		}
		if i%7 == 0 { // fresh buffers with little room: AppendBinary must grow them
			tail := want[len(want)-min(len(want), 3):]
			got, want = append([]byte(nil), tail...), append([]byte(nil), tail...)
		}
		got, want = e.AppendBinary(got), e.appendBinaryLong(want)
		if string(got) != string(want) {
			t.Fatalf("event %d %+v:\n got %x\nwant %x", i, e, got, want)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	e := Event{Seq: 7, Kind: EvLease, Client: 3, Msg: 17, Lease: 42, Topic: "orders", Queue: 2, Offset: 881}
	f.Add(e.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, n, err := DecodeEvent(b)
		if err != nil {
			return
		}
		if enc := e.AppendBinary(nil); n > len(b) || string(enc) != string(b[:n]) && len(enc) > n {
			t.Fatalf("decoded %+v from %d bytes but it encodes to %d", e, n, len(enc))
		}
	})
}

// Kinds are appended, never renumbered: a saved binary trace keeps its
// meaning. The last kinds of each release are pinned here.
func TestKindNumbersStable(t *testing.T) {
	for _, c := range []struct {
		k    EventKind
		want uint8
		name string
	}{
		{EvPhase, 1, "phase"}, {EvLeaseLost, 30, "lease-lost"}, {EvCommit, 43, "commit"}, {EvLeaseReopened, 44, "lease-reopened"},
	} {
		if uint8(c.k) != c.want || c.k.String() != c.name {
			t.Errorf("kind %q is %d, want %q = %d", c.k, c.k, c.name, c.want)
		}
	}
}
