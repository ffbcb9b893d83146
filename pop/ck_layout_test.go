package pop

import (
	"testing"
	"unsafe"
)

// TestBodyLayout: reviveBody.c and .a turn a header into its body by its
// address, which holds only while the header is each body's first field;
// ckRef.home turns a ref into the body it is the own of, by its address;
// and the sizes the body slabs (newCkBody, ackPrefill) are cut for.
func TestBodyLayout(t *testing.T) {
	if o := unsafe.Offsetof(ckBody{}.reviveBody); o != 0 {
		t.Errorf("ckBody's header at offset %d, want 0", o)
	}
	if o := unsafe.Offsetof(ackBody{}.reviveBody); o != 0 {
		t.Errorf("ackBody's header at offset %d, want 0", o)
	}
	if s := unsafe.Sizeof(ckBody{}); s != 232 {
		t.Errorf("ckBody is %d bytes, want 232", s)
	}
	if s := unsafe.Sizeof(ackBody{}); s != 64 {
		t.Errorf("ackBody is %d bytes, want 64 (one cache line)", s)
	}
	if s := unsafe.Sizeof(mkEntry{}); s != 48 {
		t.Errorf("mkEntry is %d bytes, want 48", s)
	}
	var c ckBody
	c.part = ckPart
	if c.reviveBody.c() != &c || c.reviveBody.a() != nil {
		t.Errorf("a CK's header does not give its body")
	}
	if c.own.home() != &c {
		t.Errorf("a CK's ref does not give its body")
	}
	var a ackBody
	a.part = ackPart
	if a.reviveBody.a() != &a || a.reviveBody.c() != nil {
		t.Errorf("an ack's header does not give its body")
	}
	var n reviveBody
	if n.c() != nil || n.a() != nil {
		t.Errorf("a bare header gives a body")
	}
}
