package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// ReleaseConsumed frees whole chunks below the commit offset and the
// oldest in-flight record, keeps the last chunk, changes no offset, and
// leaves a broker whose pops, acks and revives answer as before.
func TestReleaseConsumed(t *testing.T) {
	b := testBroker(t, KVConfig(), 1)
	now := clock.Epoch
	if n := b.ReleaseConsumed("t", []string{"g"}, nil); n != 0 {
		t.Fatalf("released %d before the group popped", n)
	}
	const total = 5 * logChunk
	for i := 0; i < total; i++ {
		b.Put(now, &model.Message{Topic: "t", Body: []byte("x")})
	}
	var res PopResult
	var held PoppedMessage // the first message of the second chunk stays in flight
	for popped := 0; popped < total; {
		b.Pop(now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}, &res)
		if res.Code != model.Success {
			t.Fatalf("pop after %d: %v", popped, res.Code)
		}
		for i := range res.Messages {
			p := &res.Messages[i]
			if p.Message.QueueOffset == logChunk {
				held = *p
				continue
			}
			ack := NewAckRequest("g", p.Message.Topic, &p.Handle)
			if a := b.Ack(now, &ack); a.Code != model.Success {
				t.Fatalf("ack %d: %v", p.Message.QueueOffset, a.Code)
			}
		}
		popped += len(res.Messages)
	}
	if n := b.ReleaseConsumed("t", []string{"g"}, nil); n != logChunk {
		t.Fatalf("released %d, want the first chunk only (%d): offset %d is in flight", n, logChunk, logChunk)
	}
	if min, max := b.MinOffset("t", 0), b.MaxOffset("t", 0); min != 0 || max != total {
		t.Fatalf("offsets [%d, %d) after release, want [0, %d)", min, max, total)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	ack := NewAckRequest("g", held.Message.Topic, &held.Handle)
	if a := b.Ack(now, &ack); a.Code != model.Success {
		t.Fatalf("ack of the held message: %v", a.Code)
	}
	// Everything but the last chunk goes; a second call frees nothing more.
	if n := b.ReleaseConsumed("t", []string{"g"}, nil); n != 3*logChunk {
		t.Fatalf("released %d, want %d", n, 3*logChunk)
	}
	if n := b.ReleaseConsumed("t", []string{"g"}, nil); n != 0 {
		t.Fatalf("released %d again", n)
	}
	if m, ok := b.Message("t", 0, total-1); !ok || string(m.Body) != "x" {
		t.Fatalf("the last chunk's message: %v %v", ok, m)
	}
	// The released chunks are pooled, and new messages are written into
	// them (the invariants build checks they were left alone meanwhile).
	if n := len(b.logPool.free); n != 4 {
		t.Fatalf("%d chunks pooled, want the 4 released", n)
	}
	for i := range 2 * logChunk {
		b.Put(now, &model.Message{Topic: "t", Body: []byte{byte(i)}})
	}
	if n := len(b.logPool.free); n != 2 {
		t.Fatalf("%d chunks pooled after two chunks' puts, want 2", n)
	}
	for i := range 2 * logChunk {
		if m, ok := b.Message("t", 0, total+int64(i)); !ok || len(m.Body) != 1 || m.Body[0] != byte(i) || m.QueueOffset != total+int64(i) {
			t.Fatalf("message %d written into a pooled chunk: %v %+v", total+i, ok, m)
		}
	}
	for popped := 0; popped < 2*logChunk; {
		b.Pop(now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}, &res)
		if res.Code != model.Success {
			t.Fatalf("pop of the new messages after %d: %v", popped, res.Code)
		}
		for i := range res.Messages {
			if m := &res.Messages[i].Message; m.QueueOffset != total+int64(popped+i) || m.Body[0] != byte(popped+i) {
				t.Fatalf("popped %d (body %v), want %d", m.QueueOffset, m.Body, total+popped+i)
			}
		}
		popped += len(res.Messages)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// A group that never popped the topic holds everything back.
	must(t, b.CreateGroup(DefaultGroup("h")))
	b.Put(now, &model.Message{Topic: "t", Body: []byte("x")})
	if n := b.ReleaseConsumed("t", []string{"g", "h"}, nil); n != 0 {
		t.Fatalf("released %d with a group that never popped", n)
	}
	// Retention still drops released chunks.
	if n, err := b.Truncate("t", 0, 3*logChunk); err != nil || n != 3*logChunk {
		t.Fatalf("truncate: %d %v", n, err)
	}
	if min := b.MinOffset("t", 0); min != 3*logChunk {
		t.Fatalf("min offset %d after truncate", min)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// A floor holds back what a late changeInvisibleTime may still name: the
// renewal of a handle whose record is gone (acked here) writes a record at
// its offset, which must still be there for that record's revive.
func TestReleaseConsumedFloor(t *testing.T) {
	b := testBroker(t, KVConfig(), 1)
	now := clock.Epoch
	var late model.ReceiptHandle // the handle of offset logChunk+1, acked, renewed later
	putPopAckAll(t, b, &now, 4*logChunk, func(p *PoppedMessage) {
		if p.Message.QueueOffset == logChunk+1 {
			late = p.Handle
		}
	}, nil)
	floor := []int64{logChunk + 1}
	if n := b.ReleaseConsumed("t", []string{"g"}, floor); n != logChunk {
		t.Fatalf("released %d under floor %d, want the first chunk only (%d)", n, floor[0], logChunk)
	}
	req := NewChangeInvisibleTimeRequest("g", "t", &late, 5*clock.Second)
	if r := b.ChangeInvisibleTime(now, &req); r.Code != model.Success {
		t.Fatalf("late renewal: %v", r.Code)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// Its record revives the message, which is still there.
	rv := b.Revive(now.Add(6 * clock.Second))
	if len(rv.Revivals) != 1 {
		t.Fatalf("%d revivals of the late renewal's record, want 1", len(rv.Revivals))
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// putPopAckAll puts n messages to topic t, then pops them 32 at a time as
// group g at *now and acks each, handing it to seen first (nil: none) and
// calling round after each pop (nil: none).
func putPopAckAll(t *testing.T, b *Broker, now *clock.Time, n int, seen func(*PoppedMessage), round func()) {
	t.Helper()
	for range n {
		b.Put(*now, &model.Message{Topic: "t", Body: []byte("x")})
	}
	var res PopResult
	for popped := 0; popped < n; popped += len(res.Messages) {
		b.Pop(*now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}, &res)
		if res.Code != model.Success {
			t.Fatalf("pop after %d: %v", popped, res.Code)
		}
		for i := range res.Messages {
			p := &res.Messages[i]
			if seen != nil {
				seen(p)
			}
			ack := NewAckRequest("g", p.Message.Topic, &p.Handle)
			if a := b.Ack(*now, &ack); a.Code != model.Success {
				t.Fatalf("ack %d: %v", p.Message.QueueOffset, a.Code)
			}
		}
		if round != nil {
			round()
		}
	}
}

// The checkpoint path releases nothing, even below a group's commit
// offset (a group that never popped would hold everything back anyway).
func TestReleaseConsumedCheckpointPath(t *testing.T) {
	b := testBroker(t, DefaultConfig(), 1)
	now := clock.Epoch
	for range 3 * logChunk {
		b.Put(now, &model.Message{Topic: "t", Body: []byte("x")})
	}
	var res PopResult
	b.Pop(now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second}, &res)
	if res.Code != model.Success {
		t.Fatalf("pop: %v", res.Code)
	}
	u := b.UpdateConsumerOffset(&UpdateConsumerOffsetRequest{ConsumerGroup: "g", Topic: "t", CommitOffset: 3 * logChunk})
	if u.Code != model.Success {
		t.Fatalf("update consumer offset: %v", u.Code)
	}
	if n := b.ReleaseConsumed("t", []string{"g"}, nil); n != 0 {
		t.Fatalf("released %d", n)
	}
}

// Reading a released message is a bug that panics, never a wrong message.
func TestReleasedReadPanics(t *testing.T) {
	var l msgLog
	var pool chunkPool
	for range 3 * logChunk {
		l.push(&pool).Body = []byte("x")
	}
	if n := l.release(2*logChunk, &pool); n != 2*logChunk || !l.released(0) || l.released(2*logChunk) {
		t.Fatalf("released %d", n)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a released entry was read")
		}
	}()
	_ = l.slot(logChunk + 1)
}

// TestCheckLogPool: CheckInvariants finds a pool that miscounts the chunks
// the logs hold, and a chunk both pooled and held by a log.
func TestCheckLogPool(t *testing.T) {
	b := testBroker(t, KVConfig(), 1)
	for range 3 * logChunk {
		b.Put(clock.Epoch, &model.Message{Topic: "t", Body: []byte("x")})
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if b.logPool.held != 3 {
		t.Fatalf("the pool counts %d full-size chunks held, want 3", b.logPool.held)
	}
	b.logPool.held++
	if err := b.CheckInvariants(); err == nil {
		t.Fatal("a miscounted pool passed")
	}
	b.logPool.held--
	log := &b.topics["t"].queues[0].log
	b.logPool.free = append(b.logPool.free, log.chunks[1][:logChunk])
	if err := b.CheckInvariants(); err == nil {
		t.Fatal("a chunk both pooled and held by a log passed")
	}
}

// ReleaseRevive frees the revive topic's CK and ack messages once the
// revive rounds have consumed and committed past them, keeps the last
// chunk and every offset, frees nothing more on a second call, and leaves
// a broker whose later pops, acks and rounds work as before.
func TestReleaseRevive(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ReviveQueueNum = 1
	b := testBroker(t, cfg, 1)
	now := clock.Epoch
	rt := model.ReviveTopic(cfg.ClusterName)
	popAckAll := func(n int) {
		putPopAckAll(t, b, &now, n, nil, func() {
			now = now.Add(clock.Second) // a pop a second, as the rounds see them
			b.CheckpointTick(now)
		})
	}
	// release checks that a release frees nothing the rounds may read:
	// nothing above both the in-memory and the committed revive offset.
	release := func() int {
		rv := b.State().Checkpoint.Revive[0]
		n := b.ReleaseRevive()
		if w := min(rv.Offset, rv.Committed) + 1; int64(n) > w {
			t.Fatalf("released %d revive-topic messages, the rounds consumed %d", n, w)
		}
		return n
	}
	tick := func(d clock.Duration) {
		for end := now.Add(d); now < end; now = now.Add(clock.Second) {
			b.CheckpointTick(now)
		}
	}
	popAckAll(4 * logChunk)
	if n := release(); n != 0 {
		t.Fatalf("released %d before any round", n)
	}
	tick(3 * clock.Minute) // the timer delivers every CK and ack, and the rounds commit past them
	written := b.MaxOffset(rt, 0)
	// Either offset holds the release back: here the in-memory one, set
	// back to half the queue.
	s := b.revivers[0]
	at := s.offset
	s.offset = written / 2
	half := release()
	if int64(half) < written/2-2*logChunk {
		t.Fatalf("released %d of the %d revive-topic messages below offset %d", half, written/2, written/2)
	}
	s.offset = at
	n := half + release()
	if n < 3*logChunk || int64(n) >= written {
		t.Fatalf("released %d of %d revive-topic messages, want all but the last chunk's", n, written)
	}
	if min, max := b.MinOffset(rt, 0), b.MaxOffset(rt, 0); min != 0 || max != written {
		t.Fatalf("revive queue offsets [%d, %d) after release, want [0, %d)", min, max, written)
	}
	if m := release(); m != 0 {
		t.Fatalf("a second call released %d more", m)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	acked := b.Stats().Acked
	popAckAll(logChunk)
	tick(3 * clock.Minute)
	if got := b.Stats().Acked - acked; got != logChunk {
		t.Fatalf("acked %d after the release, want %d", got, logChunk)
	}
	if m := release(); m == 0 {
		t.Fatal("the rounds after the release committed nothing more to free")
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
