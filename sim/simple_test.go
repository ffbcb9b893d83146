package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A message the application never acks comes back after each 10 s lease;
// once reconsumeTimes reaches retryMaxTimes+1 = 17 the proxy sends it to
// %DLQ%group and acks it, so the application saw it 17 times (the 18th
// delivery is to the proxy, which forwards it).
func TestSimpleDLQAfter17(t *testing.T) {
	cfg := tinyConfig(Simple)
	cfg.Consumers[0].Outcomes = outcomes("outcomes(exception=1)")
	simpleSettings(&cfg.Consumers[0]).InvisibleTime = 10 * clock.Second
	r := runKeep(t, cfg)
	dels := only(r, model.EvDeliver)
	if len(dels) != 17 {
		t.Fatalf("%d deliveries, want 17 (reconsumeTimes 0..16)", len(dels))
	}
	for i, d := range dels {
		if d.Attempt != int32(i) {
			t.Fatalf("delivery %d has reconsumeTimes %d", i, d.Attempt)
		}
	}
	dlq := only(r, model.EvDLQ)
	if len(dlq) != 1 || dlq[0].Topic != model.DLQTopic("g") || dlq[0].Attempt != 17 {
		t.Fatalf("DLQ events %v: want one to %%DLQ%%g at reconsumeTimes 17", dlq)
	}
	acks := only(r, model.EvAcked)
	if len(acks) != 1 || acks[0].Ended == 0 || acks[0].Ended != dlq[0].Lease || acks[0].At != dlq[0].At {
		t.Fatalf("acks %v: want the proxy's ack of the original, deleting its record", acks)
	}
	if r.Summary.DLQ != 1 || r.Summary.Lost != 0 {
		t.Fatalf("summary DLQ %d lost %d", r.Summary.DLQ, r.Summary.Lost)
	}
	noViolations(t, r)
}

// The proxy rejects an ack whose handle expired by its own clock (the
// broker's), however far behind the client's is: no request reaches the
// broker.
func TestSimpleRejectsExpiredHandle(t *testing.T) {
	for _, skew := range []clock.Duration{0, -clock.Minute} {
		cfg := tinyConfig(Simple)
		cfg.Consumers[0].Processing = dist("const(11s)")
		simpleSettings(&cfg.Consumers[0]).InvisibleTime = 10 * clock.Second
		cfg.Duration, cfg.Drain = 12*clock.Second, clock.Second
		r, err := RunScheduled(cfg, Schedule{{At: 0, Kind: FaultClockSkew, Consumer: 0, Skew: skew}}, RunOptions{KeepEvents: true})
		if err != nil {
			t.Fatal(err)
		}
		exp := only(r, model.EvExpiredLocal)
		if len(exp) == 0 || exp[0].Reason != model.RAtAck {
			t.Fatalf("skew %v: expired-local events %v: want the first ack rejected", skew.Std(), exp)
		}
		for _, e := range only(r, model.EvAck) {
			if e.At <= exp[0].At {
				t.Fatalf("skew %v: %v: an ack was sent for the expired lease", skew.Std(), &e)
			}
		}
	}
}

// Auto-renew keeps a long-running message leased: renewals 10 s ahead of
// each deadline, with the new handle adopted, and one delivery in all.
func TestSimpleAutoRenew(t *testing.T) {
	cfg := tinyConfig(Simple)
	cfg.Consumers[0].Processing = dist("const(3m)")
	simpleSettings(&cfg.Consumers[0]).InvisibleTime = 30 * clock.Second
	simpleSettings(&cfg.Consumers[0]).AutoRenew = true
	r := runKeep(t, cfg)
	if n := len(only(r, model.EvDeliver)); n != 1 {
		t.Fatalf("%d deliveries, want 1: auto-renew must keep the lease", n)
	}
	acc := only(r, model.EvRenewed)
	// 30 s lease: renewed at 20 s for 1 min, at 70 s for 3 min; done at 180 s.
	if len(acc) != 2 {
		t.Fatalf("%d renewals, want 2", len(acc))
	}
	sent := only(r, model.EvRenew)
	if sent[0].Span != clock.Minute || sent[1].Span != 3*clock.Minute || sent[0].Reason != model.RAutoRenew {
		t.Fatalf("renewals asked for %v and %v, want the 1 min, 3 min schedule", sent[0].Span.Std(), sent[1].Span.Std())
	}
	for i := 1; i < len(sent); i++ {
		if sent[i].Lease != acc[i-1].Next {
			t.Fatalf("renewal %d renewed lease %d, want the previous renewal's %d", i, sent[i].Lease, acc[i-1].Next)
		}
	}
	ack := only(r, model.EvAcked)
	if len(ack) != 1 || ack[0].Ended == 0 || ack[0].Lease != acc[1].Next {
		t.Fatalf("acks %v: want one ack with the latest handle (lease %d) deleting the record", ack, acc[1].Next)
	}
	noViolations(t, r)
}

