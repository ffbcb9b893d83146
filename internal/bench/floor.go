package bench

import (
	"testing"

	"github.com/tidwall/btree"
)

// floorKey has the engine's key shape: 24 bytes of integers.
type floorKey struct {
	vt     int64
	pair   uint32
	qid    int32
	offset int64
}

func floorLess(a, b floorKey) bool {
	if a.vt != b.vt {
		return a.vt < b.vt
	}
	if a.pair != b.pair {
		return a.pair < b.pair
	}
	if a.qid != b.qid {
		return a.qid < b.qid
	}
	return a.offset < b.offset
}

// floor is the bare index: a BTreeG without locks and one path hint per
// side, with the engine's clock and offset bookkeeping reduced to counters.
type floor struct {
	tree             *btree.BTreeG[floorKey]
	popHint, ackHint btree.PathHint
	nowMs            int64
	next             [Queues]int64 // next offset per queue
	round            int
}

// newFloor holds n keys with a one-day deadline, popped 32 at a time over
// the queues as the engine's fixture does.
func newFloor(n int) *floor {
	fl := &floor{tree: btree.NewBTreeGOptions(floorLess, btree.Options{NoLocks: true}), nowMs: 1704067200000}
	for got := 0; got < n; {
		k := min(Batch, n-got)
		fl.insertBatch(longInvisible.Millis(), k)
		got += k
	}
	return fl
}

// insertBatch inserts k consecutive offsets of the next queue.
func (fl *floor) insertBatch(invisible int64, k int) (floorKey, int) {
	q := fl.round % Queues
	first := floorKey{vt: fl.nowMs + invisible, pair: 1, qid: int32(q), offset: fl.next[q]}
	for i := 0; i < k; i++ {
		key := first
		key.offset += int64(i)
		fl.tree.SetHint(key, &fl.popHint)
	}
	fl.next[q] += int64(k)
	fl.round++
	fl.nowMs += roundMs
	return first, k
}

// FloorPopAck32 is PopAck32's index work on the bare tree: insert 32 keys,
// then delete them in the same order, with p.InFlight other keys present.
func FloorPopAck32(b *testing.B, p Params) {
	fl := newFloor(p.InFlight)
	p.Latency.setRound(Batch)
	m := startMeter(b)
	for b.Loop() {
		t0, s := p.Latency.begin()
		first, k := fl.insertBatch(hotInvisible.Millis(), Batch)
		for i := 0; i < k; i++ {
			key := first
			key.offset += int64(i)
			if _, ok := fl.tree.DeleteHint(key, &fl.ackHint); !ok {
				fatalf(b, "floor: key %+v missing", key)
			}
		}
		p.Latency.end(t0, s)
	}
	m.report(Batch)
	if n := fl.tree.Len(); n != p.InFlight {
		fatalf(b, "floor: %d keys after the run, want %d", n, p.InFlight)
	}
}

// FloorChangeInvisibleTime is ChangeInvisibleTime's index work: per
// message, insert the renewed key at the far end and delete the oldest.
func FloorChangeInvisibleTime(b *testing.B, p Params) {
	n := max(p.InFlight, Batch)
	fl := newFloor(n)
	ring := make([]floorKey, 0, n)
	fl.tree.Scan(func(k floorKey) bool { ring = append(ring, k); return true })
	p.Latency.setRound(Batch)
	m := startMeter(b)
	next := 0
	for b.Loop() {
		t0, s := p.Latency.begin()
		for i := 0; i < Batch; i++ {
			old := ring[next]
			nk := old
			nk.vt = fl.nowMs + longInvisible.Millis()
			fl.tree.SetHint(nk, &fl.popHint)
			if _, ok := fl.tree.DeleteHint(old, &fl.ackHint); !ok {
				fatalf(b, "floor: key %+v missing", old)
			}
			ring[next] = nk
			next = (next + 1) % n
		}
		fl.nowMs += roundMs
		p.Latency.end(t0, s)
	}
	m.report(Batch)
}
