package sweep

import (
	"context"
	"sync/atomic"
	"testing"
)

// ForEach calls f once for every index, each call naming a worker below
// parallel, and never two calls of one worker at once: what the sweep's
// per-worker sim.Reuse relies on.
func TestForEachWorkers(t *testing.T) {
	const n, parallel = 200, 3
	var calls [n]atomic.Int32
	var busy [parallel]atomic.Bool
	var bad atomic.Int32
	started := ForEach(context.Background(), n, parallel, func(w, i int) {
		if w < 0 || w >= parallel {
			bad.Add(1)
			return
		}
		if !busy[w].CompareAndSwap(false, true) {
			bad.Add(1) // a second call of worker w while its first runs
		}
		calls[i].Add(1)
		for range 1000 { // some work, so that calls would overlap if they could
			_ = calls[i].Load()
		}
		busy[w].Store(false)
	})
	if bad.Load() != 0 {
		t.Fatalf("%d calls named a worker out of range or one already busy", bad.Load())
	}
	for i := range n {
		if !started[i] || calls[i].Load() != 1 {
			t.Fatalf("index %d: started %v, called %d times", i, started[i], calls[i].Load())
		}
	}
}
