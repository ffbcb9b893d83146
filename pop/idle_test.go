package pop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/model"
)

// TestQueueScanOrder checks queueScan against scanQueue: for random idle
// bitmaps, both directions, every rotation and several sizes, the scan
// yields exactly the unmarked queues, in scanQueue's order, at their
// positions.
func TestQueueScanOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int32{1, 2, 3, 63, 64, 65, 127, 128, 130, 200} {
		for _, desc := range []bool{false, true} {
			b := &Broker{cfg: DefaultConfig()}
			b.cfg.PriorityOrderAsc = desc
			for trial := 0; trial < 20; trial++ {
				idle := make([]uint64, rng.IntN(int(n+63)/64+1)) // maybe shorter than n: the rest is unmarked
				density := rng.Float64()
				for i := range idle {
					for j := 0; j < 64; j++ {
						if rng.Float64() < density {
							idle[i] |= 1 << j
						}
					}
				}
				r := rng.Int64N(3 * int64(n))
				var want, got []string
				for i := int32(0); i < n; i++ {
					q := b.scanQueue(n, r, i)
					if !(qkeyIdle(idle, q)) {
						want = append(want, fmt.Sprintf("%d@%d", q, i))
					}
				}
				sc := b.newQueueScan(n, r)
				for pos := int32(0); ; {
					at, q, ok := sc.next(idle, pos)
					if !ok {
						if at != n {
							t.Fatalf("n=%d desc=%v: end at %d, want %d", n, desc, at, n)
						}
						break
					}
					got = append(got, fmt.Sprintf("%d@%d", q, at))
					pos = at + 1
				}
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d desc=%v r=%d idle=%x:\n got %v\nwant %v", n, desc, r, idle, got, want)
				}
			}
		}
	}
}

