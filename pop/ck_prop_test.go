package pop_test

// The checkpoint path's at-least-once property, and the hunt for each of
// its upstream-bug switches. A case is a short schedule of client
// operations (produce, pop, ack, let time pass with the services driven
// as the simulator will drive them) on a checkpoint-path broker, then a
// drain: faults off, every message popped and acked until nothing is left.
// Two invariants, as the simulator's checker states them (sim/check):
//
//   - lost: every produced message is acked in the end (an ack of one of
//     its deliveries answered SUCCESS, a late one too);
//   - redelivered after an accepted ack: no lease whose ack the broker
//     accepted (merged: Removed; written: Pending) is revived later.
//
// With every switch off the property holds (TestCkAtLeastOnce, with write
// and read faults). With a switch on, rapid finds a counterexample and
// shrinks it to a few operations (TestCkBugsCaught); the shrunk case
// passes with the switch off. rapid runs on a recording TB so that the
// failure it finds is a result to inspect.

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/internal/rapidfail"
	"popsim/model"
	"popsim/pop"
)

// ckOp is one client operation of a case.
type ckOp struct {
	kind string         // put, pop, ack, drive
	n    int            // put: messages; ack: which delivery (mod the number held)
	d    clock.Duration // pop: invisible time; drive: how long
}

func (o ckOp) String() string {
	switch o.kind {
	case "put":
		return fmt.Sprintf("put %d", o.n)
	case "pop":
		return fmt.Sprintf("pop it=%v", o.d)
	case "ack":
		return fmt.Sprintf("ack #%d", o.n)
	}
	return fmt.Sprintf("drive %v", o.d)
}

// ckCase is a configuration, the faults of its schedule and the schedule.
type ckCase struct {
	cfg    pop.Config
	faults pop.Faults
	ops    []ckOp
}

func (c *ckCase) String() string {
	var ops []string
	for _, o := range c.ops {
		ops = append(ops, o.String())
	}
	return fmt.Sprintf("bugs %+v, faults %+v, merge %v: %s", c.cfg.Bugs, c.faults, c.cfg.EnablePopBufferMerge, strings.Join(ops, "; "))
}

// ckRun is one run's bookkeeping.
type ckRun struct {
	b        *pop.Broker
	now      clock.Time
	held     []pop.PoppedMessage
	accepted map[model.LeaseID]bool // leases whose ack was accepted
	acked    map[string]bool        // messages acked by an accepted ack
	produced int
	res      pop.PopResult
	viol     []string
}

func (r *ckRun) drive(d clock.Duration) {
	until := r.now.Add(d)
	for {
		t, ok := r.b.NextCheckpointTick()
		if !ok || t > until {
			break
		}
		r.now = max(r.now, t)
		res := r.b.CheckpointTick(r.now)
		for _, rv := range res.Revivals {
			if rv.Outcome == pop.Revived && r.accepted[rv.Lease] && len(r.viol) < 3 {
				r.viol = append(r.viol, fmt.Sprintf("redelivered after an accepted ack: lease %d (%s) revived at %v", rv.Lease, rv.UniqKey, r.now))
			}
		}
	}
	r.now = until
}

func (r *ckRun) pop(it clock.Duration) {
	req := pop.PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: it}
	r.b.Pop(r.now, &req, &r.res)
	for _, m := range r.res.Messages {
		m.Message.Body, m.Message.Properties = nil, nil
		r.held = append(r.held, m)
	}
}

func (r *ckRun) ack(m *pop.PoppedMessage) {
	a := pop.NewAckRequest("g", "t", &m.Handle)
	res := r.b.Ack(r.now, &a)
	if res.Code != model.Success {
		return
	}
	for _, l := range []model.LeaseID{res.Removed, res.Pending} {
		if l != 0 {
			r.accepted[l] = true
		}
	}
	r.acked[m.Message.UniqKey] = true // an accepted ack of a delivery, late ones too
}

