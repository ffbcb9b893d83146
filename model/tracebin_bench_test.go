package model

import (
	"math/rand/v2"
	"testing"

	"popsim/clock"
)

// benchEvents are events shaped like a default run's: growing sequence
// numbers and times (µs, up to minutes), message ids in the tens of
// thousands, most other fields zero or small.
func benchEvents() []Event {
	r := rand.New(rand.NewPCG(1, 2))
	evs := make([]Event, 4096)
	for i := range evs {
		e := Event{Seq: int64(500_000 + i), At: clock.Time(100_000_000 + 5000*i), Kind: EventKind(1 + r.IntN(int(evKinds)-1)),
			Client: int32(r.IntN(8)), Msg: MsgID(40_000 + r.IntN(1000))}
		if r.IntN(2) == 0 {
			e.Lease = LeaseID(90_000 + r.IntN(1000))
		}
		if r.IntN(2) == 0 {
			e.Topic, e.Queue, e.Offset = "TopicTest", int32(r.IntN(8)), int64(r.IntN(9000))
			e.Deadline = e.At.Add(clock.Duration(30_000_000))
		}
		evs[i] = e
	}
	return evs
}

func BenchmarkAppendBinary(b *testing.B) {
	evs := benchEvents()
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(buf) > 60<<10 {
			buf = buf[:0]
		}
		buf = evs[i%len(evs)].AppendBinary(buf)
	}
}
