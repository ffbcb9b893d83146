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
	checkLines(t, "consumer", []lineField{
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
	})
}

// TestSimpleConsumerLayout checks the cache lines simpleConsumer's comment
// names: what an answer to a receive reads in lines 0 and 1, in a record
// whose allocation class (320 bytes) starts every record on a line.
func TestSimpleConsumerLayout(t *testing.T) {
	var p simpleConsumer
	if n := unsafe.Sizeof(p); n <= 288 || n > 320 {
		t.Errorf("simpleConsumer is %d bytes, want 289 to 320 (the 320-byte class)", n)
	}
	checkLines(t, "simpleConsumer", []lineField{
		{"c", unsafe.Offsetof(p.c), unsafe.Sizeof(p.c), 0},
		{"popOut", unsafe.Offsetof(p.popOut), unsafe.Sizeof(p.popOut), 0},
		{"spare", unsafe.Offsetof(p.spare), unsafe.Sizeof(p.spare), 0},
		{"local", unsafe.Offsetof(p.local), unsafe.Sizeof(p.local), 0},
		{"free", unsafe.Offsetof(p.free), unsafe.Sizeof(p.free), 0},
		{"next", unsafe.Offsetof(p.next), unsafe.Sizeof(p.next), 0},
		{"wantPoll", unsafe.Offsetof(p.wantPoll), unsafe.Sizeof(p.wantPoll), 0},
		{"set", unsafe.Offsetof(p.set), unsafe.Sizeof(p.set), 1},
		{"px", unsafe.Offsetof(p.px), unsafe.Sizeof(p.px), 1},
		{"attempt", unsafe.Offsetof(p.attempt), unsafe.Sizeof(p.attempt), 1},
		{"renewed", unsafe.Offsetof(p.renewed), unsafe.Sizeof(p.renewed), 1},
		{"ord", unsafe.Offsetof(p.ord), unsafe.Sizeof(p.ord), 1},
		{"tick", unsafe.Offsetof(p.tick), unsafe.Sizeof(p.tick), 1},
	})
}

// lineField is a field of a record, where it lies and the cache line it
// must lie in.
type lineField struct {
	name      string
	off, size uintptr
	line      uintptr
}

// checkLines reports the fields of a record of type typ that do not lie
// wholly in their line.
func checkLines(t *testing.T, typ string, fs []lineField) {
	t.Helper()
	for _, f := range fs {
		if first, last := f.off/64, (f.off+f.size-1)/64; first != f.line || last != f.line {
			t.Errorf("%s.%s at bytes %d to %d takes lines %d to %d, want line %d", typ, f.name, f.off, f.off+f.size-1, first, last, f.line)
		}
	}
}
