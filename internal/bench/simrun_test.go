package bench

import (
	"runtime/debug"
	"testing"

	"popsim/sim"
)

// gcPercent reads the collector's setting without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestSimRunUsesPopsimsCollectorSetting(t *testing.T) {
	t.Setenv("GOGC", "")
	before := gcPercent()
	restore := popsimGC()
	if got := gcPercent(); got < sim.GCPercent {
		t.Errorf("during a SimRun case the GC percent is %d, want popsim's %d or above it (the heap floor)", got, sim.GCPercent)
	}
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("after it %d, want %d back", got, before)
	}
	t.Setenv("GOGC", "150")
	restore = popsimGC()
	if got := gcPercent(); got != before {
		t.Errorf("with GOGC set in the environment the GC percent is %d, want %d left alone", got, before)
	}
	restore()
}
