package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A RECONSUME_LATER message is renewed with changeInvisibleTime for
// popDelayLevel[reconsumeTimes]: 10 s on the first failure, 30 s on the
// second (the copy revived from the first renewal has reconsumeTimes 1).
func TestPushReconsumeLaterBacksOff(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=1)")
	cfg.Duration, cfg.Drain = 45*clock.Second, clock.Second
	r := runKeep(t, cfg)
	sent := only(r, model.EvRenew)
	acc := only(r, model.EvRenewed)
	dels := only(r, model.EvDeliver)
	if len(sent) < 2 || len(acc) < 2 || len(dels) < 2 {
		t.Fatalf("got %d renewals sent, %d accepted, %d deliveries: want at least 2 each", len(sent), len(acc), len(dels))
	}
	if sent[0].Span != 10*clock.Second || sent[0].Lease != dels[0].Lease {
		t.Fatalf("first renewal %v: want invisibleTime 10s of the delivered lease %d", &sent[0], dels[0].Lease)
	}
	if acc[0].Deadline != clock.FromMillis(ms(acc[0])+10_000) || acc[0].Ended != acc[0].Lease || acc[0].Next == 0 {
		t.Fatalf("first renewal accepted %v: want a new lease ending 10 s after the broker got it, the old one removed", &acc[0])
	}
	if dels[1].Attempt != 1 || dels[1].At < acc[0].Deadline {
		t.Fatalf("second delivery %v: want reconsumeTimes 1, not before the renewed lease ended at %v", &dels[1], acc[0].Deadline)
	}
	if sent[1].Span != 30*clock.Second {
		t.Fatalf("second renewal %v: want invisibleTime 30000 (popDelayLevel[1])", &sent[1])
	}
}

// The expiry check: a message whose lease ran out while it waited for a
// thread is not consumed (before), one whose lease ran out during
// consumption is neither acked nor renewed (after). Both come from one pop
// at T+0; the thread is busy with the first until T+6s.
func TestPushExpiryCheckAborts(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = arrivals("backlog(2)")
	cfg.Consumers[0].Processing = dist("const(6s)")
	pushSettings(&cfg.Consumers[0]).InvisibleTime = 5 * clock.Second
	cfg.Duration, cfg.Drain = 7*clock.Second, clock.Second
	r := runKeep(t, cfg)
	var before, after, acks, starts int
	for _, e := range r.Events {
		if e.At > clock.Epoch.Add(7*clock.Second) {
			break
		}
		switch e.Kind {
		case model.EvExpiredLocal:
			switch e.Reason {
			case model.RBefore:
				before++
			case model.RAfter:
				after++
			}
		case model.EvAck, model.EvRenew:
			acks++
		case model.EvConsumeStart:
			if e.At < clock.Epoch.Add(6*clock.Second) {
				starts++
			}
		}
	}
	if before != 1 || after != 1 || acks != 0 || starts != 1 {
		t.Fatalf("in the first 7 s: %d expired-before, %d expired-after, %d acks/renewals, %d consume starts; want 1, 1, 0, 1", before, after, acks, starts)
	}
	if r.Summary.Coverage["expired-before-consume"] != 1 || r.Summary.Coverage["expired-after-consume"] < 1 {
		t.Fatalf("coverage %v", r.Summary.Coverage)
	}
}

// Flow control: with more than popThresholdForQueue (96) messages waiting
// for an ack, the consumer does not pop; the last pop that was allowed
// (at 96 waiting) brings it to 128.
func TestPushFlowControlAt96(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = arrivals("backlog(300)")
	cfg.Consumers[0].Processing = dist("const(1s)")
	pushSettings(&cfg.Consumers[0]).InvisibleTime = 300 * clock.Second
	cfg.Duration, cfg.Drain = 10*clock.Second, clock.Second
	r := runKeep(t, cfg)
	waiting, peak := 0, 0
	for _, e := range r.Events {
		switch e.Kind {
		case model.EvReceive:
			if waiting > 96 {
				t.Fatalf("%v: a pop with %d messages waiting for an ack", &e, waiting)
			}
		case model.EvDeliver:
			waiting++
			peak = max(peak, waiting)
		case model.EvAck, model.EvRenew, model.EvExpiredLocal:
			waiting--
		}
	}
	if peak != 128 {
		t.Fatalf("peak waiting-for-ack = %d, want 128 (96 + one batch of 32)", peak)
	}
	if r.Summary.Coverage["flow-control"] == 0 {
		t.Fatal("flow control never fired")
	}
}

// A message that comes back with reconsumeTimes > maxReconsumeTimes is
// acked and dropped on receipt, under a named policy.
func TestPushDropsPastMaxReconsume(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Consumers[0].Outcomes = outcomes("outcomes(exception=1)")
	pushSettings(&cfg.Consumers[0]).MaxReconsumeTimes = 1
	pushSettings(&cfg.Consumers[0]).InvisibleTime = 5 * clock.Second
	cfg.Duration = 5 * clock.Second
	r := runKeep(t, cfg)
	drops := only(r, model.EvDrop)
	if len(drops) != 1 {
		t.Fatalf("drops %v, want exactly one", drops)
	}
	// reconsumeTimes 0: renewed 10 s; 1 (= max): the age rule renews; 2: dropped.
	var attempt int32 = -1
	for _, d := range only(r, model.EvDeliver) {
		if d.Lease == drops[0].Lease {
			attempt = d.Attempt
		}
	}
	if drops[0].Reason != model.RPushMaxReconsume || attempt != 2 {
		t.Fatalf("drop %v (delivered at reconsumeTimes %d): want push-max-reconsume at reconsumeTimes 2", &drops[0], attempt)
	}
	if r.Summary.Dropped != 1 || r.Summary.DroppedByPolicy["push-max-reconsume"] != 1 {
		t.Fatalf("summary dropped %d by policy %v", r.Summary.Dropped, r.Summary.DroppedByPolicy)
	}
	noViolations(t, r)
}

// checkNeedAckOrDelay's level rule, with upstream's latent level -1 (a
// message younger than 10 s) guarded as level 0.
func TestPopDelaySeconds(t *testing.T) {
	for level, want := range map[int]int64{-1: 10, 0: 10, 1: 30, 15: 7200, 16: 7200, 40: 7200} {
		if got := popDelaySeconds(level); got != want {
			t.Errorf("popDelaySeconds(%d) = %d, want %d", level, got, want)
		}
	}
}

// A GC pause freezes the consume threads: a consumption running when the
// pause starts ends the pause's length later.
func TestPauseStretchesRunningConsumption(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Consumers[0].Processing = dist("const(1s)")
	r := runKeep(t, cfg, scriptStep{after: 500 * clock.Millisecond, f: func(s *sim) { s.freeze(s.cons[0], 2*clock.Second) }})
	start, end := only(r, model.EvConsumeStart), only(r, model.EvConsumeEnd)
	if len(start) != 1 || len(end) != 1 {
		t.Fatalf("%d starts, %d ends", len(start), len(end))
	}
	if got := end[0].At.Sub(start[0].At); got != 3*clock.Second {
		t.Fatalf("consumption took %v with a 2 s pause inside, want 3s", got)
	}
	if p, q := only(r, model.EvPause), only(r, model.EvResume); len(p) != 1 || len(q) != 1 || q[0].At.Sub(p[0].At) != 2*clock.Second {
		t.Fatalf("pause %v resume %v", p, q)
	}
}