// TestAllMarkedIsAnEmptyScan checks skippedAll's shortcut against the scan
// it replaces: allMarked holds exactly when n fits in one word and every
// one of the n queues is marked, and then the scan, from any position and
// in either direction, finds no queue; when it fails for such an n, the
// scan from position 0 finds one.
func TestAllMarkedIsAnEmptyScan(t *testing.T) {
	for n := int32(1); n <= 64; n++ { // queues 0..k-1 marked, k around n
		for k := n - 1; k <= n+1; k++ {
			marks := make([]uint64, 2)
			for q := int32(0); q < k; q++ {
				marks[q>>6] |= 1 << (q & 63)
			}
			if got := allMarked(marks, n); got != (k >= n) {
				t.Fatalf("allMarked(queues below %d marked, %d) = %v", k, n, got)
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		marks := make([]uint64, rapid.IntRange(0, 3).Draw(rt, "words"))
		// n ends in the bitmap's last word, mostly: at its edges too, and
		// one past it (a queue the bitmap does not cover)
		n := int32(64*max(len(marks)-1, 0)) + rapid.Int32Range(-1, 65).Draw(rt, "nInLast")
		for i := range marks {
			switch rapid.IntRange(0, 6).Draw(rt, "kind") {
			case 0, 1, 2: // a word of marked queues, often: scans that find none
				marks[i] = ^uint64(0)
			case 3: // all but one
				marks[i] = ^uint64(0) &^ (1 << rapid.IntRange(0, 63).Draw(rt, "hole"))
			case 4: // the queues below one marked, the rest not
				marks[i] = 1<<rapid.IntRange(0, 63).Draw(rt, "below") - 1
			default:
				marks[i] = rapid.Uint64().Draw(rt, "word")
			}
		}
		want := n >= 1 && n <= 64
		for q := int32(0); q < n; q++ {
			want = want && qkeyIdle(marks, q)
		}
		got := allMarked(marks, n)
		if got != want {
			rt.Fatalf("allMarked(%x, %d) = %v, want %v", marks, n, got, want)
		}
		if n < 1 || n > 64 || len(marks) == 0 {
			return
		}
		b := &Broker{cfg: DefaultConfig()}
		b.cfg.PriorityOrderAsc = rapid.Bool().Draw(rt, "desc")
		sc := b.newQueueScan(n, rapid.Int64Range(0, 3*int64(n)).Draw(rt, "r"))
		if got {
			for pos := int32(0); pos <= n; pos++ {
				if at, q, ok := sc.next(marks, pos); ok || at != n {
					rt.Fatalf("every queue marked, yet next(%d) = %d, %d, %v", pos, at, q, ok)
				}
			}
		} else if _, _, ok := sc.next(marks, 0); !ok {
			rt.Fatalf("allMarked(%x, %d) false, yet the scan finds no queue", marks, n)
		}
	})
}

func qkeyIdle(idle []uint64, q int32) bool {
	return int(q>>6) < len(idle) && idle[q>>6]&(1<<(q&63)) != 0
}

// TestIdleQueuesSkipped checks that all-queue pops on both paths mark the
// empty, caught-up queues of a wide topic idle and skip them while
// counting the reads their stages would have made, and that a put, a
// reset and a restart clear the marks they must.
func TestIdleQueuesSkipped(t *testing.T) {
	for _, kv := range []bool{true, false} {
		t.Run(map[bool]string{true: "kv", false: "fs"}[kv], func(t *testing.T) {
			cfg := DefaultConfig()
			if kv {
				cfg = KVConfig()
			}
			const n = 200
			b := queuesBroker(t, cfg, n)
			now := clock.Epoch
			var res PopResult
			pop := allQueuePopper(t, b, n, &now, &res)
			pop()
			pop()
			pair, _ := b.names.lookup("g", "t")
			idle := func() int {
				c := 0
				for q := int32(0); q < n; q++ {
					if b.offsets.isIdle(qkey{pair, q}) {
						c++
					}
				}
				return c
			}
			if c := idle(); c != n {
				t.Fatalf("after two empty pops %d of %d queues are idle", c, n)
			}
			b.Put(now, &model.Message{Topic: "t", QueueID: 7})
			if b.offsets.isIdle(qkey{pair, 7}) {
				t.Fatalf("a put left its queue marked idle")
			}
			must(t, b.CheckInvariants())
			pop()
			if len(res.Messages) != 1 || res.Messages[0].Message.QueueID != 7 {
				t.Fatalf("pop after the put: %v with %d messages, want the message of queue 7", res.Status, len(res.Messages))
			}
			_, err := b.ResetOffset("g", "t", 9, 0)
			must(t, err)
			if b.offsets.isIdle(qkey{pair, 9}) {
				t.Fatalf("a reset left its queue marked idle")
			}
			must(t, b.CheckInvariants())
			b.Restart(now)
			if c := idle(); c != 0 {
				t.Fatalf("after a restart %d queues are still marked idle", c)
			}
			must(t, b.CheckInvariants())
		})
	}
}

// isQuiet reports k's quiet mark.
func (o *offsets) isQuiet(k qkey) bool {
	if int(k.pair) >= len(o.quiet) {
		return false
	}
	w := o.quiet[k.pair]
	return k.qid >= 0 && int(k.qid>>6) < len(w) && w[k.qid>>6]&(1<<(k.qid&63)) != 0
}

// TestQuietQueuesSkipped checks the quiet marks of the KV path with the
// cache (enablePopBufferMerge): a queue whose popped record waits in the
// cache is caught up but not idle, so an empty all-queue pop marks it
// quiet only, still counts one read for it, and the ack that removes the
// record from the cache clears the mark.
func TestQuietQueuesSkipped(t *testing.T) {
	cfg := KVConfig()
	cfg.EnablePopBufferMerge = true
	const n = 70 // two bitmap words
	p := poppedOne(t, cfg, n, 66)
	b, pop := p.b, p.pop
	h := p.res.Messages[0].Handle
	pop()
	pop()
	pair, _ := b.names.lookup("g", "t")
	k := qkey{pair, 66}
	if b.offsets.isIdle(k) || !b.offsets.isQuiet(k) {
		t.Fatalf("a queue with a cached record: idle %v quiet %v, want quiet only", b.offsets.isIdle(k), b.offsets.isQuiet(k))
	}
	if o := (qkey{pair, 3}); !b.offsets.isIdle(o) || !b.offsets.isQuiet(o) {
		t.Fatalf("an empty queue: idle %v quiet %v, want both", b.offsets.isIdle(o), b.offsets.isQuiet(o))
	}
	ack := NewAckRequest("g", "t", &h)
	if r := b.Ack(p.now, &ack); r.Code != model.Success {
		t.Fatalf("ack: %+v", r)
	}
	if b.offsets.isQuiet(k) {
		t.Fatalf("the ack that emptied the queue's cache left it marked quiet")
	}
	must(t, b.CheckInvariants())
	pop()
	pop()
	if !b.offsets.isIdle(k) {
		t.Fatalf("the acked queue is not idle after two empty pops")
	}
}

// popped is a broker with topic t and group g, its all-queue pop (pop,
// into res at now) and what the last pop answered.
type popped struct {
	b   *Broker
	now clock.Time
	res PopResult
	pop func()
}

// poppedOne is a broker of cfg with topic t of n queues after an empty
// all-queue pop, a put to queue qid, and the pop that returned the message.
func poppedOne(t *testing.T, cfg Config, n, qid int32) *popped {
	t.Helper()
	p := &popped{b: queuesBroker(t, cfg, n), now: clock.Epoch}
	p.pop = allQueuePopper(t, p.b, n, &p.now, &p.res)
	p.pop()
	p.b.Put(p.now, &model.Message{Topic: "t", QueueID: qid})
	p.pop()
	if len(p.res.Messages) != 1 {
		t.Fatalf("pop after the put: %v with %d messages, want 1", p.res.Status, len(p.res.Messages))
	}
	return p
}

// allQueuePopper returns a pop of g on all n queues of t into res at *now,
// which checks the invariants and that an empty pop counted a read per
// queue, then moves *now on by a millisecond.
func allQueuePopper(t *testing.T, b *Broker, n int32, now *clock.Time, res *PopResult) func() {
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}
	return func() {
		t.Helper()
		reads := b.stats.ReadCalls
		b.Pop(*now, &req, res)
		must(t, b.CheckInvariants())
		if got := b.stats.ReadCalls - reads; res.Status != PopFound && got < int64(n) {
			t.Fatalf("an empty pop counted %d reads, want at least one per queue (%d)", got, n)
		}
		*now = now.Add(clock.Millisecond)
	}
}

