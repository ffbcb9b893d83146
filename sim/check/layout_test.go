package check

import (
	"testing"
	"unsafe"
)

// span is the range of 64-byte cache lines that a field of off and size
// bytes takes in a record that starts a line.
func span(off, size uintptr) [2]uintptr { return [2]uintptr{off / 64, (off + size - 1) / 64} }

// TestMsgStateLayout checks the cache lines that msgState's comment
// names: nine at most (its allocation class, 576 bytes, starts every
// record on a line), the head in line 0, the first lease's hot part
// (TestLeaseLayout) in line 1, the first delivery, the ring's header and
// first two slots in line 3, the produced place in line 5.
func TestMsgStateLayout(t *testing.T) {
	var m msgState
	if n := unsafe.Sizeof(m); n > 576 {
		t.Errorf("msgState is %d bytes, want at most 576 (nine cache lines)", n)
	}
	r := unsafe.Offsetof(m.seqs)
	for _, f := range []struct {
		name       string
		off, size  uintptr
		first, end uintptr
	}{
		{"msgHead", unsafe.Offsetof(m.msgHead), unsafe.Sizeof(m.msgHead), 0, 0},
		{"firstLease's first 64 bytes", unsafe.Offsetof(m.firstLease), 64, 1, 1},
		{"firstDlv", unsafe.Offsetof(m.firstDlv), unsafe.Sizeof(m.firstDlv), 3, 3},
		{"seqs' header", r, unsafe.Offsetof(m.seqs.last), 3, 3},
		{"seqs' first two slots", r + unsafe.Offsetof(m.seqs.last), 8, 3, 3},
		{"seqs' next sixteen slots", r + unsafe.Offsetof(m.seqs.last) + 8, 64, 4, 4},
		{"placeBuf", unsafe.Offsetof(m.placeBuf), unsafe.Sizeof(m.placeBuf), 5, 5},
	} {
		if got := span(f.off, f.size); got != [2]uintptr{f.first, f.end} {
			t.Errorf("%s at bytes %d to %d takes lines %d to %d, want %d to %d", f.name, f.off, f.off+f.size-1, got[0], got[1], f.first, f.end)
		}
	}
}

// TestLeaseLayout checks that what a client's event and an engine's
// answer read of a lease lies in its first 64 bytes, and that a lease of
// its own is allocated in a class that starts it on a line (128 bytes).
func TestLeaseLayout(t *testing.T) {
	var l lease
	if n := unsafe.Sizeof(l); n <= 64 || n > 128 {
		t.Errorf("lease is %d bytes, want 65 to 128 (the 128-byte class)", n)
	}
	hot := map[string]uintptr{
		"id": unsafe.Offsetof(l.id) + 7, "m": unsafe.Offsetof(l.m) + 7, "dlv": unsafe.Offsetof(l.dlv) + 7,
		"at": unsafe.Offsetof(l.at) + 7, "deadline": unsafe.Offsetof(l.deadline) + 7, "client": unsafe.Offsetof(l.client) + 3,
		"line": unsafe.Offsetof(l.line) + 3, "ended": unsafe.Offsetof(l.ended), "endedBy": unsafe.Offsetof(l.endedBy),
		"settledByClient": unsafe.Offsetof(l.settledByClient), "awaiting": unsafe.Offsetof(l.awaiting),
		"attempt": unsafe.Offsetof(l.attempt) + 3,
	}
	for name, end := range hot {
		if end >= 64 {
			t.Errorf("lease.%s ends at byte %d, want within the first 64", name, end)
		}
	}
}

// TestTombQueueSize checks that a queue's tombstones header stays 48
// bytes: a hot topic's hundreds of queues are held by value, and the
// forgetting of a message mostly loads a queue the last one did not
// (tombTopic).
func TestTombQueueSize(t *testing.T) {
	if n := unsafe.Sizeof(tombQueue{}); n != 48 {
		t.Errorf("tombQueue is %d bytes, want 48", n)
	}
}

// TestWaitClientSize checks that what the wakeup check keeps of a client
// fits one cache line, and a parked receive in 40 bytes (wakeup.go).
func TestWaitClientSize(t *testing.T) {
	if n := unsafe.Sizeof(waitClient{}); n != 64 {
		t.Errorf("waitClient is %d bytes, want 64", n)
	}
	if n := unsafe.Sizeof(pollReq{}); n != 40 {
		t.Errorf("pollReq is %d bytes, want 40", n)
	}
}

// TestClientSize checks that a client record is one cache line (its
// comment), and that its lists keep a slice's length and capacity.
func TestClientSize(t *testing.T) {
	if n := unsafe.Sizeof(client{}); n != 64 {
		t.Errorf("client is %d bytes, want 64 (one cache line)", n)
	}
	if h, p := unsafe.Sizeof(heldRef{}), unsafe.Sizeof(pendRef{}); h != refSize || p != refSize {
		t.Errorf("heldRef is %d bytes and pendRef %d, want refSize (%d)", h, p, refSize)
	}
	var l list[heldRef]
	if l.get() != nil {
		t.Error("an empty list's slice is not nil")
	}
	s := make([]heldRef, 3, 5)
	l.set(s)
	if g := l.get(); len(g) != 3 || cap(g) != 5 || &g[0] != &s[0] {
		t.Errorf("list gave back len %d cap %d, want the slice set (3, 5)", len(g), cap(g))
	}
	l.set(append(l.get(), heldRef{}, heldRef{}, heldRef{}))
	if g := l.get(); len(g) != 6 || cap(g) < 6 {
		t.Errorf("list after a growing append: len %d cap %d", len(g), cap(g))
	}
}
