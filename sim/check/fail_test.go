package check

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"popsim/model"
)

// Every invariant must be able to fail: each trace here breaks one (or a
// known few, when one defect necessarily shows in two ways).
func TestViolations(t *testing.T) {
	cases := []struct {
		name  string
		build func(tr *trace)
		final Final
		want  []string
	}{
		{"lost: never consumed", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
		}, drained, []string{InvLost}},
		{"lost: consumed, never acked, never revived", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(10, 0, "m1", topic, 0, 0, 1000)
			tr.consume(10, 20, 0, "m1", "success")
		}, drained, []string{InvLost}},
		{"lost: an ack after a failed consumption does not settle", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliver(10, 0, "m1", topic, 0, 0, 1000)
			tr.consume(10, 20, 0, "m1", "exception")
			tr.ack(30, 0, "m1", h, 1)
		}, drained, []string{InvLost}},
		{"lost: revive dropped after failed writes (#10667)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(10, 0, "m1", topic, 0, 0, 1000)
			tr.simple(1100, model.EvReviveDropped, -1, "m1", "")
		}, drained, []string{InvLost}},
		{"lost: same-deadline renew deletes the new record (#10276)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliver(0, 0, "m1", topic, 0, 0, 10000)
			tr.consume(0, 100, 0, "m1", "later")
			tr.change(5000, 0, "m1", h, 5000, 1) // new deadline == old deadline
			tr.simple(30000, model.EvPhase, -1, "", "done")
		}, drained, []string{InvLost}},
		{"presented-topic: the retry topic leaks to the client (#11195)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.revive(1100, "m1", 0, 1)
			h := tr.deliverShown(1200, 1, "m1", retryTopic, 0, 0, 1000, "topic="+retryTopic)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h, 1)
		}, drained, []string{InvPresentedTopic}},
		{"presented-topic: the delivery does not say what the client saw", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliverShown(0, 0, "m1", topic, 0, 0, 1000, "")
			tr.consume(0, 10, 0, "m1", "success")
			tr.ack(20, 0, "m1", h, 1)
		}, drained, []string{InvPresentedTopic}},
		{"delivery-location: never produced", func(tr *trace) {
			tr.deliver(0, 0, "ghost", topic, 0, 0, 1000)
		}, drained, []string{InvDeliveryLocation}},
		{"delivery-location: wrong offset", func(tr *trace) {
			tr.produce(0, "m1", 0, 5)
			h := tr.deliver(0, 0, "m1", topic, 0, 6, 1000)
			tr.consume(0, 10, 0, "m1", "success")
			tr.ack(20, 0, "m1", h, 1)
		}, drained, []string{InvDeliveryLocation}},
		{"unexplained-redelivery: re-pop without a broker restart", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			h := tr.deliver(2000, 1, "m1", topic, 0, 0, 1000)
			tr.consume(2000, 2010, 1, "m1", "success")
			tr.ack(2020, 1, "m1", h, 1)
		}, drained, []string{InvUnexplained}},
		{"unexplained-redelivery and concurrent-lease: revive before the deadline", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.revive(1000, "m1", 0, 1)
			h1 := tr.deliver(1100, 1, "m1", retryTopic, 0, 0, 60000)
			tr.consume(1100, 1200, 1, "m1", "success")
			tr.ack(1200, 1, "m1", h1, 1)
			tr.simple(1300, model.EvConsumeStart, 0, "m1", "")
			tr.simple(1300, model.EvConsumeEnd, 0, "m1", "success")
			tr.ack(1300, 0, "m1", h0, 1)
		}, drained, []string{InvConcurrentLease, InvUnexplained}},
		{"renew-ignored and concurrent-lease: the renewed-away record stays", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.change(500, 0, "m1", h0, 30000, 0) // should have deleted h0's record
			tr.revive(1100, "m1", 0, 1)
			h1 := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1300, 1, "m1", "success")
			tr.ack(1300, 1, "m1", h1, 1)
		}, drained, []string{InvConcurrentLease, InvRenewIgnored}},
		{"ack-ignored: an accepted ack deletes nothing, then the message comes back", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 10000)
			tr.consume(0, 50, 0, "m1", "success")
			tr.ack(100, 0, "m1", h0, 0)
			tr.revive(10100, "m1", 0, 1)
			h1 := tr.deliver(10200, 1, "m1", retryTopic, 0, 0, 10000)
			tr.consume(10200, 10300, 1, "m1", "success")
			tr.ack(10300, 1, "m1", h1, 1)
		}, drained, []string{InvAckIgnored, InvUnexplained}},
		{"ack-location: the ack names another offset", func(tr *trace) {
			tr.produce(0, "m1", 0, 5)
			tr.deliver(0, 0, "m1", topic, 0, 5, 1000)
			tr.consume(0, 10, 0, "m1", "success")
			tr.ack(20, 0, "m1", handle(0, 1000, topic, 0, 9), 1)
		}, drained, []string{InvAckLocation, InvLost}},
		{"ack-location: a client acks a lease it never got", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 10, 0, "m1", "success")
			tr.ack(20, 3, "m1", h, 1)
			tr.ack(30, 0, "m1", h, 0)
		}, drained, []string{InvAckLocation}},
		{"bad-handle", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(0, model.Event{Kind: model.EvDeliver, Client: 0, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Handle: "not a handle", Deadline: abs(1000), Detail: "topic=" + topic})
			tr.simple(10, model.EvDLQ, 0, "m1", "")
		}, drained, []string{InvBadHandle}},
		{"unnamed-drop", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.simple(10, model.EvDrop, 0, "m1", "")
		}, drained, []string{InvUnnamedDrop}},
		{"missed-wakeup: a produce does not wake a suspended pop", func(tr *trace) {
			tr.popSuspended(0, 0)
			tr.produce(100, "m1", 0, 0)
			tr.popResponse(15000, 0, model.Success, 1)
			h := tr.deliver(15000, 0, "m1", topic, 0, 0, 1000)
			tr.consume(15000, 15010, 0, "m1", "success")
			tr.ack(15020, 0, "m1", h, 1)
		}, drained, []string{InvMissedWakeup}},
		{"missed-wakeup: a V1 retry copy does not wake a suspended pop (#9632)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 100, 0, "m1", "later")
			tr.popSuspended(200, 1)
			v1 := model.RetryTopicV1(group, topic)
			tr.add(1100, model.Event{Kind: model.EvRevive, Client: -1, Msg: "m1", Topic: v1, Queue: 0, Offset: 0, Attempt: 1})
			tr.popResponse(15200, 1, model.Success, 1)
			h := tr.deliver(15200, 1, "m1", v1, 0, 0, 1000)
			tr.consume(15200, 15300, 1, "m1", "success")
			tr.ack(15300, 1, "m1", h, 1)
		}, drained, []string{InvMissedWakeup}},
		{"no-drain", func(tr *trace) {}, Final{}, []string{InvNoDrain}},
		{"commit-offset-lag (#10949)", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 10, 0, "m1", "success")
			tr.ack(20, 0, "m1", h, 1)
		}, Final{Drained: true, CommitLag: []QueueLag{{Group: group, Topic: topic, Queue: 0, Lag: 1}, {Group: group, Topic: topic, Queue: 1, Lag: 0}}}, []string{InvCommitLag}},
		{"trace-order", func(tr *trace) {
			tr.simple(100, model.EvPhase, -1, "", "safety")
			tr.simple(50, model.EvPhase, -1, "", "liveness")
		}, drained, []string{InvTraceOrder}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			tc.build(tr)
			r, _ := run(t, tr, tc.final)
			if diff := cmp.Diff(tc.want, invariants(r)); diff != "" {
				t.Fatalf("invariants (-want +got):\n%s\nviolations:\n%s", diff, dump(r))
			}
			for _, v := range r.Violations {
				if v.Seed != 42 || v.Replay != "popsim run --seed 42" || v.Detail == "" {
					t.Errorf("violation without seed, replay or detail: %+v", v)
				}
			}
		})
	}
}

