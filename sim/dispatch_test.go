package sim

import "testing"

// request gives every request type back as itself: the types it tells
// apart by their concrete type and those it leaves to the assertion.
func TestRequestIsTheAssertion(t *testing.T) {
	for _, r := range []Request{&popReq{}, &ackReq{}, &changeReq{}, &receiveReq{}, &pullReq{}, &batchAckReq{},
		&shareFetchReq{}, &sqsReceiveReq{}, &sqsDeleteReq{}, &sqsChangeReq{}} {
		var p payload = r
		if got := request(p); got != r {
			t.Fatalf("request(%T) = %T %p, want the request itself, %p", r, got, got, r)
		}
	}
}

// wire gives every request type back as its payload and its own common
// part: the types it tells apart by their concrete type and those it
// leaves to the interface.
func TestWireIsTheInterface(t *testing.T) {
	for _, r := range []Request{&popReq{}, &ackReq{}, &changeReq{}, &receiveReq{}, &pullReq{}, &batchAckReq{},
		&shareFetchReq{}, &sqsReceiveReq{}, &sqsDeleteReq{}, &sqsChangeReq{}} {
		p, b := wire(r)
		if p != payload(r) {
			t.Fatalf("wire(%T) payload = %T %p, want the request itself, %p", r, p, p, r)
		}
		if b != r.base() {
			t.Fatalf("wire(%T) base = %p, want %p", r, b, r.base())
		}
	}
}
