package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"pgregory.net/rapid"

	"popsim/internal/rapidfail"
)

func TestMain(m *testing.M) { os.Exit(rapidfail.Main(m)) }

// TestPercentSetsTheGoalToTheFloor checks Percent against what it is for:
// the runtime's goal at the percent it returns is the larger of the goal
// at base and the floor (to the rounding of a whole percent; or as near
// the floor as the runtime's minimum allows), and the percent is never
// below base.
func TestPercentSetsTheGoalToTheFloor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.IntRange(0, 2000).Draw(t, "base")
		h := Heap{Live: rapid.Uint64Range(0, 1<<36).Draw(t, "live"), Scan: rapid.Uint64Range(0, 1<<26).Draw(t, "scan")}
		floor := rapid.Uint64Range(0, 1<<34).Draw(t, "floor")
		p := Percent(base, h, floor)
		if p < base {
			t.Fatalf("Percent = %d, below base %d", p, base)
		}
		got := Goal(p, h)
		// the floor, or as near as the runtime's minimum lets a percent
		// come: the goal grows with p, and p may not pass pmax
		pmax := int(floor / minHeap * 100)
		want := max(Goal(base, h), min(floor, Goal(pmax, h)))
		slack := (h.Live+h.Scan)/100 + minHeap/100 // one percent of what the goal grows by
		if got+slack < want || got > want+slack {
			t.Fatalf("goal at Percent %d = %d, want %d (floor %d, goal at base %d)", p, got, want, floor, Goal(base, h))
		}
	})
}

func TestPercentCases(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base        int
		live, floor uint64
		want        int
	}{
		{400, 0, 256 * mib, 6400},        // before any cycle: the minimum sets the goal
		{400, 1 * mib, 256 * mib, 6400},  // a small heap: the minimum still does
		{400, 16 * mib, 256 * mib, 1500}, // 16 × 16 = 256
		{400, 60 * mib, 256 * mib, 400},  // 60 × 5 = 300 is above the floor
		{400, 512 * mib, 256 * mib, 400}, // far above
		{100, 100 * mib, 256 * mib, 156}, // 100 × 2.56
		{-1, 1 * mib, 256 * mib, -1},     // GOGC=off stays off
		{400, 1 * mib, 1 * mib, 400},     // a floor under base's minimum changes nothing
		{0, 0, 256 * mib, 6400},          // GOGC=0 floored too
	} {
		if got := Percent(c.base, Heap{Live: c.live}, c.floor); got != c.want {
			t.Errorf("Percent(%d, live %d MiB, floor %d MiB) = %d, want %d", c.base, c.live/mib, c.floor/mib, got, c.want)
		}
	}
}

func TestFloor(t *testing.T) {
	for _, c := range []struct{ total, want uint64 }{
		{0, DefaultFloor},
		{64 << 30, DefaultFloor},
		{2 << 30, DefaultFloor},
		{1 << 30, 128 << 20},
	} {
		if got := Floor(c.total); got != c.want {
			t.Errorf("Floor(%d) = %d, want %d", c.total, got, c.want)
		}
	}
}

// heapGoal is the runtime's current goal.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestTunerKeepsTheFloorAcrossCycles runs the tuner for real: the goal
// sits at the floor before and after collections (this test's heap is a
// few MiB), and Stop puts the old percent back and stops re-setting it.
func TestTunerKeepsTheFloorAcrossCycles(t *testing.T) {
	const floor = 96 << 20
	before := gcPercent()
	tu := Start(400, floor)
	defer tu.Stop()
	near := func(when string) {
		t.Helper()
		if g := heapGoal(); g < floor*99/100 || g > floor*101/100+minHeap {
			t.Errorf("%s: heap goal %d MiB, want the floor's %d MiB", when, g>>20, floor>>20)
		}
	}
	near("after Start")
	for i := 0; tu.Cycles() < 3 && i < 10000; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if tu.Cycles() < 3 {
		t.Fatalf("the tuner heard of %d cycles in 10000 collections, want 3", tu.Cycles())
	}
	near("after 3 cycles")
	tu.Stop()
	if p := gcPercent(); p != before {
		t.Errorf("after Stop the percent is %d, want %d back", p, before)
	}
	n := tu.Cycles()
	for range 20 {
		runtime.GC()
		runtime.Gosched()
	}
	if tu.Cycles() != n || gcPercent() != before {
		t.Errorf("after Stop the tuner still re-set the percent (%d → %d cycles, percent %d)", n, tu.Cycles(), gcPercent())
	}
}

func TestPopsimLeavesGOGCAlone(t *testing.T) {
	before := gcPercent()
	stop := Popsim(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}, 400, 8<<30)
	if p := gcPercent(); p != before {
		t.Errorf("with GOGC set the percent is %d, want %d left alone", p, before)
	}
	stop()
	stop = Popsim(func(string) string { return "" }, 400, 8<<30)
	if p := gcPercent(); p < 400 {
		t.Errorf("without GOGC the percent is %d, want at least popsim's 400", p)
	}
	stop()
	if p := gcPercent(); p != before {
		t.Errorf("after stop the percent is %d, want %d back", p, before)
	}
}
