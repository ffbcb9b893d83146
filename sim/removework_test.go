package sim

import (
	"math/rand/v2"
	"popsim/clock"
	"slices"
	"testing"
)

// TestRemoveWorkMatchesReference: removeWork, which finds a POP client's
// single message by pointer, removes the same work and keeps the same
// order as a plain search by interface equality, over mixes of every kind
// of work.
func TestRemoveWorkMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	newWork := func() work {
		switch rng.IntN(3) {
		case 0:
			return new(popHeld)
		case 1:
			h := new(popHeld)
			return &pushBatch{hs: []*popHeld{h}, ms: []*held{&h.held}}
		}
		return new(pullHeld)
	}
	for range 200 {
		running := make([]work, 1+rng.IntN(6))
		for i := range running {
			running[i] = newWork()
		}
		for len(running) > 0 {
			w := running[rng.IntN(len(running))]
			if indexWork(running, newWork()) != -1 {
				t.Fatal("found work that is not running")
			}
			want := slices.DeleteFunc(slices.Clone(running), func(r work) bool { return r == w })
			running = removeWork(running, w)
			if !slices.Equal(running, want) {
				t.Fatalf("removeWork left %v, want %v", running, want)
			}
		}
	}
}

// TestWorkFastPathsAreTheInterface: workOf, which tells a POP client's
// single message by its concrete type, gives back the work a payload was
// made of, for every kind of work.
func TestWorkFastPathsAreTheInterface(t *testing.T) {
	h := new(popHeld)
	for _, w := range []work{new(popHeld), &pushBatch{hs: []*popHeld{h}, ms: []*held{&h.held}}, new(pullHeld), new(held)} {
		p := payload(w)
		if got := workOf(p); got != w {
			t.Fatalf("workOf(%T) = %T %p, want the work itself", w, got, got)
		}
	}
}

// TestStretch: a consumption's processing time is multiplied by the slow
// factor while its client is slowed (not once the slowdown ends) and
// lasts at least until the message's hold.
func TestStretch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Faults.Slow.Factor = 3
	s := newTestSim(t, cfg, RunOptions{})
	now := s.q.now()
	ms := clock.Millisecond
	for _, tc := range []struct {
		slowUntil, hold clock.Time
		d, want         clock.Duration
	}{
		{0, 0, 5 * ms, 5 * ms},
		{now.Add(1), 0, 5 * ms, 15 * ms},
		{now, 0, 5 * ms, 5 * ms},
		{0, now.Add(20 * ms), 5 * ms, 20 * ms},
		{now.Add(1), now.Add(10 * ms), 5 * ms, 15 * ms},
		{now.Add(1), now.Add(40 * ms), 5 * ms, 40 * ms},
	} {
		c := &consumer{slowUntil: tc.slowUntil}
		if got := s.stretch(c, tc.d, tc.hold); got != tc.want {
			t.Errorf("stretch(%v, hold %v, slow until %v) = %v, want %v", tc.d, tc.hold, tc.slowUntil, got, tc.want)
		}
	}
}
