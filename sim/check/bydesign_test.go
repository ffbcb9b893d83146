package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"popsim/model"
)

// Duplicates RocketMQ makes by design pass, attributed to their cause.
func TestByDesign(t *testing.T) {
	cases := []struct {
		name        string
		build       func(tr *trace)
		dups, redel map[string]int64
	}{
		{"ack after revive (slow consumer)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(10, 0, "m1", topic, 0, 0, 1000)
			tr.simple(10, model.EvConsumeStart, 0, "m1", "")
			tr.revive(1100, "m1", 0, 1)
			h1 := tr.deliver(1150, 1, "m1", retryTopic, 0, 0, 1000)
			tr.simple(1150, model.EvConsumeStart, 1, "m1", "")
			tr.simple(1200, model.EvConsumeEnd, 0, "m1", "success")
			tr.ack(1210, 0, "m1", h0, 0) // late: the record was revived
			tr.simple(1300, model.EvConsumeEnd, 1, "m1", "success")
			tr.ack(1310, 1, "m1", h1, 1)
		}, map[string]int64{CauseLeaseExpiry: 1}, map[string]int64{CauseLeaseExpiry: 1}},
		{"stale handle after renew", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.simple(0, model.EvConsumeStart, 0, "m1", "")
			tr.change(500, 0, "m1", h0, 30000, 1)
			tr.simple(600, model.EvConsumeEnd, 0, "m1", "success")
			tr.ack(700, 0, "m1", h0, 0) // the old handle deletes nothing
			tr.revive(30600, "m1", 0, 1)
			h1 := tr.deliver(30700, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(30700, 30800, 1, "m1", "success")
			tr.ack(30800, 1, "m1", h1, 1)
		}, map[string]int64{CauseStaleHandle: 1}, map[string]int64{CauseStaleHandle: 1}},
		{"renew after revive", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.simple(0, model.EvConsumeStart, 0, "m1", "")
			tr.revive(1100, "m1", 0, 1)
			tr.change(1150, 0, "m1", h0, 30000, 0) // an extra record
			h1 := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h1, 1)
			tr.simple(1400, model.EvCrash, 0, "", "")
			tr.revive(31200, "m1", 1, 2)
			h2 := tr.deliver(31300, 2, "m1", retryTopic, 0, 1, 1000)
			tr.consume(31300, 31400, 2, "m1", "success")
			tr.ack(31400, 2, "m1", h2, 1)
		}, map[string]int64{CauseRenewAfterRevive: 1}, map[string]int64{CauseLeaseExpiry: 1, CauseRenewAfterRevive: 1}},
		{"consumer crash before the ack", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "success")
			tr.simple(200, model.EvCrash, 0, "", "")
			tr.simple(300, model.EvRestart, 0, "", "")
			tr.revive(1100, "m1", 0, 1)
			h := tr.deliver(1200, 0, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 0, "m1", "success")
			tr.ack(1300, 0, "m1", h, 1)
		}, map[string]int64{CauseConsumerCrash: 1}, map[string]int64{CauseConsumerCrash: 1}},
		{"lost ack", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "success")
			tr.ackLost(200, 0, "m1", h0)
			tr.revive(1100, "m1", 0, 1)
			h1 := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h1, 1)
		}, map[string]int64{CauseAckLost: 1}, map[string]int64{CauseAckLost: 1}},
		{"ack response lost is not a cause: the record is gone", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "success")
			tr.ack(200, 0, "m1", h0, 1)
			tr.add(200, model.Event{Kind: model.EvAckResponseLost, Client: 0, Msg: "m1", Handle: h0, Queue: -1, Offset: -1, N: 1})
			tr.simple(5000, model.EvPhase, -1, "", "done")
		}, map[string]int64{}, map[string]int64{}},
		{"broker restart re-pops from the commit offset", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.consume(0, 100, 0, "m1", "success")
			tr.simple(200, model.EvBrokerRestart, -1, "", "")
			h1 := tr.deliver(300, 1, "m1", topic, 0, 0, 60000) // inside client 0's lease
			tr.simple(300, model.EvConsumeStart, 1, "m1", "")
			tr.ack(400, 0, "m1", h0, 1)
			tr.simple(500, model.EvConsumeEnd, 1, "m1", "success")
			tr.ack(600, 1, "m1", h1, 1)
		}, map[string]int64{CauseBrokerRestart: 1}, map[string]int64{CauseBrokerRestart: 1}},
		{"broker restart with the cache: the offset-only delete hits the other record", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			h1 := tr.deliver(200, 1, "m1", topic, 0, 0, 60000)
			tr.consume(250, 260, 0, "m1", "success")
			tr.ack(300, 0, "m1", h0, 1) // the broker deleted client 1's cached record
			tr.consume(400, 400, 1, "m1", "success")
			tr.ack(500, 1, "m1", h1, 0)
			tr.revive(1100, "m1", 0, 1) // client 0's stored record revives
			h2 := tr.deliver(1200, 2, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 2, "m1", "success")
			tr.ack(1300, 2, "m1", h2, 1)
		}, map[string]int64{CauseBrokerRestart: 2}, map[string]int64{CauseBrokerRestart: 2}},
		{"an ack still in flight at the revive is late, not lost", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 990, 0, "m1", "success")
			tr.add(995, model.Event{Kind: model.EvAckSent, Client: 0, Msg: "m1", Handle: h0, Queue: -1, Offset: -1})
			tr.revive(1060, "m1", 0, 1)
			tr.add(1070, model.Event{Kind: model.EvAckAccepted, Client: 0, Msg: "m1", Handle: h0, Queue: -1, Offset: -1})
			h1 := tr.deliver(1100, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1100, 1200, 1, "m1", "success")
			tr.ack(1200, 1, "m1", h1, 1)
		}, map[string]int64{CauseLeaseExpiry: 1}, map[string]int64{CauseLeaseExpiry: 1}},
		{"an ack that never arrives is lost", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 990, 0, "m1", "success")
			tr.add(995, model.Event{Kind: model.EvAckSent, Client: 0, Msg: "m1", Handle: h0, Queue: -1, Offset: -1})
			tr.revive(1060, "m1", 0, 1)
			h1 := tr.deliver(1100, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1100, 1200, 1, "m1", "success")
			tr.ack(1200, 1, "m1", h1, 1)
		}, map[string]int64{CauseAckLost: 1}, map[string]int64{CauseAckLost: 1}},
		{"reconsume later is a retry, not a duplicate", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "later")
			tr.change(110, 0, "m1", h0, 10000, 1)
			tr.revive(10200, "m1", 0, 1)
			h1 := tr.deliver(10300, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(10300, 10400, 1, "m1", "success")
			tr.ack(10400, 1, "m1", h1, 1)
		}, map[string]int64{}, map[string]int64{CauseReconsumeLater: 1}},
		{"clock skew: the client gave up before the broker's deadline", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "success")
			tr.simple(200, model.EvExpiredLocal, 0, "m1", "after")
			tr.revive(1100, "m1", 0, 1)
			h := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h, 1)
		}, map[string]int64{CauseClockSkew: 1}, map[string]int64{CauseClockSkew: 1}},
		{"a revive retried after a failed write comes back later", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.add(1100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Deadline: abs(11100)})
			tr.revive(11200, "m1", 0, 1)
			h := tr.deliver(11300, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(11300, 11400, 1, "m1", "success")
			tr.ack(11400, 1, "m1", h, 1)
		}, map[string]int64{}, map[string]int64{CauseLeaseExpiry: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			tc.build(tr)
			r, _ := run(t, tr, drained)
			if len(r.Violations) > 0 {
				t.Fatalf("by-design trace broke invariants:\n%s", dump(r))
			}
			if r.Acked != 1 || r.Lost != 0 {
				t.Fatalf("acked %d lost %d, want 1 and 0", r.Acked, r.Lost)
			}
			var sum int64
			for _, n := range tc.dups {
				sum += n
			}
			opt := cmpopts.EquateEmpty()
			if diff := cmp.Diff(tc.dups, r.DuplicatesByCause, opt); diff != "" || r.Duplicates != sum {
				t.Errorf("duplicates %d by cause (-want +got):\n%s", r.Duplicates, diff)
			}
			if diff := cmp.Diff(tc.redel, r.RedeliveriesByCause, opt); diff != "" {
				t.Errorf("redeliveries by cause (-want +got):\n%s", diff)
			}
		})
	}
}

