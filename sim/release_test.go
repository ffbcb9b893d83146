package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/pop"
	"popsim/workload"
)

// A run the broker may release consumed messages in (KV path, simple
// consumers, no broker restart) releases most of them, under the default
// scenario's faults (crashes, pauses, lost acks, failed revive writes),
// and its trace and summary are exactly those of the same run keeping
// every message.
func TestReleaseKeepsTheRun(t *testing.T) {
	cfg := releasableConfig(20 * clock.Second)
	releasing := func(a *rocketMQ) bool { return a.release != nil }
	kept, _ := runReleasing(t, cfg, releasing, func(a *rocketMQ) { a.release = nil })
	freed, n := runReleasing(t, cfg, releasing, func(*rocketMQ) {})
	if produced := freed.Summary.Produced; n < int(produced)/2 {
		t.Fatalf("released %d of %d messages", n, produced)
	}
	sameRun(t, kept, freed)
}

// On the checkpoint path, a run without broker restarts frees the revive
// topic's consumed CK and ack messages (at least one ack message per
// message acked), under the default configuration's faults, and its
// trace and summary are exactly those of the same run keeping them.
func TestReleaseReviveKeepsTheRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 20 * clock.Second
	releasing := func(a *rocketMQ) bool { return a.releaseRevive }
	kept, _ := runReleasing(t, cfg, releasing, func(a *rocketMQ) { a.releaseRevive = false })
	freed, n := runReleasing(t, cfg, releasing, func(*rocketMQ) {})
	if produced := freed.Summary.Produced; n < int(produced)/2 {
		t.Fatalf("released %d revive-topic messages, %d messages produced", n, produced)
	}
	sameRun(t, kept, freed)
}

// runReleasing runs cfg, which releasing must report releasable, after
// edit, and returns its result and how many messages it released.
func runReleasing(t *testing.T, cfg Config, releasing func(*rocketMQ) bool, edit func(*rocketMQ)) (*Result, int) {
	t.Helper()
	s := newTestSim(t, cfg, RunOptions{})
	a := s.eng.(*rocketMQ)
	if !releasing(a) {
		t.Fatal("the run is not releasable")
	}
	edit(a)
	return finishTestSim(t, s), a.released
}

// sameRun fails unless the two runs' traces and summaries are the same.
func sameRun(t *testing.T, kept, freed *Result) {
	t.Helper()
	a, _ := json.Marshal(kept.Summary)
	b, _ := json.Marshal(freed.Summary)
	if kept.Summary.TraceXXH3 != freed.Summary.TraceXXH3 || string(a) != string(b) {
		t.Fatalf("releasing changed the run:\n%s\n%s", a, b)
	}
}

