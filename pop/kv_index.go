package pop

import (
	"github.com/tidwall/btree"

	"popsim/model"
)

// recKey is the in-memory form of RocketMQ's record key.
type recKey struct {
	vt     int64
	pair   uint32
	qid    int32
	offset int64
}

// rec is one in-flight record: its key plus the fields of PopConsumerRecord
// that are not in the key (popTime is vt - invisible), and the lease the
// broker granted with it, which stays with the record wherever it lives.
type rec struct {
	recKey
	lease        model.LeaseID
	invisible    int64
	attemptTimes int32
	retry        model.RetryType
	attemptID    string
}

func (r *rec) popTime() int64 { return r.vt - r.invisible }

// index is the store of in-flight records (RocksDB column family popState):
// a B-tree in RocketMQ's key order serving exact delete and the expired
// range scan.
type index struct {
	n       *names
	tree    recTree
	popHint btree.PathHint // puts: a new record's deadline is nearly always the latest
	// deletes: ackHint is the path of the last delete that took it, ackVT
	// the deadline of the last delete (see delete)
	ackHint btree.PathHint
	ackVT   int64
}

// item is what the B-tree holds: the key in three words plus the slot of
// the record's other fields. Four integer fields matter: the comparator
// then takes both items in registers (eight of amd64's nine), and nodes
// hold no pointers for the GC to scan. A rec as the item (seven fields,
// with a string) was passed on the stack and cost about 5x the bare tree.
type item struct {
	vt     int64
	pq     uint64 // pair<<32 | uint32(qid)
	offset int64
	slot   uint64 // index into recTree.extra; ignored by the order
}

func keyItem(k recKey) item {
	return item{vt: k.vt, pq: uint64(k.pair)<<32 | uint64(uint32(k.qid)), offset: k.offset}
}

func (it item) key() recKey {
	return recKey{vt: it.vt, pair: uint32(it.pq >> 32), qid: int32(uint32(it.pq)), offset: it.offset}
}

// recExtra is a record's fields outside the key.
type recExtra struct {
	lease        model.LeaseID
	invisible    int64
	attemptTimes int32
	retry        model.RetryType
	attemptID    string
}

// recTree is the B-tree of items plus the slab of their other fields, with
// a free list so steady-state puts and deletes allocate nothing.
type recTree struct {
	bt    *btree.BTreeG[item]
	extra []recExtra
	free  []uint64
}

// hold stores r's other fields in a slot and returns r's item.
func (t *recTree) hold(r *rec) item {
	it := keyItem(r.recKey)
	x := recExtra{lease: r.lease, invisible: r.invisible, attemptTimes: r.attemptTimes, retry: r.retry, attemptID: r.attemptID}
	if n := len(t.free); n > 0 {
		it.slot = t.free[n-1]
		t.free = t.free[:n-1]
		t.extra[it.slot] = x
	} else {
		it.slot = uint64(len(t.extra))
		t.extra = append(t.extra, x)
	}
	return it
}

// rec rebuilds the record of an item.
func (t *recTree) rec(it item) rec {
	x := &t.extra[it.slot]
	return rec{recKey: it.key(), lease: x.lease, invisible: x.invisible, attemptTimes: x.attemptTimes, retry: x.retry, attemptID: x.attemptID}
}

// release frees an item's slot and returns the lease it held.
func (t *recTree) release(it item) model.LeaseID {
	l := t.extra[it.slot].lease
	t.extra[it.slot] = recExtra{}
	t.free = append(t.free, it.slot)
	return l
}

// Scan calls iter with every record in key order while it returns true.
func (t *recTree) Scan(iter func(r rec) bool) {
	t.bt.Scan(func(it item) bool { return iter(t.rec(it)) })
}

// Len is the number of records.
func (t *recTree) Len() int { return t.bt.Len() }

func newIndex(n *names) *index {
	ix := &index{n: n}
	ix.tree.bt = btree.NewBTreeGOptions(ix.itemLess, btree.Options{NoLocks: true})
	return ix
}

// less orders keys as bytewise comparison of RocketMQ's key does:
// big-endian vt, then "group@topic@", then big-endian queueId, then offset.
func (ix *index) less(a, b rec) bool { return ix.itemLess(keyItem(a.recKey), keyItem(b.recKey)) }

