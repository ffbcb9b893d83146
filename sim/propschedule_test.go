package sim

// Tests of the explicit fault schedule (schedule.go): each step kind fires
// at its time and only then, windows nest, validation names the step.

import (
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// scheduleConfig is a steady 100 msg/s to 2 consumers for 10 s, no
// rate-driven faults, a fixed network and a 2 s restart delay, on the KV
// path (these tests' timings are its revive's).
func scheduleConfig() Config {
	kv := pop.KVConfig()
	return Config{
		Seed:      7,
		Engine:    EngineSpec{Settings: &kv},
		Topics:    []TopicSpec{{Name: "t", Queues: 2}},
		Producers: []ProducerSpec{{Topic: "t", Arrivals: arrivals("const(100/s)")}},
		Consumers: []ConsumerSpec{{Kind: PopPush, Group: "g", Topic: "t", Count: 2, Threads: 2, Processing: dist("const(5ms)"), Settings: &PopPushSettings{InvisibleTime: 5 * clock.Second}}},
		Network:   NetworkSpec{RequestLatency: dist("const(1ms)"), ResponseLatency: dist("const(1ms)")},
		Faults:    FaultSpec{Crash: CrashSpec{RestartDelay: dist("const(2s)")}},
		Duration:  10 * clock.Second, Drain: 5 * clock.Minute,
	}
}

func runSchedule(t *testing.T, sc Schedule, script ...scriptStep) *Result {
	t.Helper()
	r, err := RunScheduled(scheduleConfig(), sc, RunOptions{KeepEvents: true, script: script})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sec(s float64) clock.Duration { return clock.Duration(s * float64(clock.Second)) }

// at is an event's time from the run's start.
func at(e model.Event) clock.Duration { return e.At.Sub(clock.Epoch) }

func TestScheduleLinesInTimeOrder(t *testing.T) {
	sc := Schedule{
		{At: sec(12.5), Kind: FaultCrash, Consumer: 2},
		{At: sec(1), Kind: FaultLoss, Loss: "ack", Response: true, For: sec(0.3)},
		{At: sec(3), Kind: FaultPause, Consumer: 1, For: sec(2)},
		{At: sec(4), Kind: FaultClockSkew, Consumer: 0, Skew: -sec(0.8)},
		{At: sec(5), Kind: FaultRenewSameDeadline, For: sec(1)},
		{At: sec(6), Kind: FaultBrokerRestart},
		{At: sec(7), Kind: FaultRevivePutFailure, For: sec(4)},
		{At: sec(8), Kind: FaultSlow, Consumer: 3, For: sec(10)},
	}
	want := []string{
		"t=+1s lose every ack responses for 300ms",
		"t=+3s pause consumer 1 for 2s",
		"t=+4s skew consumer 0's clock by -800ms",
		"t=+5s renew-same-deadline for every message delivered within 1s",
		"t=+6s restart broker",
		"t=+7s fail every retry-topic write for 4s",
		"t=+8s slow consumer 3 for 10s",
		"t=+12.5s crash consumer 2",
	}
	if got := sc.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestScheduleValidationNamesTheStep(t *testing.T) {
	cases := []struct {
		f    ScheduledFault
		want string
	}{
		{ScheduledFault{At: sec(10), Kind: FaultCrash}, "schedule[0] (t=+10s crash consumer 0): At = 10s: want 0..10s"},
		{ScheduledFault{Kind: FaultCrash, Consumer: 2}, "Consumer = 2: want 0..1"},
		{ScheduledFault{Kind: FaultBrokerRestart, Consumer: 1}, "restart broker targets no consumer"},
		{ScheduledFault{Kind: FaultPause}, "For = 0s: want 1us..10s"},
		{ScheduledFault{Kind: FaultCrash, For: sec(1)}, "crash has no duration"},
		{ScheduledFault{Kind: FaultLoss, Loss: "put", For: sec(1)}, `Loss = "put": want pop, ack, change or pull`},
		{ScheduledFault{Kind: FaultSlow, For: sec(1), Response: true}, "only lose uses them"},
		{ScheduledFault{Kind: FaultClockSkew, Skew: 2 * clock.Hour}, "Skew = 2h0m0s: want -1h..1h"},
		{ScheduledFault{Kind: 0}, "Kind = 0"},
	}
	for _, c := range cases {
		_, err := RunScheduled(scheduleConfig(), Schedule{c.f}, RunOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to contain %q", c.f, err, c.want)
		}
	}
}

func TestScheduledCrashPauseAndBrokerRestart(t *testing.T) {
	r := runSchedule(t, Schedule{
		{At: sec(1), Kind: FaultCrash, Consumer: 1},
		{At: sec(2), Kind: FaultPause, Consumer: 0, For: sec(1.5)},
		{At: sec(6), Kind: FaultBrokerRestart},
	})
	noViolations(t, r)
	want := []string{"crash c=1 +1s", "pause c=0 +2s", "restart c=1 +3s", "resume c=0 +3.5s", "broker-restart c=-1 +6s"}
	var got []string
	for _, e := range only(r, model.EvCrash, model.EvRestart, model.EvPause, model.EvResume, model.EvBrokerRestart) {
		got = append(got, e.Kind.String()+" c="+itoa(int64(e.Client))+" +"+at(e).Std().String())
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("fault events %v, want %v (the broker restart must not re-arm itself)", got, want)
	}
	if p := only(r, model.EvPause)[0]; p.Deadline != clock.Epoch.Add(sec(3.5)) {
		t.Fatalf("pause deadline %v", p.Deadline)
	}
}

// Windows switch their site fully on for their duration only; nested
// windows of one site keep it on until the last one closes, then the
// configured state comes back.
func TestScheduledLossWindowsNest(t *testing.T) {
	var siteAt []bool
	probe := func(s *sim) { siteAt = append(siteAt, s.faults.loss[lossAck][0].on) }
	r := runSchedule(t, Schedule{
		{At: sec(1), Kind: FaultLoss, Loss: "ack", For: sec(2)},
		{At: sec(2), Kind: FaultLoss, Loss: "ack", For: sec(0.5)},
	}, scriptStep{after: sec(2.7), f: probe}, scriptStep{after: sec(3.1), f: probe})
	noViolations(t, r)
	if len(siteAt) != 2 || !siteAt[0] || siteAt[1] {
		t.Fatalf("ack-request loss site at 2.7s and 3.1s: %v, want [true false]", siteAt)
	}
	lost := only(r, model.EvAckLost)
	if len(lost) < 100 {
		t.Fatalf("%d ack requests lost in a 2 s window at 100 msg/s", len(lost))
	}
	for _, e := range lost {
		if at(e) < sec(1) || at(e) >= sec(3) {
			t.Fatalf("ack lost at +%v, outside [1s, 3s)", at(e).Std())
		}
	}
	for _, e := range only(r, model.EvAcked) {
		if at(e) >= sec(1)+clock.Millisecond && at(e) < sec(3) {
			t.Fatalf("an ack reached the broker at +%v, inside the window", at(e).Std())
		}
	}
}

func TestScheduledRenewAndPutFailureWindows(t *testing.T) {
	r := runSchedule(t, Schedule{
		{At: sec(2), Kind: FaultRenewSameDeadline, For: sec(0.5)},
		{At: sec(0.5), Kind: FaultRenewAfterRevive, For: sec(1)},
		{At: sec(1), Kind: FaultRevivePutFailure, For: sec(9)},
		{At: sec(3), Kind: FaultLoss, Loss: "ack", For: sec(0.2)},
	})
	noViolations(t, r)
	var same, late int
	for _, e := range only(r, model.EvRenew) {
		switch e.Reason {
		case model.RSameDeadline:
			same++
			if at(e) < sec(2) || at(e) > sec(2.6) {
				t.Errorf("same-deadline renewal at +%v, outside the window", at(e).Std())
			}
		case model.RAfterRevive:
			late++
			if at(e) < sec(6.5) {
				t.Errorf("after-revive renewal at +%v, before its window", at(e).Std())
			}
		}
	}
	// After-revive renewals go 1-10 s past the lease end (5.5-6.5 s): the
	// run drains soon after 10 s, before the later ones.
	if same < 40 || late < 10 {
		t.Fatalf("%d same-deadline and %d after-revive renewals, want about 50 and 40", same, late)
	}
	// The leases whose acks were lost end about 5 s later; their revives
	// fail while the put-failure window is open (until 10 s) and are
	// retried after it.
	fails := only(r, model.EvPutFailure)
	if len(fails) == 0 || len(only(r, model.EvReviveRetried)) != len(fails) {
		t.Fatalf("%d retry-topic writes failed, %d revives retried", len(fails), len(only(r, model.EvReviveRetried)))
	}
	for _, e := range fails {
		if at(e) < sec(1) || at(e) >= sec(10) {
			t.Fatalf("put failure at +%v, outside [1s, 10s)", at(e).Std())
		}
	}
}

func TestScheduledSlowAndSkew(t *testing.T) {
	var skew clock.Duration
	r := runSchedule(t, Schedule{
		{At: sec(1), Kind: FaultSlow, Consumer: 0, For: sec(1)},
		{At: sec(5), Kind: FaultClockSkew, Consumer: 1, Skew: -sec(0.25)},
	}, scriptStep{after: sec(6), f: func(s *sim) { skew = s.cons[1].skew }})
	noViolations(t, r)
	if skew != -sec(0.25) {
		t.Fatalf("consumer 1's skew %v after the step", skew.Std())
	}
	started := map[model.MsgID]model.Event{}
	slow := 0
	for _, e := range only(r, model.EvConsumeStart, model.EvConsumeEnd) {
		if e.Kind == model.EvConsumeStart {
			started[e.Msg] = e
			continue
		}
		s := started[e.Msg]
		d := e.At.Sub(s.At)
		inWindow := s.Client == 0 && at(s) >= sec(1) && at(s) < sec(2)
		if inWindow != (d == 50*clock.Millisecond) || (!inWindow && d != 5*clock.Millisecond) {
			t.Fatalf("message %d on consumer %d started at +%v took %v", e.Msg, s.Client, at(s).Std(), d.Std())
		}
		if inWindow {
			slow++
		}
	}
	if slow < 20 {
		t.Fatalf("%d slow consumptions in the window", slow)
	}
}
