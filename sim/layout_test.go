package sim

import (
	"testing"
	"unsafe"
)

// TestConsumerLayout checks that a consumer fills the 192-byte allocation
// class, which starts every record on a cache line, and the lines its
// comment names: what an answer's arrival, a client's task, a request and
// an ack read in line 0, the consume threads and the spec in line 1, what
// a consumption's start reads of its own in line 2.
func TestConsumerLayout(t *testing.T) {
	var c consumer
	if n := unsafe.Sizeof(c); n <= 176 || n > 192 {
		t.Errorf("consumer is %d bytes, want 177 to 192 (the 192-byte class): adjust consumerPad", n)
	}
	for _, f := range []struct {
		name      string
		off, size uintptr
		line      uintptr
	}{
		{"idx", unsafe.Offsetof(c.idx), unsafe.Sizeof(c.idx), 0},
		{"epoch", unsafe.Offsetof(c.epoch), unsafe.Sizeof(c.epoch), 0},
		{"alive", unsafe.Offsetof(c.alive), unsafe.Sizeof(c.alive), 0},
		{"pauseUntil", unsafe.Offsetof(c.pauseUntil), unsafe.Sizeof(c.pauseUntil), 0},
		{"cl", unsafe.Offsetof(c.cl), unsafe.Sizeof(c.cl), 0},
		{"g", unsafe.Offsetof(c.g), unsafe.Sizeof(c.g), 0},
		{"clientID", unsafe.Offsetof(c.clientID), unsafe.Sizeof(c.clientID), 0},
		{"buf", unsafe.Offsetof(c.buf), unsafe.Sizeof(c.buf), 1},
		{"head", unsafe.Offsetof(c.head), unsafe.Sizeof(c.head), 1},
		{"running", unsafe.Offsetof(c.running), unsafe.Sizeof(c.running), 1},
		{"spec", unsafe.Offsetof(c.spec), unsafe.Sizeof(c.spec), 1},
		{"rng", unsafe.Offsetof(c.rng), unsafe.Sizeof(c.rng), 2},
		{"slowUntil", unsafe.Offsetof(c.slowUntil), unsafe.Sizeof(c.slowUntil), 2},
	} {
		if first, last := f.off/64, (f.off+f.size-1)/64; first != f.line || last != f.line {
			t.Errorf("consumer.%s at bytes %d to %d takes lines %d to %d, want line %d", f.name, f.off, f.off+f.size-1, first, last, f.line)
		}
	}
}
