package sim

import (
	"slices"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A listener batch acks its success prefix and retries the rest. The
// parked pop wakes on the first arrivals with messages 1-3, the next pop
// takes 4-8; with batches of at most 4 the listener calls are [1 2 3],
// [4 5 6 7] and [8], and with messages 3 and 6 failing, 1, 2, 4, 5 and 8
// are acked while 3, 6 and 7 (after the failure in its batch, though it
// would have succeeded) are renewed for the backoff. With BatchAck each
// prefix is one BATCH_ACK_MESSAGE, which ends the messages' leases as
// single acks do.
func TestPushListenerBatchAcksSuccessPrefix(t *testing.T) {
	for _, batchAck := range []bool{false, true} {
		cfg := tinyConfig(PopPush)
		cfg.Producers[0].Arrivals = arrivals("backlog(8)")
		cfg.Consumers[0].Outcomes = outcomes("outcomes(poison_every=3,poison_count=2)")
		set := pushSettings(&cfg.Consumers[0])
		set.ConsumeMessageBatchMaxSize, set.BatchAck = 4, batchAck
		cfg.Duration, cfg.Drain = 5*clock.Second, clock.Second
		r := runKeep(t, cfg)
		var acked, renewed []model.MsgID
		starts := 0
		for _, e := range r.Events {
			if e.At >= clock.Epoch.Add(5*clock.Second) {
				break
			}
			switch e.Kind {
			case model.EvAck:
				acked = append(acked, e.Msg)
			case model.EvRenew:
				renewed = append(renewed, e.Msg)
			case model.EvAcked:
				if e.Ended != e.Lease || e.Code != 0 {
					t.Errorf("batchAck=%v: %v: want the ack to end its own lease", batchAck, &e)
				}
			case model.EvConsumeStart:
				starts++
			}
		}
		if !slices.Equal(acked, []model.MsgID{1, 2, 4, 5, 8}) || !slices.Equal(renewed, []model.MsgID{3, 6, 7}) || starts != 8 {
			t.Fatalf("batchAck=%v: acked %v, renewed %v, %d consume starts; want [1 2 4 5 8], [3 6 7], 8", batchAck, acked, renewed, starts)
		}
		// The whole run: the retries that follow, and the age rule's drops
		// of the two poison messages, which are single acks either way.
		acks, drops := int64(len(only(r, model.EvAck))), int64(len(only(r, model.EvDrop)))
		c := r.Summary.EngineCounters
		switch {
		case !batchAck && (c["ack_requests"] != acks || c["batch_ack_requests"] != 0):
			t.Fatalf("single acks: %d ack and %d batch ack requests for %d acks, want %d and 0", c["ack_requests"], c["batch_ack_requests"], acks, acks)
		case batchAck && (c["ack_requests"] != drops || c["batch_ack_requests"] == 0 || c["batch_ack_requests"] >= acks-drops):
			t.Fatalf("batch acks: %d ack and %d batch ack requests for %d acks (%d drops), want %d and fewer than %d", c["ack_requests"], c["batch_ack_requests"], acks, drops, drops, acks-drops)
		}
	}
}

// A listener batch is one call on one thread: its messages are processed
// one after another, and its expiry check uses the first message's lease,
// so a batch whose lease runs out during the call sends nothing for any
// of its messages. The first pop brings message 1 (consumed alone, 2 s),
// the second 2-4 (one call of 3 × 2 s from T+2s, past their 5 s leases).
func TestPushListenerBatchIsOneCall(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = arrivals("backlog(4)")
	cfg.Consumers[0].Processing = dist("const(2s)")
	set := pushSettings(&cfg.Consumers[0])
	set.ConsumeMessageBatchMaxSize, set.InvisibleTime = 4, 5*clock.Second
	cfg.Duration, cfg.Drain = 9*clock.Second, clock.Second
	r := runKeep(t, cfg)
	var starts, ends []clock.Time
	after, acks, renewals := 0, 0, 0
	for _, e := range r.Events {
		if e.At >= clock.Epoch.Add(9*clock.Second) {
			break
		}
		switch e.Kind {
		case model.EvConsumeStart:
			starts = append(starts, e.At)
		case model.EvConsumeEnd:
			ends = append(ends, e.At)
		case model.EvExpiredLocal:
			if e.Reason == model.RAfter {
				after++
			}
		case model.EvAck:
			acks++
		case model.EvRenew:
			renewals++
		}
	}
	at := func(ms int64) clock.Time { return clock.Epoch.Add(clock.Duration(ms) * clock.Millisecond) }
	if len(starts) < 4 || len(ends) < 4 || !slices.Equal(starts[:4], []clock.Time{at(2), at(2002), at(2002), at(2002)}) || !slices.Equal(ends[:4], []clock.Time{at(2002), at(8002), at(8002), at(8002)}) {
		t.Fatalf("starts %v, ends %v: want message 1 alone from T+0.002s to T+2.002s, then 2-4 together until T+8.002s", starts, ends)
	}
	if after != 3 || acks != 1 || renewals != 0 {
		t.Fatalf("%d expired after consumption, %d acks, %d renewals: want 3, 1 (message 1), 0", after, acks, renewals)
	}
}

// Under faults (crashes, pauses, ack and renewal loss, injected
// renewals), listener batches with batch acks keep at-least-once, and a
// batch ack carries many messages: on a backlog that pops bring 32 at a
// time, fewer than 0.2 ack requests per acked message with batches of
// 16, against one per message for single acks.
func TestPushBatchAckUnderFaults(t *testing.T) {
	perMsg := map[bool]float64{}
	for _, batchAck := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Duration = 20 * clock.Second
		cfg.Producers[0].Arrivals = arrivals("backlog(3000)")
		set := pushSettings(&cfg.Consumers[0])
		set.ConsumeMessageBatchMaxSize, set.BatchAck = 16, batchAck
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		noViolations(t, r)
		c := r.Summary.EngineCounters
		perMsg[batchAck] = float64(c["ack_requests"]+c["batch_ack_requests"]) / float64(r.Summary.Acked)
		if batchAck && (c["batch_ack_requests"] == 0 || r.Summary.Coverage["batch-ack"] == 0) {
			t.Fatalf("no batch acks: counters %v", c)
		}
		if r.Summary.Coverage["listener-batch"] == 0 {
			t.Fatalf("no listener batches: coverage %v", r.Summary.Coverage)
		}
	}
	if perMsg[false] < 1 || perMsg[true] > 0.2 {
		t.Fatalf("ack requests per acked message: %.3f single, %.3f batch; want >= 1 and <= 0.2", perMsg[false], perMsg[true])
	}
}
