package sim

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestConsumerLayout checks that a consumer fills the 192-byte allocation
// class, which starts every record on a cache line, and the lines its
// comment names: what an answer's arrival, a client's task, a request and
// an ack read in line 0, the consume threads and the spec in line 1, what
// a consumption's start reads of its own in line 2.
func TestConsumerLayout(t *testing.T) {
	if n := unsafe.Sizeof(consumer{}); n <= 176 || n > 192 {
		t.Errorf("consumer is %d bytes, want 177 to 192 (the 192-byte class): adjust consumerPad", n)
	}
	checkLines(t, reflect.TypeFor[consumer](), [][]string{
		{"idx", "epoch", "alive", "pauseUntil", "cl", "g", "clientID"},
		{"buf", "head", "running", "spec"},
		{"rng", "slowUntil"},
	})
}

// TestSimpleConsumerLayout checks the cache lines simpleConsumer's comment
// names: what sending a receive, its answer, an ack and arming the
// proxy's timer read in line 0, the receive request from line 2 on, in a
// record whose allocation class (320 bytes) starts every record on a
// line.
func TestSimpleConsumerLayout(t *testing.T) {
	if n := unsafe.Sizeof(simpleConsumer{}); n <= 288 || n > 320 {
		t.Errorf("simpleConsumer is %d bytes, want 289 to 320 (the 320-byte class): adjust simplePad", n)
	}
	checkLines(t, reflect.TypeFor[simpleConsumer](), [][]string{
		{"c", "popOut", "spare", "px", "renewed", "ord", "local", "rr", "next", "wantPoll", "autoRenew", "reentrant"},
	})
	if off := unsafe.Offsetof(simpleConsumer{}.rq); off != 128 {
		t.Errorf("simpleConsumer.rq starts at byte %d, want 128 (line 2)", off)
	}
}

// checkLines reports the fields of struct type typ, named by the cache
// line they must lie wholly in (lines[k]: line k's), that do not.
func checkLines(t *testing.T, typ reflect.Type, lines [][]string) {
	t.Helper()
	for line, names := range lines {
		for _, name := range names {
			f, ok := typ.FieldByName(name)
			if !ok {
				t.Errorf("%s has no field %s", typ.Name(), name)
				continue
			}
			end := f.Offset + f.Type.Size() - 1
			if first, last := int(f.Offset/64), int(end/64); first != line || last != line {
				t.Errorf("%s.%s at bytes %d to %d takes lines %d to %d, want line %d", typ.Name(), name, f.Offset, end, first, last, line)
			}
		}
	}
}
