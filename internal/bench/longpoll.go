package bench

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

const pollTime = 15 * clock.Second

// LongPollWake measures, per message, a long-polling pop that finds nothing
// and is suspended, the Put that wakes it, the re-run pop that returns the
// message, and the message's ack, with p.InFlight other records in flight.
func LongPollWake(b *testing.B, p Params) {
	f := steadyFixture(b, p)
	f.req.PollTime = pollTime
	p.Latency.setRound(Batch)
	slab := make([]model.Message, refillRounds*Batch)
	used := 0
	m := startMeter(b)
	for b.Loop() {
		if used == len(slab) {
			m.pause()
			f.dropConsumed()
			slab, used = make([]model.Message, refillRounds*Batch), 0
			m.resume()
		}
		t0, s := p.Latency.begin()
		for i := 0; i < Batch; i++ {
			f.wakeOne(b, &slab[used], int32(used%Queues))
			used++
		}
		f.tick()
		p.Latency.end(t0, s)
	}
	m.report(Batch)
	if c := f.b.InFlightCount(); c != p.InFlight {
		fatalf(b, "in flight after the run: %d, want %d", c, p.InFlight)
	}
}

func (f *fixture) wakeOne(b *testing.B, msg *model.Message, q int32) {
	res := &f.res
	if f.b.Pop(f.now, &f.req, res); res.Status != pop.PopSuspended {
		fatalf(b, "long-polling pop: %v %s, want SUSPENDED", res.Status, res.Remark)
	}
	msg.Topic, msg.QueueID, msg.BornTimestamp = Topic, q, f.nowMs()
	put := f.b.Put(f.now, msg)
	if put.Code != model.Success || len(put.Woken) != 1 {
		fatalf(b, "put: %v %s, woke %d", put.Code, put.Remark, len(put.Woken))
	}
	f.b.Pop(f.now, &put.Woken[0].Request, res)
	if len(res.Messages) != 1 {
		fatalf(b, "re-run pop: %v %s with %d messages, want 1", res.Status, res.Remark, len(res.Messages))
	}
	p := &res.Messages[0]
	ack := pop.NewAckRequest(Group, p.Message.Topic, &p.Handle)
	if r := f.b.Ack(f.now, &ack); r.Removed == 0 {
		fatalf(b, "ack %s: %v %s", p.Handle.String(), r.Code, r.Remark)
	}
}
