package sim

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeebo/xxh3"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
)

// shortDefault is DefaultConfig cut to 10 s of virtual time.
func shortDefault(seed uint64) Config {
	cfg := DefaultConfig()
	cfg.Seed, cfg.Duration = seed, 10*clock.Second
	return cfg
}

func TestSameSeedSameTrace(t *testing.T) {
	var text bytes.Buffer
	a, err := Run(shortDefault(3), RunOptions{TraceWriter: &text, KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(shortDefault(3), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.TraceXXH3 != b.Summary.TraceXXH3 {
		t.Fatalf("seed 3 twice: trace hashes %s and %s", a.Summary.TraceXXH3, b.Summary.TraceXXH3)
	}
	if d := cmp.Diff(a.Summary, b.Summary); d != "" {
		t.Fatalf("seed 3 twice: summaries differ (-first +second):\n%s", d)
	}
	var bin []byte
	for i := range a.Events {
		bin = a.Events[i].AppendBinary(bin)
	}
	sum := xxh3.Hash128(bin).Bytes() // in one call, where the tracer hashes 64 KiB at a time
	if hex.EncodeToString(sum[:]) != a.Summary.TraceXXH3 {
		t.Fatal("the trace hash is not the XXH3-128 of the events' binary forms")
	}
	for i, line := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
		e, err := model.ParseEvent(line)
		if err != nil || i >= len(a.Events) || e != a.Events[i] {
			t.Fatalf("trace line %d %q reads back as %+v (%v), want the event kept: %+v", i, line, e, err, a.Events[min(i, len(a.Events)-1)])
		}
	}
	if int64(len(a.Events)) != a.TraceEvents() || a.TraceEvents() != int64(strings.Count(text.String(), "\n")) {
		t.Fatalf("%d kept events, %d trace events, %d lines", len(a.Events), a.TraceEvents(), strings.Count(text.String(), "\n"))
	}
	for i, e := range a.Events {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has Seq %d", i, e.Seq)
		}
	}
	c, err := Run(shortDefault(4), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary.TraceXXH3 == a.Summary.TraceXXH3 {
		t.Fatal("seeds 3 and 4 gave the same trace")
	}
}

func TestSelfCheck(t *testing.T) {
	cfg := allFaultFamilies(5)
	cfg.Faults.Swarm = true
	if err := SelfCheck(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestSelfCheckNamesTheFirstDivergentEvent(t *testing.T) {
	a := [][traceHashSize]byte{{1}, {2}, {3}}
	b := [][traceHashSize]byte{{1}, {2}, {4}}
	if w := firstDivergentWindow(a, b); w != 2 {
		t.Fatalf("first divergent window %d, want 2", w)
	}
	if w := firstDivergentWindow(a, a[:2]); w != 2 {
		t.Fatalf("a run that stopped early: window %d, want 2", w)
	}
	ca := &capture{traceHash: strings.Repeat("a", 32)}
	cb := &capture{traceHash: strings.Repeat("b", 32)}
	err := divergence(9, ca, cb, 8192, []string{"8192 x", "8193 y"}, []string{"8192 x", "8193 z"})
	if err == nil || !strings.Contains(err.Error(), "first divergent event #8193") || !strings.Contains(err.Error(), "8193 z") {
		t.Fatalf("divergence report: %v", err)
	}
}

// Without faults every message is acked once: no duplicates, nothing lost,
// no violation, and the run drains.
func TestFaultFreeRunAcksEverything(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := shortDefault(1)
			cfg.Faults = FaultSpec{}
			cfg.Network.Loss = LossSpec{}
			cfg.Consumers[0].Kind = kind
			cfg.Consumers[0].Outcomes = workload.Outcomes{}
			r, err := Run(cfg, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := r.Summary
			noViolations(t, r)
			if s.Produced == 0 || s.Acked != s.Produced || s.Duplicates != 0 || s.Lost != 0 || s.Deliveries != s.Produced {
				t.Fatalf("produced %d acked %d deliveries %d duplicates %d lost %d", s.Produced, s.Acked, s.Deliveries, s.Duplicates, s.Lost)
			}
			if s.EndToEnd.Count == 0 || s.EndToEnd.P50 <= 0 || s.ServiceTime.Count == 0 {
				t.Fatalf("latency summaries %+v %+v", s.EndToEnd, s.ServiceTime)
			}
			for k, v := range s.Coverage {
				if v != 0 && k != "flow-control" {
					t.Errorf("coverage %s = %d in a fault-free run", k, v)
				}
			}
		})
	}
}

// allFaultFamilies is DefaultConfig, shortened, with every fault family
// configured at a rate that fires several times per run.
func allFaultFamilies(seed uint64) Config {
	cfg := DefaultConfig()
	cfg.Seed, cfg.Duration = seed, 15*clock.Second
	cfg.Producers[0].Arrivals = arrivals("poisson(300/s)")
	cfg.Faults = FaultSpec{
		Crash: CrashSpec{Every: 30 * clock.Second}, Pause: PauseSpec{Every: 20 * clock.Second}, Slow: SlowSpec{Every: 30 * clock.Second},
		Renew:         RenewSpec{SameDeadline: 5000, AtExpiry: 5000, AfterRevive: 5000},
		BrokerRestart: BrokerRestartSpec{Every: 20 * clock.Second}, RevivePutFailure: 50_000, ClockSkew: 500 * clock.Millisecond,
	}
	cfg.Network.Loss = LossSpec{Pop: LossPair{200, 200}, Ack: LossPair{5000, 5000}, Change: LossPair{5000, 5000}, Pull: LossPair{1000, 1000}}
	return cfg
}

// The seed sweep: every fault family over DefaultConfig, half the seeds in
// swarm mode. Every seed must pass the checker.
func TestSeedSweepAllFaults(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	cov := map[string]int64{}
	failed := 0
	for seed := 1; seed <= seeds; seed++ {
		cfg := allFaultFamilies(uint64(seed))
		cfg.Faults.Swarm = seed%2 == 0
		r, err := Run(cfg, RunOptions{Replay: "go test ./sim -run TestSeedSweepAllFaults"})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for k, v := range r.Summary.Coverage {
			cov[k] += v
		}
		if v := r.Summary.Violations; len(v) > 0 {
			failed++
			t.Errorf("seed %d (swarm %v): %d violations, first %s: %s", seed, cfg.Faults.Swarm, len(v), v[0].Invariant, v[0].Detail)
		}
	}
	t.Logf("%d seeds, %d failed", seeds, failed)
	for _, k := range []string{"crash", "pause", "slow", "lost-ack-request", "lost-ack-response", "renew-same-deadline", "renew-at-expiry", "renew-after-revive", "broker-restart", "revive-put-failure", "clock-skew"} {
		if cov[k] == 0 {
			t.Errorf("the sweep never exercised %s", k)
		}
	}
}

// The same sweep for the simple consumer (through its proxy, auto-renew
// on every third seed) and the Pull baseline (rebalances, local retries,
// committed offsets): every seed must pass the checker.
func TestSeedSweepOtherKinds(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, kind := range []ConsumerKind{Simple, Pull} {
		for seed := 1; seed <= seeds; seed++ {
			cfg := allFaultFamilies(uint64(seed))
			cfg.Faults.Swarm = seed%2 == 0
			cfg.Consumers[0].Kind, cfg.Consumers[0].Settings = kind, nil
			if kind == Simple {
				cfg.Consumers[0].Settings = &SimpleSettings{AutoRenew: seed%3 == 0}
			}
			r, err := Run(cfg, RunOptions{Replay: "go test ./sim -run TestSeedSweepOtherKinds"})
			if err != nil {
				t.Fatalf("%s seed %d: %v", kind, seed, err)
			}
			if v := r.Summary.Violations; len(v) > 0 {
				t.Errorf("%s seed %d (swarm %v): %d violations, first %s: %s", kind, seed, cfg.Faults.Swarm, len(v), v[0].Invariant, v[0].Detail)
			}
		}
	}
}

func TestSeriesAndThroughput(t *testing.T) {
	cfg := shortDefault(2)
	cfg.Faults = FaultSpec{}
	cfg.Network.Loss = LossSpec{}
	cfg.Consumers[0].Outcomes = workload.Outcomes{}
	r, err := Run(cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if len(s.Series) < 10 {
		t.Fatalf("%d series points for 10 s at 1 s", len(s.Series))
	}
	var produced, acked int64
	for _, p := range s.Series {
		produced += p.Produced
		acked += p.Acked
	}
	if produced != s.Produced || acked != s.Acked {
		t.Fatalf("series sums: produced %d acked %d; summary %d %d", produced, acked, s.Produced, s.Acked)
	}
	if s.ThroughputPerSec < 900 || s.ThroughputPerSec > 1100 {
		t.Fatalf("throughput %.1f/s for a 1000/s Poisson load", s.ThroughputPerSec)
	}
	if r.EndToEnd.TotalCount() != s.EndToEnd.Count || s.EndToEnd.P99 > int64(clock.Second) {
		t.Fatalf("end to end %+v", s.EndToEnd)
	}
}

func TestPhasesAreTraced(t *testing.T) {
	r := runKeep(t, tinyConfig(PopPush))
	var phases []string
	for _, e := range only(r, model.EvPhase) {
		phases = append(phases, e.Reason.String())
	}
	if strings.Join(phases, ",") != "safety,liveness,done" {
		t.Fatalf("phases %v", phases)
	}
}