// DLQ and named drops settle the ledger; a late revive drop of a settled
// message is not a loss.
func TestSettledOtherwise(t *testing.T) {
	tr := &trace{}
	tr.produce(0, "m1", 0, 0)
	tr.produce(0, "m2", 0, 1)
	tr.produce(0, "m3", 0, 2)
	tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
	tr.deliver(0, 0, "m2", topic, 0, 1, 1000)
	h := tr.deliver(0, 0, "m3", topic, 0, 2, 1000)
	tr.simple(10, model.EvDLQ, 0, "m1", "")
	tr.simple(10, model.EvDrop, 0, "m2", "max-reconsume-ack")
	tr.consume(10, 10, 0, "m3", "success")
	tr.change(15, 0, "m3", h, 30000, 1)
	tr.ack(20, 0, "m3", h, 0) // the stale handle deletes nothing: a record stays
	tr.simple(30100, model.EvReviveDropped, -1, "m3", "")
	r, _ := run(t, tr, drained)
	if len(r.Violations) > 0 {
		t.Fatalf("violations:\n%s", dump(r))
	}
	want := Report{Produced: 3, Acked: 1, DLQ: 1, Dropped: 1, Deliveries: 3}
	got := Report{Produced: r.Produced, Acked: r.Acked, DLQ: r.DLQ, Dropped: r.Dropped, Deliveries: r.Deliveries}
	if diff := cmp.Diff(want, got); diff != "" || r.DroppedByPolicy["max-reconsume-ack"] != 1 {
		t.Fatalf("ledger (-want +got):\n%s\nby policy %v", diff, r.DroppedByPolicy)
	}
}

