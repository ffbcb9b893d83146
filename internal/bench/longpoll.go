package bench

import (
	"testing"

	"popsim/model"
	"popsim/pop"
)

const pollTimeMs = 15_000

// LongPollWake measures, per message, a long-polling pop that finds nothing
// and is suspended, the Put that wakes it, the re-run pop that returns the
// message, and the message's ack, with p.InFlight other records in flight.
func LongPollWake(b *testing.B, p Params) {
	f := steadyFixture(b, p)
	f.req.PollTime = pollTimeMs
	p.Latency.setRound(Batch)
	slab := make([]model.Message, refillRounds*Batch)
	used := 0
	ack := pop.AckRequest{ConsumerGroup: Group, Topic: Topic}
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
			f.wakeOne(b, &slab[used], int32(used%Queues), &ack)
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

func (f *fixture) wakeOne(b *testing.B, msg *model.Message, q int32, ack *pop.AckRequest) {
	f.req.BornTime = 0
	if r := f.b.Pop(f.now, &f.req); r.Status != pop.PopSuspended {
		fatalf(b, "long-polling pop: %v %s, want SUSPENDED", r.Status, r.Remark)
	}
	msg.Topic, msg.QueueID, msg.BornTimestamp = Topic, q, f.nowMs()
	put := f.b.Put(f.now, msg)
	if put.Code != model.Success || len(put.Woken) != 1 {
		fatalf(b, "put: %v %s, woke %d", put.Code, put.Remark, len(put.Woken))
	}
	res := f.b.Pop(f.now, &put.Woken[0].Request)
	if len(res.Handles) != 1 {
		fatalf(b, "re-run pop: %v %s with %d messages, want 1", res.Status, res.Remark, len(res.Handles))
	}
	h := &res.Handles[0]
	ack.QueueID, ack.Offset, ack.ExtraInfo = h.QueueID, h.QueueOffset, f.handleText(h)
	if r := f.b.Ack(f.now, ack); !r.Deleted {
		fatalf(b, "ack %s: %v %s", ack.ExtraInfo, r.Code, r.Remark)
	}
}
