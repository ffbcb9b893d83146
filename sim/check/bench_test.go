package check

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

func BenchmarkCheckerSettledFlow(b *testing.B) {
	c := New(Options{Seed: 1})
	seq := int64(0)
	emit := func(at clock.Time, e model.Event) {
		e.Seq, e.At = seq, clock.Epoch+at
		seq++
		c.Observe(&e)
	}
	emit(0, model.Event{Kind: model.EvSubscribe, Client: 0, Group: "g", Topic: "t"})
	b.ReportAllocs()
	for i := 1; i <= b.N; i++ {
		at := clock.Time(i) * clock.Time(clock.Microsecond)
		m, l := model.MsgID(i), model.LeaseID(i)
		emit(at, model.Event{Kind: model.EvProduce, Client: 0, Msg: m, Topic: "t", Queue: 0, Offset: int64(i)})
		emit(at, model.Event{Kind: model.EvLease, Client: 0, Msg: m, Lease: l, Topic: "t", Queue: 0, Offset: int64(i), Deadline: clock.Epoch + at + clock.Time(clock.Minute)})
		emit(at, model.Event{Kind: model.EvDeliver, Client: 0, Msg: m, Lease: l, Topic: "t", Queue: 0, Offset: int64(i), Shown: "t"})
		emit(at, model.Event{Kind: model.EvConsumeStart, Client: 0, Msg: m, Lease: l})
		emit(at, model.Event{Kind: model.EvConsumeEnd, Client: 0, Msg: m, Lease: l, Reason: model.RSuccess})
		emit(at, model.Event{Kind: model.EvAck, Client: 0, Msg: m, Lease: l})
		emit(at, model.Event{Kind: model.EvAcked, Client: 0, Msg: m, Lease: l, Ended: l})
		if i%1000 == 0 {
			emit(at, model.Event{Kind: model.EvCommit, Client: -1, Group: "g", Topic: "t", Queue: 0, Offset: int64(i + 1)})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seq), "ns/event")
}
