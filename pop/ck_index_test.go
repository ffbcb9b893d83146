package pop

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"popsim/model"
)

// The merge-key table under churn agrees with a map: entries put in with
// hashes crowded onto a few home slots (at the table's end, so that runs
// wrap around), with tags alike, among others spread, are found after any
// sequence of deletes, which find their slots by the tags and move the
// entries behind them back.
func TestMkTableChurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tab mkTable
	model := map[string]*mkEntry{}
	var keys []string
	for i := range 400 {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	hashOf := func(k string) uint64 {
		if len(k)%2 == 0 { // spread, each key's tag its own
			return mkHash(k)
		}
		// home slots 60..63 and 0..1 of the first 64-slot table; still
		// crowded after it grows, and the keys of a home share its tag
		return uint64(len(k))*0x100000000 + uint64(60+rng.IntN(6))%64
	}
	hashes := map[string]uint64{}
	for _, k := range keys {
		hashes[k] = hashOf(k)
	}
	for step := range 20000 {
		k := keys[rng.IntN(len(keys))]
		if e := model[k]; e != nil {
			tab.delete(e)
			delete(model, k)
		} else {
			model[k] = tab.put(k, hashes[k])
		}
		if step%97 != 0 {
			continue
		}
		for _, k := range keys {
			if got := tab.probe(k, hashes[k]); got != model[k] {
				t.Fatalf("step %d: key %s found as %v, want %v", step, k, got, model[k])
			}
		}
		if tab.n != len(model) {
			t.Fatalf("step %d: table counts %d, holds %d", step, tab.n, len(model))
		}
		checkMkTags(t, &tab)
	}
}

// fataler is what the table's checks report to: a *testing.T or a
// *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkMkTags: every full slot's tag is its entry's, a slot's bit in
// used is set exactly when it is full, and the slabs count the entries
// the slots number (checkMkSlabs).
func checkMkTags(t fataler, tab *mkTable) {
	t.Helper()
	held := map[uint32]int{}
	if len(tab.used)*64 != len(tab.slots) {
		t.Fatalf("%d words of bits for %d slots", len(tab.used), len(tab.slots))
	}
	for i, s := range tab.slots {
		if full := tab.used[i/64]&(1<<(i%64)) != 0; full != (s != 0) {
			t.Fatalf("slot %d: full %v, its bit says %v", i, s != 0, full)
		}
		if s == 0 {
			continue
		}
		k := mkSlotNum(s)
		if e := tab.ents.at(k); uint32(s) != mkTag(e.hash) || e.dead() {
			t.Fatalf("slot %d: tag %x for entry %q (hash %x, dead %v)", i, uint32(s), e.key, e.hash, e.dead())
		}
		held[k]++
	}
	checkMkSlabs(t, &tab.ents, held)
}

// checkMkSlabs: held (the numbers of the entries a table holds, with how
// often each is held) are each held once and name a held slab, which
// counts them; a place is free exactly when its slab is neither counted
// nor carved from, and is free once.
func checkMkSlabs(t fataler, x *mkSlabs, held map[uint32]int) {
	t.Helper()
	live := make([]int32, len(x.slabs))
	for k, n := range held {
		p := k >> mkSlabBits
		if n != 1 || int(p) >= len(x.slabs) || x.slabs[p] == nil || k&mkSlabMask >= mkSlab {
			t.Fatalf("entry number %x held %d times, or in no slab", k, n)
		}
		live[p]++
	}
	free := map[uint32]bool{}
	for _, p := range x.free {
		if free[p] || x.slabs[p] != nil {
			t.Fatalf("place %d freed twice, or holding a slab", p)
		}
		free[p] = true
	}
	for p := range x.slabs {
		keep := live[p] > 0 || uint32(p) == x.cur
		if live[p] != x.live[p] || keep == free[uint32(p)] {
			t.Fatalf("place %d: counts %d entries of %d held; free %v", p, x.live[p], live[p], free[uint32(p)])
		}
	}
}

// Through its API the table makes one entry per key, finds it by string
// and by bytes, and releases it only once it holds nothing.
func TestMkTableAPI(t *testing.T) {
	var tab mkTable
	var es []*mkEntry
	for i := range 200 {
		k := fmt.Sprintf("topic%dgroup%d", i%7, i)
		e := tab.get(k)
		if e.key != k || e.hash != mkHash(k) || tab.get(k) != e || tab.find(k) != e {
			t.Fatalf("key %s: entry %q, made twice or not found", k, e.key)
		}
		if got, h := tab.findBytes([]byte(k)); got != e || h != e.hash {
			t.Fatalf("key %s not found by its bytes", k)
		}
		es = append(es, e)
	}
	held := es[3]
	held.refs.add(&ckRef{})
	for _, e := range es {
		tab.release(e)
	}
	if tab.n != 1 || tab.find(held.key) != held || tab.peek(es[4].key) != nil {
		t.Fatalf("after releasing all but a held entry: %d left", tab.n)
	}
	if e, _ := tab.findBytes([]byte(es[5].key)); e != nil {
		t.Fatal("a released key is still found by its bytes")
	}
	if e := tab.get(es[4].key); e == es[4] || e.dead() {
		t.Fatal("a released key's next entry is the dead one")
	}
	// add makes the entry of a key the caller found absent, and the table
	// remembers it as the key's lookup
	k := es[5].key
	e := tab.add(k, mkHash(k))
	if e == es[5] || e.dead() || e.key != k || e.hash != mkHash(k) || tab.peek(k) != e || tab.find(k) != e || tab.get(k) != e {
		t.Fatalf("key %s: added entry %q not the one found", k, e.key)
	}
	if tab.n != 3 {
		t.Fatalf("after add: %d entries, want 3", tab.n)
	}
}

