package pop

import (
	"testing"
	"unsafe"

	"popsim/clock"
	"popsim/model"
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

// TestNextWrite: the entry an append prefetches for the queue after the
// one it wrote to (Broker.warmNext: msgLog.next of the queue nextQueue
// gives) is the entry a put to that queue writes next, across chunk
// boundaries, with chunks from the pool and carved, and nil only when the
// put starts a chunk or writes to a first chunk short of full size; and
// nextQueue goes round the topic's queues.
func TestNextWrite(t *testing.T) {
	const queues = 3
	b := testBroker(t, KVConfig(), queues)
	tp := b.topicNamed("t")
	for i := range queues * (3*logChunk + 5) {
		qid := int32(i % queues)
		if got := nextQueue(tp, int(qid+queues-1)%queues); got != int(qid) {
			t.Fatalf("the queue after %d is %d, want %d", (qid+queues-1)%queues, got, qid)
		}
		q := tp.queues[qid]
		m, room := q.log.next(), q.log.last != nil && q.log.fill() < logChunk
		r := b.Put(clock.Epoch, &model.Message{Topic: "t", QueueID: qid, Body: []byte("x")})
		got := q.log.slot(int(r.Offset - q.min))
		if m != got && (m != nil || room) {
			t.Fatalf("put %d to queue %d wrote entry %p, next said %p", i, qid, got, m)
		}
		if i == queues*logChunk {
			q.release(int(r.Offset-q.min), b) // a chunk to the pool
		}
	}
}