// queuesBroker is a broker of cfg with topic t of n queues and group g.
func queuesBroker(t *testing.T, cfg Config, n int32) *Broker {
	b, err := New(cfg)
	must(t, err)
	must(t, b.CreateTopic(TopicConfig{Name: "t", ReadQueueNums: n, WriteQueueNums: n}))
	must(t, b.CreateGroup(DefaultGroup("g")))
	return b
}

// queueWalk drives a broker of topic t (n queues) and group g through
// random puts, all-queue pops and acks of what the pops returned.
type queueWalk struct {
	b       *Broker
	n       int32
	rng     *rand.Rand
	now     clock.Time
	res     PopResult
	pop     func()
	handles []model.ReceiptHandle
}

// The steps a queueWalk takes.
const (
	walkPut = iota
	walkPop
	walkAck
)

func newQueueWalk(t *testing.T, b *Broker, n int32, seed1, seed2 uint64) *queueWalk {
	w := &queueWalk{b: b, n: n, rng: rand.New(rand.NewPCG(seed1, seed2)), now: clock.Epoch}
	w.pop = allQueuePopper(t, b, n, &w.now, &w.res)
	return w
}

// step takes one random step (an ack only when a handle is held) and says
// which it drew.
func (w *queueWalk) step() int {
	k := w.rng.IntN(3)
	switch k {
	case walkPut:
		w.b.Put(w.now, &model.Message{Topic: "t", QueueID: w.rng.Int32N(w.n)})
	case walkPop:
		w.pop()
		for _, m := range w.res.Messages {
			w.handles = append(w.handles, m.Handle)
		}
	default:
		if len(w.handles) > 0 {
			j := w.rng.IntN(len(w.handles))
			ack := NewAckRequest("g", "t", &w.handles[j])
			w.b.Ack(w.now, &ack)
			w.handles = append(w.handles[:j], w.handles[j+1:]...)
		}
	}
	return k
}