// A suspended pop answered within the slack is fine; so is an arrival
// that is served by another consumer's delivery.
func TestWakeupServed(t *testing.T) {
	tr := &trace{}
	tr.popSuspended(0, 0)
	tr.produce(100, "m1", 0, 0)
	tr.popResponse(150, 0, model.Success, 1)
	h := tr.deliver(150, 0, "m1", topic, 0, 0, 1000)
	tr.consume(150, 160, 0, "m1", "success")
	tr.ack(170, 0, "m1", h, 1)
	tr.popSuspended(200, 0)
	tr.popSuspended(200, 1)
	tr.produce(300, "m2", 1, 0)
	h = tr.deliver(350, 2, "m2", topic, 1, 0, 1000) // served elsewhere
	tr.consume(350, 360, 2, "m2", "success")
	tr.ack(370, 2, "m2", h, 1)
	tr.simple(20000, model.EvCrash, 0, "", "")
	tr.produce(20100, "m3", 2, 0)                       // only client 1 waits, on all queues
	tr.simple(20150, model.EvBrokerRestart, -1, "", "") // the suspended request is gone
	tr.simple(20300, model.EvPhase, -1, "", "done")
	r, _ := run(t, tr, drained)
	if got := invariants(r); len(got) != 1 || got[0] != InvLost || r.Lost != 1 {
		t.Fatalf("want only m3 lost (no missed wakeup), got:\n%s", dump(r))
	}
}

// Take the cause away and the same duplicates become violations.
func TestCauseEventsMatter(t *testing.T) {
	cases := []struct {
		name  string
		build func(tr *trace)
		want  []string
	}{
		{"re-pop inside a live lease without a restart", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.consume(0, 100, 0, "m1", "success")
			h1 := tr.deliver(300, 1, "m1", topic, 0, 0, 60000)
			tr.ack(400, 0, "m1", h0, 1)
			tr.consume(400, 500, 1, "m1", "success")
			tr.ack(600, 1, "m1", h1, 1)
		}, []string{InvConcurrentLease, InvUnexplained}},
		{"a second copy without the renew that would explain it", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.revive(1100, "m1", 0, 1)
			h1 := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h1, 1)
			tr.revive(31200, "m1", 1, 2)
			h2 := tr.deliver(31300, 2, "m1", retryTopic, 0, 1, 1000)
			tr.consume(31300, 31400, 2, "m1", "success")
			tr.ack(31400, 2, "m1", h2, 1)
		}, []string{InvUnexplained}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			tc.build(tr)
			r, _ := run(t, tr, drained)
			if diff := cmp.Diff(tc.want, invariants(r)); diff != "" {
				t.Fatalf("invariants (-want +got):\n%s\n%s", diff, dump(r))
			}
		})
	}
}
