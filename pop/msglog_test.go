package pop

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"popsim/model"
)

// TestMsgLog appends and drops across chunk boundaries against a plain
// slice: every entry keeps its message, and an append does not move a
// message in a full chunk.
func TestMsgLog(t *testing.T) {
	var l msgLog
	var pool chunkPool
	var want []model.MsgID
	next := model.MsgID(1)
	push := func(k int) {
		for range k {
			l.push(&pool).ID = next
			want = append(want, next)
			next++
		}
	}
	drop := func(k int) {
		l.dropFront(k, &pool)
		want = want[k:]
	}
	check := func(step string) {
		t.Helper()
		if l.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, l.len(), len(want))
		}
		for i, id := range want {
			if got := l.slot(i).ID; got != id {
				t.Fatalf("%s: entry %d is message %d, want %d", step, i, got, id)
			}
		}
	}
	push(3)
	check("first chunk")
	push(logChunk * 2)
	check("three chunks")
	p := l.slot(1)
	push(logChunk)
	if p != l.slot(1) || p.ID != 2 {
		t.Fatal("an append moved a message of a full chunk")
	}
	check("four chunks")
	drop(2)
	check("part of a chunk")
	drop(logChunk)
	check("across a boundary")
	if len(l.chunks) != 3 {
		t.Fatalf("%d chunks held after the first was dropped, want 3", len(l.chunks))
	}
	drop(l.len())
	check("all")
	push(logChunk + 1)
	check("after emptying")
	drop(5)
	push(1)
	check("mixed")
}

// TestMsgLogPool: chunks that leave one log (dropped from its front or
// released) are reused by another's appends, which see them empty, and the
// first log's remaining entries are untouched.
func TestMsgLogPool(t *testing.T) {
	var a, b msgLog
	var pool chunkPool
	for i := range 4 * logChunk {
		a.push(&pool).ID = model.MsgID(i + 1)
	}
	a.dropFront(logChunk+3, &pool) // the first chunk (grown: pooled too)
	if len(pool.free) != 1 {
		t.Fatalf("%d chunks pooled after a drop, want 1", len(pool.free))
	}
	if n := a.release(2*logChunk-3, &pool); n != 2*logChunk-3 || len(pool.free) != 3 {
		t.Fatalf("released %d, %d chunks pooled", n, len(pool.free))
	}
	for i := range 3 * logChunk { // the first chunk moves to a pooled one at logFirstCap
		s := b.push(&pool)
		if s.ID != 0 || s.Topic != "" {
			t.Fatalf("entry %d of a reused chunk is not zero: %+v", i, *s)
		}
		s.ID = model.MsgID(-i - 1)
	}
	if len(pool.free) != 0 {
		t.Fatalf("%d chunks left pooled", len(pool.free))
	}
	for i := range logChunk {
		if got, want := a.slot(2*logChunk-3+i).ID, model.MsgID(3*logChunk+i+1); got != want {
			t.Fatalf("entry %d of the first log is %d, want %d", i, got, want)
		}
	}
	for i := range 3 * logChunk {
		if got := b.slot(i).ID; got != model.MsgID(-i-1) {
			t.Fatalf("entry %d of the second log is %d", i, got)
		}
	}
}

// TestMsgLogFirstChunkGrowth: the first chunk grows logFirstGrow-fold
// (8, then a full chunk of 64), keeping every entry pushed, and the next
// chunk is full size from the start.
func TestMsgLogFirstChunkGrowth(t *testing.T) {
	var l msgLog
	var pool chunkPool
	var caps []int
	for i := range logChunk + 1 {
		l.push(&pool).ID = model.MsgID(i + 1)
		if c := cap(l.chunks[0]); len(caps) == 0 || caps[len(caps)-1] != c {
			caps = append(caps, c)
		}
	}
	if want := []int{logFirstCap, logChunk}; !slices.Equal(caps, want) {
		t.Fatalf("first chunk capacities %v, want %v", caps, want)
	}
	if len(l.chunks) != 2 || cap(l.chunks[1]) != logChunk {
		t.Fatalf("%d chunks, the second of capacity %d", len(l.chunks), cap(l.chunks[1]))
	}
	for i := range logChunk + 1 {
		if got := l.slot(i).ID; got != model.MsgID(i+1) {
			t.Fatalf("entry %d is %d, want %d", i, got, i+1)
		}
	}
	if pool.held != 2 {
		t.Fatalf("pool counts %d full-size chunks held, want 2", pool.held)
	}
}

