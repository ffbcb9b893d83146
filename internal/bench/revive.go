package bench

import (
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// ReviveBatch is the number of records expiring per revive pass.
const ReviveBatch = 4096

const reviveInvisibleMs = 1000

// Revive measures one revive pass over ReviveBatch expired records, with
// p.InFlight other records in flight that do not expire. With the cache off
// the pass is Broker.Revive over the store; with the cache on it is
// Broker.CleanupCache reviving the records straight from the cache.
// writeCopy selects whether each revive writes its retry copy (the message
// is still there) or finds the message gone (write=none).
func Revive(b *testing.B, p Params, writeCopy bool) {
	f := steadyFixture(b, p)
	p.Latency.setRound(ReviveBatch)
	m := startMeter(b)
	for b.Loop() {
		m.pause()
		f.expireBatch(b, writeCopy)
		m.resume()
		t0, s := p.Latency.begin()
		got := f.revivePass(p.Cache)
		p.Latency.end(t0, s)
		if got != ReviveBatch {
			fatalf(b, "revive pass revived %d records, want %d", got, ReviveBatch)
		}
	}
	m.report(ReviveBatch)
	if c := f.b.InFlightCount(); c != p.InFlight {
		fatalf(b, "in flight after the run: %d, want %d", c, p.InFlight)
	}
}

// expireBatch pops ReviveBatch messages with a one-second invisible time and
// moves the clock past their deadline (untimed).
func (f *fixture) expireBatch(b *testing.B, writeCopy bool) {
	f.dropConsumed()
	f.dropRetryCopies()
	if err := f.stock(ReviveBatch / Queues); err != nil {
		fatalf(b, "%v", err)
	}
	req := f.req
	req.InvisibleTime = reviveInvisibleMs * clock.Millisecond
	res := &f.res
	for got := 0; got < ReviveBatch; {
		f.b.Pop(f.now, &req, res)
		if res.Status != pop.PopFound {
			fatalf(b, "pop for revive: %v %s", res.Status, res.Remark)
		}
		got += len(res.Messages)
	}
	if !writeCopy {
		f.dropConsumed()
	}
	f.now = f.now.Add((reviveInvisibleMs + 51) * clock.Millisecond)
}

// revivePass runs the revive (or cache cleanup) and counts revivals.
func (f *fixture) revivePass(cache bool) int {
	if cache {
		return len(f.b.CleanupCache(f.now).Revives)
	}
	return len(f.b.Revive(f.now).Revivals)
}

// dropRetryCopies truncates the retry topic, so retry copies are garbage.
func (f *fixture) dropRetryCopies() {
	rt := model.BuildPopRetryTopicV1(Topic, Group)
	if o := f.b.MaxOffset(rt, 0); o > 0 {
		_, _ = f.b.Truncate(rt, 0, o)
	}
}
