package sweep

import (
	"context"
	"sync"
)

// ForEach calls f(worker, 0) .. f(worker, n-1) on at most parallel
// goroutines and returns when every call it started has returned. worker
// tells which goroutine makes the call, from 0 up to parallel: one
// worker's calls come one at a time, so they may share what only one
// goroutine may use (a sim.Reuse). Once ctx is cancelled it starts no more
// calls; started[i] tells which ran.
func ForEach(ctx context.Context, n, parallel int, f func(worker, i int)) (started []bool) {
	started = make([]bool, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range min(parallel, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(w, i)
			}
		}()
	}
feed:
	for i := range n {
		select {
		case <-ctx.Done():
			break feed
		case next <- i:
			started[i] = true
		}
	}
	close(next)
	wg.Wait()
	return started
}
