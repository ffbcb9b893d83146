package sim

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's setting without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestUseGCPercent: GCPercent while set, the previous setting back after
// restore, and the environment's GOGC left alone.
func TestUseGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	before := gcPercent()
	restore := UseGCPercent()
	if got := gcPercent(); got != GCPercent {
		t.Errorf("after UseGCPercent the GC percent is %d, want popsim's %d", got, GCPercent)
	}
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("after restore %d, want %d back", got, before)
	}
	t.Setenv("GOGC", "150")
	restore = UseGCPercent()
	if got := gcPercent(); got != before {
		t.Errorf("with GOGC set in the environment the GC percent is %d, want %d left alone", got, before)
	}
	restore()
}