func dump(r Report) string {
	var b strings.Builder
	for _, v := range r.Violations {
		b.WriteString(v.Invariant + " @" + strconv.FormatInt(v.EventIndex, 10) + ": " + v.Detail + "\n")
	}
	return b.String()
}

// A violation names the event that broke it and carries the message's
// history.
func TestViolationContents(t *testing.T) {
	tr := &trace{}
	tr.produce(0, "m1", 0, 0)
	tr.deliver(10, 0, "m1", topic, 0, 0, 1000)
	tr.simple(1100, model.EvReviveDropped, -1, "m1", "")
	r, _ := run(t, tr, drained)
	if len(r.Violations) != 1 {
		t.Fatalf("want one violation (lost at the drop, not again at Finish), got:\n%s", dump(r))
	}
	v := r.Violations[0]
	if v.Invariant != InvLost || v.EventIndex != 2 || v.Msg != "m1" || r.Lost != 1 {
		t.Fatalf("got %+v, lost %d", v, r.Lost)
	}
	want := []string{tr.evs[0].String(), tr.evs[1].String(), tr.evs[2].String()}
	if diff := cmp.Diff(want, v.History); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}

// History keeps the first event and the most recent ones.
func TestHistoryBounded(t *testing.T) {
	tr := &trace{}
	tr.produce(0, "m1", 0, 0)
	for i := int64(1); i <= 100; i++ {
		tr.simple(i, model.EvPutFailure, -1, "m1", "")
	}
	r, _ := run(t, tr, drained)
	h := r.Violations[0].History
	if len(h) != historyCap || h[0] != tr.evs[0].String() || h[len(h)-1] != tr.evs[100].String() {
		t.Fatalf("history has %d lines, first %q, last %q", len(h), h[0], h[len(h)-1])
	}
}

// Past MaxViolations an invariant's violations are counted, not kept.
func TestViolationCap(t *testing.T) {
	tr := &trace{}
	for i := int64(0); i < 5; i++ {
		tr.produce(i, "m"+strconv.FormatInt(i, 10), 0, i)
	}
	c := New(Options{MaxViolations: 2})
	for i := range tr.evs {
		c.Observe(&tr.evs[i])
	}
	r := c.Finish(drained)
	if len(r.Violations) != 2 || r.Suppressed[InvLost] != 3 || r.Lost != 5 {
		t.Fatalf("kept %d, suppressed %v, lost %d", len(r.Violations), r.Suppressed, r.Lost)
	}
}