// TestLogChunkPages: a log entry is a message alone, 192 bytes, and the
// block chunks are carved from is exactly six 8-KB pages of the
// runtime's large objects (a 208-byte entry made a 52-KB chunk, rounded
// up to seven pages), larger than the largest small object (32 KB), which
// a 12-KB chunk alone would be, with a header that takes it to the next
// size class.
func TestLogChunkPages(t *testing.T) {
	if s := unsafe.Sizeof(model.Message{}); s != 192 {
		t.Fatalf("model.Message is %d bytes, want 192", s)
	}
	if s := unsafe.Sizeof(model.Message{}) * logChunk * logBlock; s%8192 != 0 || s <= 32<<10 {
		t.Fatalf("a block of log chunks is %d bytes, not a whole number of 8-KB pages above 32 KB", s)
	}
}

// TestChunkCarve: the chunks carved from a block are empty, with room
// for logChunk entries each, which ends where the next chunk starts (an
// append beyond it moves the chunk rather than writing into its
// neighbour), and a block is allocated once for logBlock of them.
func TestChunkCarve(t *testing.T) {
	var p chunkPool
	var cs [][]model.Message
	for range 2 * logBlock {
		c := p.take()
		if len(c) != 0 || cap(c) != logChunk {
			t.Fatalf("carved chunk %d has length %d and room for %d, want 0 and %d", len(cs), len(c), cap(c), logChunk)
		}
		cs = append(cs, c[:logChunk])
	}
	for i, c := range cs {
		for j := range c {
			c[j].ID = model.MsgID(i*logChunk + j + 1)
		}
	}
	for i, c := range cs {
		for j := range c {
			if got := c[j].ID; got != model.MsgID(i*logChunk+j+1) {
				t.Fatalf("entry %d of chunk %d holds %d: chunks overlap", j, i, got)
			}
		}
	}
	if grown := append(cs[0], model.Message{ID: 1 << 31}); &grown[0] == &cs[0][0] || cs[1][0].ID == 1<<31 {
		t.Fatalf("an append beyond a carved chunk wrote into its block")
	}
	if p.held != 2*logBlock {
		t.Fatalf("pool counts %d chunks held, want %d", p.held, 2*logBlock)
	}
	if n := testing.AllocsPerRun(10, func() {
		p = chunkPool{}
		for range logBlock {
			p.take()
		}
	}); n != 1 {
		t.Fatalf("%v allocations for %d carved chunks, want 1", n, logBlock)
	}
}

// TestRevWindow: a revive-topic queue's typed forms stay with their
// messages through appends, releases (whole log chunks) and truncation,
// across the window's compaction and reset.
func TestRevWindow(t *testing.T) {
	b := &Broker{}
	q := &queue{unbuilt: true}
	forms := map[model.MsgID]*reviveBody{}
	next := model.MsgID(1)
	push := func(k int) {
		for range k {
			m := q.log.push(&b.logPool)
			m.ID = next
			d := &reviveBody{}
			*q.pushRev() = d
			forms[next] = d
			next++
		}
	}
	check := func(step string) {
		t.Helper()
		if q.revs.len() != q.log.len() {
			t.Fatalf("%s: %d typed forms for %d messages", step, q.revs.len(), q.log.len())
		}
		for i := range q.log.len() {
			if q.log.released(i) {
				if i >= q.revs.base {
					t.Fatalf("%s: entry %d released, the window starts at %d", step, i, q.revs.base)
				}
				continue
			}
			if got, want := *q.revs.slot(i), forms[q.log.slot(i).ID]; got != want {
				t.Fatalf("%s: entry %d (message %d) has another's typed form", step, i, q.log.slot(i).ID)
			}
		}
	}
	push(3)
	check("first")
	// chunks more (eight in all, the first holding 3 more), then all but
	// the last released: at least half of the window's room, however
	// append rounded it up.
	const chunks = 7
	push(chunks * logChunk)
	check("eight chunks")
	if n := q.release((chunks-1)*logChunk+5, b); n != (chunks-1)*logChunk {
		t.Fatalf("released %d entries, want %d", n, (chunks-1)*logChunk)
	}
	check("released six chunks")
	capBefore := cap(q.revs.d)
	push((chunks - 1) * logChunk) // fills the window: it compacts instead of growing
	check("after compaction")
	if cap(q.revs.d) != capBefore || q.revs.lo != 0 {
		t.Fatalf("window grew from %d to %d (lo %d) with half of it released", capBefore, cap(q.revs.d), q.revs.lo)
	}
	for i, d := range q.revs.d[len(q.revs.d):cap(q.revs.d)] {
		if d != nil {
			t.Fatalf("window entry %d past its end not nil", len(q.revs.d)+i)
		}
	}
	q.truncate(q.min+logChunk+7, b) // a released chunk and part of a held one
	check("truncated")
	q.truncate(q.maxOffset(), b)
	check("emptied")
	if len(q.revs.d) != 0 || q.revs.lo != 0 || q.revs.base != 0 {
		t.Fatalf("empty window: %d entries, lo %d, base %d", len(q.revs.d), q.revs.lo, q.revs.base)
	}
	push(logChunk + 9)
	check("after emptying")
}

