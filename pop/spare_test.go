package pop

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A broker's Recycle hands its queues' full-size log chunks, cleared, to a
// Spare; a second broker using it stores its messages in those chunks
// (the same arrays: its first chunk grows into one), and reads back its own
// messages with nothing of the first broker's; the spare then holds as many
// chunks as before. (With the invariants build tag the spare chunks are
// poisoned, and take checks the poison is intact before clearing them.)
func TestLogSpare(t *testing.T) {
	const total = 3*logChunk + 5
	var s Spare
	b1 := testBroker(t, KVConfig(), 1)
	for i := range total {
		b1.Put(clock.Epoch, &model.Message{Topic: "t", Body: []byte("first"), Keys: "k" + strconv.Itoa(i)})
	}
	b1.Recycle(&s)
	if s.Len() != 4 {
		t.Fatalf("the spare holds %d chunks after a recycle, want 4", s.Len())
	}
	spare := map[*model.Message]bool{}
	for _, c := range s.chunks {
		spare[&c[:1][0]] = true
		if !invariants {
			for i := range c[:logChunk] {
				if !reflect.ValueOf(&c[:logChunk][i]).Elem().IsZero() {
					t.Fatalf("entry %d of a spare chunk is not cleared: %+v", i, c[:logChunk][i])
				}
			}
		}
	}
	b2 := testBroker(t, KVConfig(), 1)
	b2.UseSpare(&s)
	for i := range total {
		b2.Put(clock.Epoch, &model.Message{Topic: "t", Body: []byte("second"), Tags: "x" + strconv.Itoa(i)})
	}
	if s.Len() != 0 {
		t.Fatalf("%d chunks left in the spare, want every one taken", s.Len())
	}
	q := b2.topics["t"].queues[0]
	reused := 0
	for _, c := range q.log.chunks {
		if cap(c) == logChunk && spare[&c[:1][0]] {
			reused++
		}
	}
	if reused != 4 {
		t.Fatalf("%d of the second broker's chunks came from the spare, want 4", reused)
	}
	for i := range total {
		if m := q.log.slot(i); string(m.Body) != "second" || m.Keys != "" || m.Tags != "x"+strconv.Itoa(i) {
			t.Fatalf("entry %d: body %q keys %q tags %q", i, m.Body, m.Keys, m.Tags)
		}
	}
	if err := b2.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	b2.Recycle(&s)
	if s.Len() != 4 {
		t.Fatalf("the spare holds %d chunks after the second recycle, want 4", s.Len())
	}
}