// run plays the case and returns its violations.
func (c *ckCase) run() ([]string, error) {
	b, err := pop.New(c.cfg)
	if err != nil {
		return nil, err
	}
	if err := b.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		return nil, err
	}
	if err := b.CreateGroup(pop.DefaultGroup("g")); err != nil {
		return nil, err
	}
	if err := b.SetFaults(c.faults); err != nil {
		return nil, err
	}
	r := &ckRun{b: b, now: clock.Epoch, accepted: map[model.LeaseID]bool{}, acked: map[string]bool{}}
	for _, o := range c.ops {
		r.now = r.now.Add(clock.Millisecond) // clients are not instantaneous (ck_change.txt)
		switch o.kind {
		case "put":
			for i := 0; i < o.n; i++ {
				r.produced++
				b.Put(r.now, &model.Message{Topic: "t", QueueID: int32(r.produced % 2), UniqKey: fmt.Sprintf("m%d", r.produced)})
			}
		case "pop":
			r.pop(o.d)
		case "ack":
			if len(r.held) > 0 {
				r.ack(&r.held[o.n%len(r.held)])
			}
		case "drive":
			r.drive(o.d)
		}
		if err := b.CheckInvariants(); err != nil {
			return nil, err
		}
	}
	// drain: faults off, pop and ack everything until nothing is left
	if err := b.SetFaults(pop.Faults{}); err != nil {
		return nil, err
	}
	for i := 0; i < 150 && (len(r.acked) < r.produced || b.InFlightCount() > 0); i++ {
		r.drive(30 * clock.Second)
		r.pop(60 * clock.Second)
		for j := range r.res.Messages {
			r.ack(&r.res.Messages[j])
		}
	}
	r.drive(time5m)
	var lost []string
	for i := 1; i <= r.produced; i++ {
		if k := fmt.Sprintf("m%d", i); !r.acked[k] {
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		r.viol = append(r.viol, fmt.Sprintf("lost: %v never acked (the drain ran %v)", lost, r.now.Sub(clock.Epoch)))
	}
	return r.viol, b.CheckInvariants()
}

const time5m = 5 * clock.Minute

// ckGen says how a hunt draws its cases.
type ckGen struct {
	bugs   pop.Bugs
	faults func(rt *rapid.T) pop.Faults
}

func drawCkCase(rt *rapid.T, g *ckGen) *ckCase {
	cfg := pop.DefaultConfig()
	cfg.Bugs = g.bugs
	cfg.EnablePopBufferMerge = rapid.Bool().Draw(rt, "merge")
	cfg.Seed = rapid.Uint64Range(0, 1000).Draw(rt, "seed")
	c := &ckCase{cfg: cfg}
	if g.faults != nil {
		c.faults = g.faults(rt)
	}
	op := rapid.Custom(func(t *rapid.T) ckOp {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return ckOp{kind: "put", n: rapid.IntRange(1, 3).Draw(t, "n")}
		case 1:
			return ckOp{kind: "pop", d: rapid.SampledFrom([]clock.Duration{clock.Second, 5 * clock.Second, 60 * clock.Second}).Draw(t, "it")}
		case 2:
			return ckOp{kind: "ack", n: rapid.IntRange(0, 40).Draw(t, "which")}
		}
		return ckOp{kind: "drive", d: rapid.SampledFrom([]clock.Duration{100 * clock.Millisecond, clock.Second, 10 * clock.Second, 40 * clock.Second}).Draw(t, "d")}
	})
	c.ops = rapid.SliceOfN(op, 1, 24).Draw(rt, "ops")
	return c
}

// TestCkAtLeastOnce: with every switch off the property holds, under
// retry-write and revive-read faults too.
func TestCkAtLeastOnce(t *testing.T) {
	pinRapidDefaults(t)
	g := &ckGen{faults: func(rt *rapid.T) pop.Faults {
		return pop.Faults{Seed: rapid.Uint64().Draw(rt, "faultSeed"),
			RetryWritePPM: rapid.SampledFrom([]int64{0, 300_000, 1_000_000}).Draw(rt, "retryWritePPM"),
			ReviveReadPPM: rapid.SampledFrom([]int64{0, 300_000, 1_000_000}).Draw(rt, "reviveReadPPM")}
	}}
	rapid.Check(rapidfail.Strict(t), func(rt *rapid.T) {
		c := drawCkCase(rt, g)
		viol, err := c.run()
		if err != nil {
			rt.Fatalf("%v\ncase: %s", err, c)
		}
		if len(viol) > 0 {
			rt.Fatalf("%s\ncase: %s", strings.Join(viol, "\n"), c)
		}
	})
}

// recTB is a rapid.TB that records what rapid reports instead of failing.
type recTB struct {
	name   string
	failed bool
	out    []string
}