// TestMsgLogProp appends, drops and releases at random against a plain
// slice, over logs that share a pool: every held entry that was not
// released keeps its message, every chunk is at its full length, the
// log's last chunk (msgLog.last) is its chunks' last exactly when that is
// full size, and next is the entry push returns when that is in a
// full-size last chunk, else nil.
func TestMsgLogProp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pool chunkPool
		logs := make([]msgLog, rapid.IntRange(1, 3).Draw(t, "logs"))
		refs := make([][]model.MsgID, len(logs))
		next := model.MsgID(1)
		for op := rapid.IntRange(1, 200).Draw(t, "ops"); op > 0; op-- {
			i := rapid.IntRange(0, len(logs)-1).Draw(t, "log")
			l := &logs[i]
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				k := rapid.IntRange(0, l.len()).Draw(t, "drop")
				l.dropFront(k, &pool)
				refs[i] = refs[i][k:]
			case 1:
				l.release(rapid.IntRange(0, l.len()).Draw(t, "below"), &pool)
			default:
				for range rapid.IntRange(1, 2*logChunk).Draw(t, "push") {
					ahead, room := l.next(), l.last != nil && l.fill() < logChunk
					m := l.push(&pool)
					if ahead != m && (ahead != nil || room) {
						t.Fatalf("push returned entry %p, next said %p", m, ahead)
					}
					if !reflect.ValueOf(m).Elem().IsZero() {
						t.Fatalf("pushed entry not zero: %+v", *m)
					}
					m.ID = next
					refs[i] = append(refs[i], next)
					next++
				}
			}
			checkLog(t, l, refs[i])
		}
	})
}

// checkLog checks l against ref, its messages' IDs, oldest first.
func checkLog(t *rapid.T, l *msgLog, ref []model.MsgID) {
	if l.len() != len(ref) {
		t.Fatalf("log holds %d entries, want %d", l.len(), len(ref))
	}
	for i, id := range ref {
		if !l.released(i) && l.slot(i).ID != id {
			t.Fatalf("entry %d is message %d, want %d", i, l.slot(i).ID, id)
		}
	}
	for k, c := range l.chunks {
		if c != nil && len(c) != cap(c) {
			t.Fatalf("chunk %d held at length %d of %d", k, len(c), cap(c))
		}
	}
	k := len(l.chunks) - 1
	if full := k >= 0 && cap(l.chunks[k]) == logChunk; full != (l.last != nil) || full && &l.last[0] != &l.chunks[k][0] {
		t.Fatalf("last chunk %p, chunks' last of %d: full size %v", l.last, len(l.chunks), full)
	}
}

// push appends a zero entry and returns it, as the appends do (tryPush,
// else pushGrown).
func (l *msgLog) push(pool *chunkPool) *model.Message {
	if m := l.tryPush(); m != nil {
		return m
	}
	return l.pushGrown(pool)
}
