package sim

import (
	"slices"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// pullModeConfig is 4 push consumers with broker-assigned queues on 8
// queues, the group in PULL mode, 200 messages/s for 30 s.
func pullModeConfig() Config {
	cfg := assignedConfig(4, 8, 0)
	cfg.Groups[0].RequestMode = "pull"
	cfg.Consumers[0].Processing = dist("exp(5ms)")
	cfg.Duration = 30 * clock.Second
	return cfg
}

// switchConfig switches pullModeConfig's group to POP at 10 s: its
// consumers see it at their rebalance at 21 s.
func switchConfig(kv bool) Config {
	cfg := pullModeConfig()
	cfg.Groups[0].SwitchToPop = SwitchToPop{At: 10 * clock.Second}
	e := cfg.Engine.RocketMQ()
	e.PopConsumerKVServiceEnable = kv
	cfg.Engine.Settings = &e
	return cfg
}

// In PULL mode a consumer that takes its queues from the broker pulls
// them (a pull rebalance r=pull per queue, no lease), and a crash moves
// them: each member applies the new assignment at its own rebalance, so
// two pull one queue for a while, which the checker follows (rebalance
// duplicates, no violation).
func TestPullModeAssignedConsumersPull(t *testing.T) {
	cfg := pullModeConfig()
	cfg.Faults.Crash = CrashSpec{Every: 5 * clock.Second, RestartDelay: dist("uniform(1s,3s)")}
	r := runKeep(t, cfg)
	noViolations(t, r)
	if s := r.Summary; s.Acked != s.Produced || s.Produced == 0 {
		t.Fatalf("acked %d of %d", s.Acked, s.Produced)
	}
	if n := len(only(r, model.EvLease)); n > 0 {
		t.Fatalf("%d leases: a group in PULL mode pops nothing", n)
	}
	if len(only(r, model.EvPull)) == 0 || len(only(r, model.EvCrash)) == 0 {
		t.Fatal("no pulls or no crash: the test exercises neither")
	}
	for _, e := range only(r, model.EvRebalance) {
		if e.Reason != model.RPull && e.Reason != model.RDropped {
			t.Fatalf("rebalance %+v: want r=pull or r=dropped only", e)
		}
	}
}

// switchFacts are what a switch run did, read from its trace.
type switchFacts struct {
	pulled, popped [4][]int32 // per client: queues pulled before the switch, popped after
	lastPull       clock.Time // the last pull that kept its messages
	firstLease     clock.Time
	thrownAway     int64 // messages read by pulls their dropped queues had parked
	modes          []model.Event
}

func readSwitch(r *Result) switchFacts {
	var f switchFacts
	f.firstLease = clock.Time(1 << 62)
	for _, e := range r.Events {
		switch {
		case e.Kind == model.EvRequestMode:
			f.modes = append(f.modes, e)
		case e.Kind == model.EvRebalance && e.Reason == model.RPull:
			f.pulled[e.Client] = append(f.pulled[e.Client], e.Queue)
		case e.Kind == model.EvRebalance && e.Reason == model.RNone:
			f.popped[e.Client] = append(f.popped[e.Client], e.Queue)
		case e.Kind == model.EvPull && e.Reason == model.RDropped:
			f.thrownAway += int64(e.Count)
		case e.Kind == model.EvPull && e.Count > 0:
			f.lastPull = max(f.lastPull, e.At)
		case e.Kind == model.EvLease:
			f.firstLease = min(f.firstLease, e.At)
		}
	}
	return f
}

// The switch at 10 s is one request-mode event; the consumers pull their
// own 2 queues of 8 (AVG) until their rebalance at 21 s and pop every
// queue (popShareQueueNum 0: one all-queue pop each) from 21.5 s (the
// dispatch delay), never both at once. What the switch costs is the
// path's: the checkpoint path pops from the commit offset, which each
// consumer persisted as it dropped its pull queues, and loses nothing;
// the KV path pops from the pull offset, which the pulls the dropped
// queues had parked at the broker moved past the messages that woke them
// (read, then thrown away by the client): exactly those are lost.
func TestSwitchToPop(t *testing.T) {
	for _, kv := range []bool{false, true} {
		name := map[bool]string{false: "checkpoint", true: "kv"}[kv]
		t.Run(name, func(t *testing.T) {
			r := runKeep(t, switchConfig(kv))
			f := readSwitch(r)
			if len(f.modes) != 1 || f.modes[0].At != clock.Epoch.Add(10*clock.Second) || f.modes[0].Group != "g" || f.modes[0].Reason != model.RPop {
				t.Fatalf("request-mode events %+v: want one, r=pop, group g, at 10 s", f.modes)
			}
			rebalanced := clock.Epoch.Add(21 * clock.Second)
			popsFrom := rebalanced.Add(popDispatchDelay) // plus the 1 ms request latency
			if f.lastPull >= rebalanced || f.firstLease < popsFrom || f.firstLease > popsFrom.Add(2*clock.Millisecond) {
				t.Fatalf("last pull at %v, first lease at %v: want pulls before %v and pops from %v", f.lastPull, f.firstLease, rebalanced, popsFrom)
			}
			for c := range 4 {
				slices.Sort(f.pulled[c])
				slices.Sort(f.popped[c])
				if want := []int32{int32(2 * c), int32(2*c + 1)}; !slices.Equal(f.pulled[c], want) || !slices.Equal(f.popped[c], []int32{-1}) {
					t.Errorf("client %d pulled %v and popped %v: want %v, then every queue (-1)", c, f.pulled[c], f.popped[c], want)
				}
			}
			s := r.Summary
			if f.thrownAway == 0 {
				t.Fatal("no parked pull answered after its queue was dropped: the test pins nothing")
			}
			if !kv {
				noViolations(t, r)
				if s.Lost != 0 || s.Acked != s.Produced {
					t.Fatalf("lost %d, acked %d of %d: the checkpoint path re-reads from the commit offset", s.Lost, s.Acked, s.Produced)
				}
				for cause := range s.DuplicatesByCause {
					if cause != "mode_switch" {
						t.Errorf("duplicates by %s: only the switch may cause them here (%v)", cause, s.DuplicatesByCause)
					}
				}
				return
			}
			if s.Lost != f.thrownAway {
				t.Fatalf("lost %d, thrown away by dropped queues %d: want the same", s.Lost, f.thrownAway)
			}
			for _, v := range s.Violations {
				if v.Invariant != "lost" && v.Invariant != "no-drain" {
					t.Errorf("violation %s: %s", v.Invariant, v.Detail)
				}
			}
		})
	}
}

// The switch is checked where it is written.
func TestSwitchValidation(t *testing.T) {
	checkValidation(t, func() Config { return switchConfig(false) }, []validationCase{
		{"valid", func(*Config) {}, ""},
		{"at zero share", func(c *Config) { c.Groups[0].SwitchToPop = SwitchToPop{PopShareQueueNum: 2} },
			"groups[0].switchToPop.at: 0s: want a time inside the safety phase, 1ms..29.999s"},
		{"at the end", func(c *Config) { c.Groups[0].SwitchToPop.At = 30 * clock.Second }, "groups[0].switchToPop.at: 30s"},
		{"starts in POP", func(c *Config) { c.Groups[0].RequestMode = "pop" }, `group "g" starts in POP mode`},
		{"broker default POP", func(c *Config) {
			c.Groups[0].RequestMode = ""
			e := c.Engine.RocketMQ()
			e.DefaultMessageRequestMode = pop.RequestModePop
			c.Engine.Settings = &e
		}, `group "g" starts in POP mode`},
		{"client rebalance", func(c *Config) { pushSettings(&c.Consumers[0]).ClientRebalance = defaultOnTrue },
			"consumers[0]: group \"g\" switches to POP: want kind pop-push with clientRebalance: false"},
		{"orderly", func(c *Config) { c.Groups[0].ConsumeMessageOrderly = true }, `group "g" consumes orderly`},
		{"no consumers", func(c *Config) {
			c.Groups = append(c.Groups, GroupSpec{Name: "other", SwitchToPop: SwitchToPop{At: clock.Second}})
		},
			`groups[1].switchToPop: group "other" has none`},
	})
}
