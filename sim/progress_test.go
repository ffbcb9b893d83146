package sim

import (
	"errors"
	"slices"
	"testing"
)

// RunOptions.Progress sees the header first, then every ProgressEvery
// tasks with time moving forward, and an error from it stops the run.
func TestProgressHookReportsAndStops(t *testing.T) {
	cfg := DefaultConfig()
	var calls []Progress
	res, err := Run(cfg, RunOptions{Progress: func(p Progress) error { calls = append(calls, p); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 3 || calls[0].Tasks != 0 || !slices.Equal(calls[0].Header, res.Header) {
		t.Fatalf("first call %+v (of %d), want 0 tasks and the header %v", calls[0], len(calls), res.Header)
	}
	for i, p := range calls[1:] {
		if p.Tasks != int64(i+1)*ProgressEvery || p.Virtual < calls[i].Virtual || p.Header != nil {
			t.Fatalf("call %d: %+v after %+v", i+1, p, calls[i])
		}
	}
	if want := res.Summary.SimEvents / ProgressEvery; int64(len(calls)-1) != want {
		t.Errorf("%d progress calls after the first for %d tasks, want %d", len(calls)-1, res.Summary.SimEvents, want)
	}

	stop := errors.New("stop here")
	n := 0
	_, err = Run(cfg, RunOptions{Progress: func(p Progress) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) {
		t.Fatalf("Run after the hook failed: %v, want it to wrap %v", err, stop)
	}
}