// Runs that could read below the commit offsets keep every message. Runs
// whose consumers may renew release too, keeping what a renewal may still
// name: they track their clients' handles (mayRenew, pins.go).
func TestReleasable(t *testing.T) {
	nacking, err := workload.NewOutcomes(10_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Config, *RunOptions){
		"pop-push":       func(c *Config, _ *RunOptions) { c.Consumers[0].Kind = PopPush },
		"broker-restart": func(c *Config, _ *RunOptions) { c.Faults.BrokerRestart.Every = clock.Minute },
		"broker-stop":    func(c *Config, _ *RunOptions) { c.Faults.BrokerStop.Every = clock.Minute },
		"orderly": func(c *Config, _ *RunOptions) {
			c.Groups = []GroupSpec{{Name: c.Consumers[0].Group, ConsumeMessageOrderly: true}}
		},
	} {
		cfg := quietSimpleConfig()
		var opts RunOptions
		edit(&cfg, &opts)
		s := &sim{cfg: &cfg, opts: opts}
		if s.releasable() {
			t.Errorf("%s: releasable", name)
		}
		if restarts := name == "broker-restart" || name == "broker-stop"; s.neverRestarts() == restarts {
			t.Errorf("%s: neverRestarts %v", name, !restarts)
		}
	}
	for name, edit := range map[string]func(*Config, *RunOptions){
		"renew-after-revive": func(c *Config, _ *RunOptions) { c.Faults.Renew.AfterRevive = 1 },
		"renew-at-expiry":    func(c *Config, _ *RunOptions) { c.Faults.Renew.AtExpiry = 1 },
		"scheduled-renewals": func(_ *Config, o *RunOptions) { o.renews = true },
		"reconsume-later":    func(c *Config, _ *RunOptions) { c.Consumers[0].Outcomes = nacking },
		"auto-renew":         func(c *Config, _ *RunOptions) { c.Consumers[0].Settings = &SimpleSettings{AutoRenew: true} },
	} {
		cfg := quietSimpleConfig()
		var opts RunOptions
		edit(&cfg, &opts)
		if s := (&sim{cfg: &cfg, opts: opts}); !s.releasable() || !s.mayRenew() {
			t.Errorf("%s: releasable %v, renews %v; want both", name, s.releasable(), s.mayRenew())
		}
	}
	cfg := quietSimpleConfig()
	if s := (&sim{cfg: &cfg}); !s.releasable() || s.mayRenew() {
		t.Error("a simple-consumer run without restarts or renewals: not releasable, or renews")
	}
}

// renewingConfig is releasableConfig whose consumers renew every way
// they can: the proxy's auto-renewal, RECONSUME_LATER answers and the
// three injected renewal edges, late stale handles among them, often
// enough that some reach the broker after their record's revive or ack.
func renewingConfig(d clock.Duration) Config {
	cfg := releasableConfig(d)
	nacking, err := workload.NewOutcomes(100_000, 0)
	if err != nil {
		panic(err)
	}
	cfg.Consumers[0].Outcomes = nacking
	cfg.Consumers[0].Settings = &SimpleSettings{AutoRenew: true}
	cfg.Faults.Renew = RenewSpec{SameDeadline: 20_000, AtExpiry: 20_000, AfterRevive: 100_000}
	return cfg
}

// A run whose consumers renew releases what no handle a client may still
// send names (pins.go), and its trace and summary are exactly those of
// the same run keeping every message. Its late renewals land on kept
// messages: with the invariants build tag, every engine check passes (no
// in-flight record on a released message), and without it a revive of a
// released message would panic. At its end no pin outlives what it pins.
func TestReleaseWithRenewalsKeepsTheRun(t *testing.T) {
	cfg := renewingConfig(30 * clock.Second)
	releasing := func(a *rocketMQ) bool { return a.release != nil && a.s.pins != nil }
	kept, _ := runReleasing(t, cfg, releasing, func(a *rocketMQ) { a.release = nil })
	s := newTestSim(t, cfg, RunOptions{})
	a := s.eng.(*rocketMQ)
	if !releasing(a) {
		t.Fatal("the renewing run does not release with pins")
	}
	freed := finishTestSim(t, s)
	if produced := freed.Summary.Produced; a.released < int(produced)/4 {
		t.Fatalf("released %d of %d messages", a.released, produced)
	}
	sameRun(t, kept, freed)
	s.pins.floor(0, "", nil) // drops the pins of dead incarnations
	if n := len(s.pins.ps); n > 0 {
		t.Errorf("%d pins left after the drained run: %+v", n, s.pins.ps[0])
	}
}

