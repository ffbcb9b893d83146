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
	popAckLoop(b, p, (*fixture).ackBatch)
}

// popAckLoop runs PopAck32's rounds, each a pop of Batch messages then
// ack acking them, with untimed refills, and checks the in-flight count
// is back to p.InFlight at the end.
func popAckLoop(b *testing.B, p Params, ack func(*fixture, *pop.PopResult) error) {
	f := steadyFixture(b, p)
	if err := f.stock(refillRounds * Batch / Queues * 2); err != nil {
		fatalf(b, "%v", err)
	}
	p.Latency.setRound(Batch)
	m := startMeter(b)
	for i := 1; b.Loop(); i++ {
		t0, s := p.Latency.begin()
		res, err := f.popBatch()
		if err == nil {
			err = ack(f, res)
		}
		if err != nil {
			fatalf(b, "%v", err)
		}
		f.tick()
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

// popBatch pops one batch of Batch messages into the fixture's reused
// result buffer.
func (f *fixture) popBatch() (*pop.PopResult, error) {
	res := &f.res
	f.b.Pop(f.now, &f.req, res)
	if len(res.Messages) != Batch {
		return res, fmt.Errorf("bench: pop returned %d messages (%v %s), want %d", len(res.Messages), res.Status, res.Remark, Batch)
	}
	return res, nil
}

// ackBatch acks every message of res in pop order, with the decoded
// handle the pop returned (no receipt-handle text is built or parsed).
func (f *fixture) ackBatch(res *pop.PopResult) error {
	for i := range res.Messages {
		p := &res.Messages[i]
		ack := pop.NewAckRequest(Group, p.Message.Topic, &p.Handle)
		if r := f.b.Ack(f.now, &ack); r.Code != model.Success || r.Removed == 0 {
			return fmt.Errorf("bench: ack %s: %v %s removed=%d", p.Handle.String(), r.Code, r.Remark, r.Removed)
		}
	}
	return nil
}
