package bench

import (
	"fmt"
	"testing"

	"popsim/model"
	"popsim/pop"
)

// Params configures one benchmark body.
type Params struct {
	// InFlight is the number of other records kept in flight in steady state.
	InFlight int
	// Cache turns on EnablePopBufferMerge (the KV path's in-memory cache).
	Cache bool
	// Latency, when set, samples wall-clock time per round.
	Latency *Latency
}

// refillRounds is how many rounds run between two (untimed) refills.
const refillRounds = 1024

// PopAck32 measures one pop of 32 messages and 32 single acks in pop order
// per round, with p.InFlight other records in flight.
func PopAck32(b *testing.B, p Params) {
	f := steadyFixture(b, p)
	if err := f.stock(refillRounds * Batch / Queues * 2); err != nil {
		fatalf(b, "%v", err)
	}
	p.Latency.setRound(Batch)
	ack := pop.AckRequest{ConsumerGroup: Group, Topic: Topic}
	m := startMeter(b)
	for i := 1; b.Loop(); i++ {
		t0, s := p.Latency.begin()
		f.popAckRound(b, &ack)
		p.Latency.end(t0, s)
		if i%refillRounds == 0 {
			m.pause()
			f.dropConsumed()
			if err := f.stock(refillRounds * Batch / Queues * 2); err != nil {
				fatalf(b, "%v", err)
			}
			m.resume()
		}
	}
	m.report(Batch)
	if n := f.b.InFlightCount(); n != p.InFlight {
		fatalf(b, "in flight after the run: %d, want %d", n, p.InFlight)
	}
}

func (f *fixture) popAckRound(b *testing.B, ack *pop.AckRequest) {
	res, err := f.popBatch()
	if err == nil {
		err = f.ackBatch(&res, ack)
	}
	if err != nil {
		fatalf(b, "%v", err)
	}
	f.tick()
}

// popBatch pops one batch of Batch messages.
func (f *fixture) popBatch() (pop.PopResult, error) {
	f.req.BornTime = 0
	res := f.b.Pop(f.now, &f.req)
	if len(res.Handles) != Batch {
		return res, fmt.Errorf("bench: pop returned %d messages (%v %s), want %d", len(res.Handles), res.Status, res.Remark, Batch)
	}
	return res, nil
}

// ackBatch acks every message of res in pop order.
func (f *fixture) ackBatch(res *pop.PopResult, ack *pop.AckRequest) error {
	for i := range res.Handles {
		h := &res.Handles[i]
		ack.QueueID, ack.Offset = h.QueueID, h.QueueOffset
		ack.Topic = h.RealTopic(Topic, Group)
		ack.ExtraInfo = f.handleText(h)
		if r := f.b.Ack(f.now, ack); r.Code != model.Success || !r.Deleted {
			return fmt.Errorf("bench: ack %s: %v %s deleted=%v", ack.ExtraInfo, r.Code, r.Remark, r.Deleted)
		}
	}
	return nil
}