// The case the property test shrank when runs with renewals released
// without pins: two auto-renewing simple consumers on a 65-message backlog
// (a whole chunk to free), a renewal with the delivery's handle after
// every revive. A late renewal lands on an offset below the commit
// offset; released, its record's revive would read a freed message. With
// pins the message is kept (here the whole first chunk, as one of its
// messages is held, auto-renewed, to the end); without them the engine's
// check names the record (with the invariants build tag, while the run
// goes on).
func TestReleaseLateRenewalPinned(t *testing.T) {
	k := propKnobs{kind: Simple, consumers: 2, threads: 1, batch: 1, invisible: 10 * clock.Second, poll: 5 * clock.Second,
		processing: "mix(0.9:const(5ms),0.1:exp(10s))", reconsume: "0", maxReconsume: 1, autoRenew: true,
		messages: 65, arrivals: "backlog(65)", queues: 1, restart: clock.Second, seed: 9874619, drain: propDrain}
	sched := Schedule{{Kind: FaultRenewAfterRevive, For: 100 * clock.Millisecond}}
	for _, pinned := range []bool{true, false} {
		var err error // the engine's first check that failed, once a second
		steps := []scriptStep{{f: func(x *sim) {
			if !pinned {
				x.pins = nil
			}
		}}}
		for at := clock.Second; at <= propDuration+propDrain; at += clock.Second {
			steps = append(steps, scriptStep{after: at, f: func(x *sim) {
				if err == nil {
					err = x.eng.(*rocketMQ).b.CheckInvariants()
				}
			}})
		}
		func() {
			defer func() {
				if p := recover(); p != nil && err == nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			if _, rerr := RunScheduled(k.config(pop.Bugs{}), sched, RunOptions{script: steps}); rerr != nil {
				t.Fatal(rerr)
			}
		}()
		switch {
		case pinned && err != nil:
			t.Errorf("pinned: %v", err)
		case !pinned && (err == nil || !strings.Contains(err.Error(), "released")):
			t.Errorf("without pins: %v, want an in-flight record on a released message", err)
		}
	}
}

// quietSimpleConfig is DefaultConfig with simple consumers that never
// renew: no injected renewals and no RECONSUME_LATER (its other faults
// stay).
func quietSimpleConfig() Config {
	cfg := DefaultConfig()
	cfg.Consumers[0].Kind = Simple
	cfg.Consumers[0].Settings = nil
	cfg.Consumers[0].Outcomes = workload.Outcomes{}
	cfg.Faults.Renew = RenewSpec{}
	return cfg
}

// releasableConfig is the default scenario, with its faults, for d on the
// KV path with simple consumers: a run the broker may release in.
func releasableConfig(d clock.Duration) Config {
	cfg := quietSimpleConfig()
	cfg.Duration = d
	kv := pop.KVConfig()
	cfg.Engine = EngineSpec{Kind: RocketMQ, Settings: &kv}
	return cfg
}

// A fault schedule that restarts or stops the broker keeps every message
// (a crash restores the commit offsets last flushed), one without does not.
func TestReleaseScheduled(t *testing.T) {
	cfg := releasableConfig(2 * clock.Second)
	for _, c := range []struct {
		kind    FaultKind
		release bool
	}{{FaultBrokerRestart, false}, {FaultBrokerStop, false}, {FaultCrash, true}} {
		var releasing, revive bool
		look := scriptStep{after: clock.Second, f: func(s *sim) { releasing = s.eng.(*rocketMQ).release != nil }}
		if _, err := RunScheduled(cfg, Schedule{{At: clock.Second, Kind: c.kind}}, RunOptions{script: []scriptStep{look}}); err != nil {
			t.Fatal(err)
		}
		ck := cfg
		ck.Engine = EngineSpec{}
		ck.Consumers = DefaultConfig().Consumers
		lookCK := scriptStep{after: clock.Second, f: func(s *sim) { revive = s.eng.(*rocketMQ).releaseRevive }}
		if _, err := RunScheduled(ck, Schedule{{At: clock.Second, Kind: c.kind}}, RunOptions{script: []scriptStep{lookCK}}); err != nil {
			t.Fatal(err)
		}
		if releasing != c.release || revive != c.release {
			t.Errorf("schedule with %s: releasing %v, revive topic %v, want %v", c.kind, releasing, revive, c.release)
		}
	}
}
