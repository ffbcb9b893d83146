package pop

import (
	"testing"
	"unsafe"
)

// TestQueueLayout: what an append reads and writes of a queue is in its
// first 64 bytes, and a queue is 128 bytes, a size class whose objects
// start on a cache line (queue), so those bytes are one line.
func TestQueueLayout(t *testing.T) {
	var q queue
	end := func(o, s uintptr) uintptr { return o + s }
	l := unsafe.Offsetof(q.log)
	for _, f := range []struct {
		name string
		end  uintptr
	}{
		{"min", end(unsafe.Offsetof(q.min), unsafe.Sizeof(q.min))},
		{"unbuilt", end(unsafe.Offsetof(q.unbuilt), unsafe.Sizeof(q.unbuilt))},
		{"log.chunks", end(l+unsafe.Offsetof(q.log.chunks), unsafe.Sizeof(q.log.chunks))},
		{"log.head", end(l+unsafe.Offsetof(q.log.head), unsafe.Sizeof(q.log.head))},
		{"log.n", end(l+unsafe.Offsetof(q.log.n), unsafe.Sizeof(q.log.n))},
		{"log.last", end(l+unsafe.Offsetof(q.log.last), unsafe.Sizeof(q.log.last))},
	} {
		if f.end > 64 {
			t.Errorf("queue's %s ends at byte %d, past its first cache line", f.name, f.end)
		}
	}
	if s := unsafe.Sizeof(q); s != 128 {
		t.Errorf("queue is %d bytes, want 128", s)
	}
}
