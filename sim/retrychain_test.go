package sim

import (
	"testing"

	"popsim/clock"
	"popsim/sim/check"
)

// TestRetryChainRetryStorm: retry-storm's consumers (pop-push, 16
// reconsumes, invisible time 30 s, 20 % RECONSUME_LATER) can retry one
// message along the whole popDelayLevel ladder: 10 s + 30 s + 1 m + ... +
// 2 h = 4 h 45 m 40 s, plus a last age-based delay. The scenario's 30 m
// drain budget was shorter than that, so a long chain was reported as
// no-drain / lost / commit-offset-lag (seeds 3065 and 3082 of 150 with
// swarm).
func TestRetryChainRetryStorm(t *testing.T) {
	cfg := Config{
		Topics:    []TopicSpec{{Name: "orders"}},
		Groups:    []GroupSpec{{Name: "billing"}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: arrivals("poisson(500/s)")}},
		Consumers: []ConsumerSpec{{Kind: PopPush, Group: "billing", Topic: "orders", Count: 8,
			Outcomes: outcomes("outcomes(reconsume_later=0.2,exception=0.01)"), Settings: &PopPushSettings{InvisibleTime: 30 * clock.Second}}},
		Drain: 30 * clock.Minute,
	}.WithDefaults()
	ladder := 4*clock.Hour + 45*clock.Minute + 40*clock.Second
	got := cfg.RetryChain()
	if got < ladder+2*clock.Hour {
		t.Errorf("RetryChain = %v, want at least the ladder %v plus the last age-based delay (2h)", got, ladder)
	}
	if got > 8*clock.Hour {
		t.Errorf("RetryChain = %v, want a bound near the ladder (%v + 2h + slack)", got, ladder)
	}
	if cfg.DrainBudget() != got {
		t.Errorf("DrainBudget = %v, want the retry chain %v (longer than drain %v)", cfg.DrainBudget(), got, cfg.Drain)
	}
}

// TestRetryChainKinds: each kind's ladder, and no chain without failures.
func TestRetryChainKinds(t *testing.T) {
	const slack = 15*clock.Second + retryAttemptSlack // PollTime 15 s
	for _, tc := range []struct {
		name string
		cs   ConsumerSpec
		want clock.Duration
	}{
		{"all succeed", ConsumerSpec{Kind: PopPush}, 0},
		{"pop-push 2 reconsumes", ConsumerSpec{Kind: PopPush, Outcomes: outcomes("outcomes(exception=0.5)"), Settings: &PopPushSettings{MaxReconsumeTimes: 2}},
			60*clock.Second + 10*clock.Second + 30*clock.Second + 2*clock.Hour + 4*slack},
		{"pull 2 reconsumes", ConsumerSpec{Kind: Pull, Outcomes: outcomes("outcomes(reconsume_later=0.1)"), Settings: &PullSettings{MaxReconsumeTimes: 2}},
			10*clock.Second + 30*clock.Second + 2*slack},
	} {
		cfg := Config{Groups: []GroupSpec{{Name: "g", RetryMaxTimes: 1}}, Consumers: []ConsumerSpec{tc.cs}}.WithDefaults()
		cfg.Consumers[0].Group = "g"
		if got := cfg.RetryChain(); got != tc.want {
			t.Errorf("%s: RetryChain = %v, want %v", tc.name, got, tc.want)
		}
	}
	// simple, retryMaxTimes 1: two attempts, each the longer of the retry
	// delay (5 s, 10 s) and the invisible time (60 s), PollTime 20 s.
	cfg := Config{Groups: []GroupSpec{{Name: "g", RetryMaxTimes: 1}},
		Consumers: []ConsumerSpec{{Kind: Simple, Group: "g", Outcomes: outcomes("outcomes(reconsume_later=0.1)")}}}.WithDefaults()
	if got, want := cfg.RetryChain(), 60*clock.Second+2*(60*clock.Second+20*clock.Second+retryAttemptSlack); got != want {
		t.Errorf("simple: RetryChain = %v, want %v", got, want)
	}
}

// TestDrainCoversTheRetryChain: a message that always asks to be
// reconsumed walks the whole ladder (about 4 h 46 m) and is then dropped
// by the push consumer's age rule. With the run's drain budget (30 m) as
// the end, the run stopped undrained with the message unfinished
// (no-drain, lost); the budget now extends while the message is being
// retried, and the run drains with no violation.
func TestDrainCoversTheRetryChain(t *testing.T) {
	cfg := tinyConfig(PopPush)
	cfg.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=1)")
	cfg.Drain = 30 * clock.Minute
	r := runKeep(t, cfg)
	noViolations(t, r)
	for _, v := range r.Summary.Violations {
		if v.Invariant == check.InvNoDrain {
			t.Fatalf("no-drain: the retry chain outlived the drain budget")
		}
	}
	end := r.Events[len(r.Events)-1].At
	if live := end.Sub(clock.Epoch.Add(cfg.Duration)); live <= cfg.Drain {
		t.Errorf("liveness lasted %v, want longer than drain %v (the chain is ~4h46m)", live, cfg.Drain)
	}
	if r.Summary.Dropped != 1 {
		t.Errorf("dropped %d, want the message dropped by the age rule after its ladder", r.Summary.Dropped)
	}
	// Hours of drain keep a small time series: a point per SampleInterval
	// for the first seriesThinAfter of the drain, then one per minute.
	liveMin := int(end.Sub(clock.Epoch.Add(cfg.Duration)) / clock.Minute)
	if n, most := len(r.Summary.Series), int((cfg.Duration+seriesThinAfter)/clock.Second)+liveMin+2; n > most { // SampleInterval: 1s
		t.Errorf("series has %d points over %d minutes of drain, want at most %d", n, liveMin, most)
	}
}