// TestKVMarksIsQueueMarks checks kvMarks, kvQueueStage's marks from the
// slot it holds, against queueMarks on every queue of a KV broker (with
// and without the cache, and with the in-flight threshold) through random
// puts, all-queue pops and acks.
func TestKVMarksIsQueueMarks(t *testing.T) {
	for i, cfg := range []Config{KVConfig(), KVConfig(), KVConfig()} {
		cfg.EnablePopBufferMerge = i > 0
		cfg.EnablePopMessageThreshold = i == 2
		const n = 5
		b := queuesBroker(t, cfg, n)
		w := newQueueWalk(t, b, n, uint64(i), 7)
		for step := range 300 {
			w.step()
			pair, ok := b.names.lookup("g", "t")
			if !ok {
				continue
			}
			row := b.offsets.slots(pair, n)
			for qid := range int32(n) {
				k := qkey{pair, qid}
				if got, want := b.kvMarks(k, &row[qid], b.topicNamed("t").queues[qid], !b.inflightThreshold()), b.queueMarks(k, b.topicNamed("t").queues[qid]); got != want {
					t.Fatalf("config %d step %d queue %d: kvMarks %d, queueMarks %d", i, step, qid, got, want)
				}
			}
		}
	}
}

// TestAllQueuePopLeavesEveryQueueMarked checks that after an all-queue KV
// pop (no in-flight threshold, with and without the cache) every queue of
// the topic carries the marks queueMarks finds: the queues its stages read
// are marked once the pop's records are cached and its commits made
// (markStage), so the next pop skips a queue it read to its end. Acks in
// random order take records above a queue's smallest cached offset too.
func TestAllQueuePopLeavesEveryQueueMarked(t *testing.T) {
	for i, cfg := range []Config{KVConfig(), KVConfig()} {
		cfg.EnablePopBufferMerge = i > 0
		const n = 4
		b := queuesBroker(t, cfg, n)
		w := newQueueWalk(t, b, n, uint64(i), 11)
		marked := 0
		for step := range 400 {
			if w.step() != walkPop {
				continue
			}
			pair, _ := b.names.lookup("g", "t")
			for qid := range int32(n) {
				k := qkey{pair, qid}
				want := b.queueMarks(k, b.topicNamed("t").queues[qid])
				got := markedNone
				if b.offsets.isIdle(k) {
					got = markedIdle
				} else if b.offsets.quiet[pair][0]&(1<<qid) != 0 {
					got = markedQuiet
				}
				if got != want {
					t.Fatalf("config %d step %d queue %d: marked %d after the pop, queueMarks %d", i, step, qid, got, want)
				}
				if got != markedNone {
					marked++
				}
			}
		}
		if marked == 0 {
			t.Fatalf("config %d: no queue was ever marked", i)
		}
	}
}

// TestAckAboveSmallestCachedKeepsMarks checks that an ack of a cached
// record above its queue's smallest cached offset leaves the queue's quiet
// mark (the smallest cached offset, all caughtUp reads of the cache, is
// unchanged), and that an ack of the smallest one clears it.
func TestAckAboveSmallestCachedKeepsMarks(t *testing.T) {
	cfg := KVConfig()
	cfg.EnablePopBufferMerge = true
	b := queuesBroker(t, cfg, 1)
	now := clock.Epoch
	for range 3 {
		b.Put(now, &model.Message{Topic: "t", QueueID: 0})
	}
	var res PopResult
	allQueuePopper(t, b, 1, &now, &res)()
	if len(res.Messages) != 3 {
		t.Fatalf("popped %d messages, want 3", len(res.Messages))
	}
	pair, _ := b.names.lookup("g", "t")
	quiet := func() bool { return b.offsets.quiet[pair][0]&1 != 0 }
	if !quiet() {
		t.Fatal("a queue read to its end is not marked quiet after the pop")
	}
	for i, want := range []bool{true, false} { // the middle record, then the first
		ack := NewAckRequest("g", "t", &res.Messages[1-i].Handle)
		b.Ack(now, &ack)
		must(t, b.CheckInvariants())
		if quiet() != want {
			t.Fatalf("ack %d: quiet %v, want %v", i, quiet(), want)
		}
	}
}

