package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"popsim/model"
)

// reviveVt writes a retry copy of the record whose deadline is vtMs, as the
// simulator reports it (EvRevive.Deadline).
func (t *trace) reviveVt(ms int64, msg string, off int64, vtMs int64) {
	t.add(ms, model.Event{Kind: model.EvRevive, Client: -1, Msg: msg, Topic: retryTopic, Queue: 0, Offset: off, Attempt: 1, Deadline: abs(vtMs)})
}

// pullDeliver hands msg to a Pull consumer: no handle, no lease.
func (t *trace) pullDeliver(ms int64, client int32, msg string, q int32, off int64) {
	t.add(ms, model.Event{Kind: model.EvDeliver, Client: client, Msg: msg, Topic: topic, Queue: q, Offset: off, Detail: "topic=" + topic})
}

func (t *trace) pullConsume(start, end int64, client int32, msg string, q int32, off int64, outcome string) {
	t.add(start, model.Event{Kind: model.EvConsumeStart, Client: client, Msg: msg, Topic: topic, Queue: q, Offset: off})
	t.add(end, model.Event{Kind: model.EvConsumeEnd, Client: client, Msg: msg, Topic: topic, Queue: q, Offset: off, Detail: outcome})
}

// Situations met in real simulator traces: each passes, or fails, as the
// name says.
func TestSimulatorSituations(t *testing.T) {
	cases := []struct {
		name  string
		build func(tr *trace)
		want  []string
		dups  map[string]int64
	}{
		{"a paused client's suspended pop is answered when it resumes", func(tr *trace) {
			tr.popSuspended(0, 0)
			tr.simple(50, model.EvPause, 0, "", "")
			tr.produce(100, "m1", 0, 0)
			tr.simple(900, model.EvResume, 0, "", "")
			tr.popResponse(900, 0, model.Success, 1)
			h := tr.deliver(900, 0, "m1", topic, 0, 0, 1000)
			tr.consume(900, 910, 0, "m1", "success")
			tr.ack(920, 0, "m1", h, 1)
		}, nil, nil},
		{"a delivery seen after a restart but popped before it is a restart re-pop", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := handle(10, 60000, topic, 0, 0) // client 0's pop at 10, received at 2000
			tr.simple(1000, model.EvBrokerRestart, -1, "", "")
			h1 := tr.deliver(1100, 1, "m1", topic, 0, 0, 60000)
			tr.add(2000, model.Event{Kind: model.EvDeliver, Client: 0, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Handle: h0, Deadline: abs(60010), Detail: "topic=" + topic})
			tr.consume(2000, 2010, 0, "m1", "success")
			tr.ack(2020, 0, "m1", h0, 1)
			tr.consume(2030, 2040, 1, "m1", "success")
			tr.ack(2050, 1, "m1", h1, 1)
		}, nil, map[string]int64{CauseBrokerRestart: 1}},
		{"the cache deletes a re-pop's record for an older ack seen before that re-pop", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 5000)
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			h1 := handle(200, 5000, topic, 0, 0) // client 1's re-pop at 200, received at 400
			tr.consume(250, 260, 0, "m1", "success")
			tr.ack(300, 0, "m1", h0, 1) // hits client 1's cached record
			tr.add(400, model.Event{Kind: model.EvDeliver, Client: 1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Handle: h1, Deadline: abs(5200), Detail: "topic=" + topic})
			tr.consume(400, 410, 1, "m1", "success")
			tr.ack(420, 1, "m1", h1, 0)      // nothing left under its key
			tr.reviveVt(5050, "m1", 0, 5000) // client 0's record was still there
			h2 := tr.deliver(5100, 2, "m1", retryTopic, 0, 0, 5000)
			tr.consume(5100, 5110, 2, "m1", "success")
			tr.ack(5120, 2, "m1", h2, 1)
		}, nil, map[string]int64{CauseBrokerRestart: 2}},
		{"a pop response lost on the way explains the revive of its record", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(10, model.Event{Kind: model.EvPopRequest, Client: 0, Topic: topic, Queue: -1, N: 32, Deadline: 1000})
			tr.add(12, model.Event{Kind: model.EvPopLost, Client: 0, Topic: topic, Queue: -1, N: 1, Detail: "response"})
			tr.reviveVt(1100, "m1", 0, 1011)
			h := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1210, 1, "m1", "success")
			tr.ack(1220, 1, "m1", h, 1)
		}, nil, nil},
		{"a lost pop response's record may fail its revive first", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(10, model.Event{Kind: model.EvPopRequest, Client: 0, Topic: topic, Queue: -1, N: 32, Deadline: 1000})
			tr.add(12, model.Event{Kind: model.EvPopLost, Client: 0, Topic: topic, Queue: -1, N: 1, Detail: "response"})
			tr.add(1100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(11100)})
			tr.reviveVt(11200, "m1", 0, 11100)
			h := tr.deliver(11300, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(11300, 11310, 1, "m1", "success")
			tr.ack(11320, 1, "m1", h, 1)
		}, nil, nil},
		{"a renew continues the line of the record it renews", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 10000)
			tr.simple(0, model.EvConsumeStart, 0, "m1", "")
			h1 := tr.change(1, 0, "m1", h0, 60000, 1) // auto-renew; its answer comes late
			h2 := tr.change(3, 0, "m1", h0, 9997, 0)  // a renew with the old handle: an extra record
			tr.simple(10, model.EvConsumeEnd, 0, "m1", "later")
			tr.change(11, 0, "m1", h2, 10000, 1) // the client goes on from the extra one
			tr.reviveVt(10100, "m1", 0, 10011)   // revived inside the first renew's lease
			h3 := tr.deliver(10200, 1, "m1", retryTopic, 0, 0, 60000)
			tr.consume(10200, 10210, 1, "m1", "success")
			tr.ack(10220, 1, "m1", h3, 1)
			tr.reviveVt(60100, "m1", 1, 60001) // the orphaned renewal
			h4 := tr.deliver(60200, 2, "m1", retryTopic, 0, 1, 60000)
			tr.consume(60200, 60210, 2, "m1", "success")
			tr.ack(60220, 2, "m1", h4, 1)
			_ = h1
		}, nil, map[string]int64{CauseStaleHandle: 1}},
		{"a failed revive of the record an offset-only delete left behind", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 5000)
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			h1 := tr.deliver(200, 1, "m1", topic, 0, 0, 5000)
			tr.consume(250, 260, 0, "m1", "success")
			tr.ack(300, 0, "m1", h0, 1) // deleted client 1's cached record
			tr.consume(400, 410, 1, "m1", "success")
			tr.ack(420, 1, "m1", h1, 0)
			tr.add(5100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(20100)})
			tr.reviveVt(20200, "m1", 0, 20100)
			h2 := tr.deliver(20300, 2, "m1", retryTopic, 0, 0, 5000)
			tr.consume(20300, 20310, 2, "m1", "success")
			tr.ack(20320, 2, "m1", h2, 1)
		}, nil, map[string]int64{CauseBrokerRestart: 2}},
		{"a failed revive re-keys the other of two records at one location", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 5000)
			tr.consume(0, 10, 0, "m1", "later")
			tr.change(20, 0, "m1", h0, 10000, 1) // record A until 10020, in the store
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			tr.deliver(200, 1, "m1", topic, 0, 0, 9800) // record B until 10000, in the cache
			tr.simple(200, model.EvConsumeStart, 1, "m1", "")
			// The store pass fails A's revive; the cache pass revives B.
			tr.add(10100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(30100)})
			tr.reviveVt(10150, "m1", 0, 10000)
			h2 := tr.deliver(10200, 2, "m1", retryTopic, 0, 0, 5000)
			tr.consume(10200, 10210, 2, "m1", "success")
			tr.ack(10220, 2, "m1", h2, 1)
			tr.reviveVt(30200, "m1", 1, 30100)
			h3 := tr.deliver(30300, 3, "m1", retryTopic, 0, 1, 5000)
			tr.consume(30300, 30310, 3, "m1", "success")
			tr.ack(30320, 3, "m1", h3, 1)
			tr.simple(40000, model.EvCrash, 1, "", "")
		}, nil, map[string]int64{CauseBrokerRestart: 1}},
		{"a lost pop response after a restart is a re-pop", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.simple(0, model.EvConsumeStart, 0, "m1", "")
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			tr.add(200, model.Event{Kind: model.EvPopRequest, Client: 1, Topic: topic, Queue: -1, N: 32, Deadline: 1000})
			tr.add(201, model.Event{Kind: model.EvPopLost, Client: 1, Topic: topic, Queue: -1, N: 1, Detail: "response"})
			tr.reviveVt(1300, "m1", 0, 1200) // inside client 0's lease
			h1 := tr.deliver(1400, 2, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1400, 1410, 2, "m1", "success")
			tr.ack(1420, 2, "m1", h1, 1)
			tr.simple(2000, model.EvConsumeEnd, 0, "m1", "success")
			tr.ack(2010, 0, "m1", h0, 1)
		}, nil, map[string]int64{CausePopLost: 1}},
		{"a client paused past its lease: the copy is delivered before the late original", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(0, model.Event{Kind: model.EvPopRequest, Client: 0, Topic: topic, Queue: -1, N: 1, Deadline: 5000})
			tr.simple(0, model.EvPause, 0, "", "")
			tr.add(5100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(20100)})
			tr.reviveVt(20200, "m1", 0, 20100)
			h1 := tr.deliver(20300, 1, "m1", retryTopic, 0, 0, 5000)
			tr.consume(20300, 20310, 1, "m1", "success")
			tr.ack(20320, 1, "m1", h1, 1)
			tr.simple(20500, model.EvResume, 0, "", "")
			tr.popResponse(20500, 0, model.Success, 1)
			h0 := handle(1, 5000, topic, 0, 0) // popped at 1, received now
			tr.add(20500, model.Event{Kind: model.EvDeliver, Client: 0, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Handle: h0, Deadline: abs(5001), Detail: "topic=" + topic})
			tr.simple(20500, model.EvExpiredLocal, 0, "m1", "before")
		}, nil, nil},
		{"a failed revive seen before the late delivery that made the record", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(5100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(20100)})
			h0 := handle(1, 5000, topic, 0, 0)
			tr.add(5600, model.Event{Kind: model.EvDeliver, Client: 0, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Handle: h0, Deadline: abs(5001), Detail: "topic=" + topic})
			tr.simple(5600, model.EvExpiredLocal, 0, "m1", "before")
			tr.reviveVt(20200, "m1", 0, 20100)
			h1 := tr.deliver(20300, 1, "m1", retryTopic, 0, 0, 5000)
			tr.consume(20300, 20310, 1, "m1", "success")
			tr.ack(20320, 1, "m1", h1, 1)
		}, nil, nil},
		{"a crash with a pop request open may lose a served response", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.add(1, model.Event{Kind: model.EvPopRequest, Client: 0, Topic: topic, Queue: -1, N: 1, Deadline: 5000})
			tr.simple(10, model.EvCrash, 0, "", "")
			tr.reviveVt(5100, "m1", 0, 5002)
			h := tr.deliver(5200, 1, "m1", retryTopic, 0, 0, 5000)
			tr.consume(5200, 5210, 1, "m1", "success")
			tr.ack(5220, 1, "m1", h, 1)
		}, nil, nil},
		{"a response lost before the message existed explains nothing", func(tr *trace) {
			tr.add(0, model.Event{Kind: model.EvPopRequest, Client: 0, Topic: topic, Queue: -1, N: 1, Deadline: 5000})
			tr.add(2, model.Event{Kind: model.EvPopLost, Client: 0, Topic: topic, Queue: -1, N: 1, Detail: "response"})
			tr.produce(3, "m1", 0, 0)
			tr.reviveVt(5100, "m1", 0, 5001)
			h := tr.deliver(5200, 1, "m1", retryTopic, 0, 0, 5000)
			tr.consume(5200, 5210, 1, "m1", "success")
			tr.ack(5220, 1, "m1", h, 1)
		}, []string{InvUnexplained}, nil},
		{"two leases of one client renewed to the same deadline share one record", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 10000)
			tr.simple(100, model.EvBrokerRestart, -1, "", "")
			h1 := tr.deliver(109, 0, "m1", topic, 0, 0, 10000)
			tr.add(1110, model.Event{Kind: model.EvChangeSent, Client: 0, Msg: "m1", Handle: h1, Deadline: 60000, Queue: -1, Offset: -1})
			tr.add(1110, model.Event{Kind: model.EvChangeSent, Client: 0, Msg: "m1", Handle: h0, Deadline: 60000, Queue: -1, Offset: -1})
			nh := handle(1111, 60000, topic, 0, 0)
			tr.add(1111, model.Event{Kind: model.EvChangeAccepted, Client: 0, Msg: "m1", Handle: nh, Deadline: abs(61111), Queue: -1, Offset: -1, N: 1})
			tr.add(1111, model.Event{Kind: model.EvChangeAccepted, Client: 0, Msg: "m1", Handle: nh, Deadline: abs(61111), Queue: -1, Offset: -1, N: 1})
			tr.consume(1114, 1114, 0, "m1", "success")
			tr.ack(1116, 0, "m1", nh, 1)
			tr.simple(1200, model.EvConsumeEnd, 0, "m1", "success")
			tr.ack(1210, 0, "m1", nh, 0) // the one record is gone
		}, nil, map[string]int64{CauseBrokerRestart: 1}},
		{"a revive of a record nobody popped is unexplained", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.reviveVt(1100, "m1", 0, 1011)
			h := tr.deliver(1200, 1, "m1", retryTopic, 0, 0, 1000)
			tr.consume(1200, 1210, 1, "m1", "success")
			tr.ack(1220, 1, "m1", h, 1)
		}, []string{InvUnexplained}, nil},
		{"a revive reporting a deadline still to come is early", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.reviveVt(1000, "m1", 0, 60000)
			h1 := tr.deliver(1100, 1, "m1", retryTopic, 0, 0, 60000)
			tr.consume(1100, 1200, 1, "m1", "success")
			tr.ack(1200, 1, "m1", h1, 1)
			tr.consume(1300, 1300, 0, "m1", "success")
			tr.ack(1300, 0, "m1", h0, 0)
		}, []string{InvUnexplained}, map[string]int64{CauseUnexplained: 1}},
		{"a renew after a failed revive re-keyed the record makes an extra record", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h0 := tr.deliver(0, 0, "m1", topic, 0, 0, 5000)
			tr.simple(0, model.EvConsumeStart, 0, "m1", "")
			tr.add(5100, model.Event{Kind: model.EvReviveRetried, Client: -1, Msg: "m1", Topic: topic, Queue: 0, Offset: 0, Deadline: abs(20100)})
			tr.change(5200, 0, "m1", h0, 5000, 0) // the old key is gone
			tr.simple(5300, model.EvConsumeEnd, 0, "m1", "success")
			tr.simple(5300, model.EvExpiredLocal, 0, "m1", "after")
			tr.reviveVt(10250, "m1", 0, 10200) // the renewed record
			h1 := tr.deliver(10300, 1, "m1", retryTopic, 0, 0, 60000)
			tr.consume(10300, 10310, 1, "m1", "success")
			tr.ack(10320, 1, "m1", h1, 1)
			tr.reviveVt(20150, "m1", 1, 20100) // the re-keyed one, inside client 1's lease
			h2 := tr.deliver(20200, 2, "m1", retryTopic, 0, 1, 60000)
			tr.consume(20200, 20210, 2, "m1", "success")
			tr.ack(20220, 2, "m1", h2, 1)
		}, nil, map[string]int64{CauseRenewAfterRevive: 1, CauseLeaseExpiry: 1}},
		{"an N=0 answer for a record made before a restart is no violation", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			h := tr.deliver(0, 0, "m1", topic, 0, 0, 60000)
			tr.simple(100, model.EvBrokerRestart, -1, "", "") // the record was in the cache
			tr.consume(200, 210, 0, "m1", "success")
			tr.ack(300, 0, "m1", h, 0)
		}, nil, nil},
		{"the proxy acks a message it sent to the DLQ without delivering it", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.deliver(0, 0, "m1", topic, 0, 0, 1000)
			tr.consume(0, 10, 0, "m1", "exception")
			tr.revive(1100, "m1", 0, 1)
			tr.simple(1200, model.EvDLQ, 1, "m1", "")
			h := handle(1200, 1000, retryTopic, 0, 0)
			tr.add(1200, model.Event{Kind: model.EvAckSent, Client: 1, Msg: "m1", Handle: h, Queue: -1, Offset: -1, Detail: "proxy"})
			tr.add(1200, model.Event{Kind: model.EvAckAccepted, Client: 1, Msg: "m1", Handle: h, Queue: -1, Offset: -1, N: 1, Detail: "proxy"})
		}, nil, nil},
		{"pull: a local retry, a crash and a rebalance explain the re-deliveries", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.pullDeliver(10, 0, "m1", 0, 0)
			tr.pullConsume(10, 20, 0, "m1", 0, 0, "later")
			tr.pullDeliver(1020, 0, "m1", 0, 0) // local retry
			tr.pullConsume(1020, 1030, 0, "m1", 0, 0, "success")
			tr.simple(2000, model.EvCrash, 0, "", "")
			tr.add(2000, model.Event{Kind: model.EvRebalance, Client: 1, Topic: topic, Queue: 0, Offset: 0})
			tr.pullDeliver(2010, 1, "m1", 0, 0) // the committed offset was behind
			tr.pullConsume(2010, 2020, 1, "m1", 0, 0, "success")
			tr.add(3000, model.Event{Kind: model.EvRebalance, Client: 2, Topic: topic, Queue: 0, Offset: 0})
			tr.pullDeliver(3010, 2, "m1", 0, 0)
			tr.pullConsume(3010, 3020, 2, "m1", 0, 0, "success")
		}, nil, map[string]int64{CauseConsumerCrash: 1, CauseRebalance: 1}},
		{"pull: the same message again with no reason is unexplained", func(tr *trace) {
			tr.produce(0, "m1", 0, 0)
			tr.pullDeliver(10, 0, "m1", 0, 0)
			tr.pullConsume(10, 20, 0, "m1", 0, 0, "success")
			tr.pullDeliver(30, 0, "m1", 0, 0)
			tr.pullConsume(30, 40, 0, "m1", 0, 0, "success")
		}, []string{InvUnexplained}, map[string]int64{CauseUnexplained: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			tc.build(tr)
			r, _ := run(t, tr, drained)
			if diff := cmp.Diff(tc.want, invariants(r)); diff != "" {
				t.Fatalf("invariants (-want +got):\n%s\n%s", diff, dump(r))
			}
			if diff := cmp.Diff(tc.dups, r.DuplicatesByCause, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("duplicates by cause (-want +got):\n%s", diff)
			}
		})
	}
}