// itemLess is less on the tree's items: pairs compare by rank, the queue id
// as the unsigned low half of pq.
func (ix *index) itemLess(a, b item) bool {
	if a.vt != b.vt {
		return uint64(a.vt) < uint64(b.vt)
	}
	if a.pq != b.pq {
		if pa, pb := uint32(a.pq>>32), uint32(b.pq>>32); pa != pb {
			return ix.n.rank[pa] < ix.n.rank[pb]
		}
		return uint32(a.pq) < uint32(b.pq)
	}
	return uint64(a.offset) < uint64(b.offset)
}

// put writes a record. A write to an existing key replaces it, as RocksDB
// does: put returns the lease of the record it overwrote, 0 when none.
func (ix *index) put(r rec) model.LeaseID { return ix.putRef(&r) }

// putRef is put without copying the record.
func (ix *index) putRef(r *rec) model.LeaseID {
	if prev, replaced := ix.tree.bt.SetHint(ix.tree.hold(r), &ix.popHint); replaced {
		l := ix.tree.release(prev)
		if invariants {
			assertReplaced(l, r.lease)
		}
		return l
	}
	return 0
}

// delete removes the exact key and returns the lease of the record it
// removed, 0 when the key was not there. It takes the path hint only when
// the last delete's record had the same deadline: records of one pop share
// it and sit side by side, so acks of one batch in a row find the hint's
// leaf, while acks that come in the order consumers finish mostly miss a
// hint, and a missed hint costs its comparisons on top of the binary
// search (stop 38: 5.7 M of hot-topic-500x500's 706 M instructions).
func (ix *index) delete(k recKey) model.LeaseID {
	var it item
	var ok bool
	if k.vt == ix.ackVT {
		it, ok = ix.tree.bt.DeleteHint(keyItem(k), &ix.ackHint)
	} else {
		ix.ackVT = k.vt
		it, ok = ix.tree.bt.Delete(keyItem(k))
	}
	if ok {
		return ix.tree.release(it)
	}
	return 0
}

func (ix *index) len() int { return ix.tree.Len() }

// scanExpired removes and returns, in key order, up to max records with
// lower <= vt < upper (scanExpiredRecords followed by deleteRecords). The
// bounds are 8-byte big-endian key prefixes that RocksDB compares
// bytewise, so vt compares as an unsigned number: a record whose
// visibility timeout is negative (a renewal with a negative invisible
// time) sorts after every real deadline and is never scanned.
func (ix *index) scanExpired(lower, upper int64, max int, out []rec) []rec {
	for len(out) < max {
		m, ok := ix.tree.bt.Min()
		if !ok || uint64(m.vt) >= uint64(upper) {
			break
		}
		if uint64(m.vt) < uint64(lower) {
			return ix.scanFrom(lower, upper, max, out)
		}
		ix.tree.bt.PopMin()
		out = append(out, ix.tree.rec(m))
		ix.tree.release(m)
	}
	return out
}

// scanFrom is the general path when records below lower exist: they are
// outside the scan window and stay.
func (ix *index) scanFrom(lower, upper int64, max int, out []rec) []rec {
	start := len(out)
	ix.tree.bt.Ascend(item{vt: lower}, func(it item) bool {
		if uint64(it.vt) >= uint64(upper) || len(out) >= max {
			return false
		}
		out = append(out, ix.tree.rec(it))
		return true
	})
	for _, r := range out[start:] {
		if it, ok := ix.tree.bt.Delete(keyItem(r.recKey)); ok {
			ix.tree.release(it)
		}
	}
	return out
}

// record converts an in-memory record to RocketMQ's form.
func (ix *index) record(r *rec) model.PopConsumerRecord {
	p := ix.n.pairs[r.pair]
	return model.PopConsumerRecord{
		PopTime: r.popTime(), GroupID: p.group, TopicID: p.topic, QueueID: r.qid,
		RetryFlag: r.retry, InvisibleTime: r.invisible, Offset: r.offset,
		AttemptTimes: r.attemptTimes, AttemptID: r.attemptID,
	}
}

// all returns every record in key order.
func (ix *index) all() []LeasedRecord {
	out := make([]LeasedRecord, 0, ix.tree.Len())
	ix.tree.Scan(func(r rec) bool {
		out = append(out, LeasedRecord{Lease: r.lease, Record: ix.record(&r)})
		return true
	})
	return out
}