// On the checkpoint path a broker using a Spare takes its slabs (CK and
// ack bodies, the acks' fields, wrappers, merge keys, the merge-key
// table's entries and slots, the revive rounds' tables' slots), timer
// slots, ref-index blocks and revive round storage from it and keeps
// them;
// Recycle hands them back, every record cleared: a record left as the last broker wrote it
// would hand the next one a stale pointer or flag (a CK body's bound or
// skip, an ack body's part, an entry's refs). A second broker on the
// spare answers exactly as a broker without one, and leaves the spare
// holding as many slabs as the first did.
func TestSlabSpare(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EnablePopBufferMerge = false // every pop's CK and every ack written at once
	run := func(s *Spare) (State, []string) {
		br := newTopicGroupBroker(t, cfg)
		if s != nil {
			br.UseSpare(s)
		}
		now := clock.Epoch
		const n = 1100 // more than an ack-body slab
		for i := range n {
			br.Put(now, &model.Message{Topic: "t", Keys: "k" + strconv.Itoa(i)})
		}
		req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second}
		var res PopResult
		var got []string
		var late []model.ReceiptHandle
		for i := range n {
			now = now.Add(clock.Millisecond)
			br.Pop(now, &req, &res)
			if len(res.Messages) != 1 {
				t.Fatalf("pop %d: %d messages", i, len(res.Messages))
			}
			got = append(got, res.Messages[0].Handle.String())
			if i%3 != 0 { // a third left to revive
				a := NewAckRequest("g", "t", &res.Messages[0].Handle)
				r := br.Ack(now, &a)
				got = append(got, fmt.Sprint(r.Code, r.Pending))
			} else {
				late = append(late, res.Messages[0].Handle)
			}
		}
		for range 100 { // the revive rounds: a third of the CKs revive
			now = now.Add(clock.Second)
			r := br.CheckpointTick(now)
			got = append(got, fmt.Sprint(r))
		}
		br.Pop(now, &req, &res) // a revived message comes back
		got = append(got, fmt.Sprint(len(res.Messages)))
		for i := range late { // acks of revived CKs: their ack bodies hold their own fields and keys
			a := NewAckRequest("g", "t", &late[i])
			r := br.Ack(now, &a)
			got = append(got, fmt.Sprint(r.Code, r.Pending))
		}
		if err := br.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		st := br.State()
		if s != nil {
			br.Recycle(s)
		}
		return st, got
	}
	wantState, want := run(nil)
	var s Spare
	run(&s)
	kinds := []int{len(s.ckBodies), len(s.ackBodies), len(s.ackMsgs), len(s.wrappers), len(s.keys), len(s.mkEntries), len(s.mkSlots), len(s.roundSlots), len(s.timerSlots), len(s.refBlocks), len(s.revive)}
	if slices.Contains(kinds, 0) {
		t.Fatalf("the spare holds %v slabs of each kind after a recycle: want some of each", kinds)
	}
	first := s.Slabs()
	allZero(t, "CK body", s.ckBodies)
	allZero(t, "ack body", s.ackBodies)
	allZero(t, "ack", s.ackMsgs)
	allZero(t, "wrapper", s.wrappers)
	allZero(t, "merge key", s.keys)
	allZero(t, "merge-key entry", s.mkEntries)
	allZero(t, "merge-key slot", s.mkSlots)
	allZero(t, "revive round slot", s.roundSlots)
	for _, bl := range s.refBlocks {
		allZero(t, "ref index entry", [][]*ckRef{bl[:]})
	}
	for _, r := range s.revive {
		if len(r.all) != 0 || len(r.jour) != 0 {
			t.Fatalf("spare revive storage holds %d CKs and %d journal entries", len(r.all), len(r.jour))
		}
		allZero(t, "revive round CK", [][]*roundCk{r.all})
		allZero(t, "revive journal entry", [][]revEnt{r.jour})
		allZero(t, "revive roundCk", r.chunks)
	}
	for _, ts := range s.timerSlots {
		if ts.due != 0 || ts.head != 0 || len(ts.msgs) != 0 || slices.ContainsFunc(ts.msgs[:cap(ts.msgs)], func(m *reviveBody) bool { return m != nil }) {
			t.Fatalf("a spare timer slot is not cleared: due %d, head %d, %d messages", ts.due, ts.head, len(ts.msgs))
		}
	}
	ck := s.ckBodies[len(s.ckBodies)-1]
	gotState, got := run(&s)
	if !slices.Equal(got, want) || !reflect.DeepEqual(gotState, wantState) {
		t.Fatal("a broker on the spare answered differently from one without")
	}
	if n := s.Slabs(); n != first {
		t.Fatalf("the spare holds %d slabs after the second broker, %d after the first", n, first)
	}
	if !slices.ContainsFunc(s.ckBodies, func(c []ckBody) bool { return &c[0] == &ck[0] }) {
		t.Fatal("the second broker did not take the first one's CK bodies")
	}
}

// allZero fails unless every record of every slab is zero.
func allZero[T any](t *testing.T, kind string, slabs [][]T) {
	t.Helper()
	for _, s := range slabs {
		for i := range s[:cap(s)] {
			if !reflect.ValueOf(&s[:cap(s)][i]).Elem().IsZero() {
				t.Fatalf("%s %d of a spare slab is not cleared: %+v", kind, i, s[i])
			}
		}
	}
}

// TestSlabKeepBounded checks that a slab source keeps at most slabKeep
// bytes of slabs for its spare however many it hands out (a long run's
// would otherwise all stay alive to its end), and gives the spare those
// it kept, cleared, at recycle.
func TestSlabKeepBounded(t *testing.T) {
	var spare [][]int64
	s := slabSource[int64]{spare: &spare}
	const n = 1024 // 8 KiB slabs
	total := 0
	for total <= 3*slabKeep {
		x := s.take(n)
		x[0] = 1
		total += n * 8
	}
	if s.kept > slabKeep || s.kept < slabKeep-n*8 {
		t.Fatalf("kept %d bytes of %d taken, want at most and about slabKeep (%d)", s.kept, total, slabKeep)
	}
	s.recycle()
	if got := len(spare) * n * 8; got != slabKeep/(n*8)*(n*8) {
		t.Fatalf("spare holds %d bytes, want %d", got, slabKeep)
	}
	for _, x := range spare {
		if x[0] != 0 {
			t.Fatal("a recycled slab was not cleared")
		}
	}
	if s.kept != 0 || s.made != nil {
		t.Fatalf("after recycle: kept %d, made %d", s.kept, len(s.made))
	}
}
