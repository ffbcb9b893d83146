package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"popsim/clock"
)

// TestOutcomeArmLeavesOutOnlyCovered drives two cores with the same
// random engine calls (arms of four timers, some answers) and firings of
// their timers: one whose outcome sees its timers (Outcome.arm leaves out
// covered arms), one that carries every arm out (armEngineTimer decides
// alone, the outcome's timers cleared before every call). Their timers,
// the tasks they schedule (time, timer, sequence) and the effects left
// for settle but for the covered arms must agree.
func TestOutcomeArmLeavesOutOnlyCovered(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		newCore := func() *sim {
			return &sim{q: newScheduler(clock.Time(1000), newStream(seed, 1), 1<<20, clock.Time(1<<50))}
		}
		a, b := newCore(), newCore()
		var left int
		for step := range 2000 {
			b.out.timers = nil
			switch op := rng.IntN(10); {
			case op < 7: // an engine call
				for range 1 + rng.IntN(4) {
					id, d := int32(rng.IntN(4)), clock.Duration(rng.IntN(50))*clock.Millisecond
					if rng.IntN(8) == 0 {
						d = -d // a time already past
					}
					n := len(a.out.fx)
					a.out.arm(id, a.q.now().Add(d))
					b.out.arm(id, b.q.now().Add(d))
					left += 1 - (len(a.out.fx) - n)
				}
				a.settle(&a.out)
				b.settle(&b.out)
			default: // the next task fires: a due timer disarms (engineTick's test)
				ta, _ := a.q.next()
				tb, _ := b.q.next()
				if (ta == nil) != (tb == nil) {
					t.Fatalf("seed %d step %d: tasks %v and %v", seed, step, ta, tb)
				}
				if ta == nil {
					continue
				}
				if ta.at != tb.at || ta.who != tb.who || ta.seq != tb.seq {
					t.Fatalf("seed %d step %d: task at %v timer %d seq %d, want at %v timer %d seq %d", seed, step, ta.at, ta.who, ta.seq, tb.at, tb.who, tb.seq)
				}
				for _, s := range []*sim{a, b} {
					tm := &s.timers[ta.who]
					if tm.armed && tm.at == ta.at {
						tm.armed = false
					}
				}
			}
			if fmt.Sprint(a.timers) != fmt.Sprint(b.timers) {
				t.Fatalf("seed %d step %d: timers %v, want %v", seed, step, a.timers, b.timers)
			}
		}
		if left == 0 {
			t.Fatalf("seed %d: no arm was left out", seed)
		}
	}
}