// TestSlotsAndIdleBitsGrowOnlyWhenShort checks offsets.slots and idleBits
// hand back a pair's row as it is when it covers the queues asked for (the
// fast path of every pop after the pair's first), and grow it when not.
func TestSlotsAndIdleBitsGrowOnlyWhenShort(t *testing.T) {
	b := queuesBroker(t, KVConfig(), 1)
	tp := b.topicNamed("t")
	for _, n := range []int32{3, 1, 3, 70, 2, 130} {
		row := b.offsets.slots(1, n)
		if len(row) < int(n) || &row[0] != &b.offsets.rows[1][0] {
			t.Fatalf("slots(1, %d): %d slots, or not the pair's row", n, len(row))
		}
		idle, quiet := b.idleBits(1, tp, n)
		if w := int(n+63) >> 6; len(idle) < w || len(quiet) != len(idle) || &idle[0] != &b.offsets.idle[1][0] || &quiet[0] != &b.offsets.quiet[1][0] {
			t.Fatalf("idleBits(1, %d): %d and %d words, want at least %d, the pair's own", n, len(idle), len(quiet), w)
		}
	}
	if len(tp.idlePairs) != 1 {
		t.Fatalf("pair registered %d times on the topic, want once", len(tp.idlePairs))
	}
}

// TestCaughtUpStageKeepsMarks checks that a single-queue stage on a
// caught-up queue (popStage: a retry topic's, or a pop of one queue), which
// only reads the queue's slot, leaves its marks, and that one which reads
// the queue clears them.
func TestCaughtUpStageKeepsMarks(t *testing.T) {
	b := queuesBroker(t, KVConfig(), 1)
	now := clock.Epoch
	b.Put(now, &model.Message{Topic: "t", QueueID: 0})
	var res PopResult
	allQueuePopper(t, b, 1, &now, &res)()
	pair, _ := b.names.lookup("g", "t")
	quiet := func() bool { return b.offsets.quiet[pair][0]&1 != 0 }
	if !quiet() {
		t.Fatal("a queue read to its end is not marked quiet after the pop")
	}
	one := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: 0, MaxMsgNums: 4, InvisibleTime: 60 * clock.Second}
	for i, want := range []bool{true, false} { // caught up; then a message to read
		if i == 1 {
			b.Put(now, &model.Message{Topic: "t", QueueID: 0})
		}
		reads := b.stats.ReadCalls
		b.Pop(now, &one, &res)
		must(t, b.CheckInvariants())
		if quiet() != want || b.stats.ReadCalls != reads+1 {
			t.Fatalf("pop %d of queue 0: quiet %v, want %v; %d reads, want 1", i, quiet(), want, b.stats.ReadCalls-reads)
		}
	}
}

// TestBufferCommitKeepsIdleMark checks keepIdle: on the checkpoint path a
// queue a pop read to its end is marked idle, and the buffer scan that
// commits its wrapper's offset (which clears the mark as it writes the
// slot) marks it again, as it is still idle: the next all-queue pop skips
// it instead of reading it to find nothing.
func TestBufferCommitKeepsIdleMark(t *testing.T) {
	const n = 4
	p := poppedOne(t, DefaultConfig(), n, 2)
	b, pop, res := p.b, p.pop, &p.res
	pair, _ := b.names.lookup("g", "t")
	k := qkey{pair, 2}
	if !b.offsets.isIdle(k) {
		t.Fatalf("the queue a pop read to its end is not marked idle")
	}
	commit := b.offsets.peek(k).commit
	for i := 0; i < 10 && b.offsets.peek(k).commit == commit; i++ {
		next, ok := b.NextCheckpointTick()
		if !ok {
			t.Fatalf("no checkpoint work pending with the wrapper uncommitted")
		}
		p.now = next
		b.CheckpointTick(p.now)
	}
	if c := b.offsets.peek(k).commit; c != 1 {
		t.Fatalf("the buffer committed offset %d, want 1 (past the message)", c)
	}
	if !b.offsets.isIdle(k) {
		t.Fatalf("the buffer's commit left the idle queue unmarked")
	}
	must(t, b.CheckInvariants())
	stages := b.stats.ReadCalls
	pop()
	if res.Status == PopFound || b.stats.ReadCalls-stages != n {
		t.Fatalf("pop after the commit: %v, %d reads counted, want none found and %d", res.Status, b.stats.ReadCalls-stages, n)
	}
}

// queueMarks reports whether queue k (q) is idle or else quiet for the
// broker's pop path (the idle.go note), computed afresh from the queue:
// the tests' reference for the marks the pop paths keep.
func (b *Broker) queueMarks(k qkey, q *queue) int {
	if b.queueIdle(k, q) {
		return markedIdle
	}
	if b.kvQuiet(k, q) {
		return markedQuiet
	}
	return markedNone
}