func (r *recTB) Helper()                           {}
func (r *recTB) Name() string                      { return r.name }
func (r *recTB) Logf(format string, args ...any)   { r.out = append(r.out, fmt.Sprintf(format, args...)) }
func (r *recTB) Log(args ...any)                   { r.out = append(r.out, fmt.Sprint(args...)) }
func (r *recTB) Errorf(format string, args ...any) { r.failed = true; r.Logf(format, args...) }
func (r *recTB) Error(args ...any)                 { r.failed = true; r.Log(args...) }
func (r *recTB) Fatalf(format string, args ...any) { r.failed = true; r.Logf(format, args...) }
func (r *recTB) Fatal(args ...any)                 { r.failed = true; r.Log(args...) }
func (r *recTB) FailNow()                          { r.failed = true }
func (r *recTB) Fail()                             { r.failed = true }
func (r *recTB) Failed() bool                      { return r.failed }
func (r *recTB) Skipf(format string, a ...any)     { panic("rapid skipped: " + fmt.Sprintf(format, a...)) }
func (r *recTB) Skip(args ...any)                  { panic("rapid skipped: " + fmt.Sprint(args...)) }
func (r *recTB) SkipNow()                          { panic("rapid skipped") }

func setFlags(t *testing.T, kv ...string) {
	for i := 0; i < len(kv); i += 2 {
		f := flag.Lookup(kv[i])
		if f == nil {
			t.Fatalf("no flag -%s", kv[i])
		}
		old := f.Value.String()
		if err := flag.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(f.Name, old) })
	}
}

// TestCkBugsCaught: each checkpoint-path switch is found by the property
// and shrunk to a few operations; the shrunk case passes with the switch
// off.
func TestCkBugsCaught(t *testing.T) {
	hunts := []struct {
		name     string
		gen      ckGen
		want     string
		maxOps   int
		fixedOff func(b *pop.Bugs)
	}{
		{"reviveReadFailureLosesRetry", ckGen{bugs: pop.Bugs{ReviveReadFailureLosesRetry: true},
			faults: func(*rapid.T) pop.Faults { return pop.Faults{ReviveReadPPM: 1_000_000} }},
			"lost", 3, func(b *pop.Bugs) { b.ReviveReadFailureLosesRetry = false }},
		{"rePutCkLosesBrokerName", ckGen{bugs: pop.Bugs{RePutCkLosesBrokerName: true},
			faults: func(*rapid.T) pop.Faults {
				return pop.Faults{Writes: []pop.WriteFault{{Topic: model.BuildPopRetryTopicV1("t", "g"), QueueID: -1, Count: 1}}}
			}},
			"lost", 3, func(b *pop.Bugs) { b.RePutCkLosesBrokerName = false }},
		{"delayLevelTimer", ckGen{bugs: pop.Bugs{DelayLevelTimer: true}},
			"redelivered after an accepted ack", 4, func(b *pop.Bugs) { b.DelayLevelTimer = false }},
	}
	for _, h := range hunts {
		t.Run(h.name, func(t *testing.T) {
			// A generous shrink time: under load rapid's default (30 s) can
			// stop shrinking early and leave a longer case than the bound.
			setFlags(t, "rapid.checks", "100", "rapid.seed", "1", "rapid.nofailfile", "true", "rapid.shrinktime", "10m")
			var last *ckCase
			var lastViol []string
			rec := &recTB{name: t.Name()}
			rapid.Check(rec, func(rt *rapid.T) {
				c := drawCkCase(rt, &h.gen)
				viol, err := c.run()
				if err != nil {
					rt.Fatalf("the run failed: %v", err)
				}
				for _, v := range viol {
					if strings.HasPrefix(v, h.want) {
						last, lastViol = c, viol // rapid replays the shrunk case last
						rt.Fatalf("%s", v)
					}
				}
			})
			if !rec.failed || last == nil {
				t.Fatalf("rapid did not find %s", h.name)
			}
			if len(last.ops) > h.maxOps {
				t.Errorf("shrunk to %d operations, want at most %d: %s", len(last.ops), h.maxOps, last)
			}
			fixed := *last
			h.fixedOff(&fixed.cfg.Bugs)
			if viol, err := fixed.run(); err != nil || len(viol) > 0 {
				t.Errorf("the shrunk case fails with the switch off too: %v %v\ncase: %s", viol, err, &fixed)
			}
			t.Logf("shrunk: %s\n  %s", last, strings.Join(lastViol, "\n  "))
		})
	}
}