// The ref index finds, by first lease and by any lease it holds, exactly
// the refs not dropped, whatever order they are dropped in: mostly the
// oldest (its front trimmed across blocks), or any (compacted), over
// lists long enough to span many blocks.
func TestRefIndex(t *testing.T) {
	for _, oldest := range []bool{true, false} {
		testRefIndex(t, oldest)
	}
}

func testRefIndex(t *testing.T, oldest bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x refIndex
	var all []*ckRef
	next := model.LeaseID(1)
	for step := range 12000 {
		if rng.IntN(3) > 0 && step%4000 < 3000 || x.len() == 0 {
			d := &ckBody{ck: model.PopCheckPoint{Num: int8(1 + rng.IntN(32))}}
			r := &d.own
			r.first = next
			next += model.LeaseID(r.ck().Num)
			x.add(r)
			all = append(all, r)
		} else {
			// mostly the oldest live ones, as CKs settle
			var r *ckRef
			for _, c := range all {
				if !c.dropped && (r == nil || rng.IntN(4) == 0) {
					r = c
					if oldest && rng.IntN(2) == 0 {
						break
					}
				}
			}
			r.dropped = true
			x.remove(r)
			if x.size > 0 && x.ref(0).dropped {
				t.Fatalf("the front ref held, of lease %d, is a dropped one", x.ref(0).first)
			}
		}
		if rng.IntN(40) > 0 {
			continue
		}
		var held []*ckRef
		for r := range x.all() {
			held = append(held, r)
		}
		if len(held) != x.size {
			t.Fatalf("all() yields %d refs of %d held", len(held), x.size)
		}
		k := 0
		for _, r := range all {
			if k < len(held) && held[k] == r {
				k++
			} else if !r.dropped {
				t.Fatalf("live ref %d not held in order", r.first)
			}
		}
		if k != len(held) {
			t.Fatalf("all() yields refs out of order")
		}
		live := 0
		for _, r := range all {
			want := r
			if r.dropped {
				want = nil
			} else {
				live++
			}
			if got := x.get(r.first); got != want {
				t.Fatalf("get(%d) = %v, want %v", r.first, got, want)
			}
			for i := range int(r.ck().Num) {
				if got := x.holding(r.first + model.LeaseID(i)); got != want {
					t.Fatalf("holding(%d) = %v, want %v", r.first+model.LeaseID(i), got, want)
				}
			}
		}
		if x.len() != live || x.get(next) != nil || x.holding(next) != nil || x.holding(0) != nil {
			t.Fatalf("index counts %d of %d live refs, or finds an ungranted lease", x.len(), live)
		}
	}
	if x.size > 2*x.len()+64 || len(x.blocks) > (x.size+refBlock-1)/refBlock+1 {
		t.Fatalf("index keeps %d refs in %d blocks for %d live", x.size, len(x.blocks), x.len())
	}
}

// warmEntry reads an entry and its home slot's tag without changing the
// table, whether the entry is held, dead, or the table empty.
func TestMkTableWarmEntryReadsOnly(t *testing.T) {
	var tab mkTable
	e := &mkEntry{mkKey: mkKey{key: "k", hash: mkHash("k")}}
	if v := tab.warmEntry(e); v != 1 {
		t.Fatalf("an empty table's read of %q: %d, want 1", e.key, v)
	}
	held := tab.get("k")
	held.refs.add(&ckRef{})
	n := tab.n
	if v := tab.warmEntry(held); v != 2+uint64(mkTag(held.hash)) || tab.n != n || tab.peek("k") != held {
		t.Fatalf("read %d; the table changed", v)
	}
	checkMkTags(t, &tab)
}

// Under any sequence of puts and deletes (hashes crowded onto a few homes
// or spread, and keys often made anew after they left), the table finds
// what a map holds, its slabs count what its slots number and free every
// place whose slab it no longer needs, and no entry it ever made is
// overwritten: a dead entry still names its key.
func TestMkTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var tab mkTable
		want := map[string]*mkEntry{}
		made := map[*mkEntry]mkKey{}
		pool := rapid.IntRange(1, 400).Draw(rt, "keys")
		homes := rapid.IntRange(1, 70).Draw(rt, "homes")
		hashOf := func(i int) uint64 {
			if i%3 == 0 {
				return mkHash(strconv.Itoa(i))
			}
			return uint64(i)<<40 | uint64(i%homes+60)
		}
		steps := rapid.IntRange(0, 3000).Draw(rt, "steps")
		for range steps {
			i := rapid.IntRange(0, pool-1).Draw(rt, "key")
			k := strconv.Itoa(i)
			if e := want[k]; e != nil {
				tab.delete(e)
				e.refs.rest = &deadRefs
				delete(want, k)
				continue
			}
			e := tab.put(k, hashOf(i))
			if _, again := made[e]; again {
				rt.Fatalf("key %s: entry %p made twice", k, e)
			}
			want[k], made[e] = e, e.mkKey
		}
		for i := range pool {
			k := strconv.Itoa(i)
			if got := tab.probe(k, hashOf(i)); got != want[k] {
				rt.Fatalf("key %s found as %p, want %p", k, got, want[k])
			}
		}
		for e, mk := range made {
			if e.mkKey != mk {
				rt.Fatalf("entry of %q overwritten with %q", mk.key, e.key)
			}
		}
		n := 0
		tab.each(func(e *mkEntry) {
			if want[e.key] != e {
				rt.Fatalf("each yields %q's entry %p, not the held one", e.key, e)
			}
			n++
		})
		if n != len(want) || tab.n != n {
			rt.Fatalf("each yields %d entries, the table counts %d, want %d", n, tab.n, len(want))
		}
		checkMkTags(rt, &tab)
	})
}
