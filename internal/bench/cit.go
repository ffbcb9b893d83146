package bench

import (
	"testing"

	"popsim/model"
	"popsim/pop"
)

// ChangeInvisibleTime measures renewals: each round renews the 32 oldest of
// the p.InFlight records (at least 32) to a one-day invisible time, so the
// in-flight set stays the same size and behaves as a FIFO of leases.
func ChangeInvisibleTime(b *testing.B, p Params) {
	n := max(p.InFlight, Batch)
	f, err := newFixture(p.Cache)
	if err != nil {
		fatalf(b, "%v", err)
	}
	ring, err := f.hold(n, true)
	if err != nil {
		fatalf(b, "%v", err)
	}
	brokerName := f.b.Config().BrokerName
	req := pop.ChangeInvisibleTimeRequest{ConsumerGroup: Group, Topic: Topic, InvisibleTime: longInvisible}
	p.Latency.setRound(Batch)
	m := startMeter(b)
	next := 0
	for b.Loop() {
		t0, s := p.Latency.begin()
		for i := 0; i < Batch; i++ {
			r := &ring[next]
			req.QueueID, req.Offset = r.qid, r.offset
			req.Handle = model.ReceiptHandle{CkQueueOffset: r.offset, PopTime: r.popTime, InvisibleTime: r.invisible,
				BrokerName: brokerName, QueueID: r.qid, QueueOffset: r.offset, CommitLogOffset: -1}
			res := f.b.ChangeInvisibleTime(f.now, &req)
			if res.Code != model.Success || !res.OldDeleted {
				fatalf(b, "changeInvisibleTime %s: %v %s oldDeleted=%v", req.Handle.String(), res.Code, res.Remark, res.OldDeleted)
			}
			r.popTime, r.invisible = res.Handle.PopTime, res.Handle.InvisibleTime
			next = (next + 1) % n
		}
		f.tick()
		p.Latency.end(t0, s)
	}
	m.report(Batch)
	if c := f.b.InFlightCount(); c != n {
		fatalf(b, "in flight after the run: %d, want %d", c, n)
	}
}
