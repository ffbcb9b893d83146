package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minHeap is the runtime's smallest heap goal at GOGC 100; at p it is
// minHeap × p/100 (runtime/mgcpacer.go, defaultHeapMinimum).
const minHeap = 4 << 20

// DefaultFloor is the floor popsim's commands use: 256 MiB, at most an
// eighth of the machine's memory (Floor).
const DefaultFloor = 256 << 20

// Floor is DefaultFloor, at most an eighth of total bytes of memory
// (total 0: unknown, DefaultFloor).
func Floor(total uint64) uint64 {
	if total > 0 && total/8 < DefaultFloor {
		return total / 8
	}
	return DefaultFloor
}

// Heap is what the runtime's next goal grows from: the heap the last cycle
// marked live, and the stacks and globals it scanned, which the goal also
// grows by p/100 of.
type Heap struct{ Live, Scan uint64 }

// Percent is the GOGC percent that puts the runtime's next heap goal at
// max(Goal(base, h), floor): base, raised until the goal reaches the
// floor, but never so far that the runtime's minimum, minHeap × p/100,
// passes the floor (which is what sets the goal while the heap is small,
// and before the first cycle).
func Percent(base int, h Heap, floor uint64) int {
	if base < 0 {
		return base // collector off: nothing to floor
	}
	want := floor / minHeap * 100 // the largest p whose minimum stays within the floor
	if grow := h.Live + h.Scan; grow > 0 {
		want = min(want, (floor-min(floor, h.Live))*100/grow)
	}
	p := max(uint64(base), want)
	return int(min(p, math.MaxInt32))
}

// Goal is the heap goal the runtime sets for percent p (at least 0) and
// heap h: the live heap plus p/100 of it and of the scanned stacks and
// globals, at least minHeap × p/100. Percent aims at it.
func Goal(p int, h Heap) uint64 {
	return max(h.Live+(h.Live+h.Scan)*uint64(p)/100, minHeap*uint64(p)/100)
}

// A Tuner keeps the floor until Stop.
type Tuner struct {
	base   int
	floor  uint64
	mu     sync.Mutex
	old    int
	done   bool
	cycles int64 // cycles it has re-set the percent after (tests)
}

// Start sets the collector's percent by Percent(base, heap, floor) now and
// after every cycle until Stop, which puts the previous percent back.
func Start(base int, floor uint64) *Tuner {
	t := &Tuner{base: base, floor: floor}
	t.old = debug.SetGCPercent(Percent(base, heapNow(), floor))
	t.arm()
	return t
}

// sentinel is the object whose finalizer tells of a completed cycle. It
// holds a pointer so that it is not a tiny allocation, whose finalizer
// may wait for its neighbours.
type sentinel struct{ _ *Tuner }

func (t *Tuner) arm() { runtime.SetFinalizer(&sentinel{}, t.collected) }

// collected runs on the finalizer goroutine after a cycle found the last
// sentinel unreachable.
func (t *Tuner) collected(*sentinel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	debug.SetGCPercent(Percent(t.base, heapNow(), t.floor))
	t.cycles++
	t.arm()
}

// Stop ends the floor and puts back the percent Start found.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.done = true
		debug.SetGCPercent(t.old)
	}
}

// Cycles is how many completed cycles the tuner has re-set the percent
// after.
func (t *Tuner) Cycles() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cycles
}

// heapNow reads the heap the next goal grows from (all 0 before the
// first cycle).
func heapNow() Heap {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s)
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	return Heap{Live: v[0], Scan: v[1] + v[2]}
}

// Popsim starts the floor as popsim's commands run the simulator: base
// percent, Floor(total) bytes, unless the environment (getenv) sets GOGC,
// which then decides alone. The returned function stops it.
func Popsim(getenv func(string) string, base int, total uint64) (stop func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	return Start(base, Floor(total)).Stop
}
