package sim

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// runFinished runs cfg like Run and returns the finished simulator with its
// result, so tests can read the meter's records.
func runFinished(t *testing.T, cfg Config, opts RunOptions) (*sim, *Result) {
	t.Helper()
	s := newTestSim(t, cfg, opts)
	return s, finishTestSim(t, s)
}

// newTestSim builds the simulator Run would build for cfg, not yet run,
// so tests can change it first.
func newTestSim(t *testing.T, cfg Config, opts RunOptions) *sim {
	t.Helper()
	c, err := cfg.WithDefaults().layout()
	if err != nil {
		t.Fatal(err)
	}
	c.sha256 = cfg.SHA256()
	s, err := newSim(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// finishTestSim runs s to its end and returns its result.
func finishTestSim(t *testing.T, s *sim) *Result {
	t.Helper()
	if err := s.loop(); err != nil {
		t.Fatal(err)
	}
	r, err := s.result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every measured message's parts add up to its end-to-end latency, its
// service time is the local buffer, processing and ack parts, and none is
// left unattributed: for every consumer kind under every fault family
// (crashes, pauses, lost acks and pops, edge renewals, broker restarts,
// failed revives, clock skew), auto-renewing simple consumers included.
// The meter's count of successful consumptions beyond the first is the
// checker's duplicate count (for Pull within 0.1 %: see below).
func TestBreakdownAddsUp(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 2
	}
	for _, kind := range []ConsumerKind{PopPush, Simple, Pull} {
		for seed := 1; seed <= seeds; seed++ {
			cfg := allFaultFamilies(uint64(seed))
			cfg.Faults.Swarm = seed%2 == 0
			cfg.Consumers[0].Kind, cfg.Consumers[0].Settings = kind, nil
			if kind == Simple {
				cfg.Consumers[0].Settings = &SimpleSettings{AutoRenew: seed%2 == 1}
			}
			s, r := runFinished(t, cfg, RunOptions{})
			var measured, redelivered, dups int64
			for id := model.MsgID(1); int(id) <= s.meter.obs.n; id++ {
				o := s.meter.obs.at(id)
				dups += max(int64(o.successes)-1, 0)
				if o.flags&obsMeasured == 0 {
					continue
				}
				measured++
				if o.flags&obsUnattributed != 0 {
					t.Errorf("%s seed %d: message %d (end to end %d us) has no breakdown", kind, seed, id, o.e2e)
					continue
				}
				var sum uint32
				for _, p := range o.part {
					sum += p
				}
				if sum != o.e2e || o.part[partLocal]+o.part[partProcessing]+o.part[partAck] != o.svc {
					t.Errorf("%s seed %d: message %d: parts %v add up to %d, end to end %d us, service %d us", kind, seed, id, o.part, sum, o.e2e, o.svc)
				}
				if o.part[partRedelivery] > 0 {
					redelivered++
				}
			}
			if measured == 0 || r.Summary.Breakdown.Unattributed != 0 {
				t.Errorf("%s seed %d: %d measured, %d unattributed", kind, seed, measured, r.Summary.Breakdown.Unattributed)
			}
			// Pull: the checker forgets a message once its queue's commit
			// offset passed it, and does not count a late consumption of it
			// (a rebalance's redelivery); the meter cannot see offsets.
			if d := dups - r.Summary.Duplicates; d != 0 && (kind != Pull || d < 0 || d*1000 > r.Summary.Duplicates) {
				t.Errorf("%s seed %d: the meter counts %d duplicate consumptions, the checker %d", kind, seed, dups, r.Summary.Duplicates)
			}
			t.Logf("%s seed %d: %d measured, %d waited for a redelivery, %d duplicates", kind, seed, measured, redelivered, dups)
		}
	}
}

// A message whose consumer crashes while consuming it waits for the
// lease to run out and the revive, then for a consumer again: its
// end-to-end latency divides into broker wait (before the first lease, and
// from the revive's copy to the second delivery), redelivery wait (the
// first lease until the copy), then the second delivery's local buffer
// wait, processing and ack.
func TestBreakdownOfARedelivery(t *testing.T) {
	cfg := tinyConfig(PopPush)
	pushSettings(&cfg.Consumers[0]).InvisibleTime = 5 * clock.Second
	cfg.Faults.Crash.RestartDelay = dist("const(1s)")
	cfg.Duration, cfg.Drain = 10*clock.Second, clock.Minute
	crash := scriptStep{after: 4 * clock.Millisecond, f: func(s *sim) { s.crash(s.cons[0]) }}
	s, r := runFinished(t, cfg, RunOptions{KeepEvents: true, script: []scriptStep{crash}})
	noViolations(t, r)
	at := func(k model.EventKind, n int) clock.Time {
		t.Helper()
		es := only(r, k)
		if len(es) <= n {
			t.Fatalf("%d %s events, want at least %d", len(es), k, n+1)
		}
		return es[n].At
	}
	lease1, revive := at(model.EvLease, 0), at(model.EvRevive, 0)
	deliver2, start2, end2, acked := at(model.EvDeliver, 1), at(model.EvConsumeStart, 1), at(model.EvConsumeEnd, 0), at(model.EvAcked, 0)
	want := [nParts]clock.Duration{
		partBroker:     lease1.Sub(clock.Epoch) + deliver2.Sub(revive),
		partRedelivery: revive.Sub(lease1),
		partLocal:      start2.Sub(deliver2),
		partProcessing: end2.Sub(start2),
		partAck:        acked.Sub(end2),
	}
	o := s.meter.obs.at(1)
	for p := range nParts {
		if int64(o.part[p]) != int64(want[p]) {
			t.Errorf("part %s: %d us, want %d us", model.Parts[p], o.part[p], want[p])
		}
	}
	if want[partRedelivery] < 5*clock.Second || want[partProcessing] != 5*clock.Millisecond || want[partAck] != clock.Millisecond {
		t.Errorf("want a redelivery wait of at least the 2 s lease, 5 ms processing, a 1 ms ack: %v", want)
	}
	b := r.Summary.Breakdown
	if got := b.Part(model.PartRedeliveryWait); got.Count != 1 || math.Abs(float64(got.Mean)/float64(want[partRedelivery])-1) > 0.001 {
		t.Errorf("summary's redelivery wait %+v, want one message of %d us (within the histogram's 0.1 %%)", got, want[partRedelivery])
	}
}

// A push consumer with one thread keeps popping while it is busy: the
// second message, delivered while the first is consumed, waits in its
// local buffer until the first ends.
func TestBreakdownLocalBuffer(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Producers[0].Arrivals = arrivals("backlog(2)")
	cfg.Duration, cfg.Drain = clock.Second, clock.Minute
	s, r := runFinished(t, cfg, RunOptions{KeepEvents: true})
	noViolations(t, r)
	dels, starts, ends := only(r, model.EvDeliver), only(r, model.EvConsumeStart), only(r, model.EvConsumeEnd)
	if len(dels) != 2 || len(starts) != 2 || len(ends) != 2 || dels[1].At >= ends[0].At || starts[1].At != ends[0].At {
		t.Fatalf("want the second message delivered while the first is consumed, started when it ends: %v %v %v", dels, starts, ends)
	}
	o1, o2 := s.meter.obs.at(1), s.meter.obs.at(2)
	if o1.part[partLocal] != 0 || int64(o2.part[partLocal]) != int64(ends[0].At.Sub(dels[1].At)) {
		t.Fatalf("local buffer waits %d and %d us, want 0 and %d", o1.part[partLocal], o2.part[partLocal], ends[0].At.Sub(dels[1].At))
	}
}

// Pull: a message the listener fails is retried on the same consumer
// after the backoff (1 s for the first retry); the failed attempt and the
// backoff are redelivery wait, and the ack part is 0 (success is the
// consumption's end). The seed is the first whose one message fails once,
// then succeeds.
func TestBreakdownPullLocalRetry(t *testing.T) {
	cfg := tinyConfig(Pull)
	cfg.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=0.5)")
	cfg.Duration, cfg.Drain = 5*clock.Second, clock.Minute
	for seed := uint64(1); seed <= 20; seed++ {
		cfg.Seed = seed
		s, r := runFinished(t, cfg, RunOptions{KeepEvents: true})
		dels := only(r, model.EvDeliver)
		if len(dels) != 2 {
			continue
		}
		noViolations(t, r)
		ends := only(r, model.EvConsumeEnd)
		want := [nParts]clock.Duration{
			partBroker:     dels[0].At.Sub(clock.Epoch),
			partRedelivery: dels[1].At.Sub(dels[0].At),
			partLocal:      0,
			partProcessing: 5 * clock.Millisecond,
			partAck:        0,
		}
		o := s.meter.obs.at(1)
		for p := range nParts {
			if int64(o.part[p]) != int64(want[p]) {
				t.Errorf("seed %d: part %s: %d us, want %d us", seed, model.Parts[p], o.part[p], want[p])
			}
		}
		if ends[0].Reason != model.RLater || want[partRedelivery] < clock.Second {
			t.Errorf("seed %d: first consumption %v, redelivery wait %v: want a failure and the 1 s backoff", seed, &ends[0], want[partRedelivery])
		}
		return
	}
	t.Fatal("no seed in 1..20 failed the message once and then consumed it")
}

// backlogStart is M/M/8 at 500/s (simple consumers, batch 1) that starts
// with 3000 messages queued: the backlog drains at about 300/s, so the
// first 10 s or so are a transient.
func backlogStart(d clock.Duration) Config {
	return Config{
		Seed:   1,
		Topics: []TopicSpec{{Name: "t", Queues: 1}},
		Producers: []ProducerSpec{{Topic: "t", Arrivals: arrivals("poisson(500/s)")},
			{Topic: "t", Arrivals: arrivals("backlog(3000)")}},
		Consumers: []ConsumerSpec{{Kind: Simple, Group: "g", Topic: "t", Count: 8, Threads: 1, Batch: 1, Processing: dist("exp(10ms)")}},
		Network:   NetworkSpec{RequestLatency: dist("const(0s)"), ResponseLatency: dist("const(0s)")},
		Duration:  d, Drain: 5 * clock.Minute,
	}
}

// warmup: auto cuts the transient MSER-5 finds and measures what follows;
// a run too short to leave it says so; a fixed warm-up cuts by the
// producers' send time.
func TestWarmupAuto(t *testing.T) {
	r, err := Run(backlogStart(60*clock.Second), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, s := r.Summary.Warmup, r.Summary
	if w.Rule != "MSER-5" || w.Failed || w.AtMs < 5000 || w.AtMs > 25000 || w.Of != s.Produced || w.Messages < 3000 {
		t.Fatalf("warm-up %+v (%s): want MSER-5 to cut the backlog's 5 to 25 s", w, w)
	}
	if s.EndToEnd.Count != w.Of-w.Messages || s.EndToEnd.Mean > 20_000 {
		t.Fatalf("after the cut: %+v, want %d messages at M/M/8's 10.6 ms mean", s.EndToEnd, w.Of-w.Messages)
	}
	iv, tp := s.Intervals.EndToEnd.Mean, s.Intervals.ThroughputPerSec
	if !iv.OK || iv.Lo > iv.Est || iv.Hi < iv.Est || math.Abs(iv.Est-float64(s.EndToEnd.Mean)) > 0.01*iv.Est {
		t.Fatalf("mean interval %+v: want one around the histogram's mean %d us", iv, s.EndToEnd.Mean)
	}
	if !tp.OK || tp.Lo < 450 || tp.Hi > 550 || math.Abs(tp.Est-s.ThroughputPerSec) > 5 {
		t.Fatalf("throughput %.1f/s, interval %+v: want about 500/s", s.ThroughputPerSec, tp)
	}
	t.Logf("%s; mean %s; throughput %s", w, fmtIv(iv), fmtIv(tp))

	short, err := Run(backlogStart(12*clock.Second), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := short.Summary.Warmup; !w.Failed || !strings.Contains(w.String(), "warning: ") {
		t.Fatalf("12 s run: %s, want MSER-5 to fail: the backlog lasts most of the run", w)
	}

	cfg := backlogStart(60 * clock.Second)
	cfg.Warmup = FixedWarmup(20 * clock.Second)
	fixed, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := fixed.Summary.Warmup; w.Rule != "fixed" || w.AtMs != 20_000 || w.Of != fixed.Summary.Produced || fixed.Summary.EndToEnd.Count != w.Of-w.Messages {
		t.Fatalf("fixed 20 s warm-up: %+v, end to end %+v", w, fixed.Summary.EndToEnd)
	}
}

func fmtIv(iv model.Interval) string {
	return strconv.FormatFloat(iv.Est, 'f', 0, 64) + " [" + strconv.FormatFloat(iv.Lo, 'f', 0, 64) + ", " + strconv.FormatFloat(iv.Hi, 'f', 0, 64) + "] " + iv.Note
}
