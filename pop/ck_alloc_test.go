package pop

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A pop and an ack of one message on the checkpoint path (buffer merge
// off: the CK and the ack are written to the revive topic at once) cost
// less than one allocation on average: the CK's merge key, the strings
// of its message and its ack's, its wrapper and ref and its merge-key
// entry come from blocks, not one object each (main before this had 5).
func TestCkPopAckAllocs(t *testing.T) {
	if invariants {
		t.Skip("the invariants build's checks allocate")
	}
	cfg := DefaultConfig()
	cfg.EnablePopBufferMerge = false
	br, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	if err := br.CreateGroup(DefaultGroup("g")); err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch
	const n = 3000
	msgs := make([]model.Message, n)
	for i := range msgs {
		msgs[i] = model.Message{Topic: "t"}
		br.Put(now, &msgs[i])
	}
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second}
	var res PopResult
	round := func() {
		now = now.Add(clock.Millisecond)
		br.Pop(now, &req, &res)
		if len(res.Messages) != 1 {
			t.Fatalf("popped %d", len(res.Messages))
		}
		a := NewAckRequest("g", "t", &res.Messages[0].Handle)
		if r := br.Ack(now, &a); r.Code != model.Success || r.Pending == 0 {
			t.Fatalf("ack: %v, pending %d", r.Code, r.Pending)
		}
	}
	for range 200 { // the first blocks, the tables' growth
		round()
	}
	got := testing.AllocsPerRun(2000, round)
	t.Logf("%.3f allocations per pop and ack", got)
	if got >= 1 { // AllocsPerRun's average is whole: below one reads 0
		t.Errorf("%.0f allocations per pop and ack, want fewer than one on average", got)
	}
}

// A wrapper is freed once the buffer and its commit queue let it go,
// while its ref lives on until its CK is revived: the two are allocated
// apart (newWrapper; a ref is its CK body's own, ckBody.own), and a
// freed wrapper is reused by the next CK (ckBuffer.free). Rounds of pops
// whose wrappers the buffer scans let go between them use the first
// round's wrappers again, none of them held by a ref's merge-key entry
// once free, where a wrapper never reused took a new one per CK (and,
// allocated beside the refs, had stayed for their invisible time).
func TestCkWrapperFreedAndReused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EnablePopBufferMerge = false // every pop's CK is written at once and its wrapper done
	br := newTopicGroupBroker(t, cfg)
	now := clock.Epoch
	const n, rounds = wrapperSlab + 5, 4
	for range n * rounds {
		br.Put(now, &model.Message{Topic: "t"})
	}
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second}
	var res PopResult
	used := map[*wrapper]bool{}
	for round := range rounds {
		for i := range n {
			now = now.Add(clock.Millisecond)
			br.Pop(now, &req, &res)
			if len(res.Messages) != 1 {
				t.Fatalf("round %d, pop %d: popped %d", round, i, len(res.Messages))
			}
			used[br.buf.order[len(br.buf.order)-1]] = true
		}
		for end := now.Add(5 * clock.Second); ; { // buffer scans, well inside the invisible time
			at, ok := br.NextCheckpointTick()
			if !ok || at > end {
				break
			}
			br.CheckpointTick(at)
		}
		now = now.Add(5 * clock.Second)
		if len(br.buf.order) != 0 || br.ckl.byFirst.len() != n*(round+1) || len(br.buf.free) != n {
			t.Fatalf("round %d: %d wrappers buffered, %d free, %d live refs: want 0, %d and %d",
				round, len(br.buf.order), len(br.buf.free), br.ckl.byFirst.len(), n, n*(round+1))
		}
		for _, w := range br.buf.free {
			if w.inBuf || w.inCQ || w.ref.e.w == w {
				t.Fatalf("round %d: free wrapper %q held (buffered %v, queued %v, its entry's %v)", round, w.mkey, w.inBuf, w.inCQ, w.ref.e.w == w)
			}
		}
	}
	if len(used) != n {
		t.Errorf("%d CKs took %d wrappers, want the first round's %d", n*rounds, len(used), n)
	}
}

// A CK's ref is its body's own (ckBody.own), bound to it: a round reading
// the CK's message takes the ref from the body while it lives and nil once
// its revive dropped it, as byFirst gives.
func TestCkRefIsItsBodysOwn(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EnablePopBufferMerge = false // every pop's CK is written at once
	br := newTopicGroupBroker(t, cfg)
	now := clock.Epoch
	const n = 50
	for range n {
		br.Put(now, &model.Message{Topic: "t"})
	}
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 20 * clock.Second}
	var res PopResult
	var bodies []*ckBody
	for i := range n {
		now = now.Add(clock.Millisecond)
		br.Pop(now, &req, &res)
		if len(res.Messages) != 1 {
			t.Fatalf("pop %d: popped %d", i, len(res.Messages))
		}
		if i%2 == 0 {
			a := NewAckRequest("g", "t", &res.Messages[0].Handle)
			if r := br.Ack(now, &a); r.Code != model.Success {
				t.Fatalf("ack %d: %v", i, r.Code)
			}
		}
	}
	for r := range br.ckl.byFirst.all() {
		d := r.home()
		if !d.bound || br.ckRefOf(d) != r || br.ckl.byFirst.get(d.lease) != r {
			t.Fatalf("ref of lease %d: bound %v, the body gives %p, byFirst %p",
				r.first, d.bound, br.ckRefOf(d), br.ckl.byFirst.get(d.lease))
		}
		bodies = append(bodies, d)
	}
	if len(bodies) != n {
		t.Fatalf("%d live refs, want %d", len(bodies), n)
	}
	for end := now.Add(60 * clock.Second); ; { // past every revive
		at, ok := br.NextCheckpointTick()
		if !ok || at > end {
			break
		}
		br.CheckpointTick(at)
	}
	if br.ckl.byFirst.len() != 0 {
		t.Fatalf("%d refs live after every revive", br.ckl.byFirst.len())
	}
	for _, d := range bodies {
		if !d.own.dropped || br.ckRefOf(d) != nil {
			t.Fatalf("revived CK's body of lease %d gives ref %p (dropped %v)", d.lease, br.ckRefOf(d), d.own.dropped)
		}
	}
}