// The proxy stamps a receive's born time with its own clock (local mode:
// the broker's), never the client's. A client a minute behind would fail
// the broker's "timeout too much" check (now − bornTime − pollTime >
// 500 ms → POLLING_TIMEOUT) on every receive; a client a minute ahead
// would park its receives a minute past their poll time.
func TestSimpleBornTimeIsTheProxys(t *testing.T) {
	for _, skew := range []clock.Duration{-clock.Minute, clock.Minute} {
		cfg := tinyConfig(Simple)
		cfg.Producers[0].Arrivals = arrivals("backlog(5)")
		simpleSettings(&cfg.Consumers[0]).PollTime = 20 * clock.Second
		r, err := RunScheduled(cfg, Schedule{{At: 0, Kind: FaultClockSkew, Consumer: 0, Skew: skew}}, RunOptions{KeepEvents: true})
		if err != nil {
			t.Fatal(err)
		}
		var sent model.Event // one receive outstanding at a time: each answer follows its receive
		for _, e := range only(r, model.EvReceive, model.EvReceived) {
			if e.Kind == model.EvReceive {
				sent = e
			} else if e.Code == int32(model.PollingTimeout) && e.At.Sub(sent.At) < 10*clock.Second {
				t.Fatalf("skew %v: %v: POLLING_TIMEOUT long before the poll time (sent at %v): the broker judged the born time by the client's clock", skew.Std(), &e, at(sent).Std())
			}
		}
		if n := len(only(r, model.EvDeliver)); n != 5 {
			t.Fatalf("skew %v: %d deliveries, want the 5 messages", skew.Std(), n)
		}
		parked := only(r, model.EvParked)
		if len(parked) == 0 {
			t.Fatalf("skew %v: no receive parked", skew.Std())
		}
		for _, e := range parked {
			if d := e.Deadline.Sub(e.At); d != 20*clock.Second {
				t.Fatalf("skew %v: %v: parked for %v, want the 20 s poll time from its arrival", skew.Std(), &e, d.Std())
			}
		}
		noViolations(t, r)
	}
}

// The proxy judges receipt handles and times its auto-renewals by its own
// clock (local mode: the broker's), never the client's. With a 60 s
// invisible time, a client a minute ahead would have every ack and
// renewal rejected as expired by its proxy (its messages come back until
// they reach the DLQ); a client a minute behind would have its
// auto-renewals sent 50 s after its leases ran out (they come back while
// still being processed: duplicates). Either way: one delivery per
// message, every ack accepted, nothing expired at the proxy.
func TestSimpleHandleChecksAreTheProxys(t *testing.T) {
	for _, renew := range []bool{false, true} {
		for _, skew := range []clock.Duration{-clock.Minute, clock.Minute} {
			cfg := tinyConfig(Simple)
			cfg.Producers[0].Arrivals = arrivals("backlog(3)")
			cfg.Consumers[0].Threads = 2
			set := simpleSettings(&cfg.Consumers[0])
			set.InvisibleTime = clock.Minute
			if renew {
				set.AutoRenew = true
				cfg.Consumers[0].Processing = dist("const(150s)")
			}
			r, err := RunScheduled(cfg, Schedule{{At: 0, Kind: FaultClockSkew, Consumer: 0, Skew: skew}}, RunOptions{KeepEvents: true})
			if err != nil {
				t.Fatal(err)
			}
			what := "skew " + skew.Std().String()
			if renew {
				what += ", auto-renew"
			}
			if exp := only(r, model.EvExpiredLocal); len(exp) != 0 {
				t.Fatalf("%s: %v: the proxy judged a handle by the client's clock", what, &exp[0])
			}
			if n := len(only(r, model.EvDeliver)); n != 3 {
				t.Fatalf("%s: %d deliveries, want the 3 messages once each", what, n)
			}
			for _, e := range only(r, model.EvAcked, model.EvRenewed) {
				if e.Code != 0 {
					t.Fatalf("%s: %v: the broker refused it", what, &e)
				}
			}
			if n := len(only(r, model.EvAcked)); n != 3 {
				t.Fatalf("%s: %d acks answered, want 3", what, n)
			}
			if renew && len(only(r, model.EvRenewed)) == 0 {
				t.Fatalf("%s: no auto-renewal", what)
			}
			if r.Summary.Duplicates != 0 {
				t.Fatalf("%s: %d duplicates %v", what, r.Summary.Duplicates, r.Summary.DuplicatesByCause)
			}
			noViolations(t, r)
		}
	}
}
