package pop

import (
	"testing"

	"github.com/tidwall/btree"
)

// TestIndexDeleteHintOnOneDeadline counts the comparisons an ack's delete
// costs in an index of 100 k records: the acks of one pop (records with one
// deadline, side by side) in a row must take the path hint, and cost well
// under what a delete from the root costs. Stop 38 dropped the hint for
// every delete, which went unnoticed until #13's pop+ack row was measured
// again over its goal.
func TestIndexDeleteHintOnOneDeadline(t *testing.T) {
	n := newNames()
	pair := n.pair("g", "t")
	ix := newIndex(n)
	cmps := 0
	ix.tree.bt = btree.NewBTreeGOptions(func(a, b item) bool { cmps++; return ix.itemLess(a, b) }, btree.Options{NoLocks: true})
	const pops, batch = 3200, 32 // 102 400 records: 3 200 pops of 32
	for p := int64(0); p < pops; p++ {
		for i := int64(0); i < batch; i++ {
			r := rec{recKey: recKey{vt: 1_000 + p, pair: pair, qid: 0, offset: p*batch + i}, lease: 1}
			ix.putRef(&r)
		}
	}
	perDelete := func(p int64, del func(recKey) bool) float64 {
		cmps = 0
		for i := int64(0); i < batch; i++ {
			if !del(recKey{vt: 1_000 + p, pair: pair, qid: 0, offset: p*batch + i}) {
				t.Fatalf("record %d of pop %d not found", i, p)
			}
		}
		return float64(cmps) / batch
	}
	hinted := perDelete(1_000, func(k recKey) bool { return ix.delete(k) != 0 })
	bare := perDelete(2_000, func(k recKey) bool { _, ok := ix.tree.bt.Delete(keyItem(k)); return ok })
	t.Logf("comparisons a delete: %.1f through index.delete, %.1f without a hint", hinted, bare)
	if hinted > 0.6*bare {
		t.Errorf("acks of one pop in a row cost %.1f comparisons a delete, a delete without a hint %.1f: the hint is not taken", hinted, bare)
	}
	if ix.len() != pops*batch-2*batch {
		t.Errorf("index holds %d records, want %d", ix.len(), pops*batch-2*batch)
	}
}
