package pop

import (
	"iter"
	"math/bits"

	"popsim/model"
)

// The checkpoint path's two indexes of its CKs: the live ckRefs by first
// lease, and the merge-key table. Every CK goes into both and, once its
// leases are settled, out of both again, so they see an insert and a
// delete per CK and few lookups; a Go map pays for that churn with
// tombstones and rehashes. Neither is ever walked in an order that
// decides anything (the invariants build walks them to check them).

// refIndex is the live ckRefs by first lease (byFirst). Refs are made in
// lease order (a CK's first lease is one past the last lease granted), so
// it is a list sorted by first lease that new refs join at the end. A ref
// that drop forgets is marked dropped and stays until the list is
// compacted: at once from the front, where CKs settle most, and all of it
// once the dropped are most of the list.
//
// The list is held in blocks of refBlock, not one slice: a run's first
// minute settles nearly no CK (each waits its invisible time in the
// timer), so the list only grows, to ~60 k refs, and a slice grown by
// append to that length had allocated five times its final 0.5 MB on the
// way (2.7 MB a run). A block is never moved or regrown; an emptied one
// is kept for the next add that needs one (spare).
type refIndex struct {
	blocks []*[refBlock]*ckRef // the list is blocks[0][head:], blocks[1], ...: size refs
	head   int
	size   int                  // refs held, dropped or not
	n      int                  // live (not dropped) refs held
	spare  *[refBlock]*ckRef    // an emptied block, cleared; nil when none
	more   *[]*[refBlock]*ckRef // cleared blocks to take when spare is nil (a Spare's; nil: none)
}

// refBlock refs of 8 bytes: a 4 KiB block, which the allocator's 8-byte
// header puts in the 4 864-byte size class (a run needs ~120 of them;
// slabs of blocks would save ~60 KB).
const (
	refBlockBits = 9
	refBlock     = 1 << refBlockBits
)

// ref is the i-th ref held, i in [0, size).
func (x *refIndex) ref(i int) *ckRef {
	i += x.head
	return x.blocks[i>>refBlockBits][i&(refBlock-1)]
}

// all is the refs held, dropped or not, in order.
func (x *refIndex) all() iter.Seq[*ckRef] {
	return func(yield func(*ckRef) bool) {
		for i := range x.size {
			if !yield(x.ref(i)) {
				return
			}
		}
	}
}

// add appends r, the newest ref.
func (x *refIndex) add(r *ckRef) {
	if invariants && x.size > 0 {
		last := x.ref(x.size - 1).first
		assertf(last < r.first, "checkpoint ref of lease %d made after lease %d's", r.first, last)
	}
	i := x.head + x.size
	if i>>refBlockBits == len(x.blocks) {
		b := x.spare
		if b == nil {
			b, _ = takeLast(x.more)
		}
		if b == nil {
			b = new([refBlock]*ckRef)
		}
		x.spare = nil
		x.blocks = append(x.blocks, b)
	}
	x.blocks[i>>refBlockBits][i&(refBlock-1)] = r
	x.size++
	x.n++
}

// remove takes out r, which drop has just marked dropped. The front ref
// held is never a dropped one (every remove forgets the dropped refs at
// the front), so dropped refs are at the front only when r was the
// front: a remove of any other ref reads no ref's flag, where reading the
// front one's was a cache miss (it is the oldest live ref, and refs
// settle in no order).
func (x *refIndex) remove(r *ckRef) {
	x.n--
	if x.blocks[0][x.head] == r {
		x.dropFront(x.frontDropped())
		return
	}
	if invariants {
		assertf(!x.ref(0).dropped, "ref index: the front ref, of lease %d, is a dropped one", x.ref(0).first)
	}
	if x.size >= 64 && 2*x.n < x.size {
		j := 0
		for k := range x.size {
			if r := x.ref(k); !r.dropped {
				x.blocks[(x.head+j)>>refBlockBits][(x.head+j)&(refBlock-1)] = r
				j++
			}
		}
		x.truncate(j)
	}
}

// frontDropped is the number of dropped refs at the front: first those
// of the first block, then on.
func (x *refIndex) frontDropped() int {
	b := x.blocks[0]
	i, end := x.head, min(x.head+x.size, refBlock)
	for i < end && b[i].dropped {
		i++
	}
	k := i - x.head
	if i == refBlock {
		for k < x.size && x.ref(k).dropped {
			k++
		}
	}
	return k
}

// dropFront forgets the first k refs held.
func (x *refIndex) dropFront(k int) {
	if x.head+k < refBlock && k < x.size { // within the first block, which keeps refs
		clear(x.blocks[0][x.head : x.head+k])
		x.head += k
		x.size -= k
		return
	}
	for k > 0 {
		b := x.blocks[0]
		m := min(k, refBlock-x.head, x.size)
		clear(b[x.head : x.head+m])
		x.head += m
		x.size -= m
		k -= m
		if x.head == refBlock || x.size == 0 {
			x.free(b)
			x.blocks[0] = nil
			x.blocks = x.blocks[1:]
			x.head = 0
		}
	}
	if len(x.blocks) == 0 {
		x.blocks = nil // its front's room is lost to the reslicing
	}
}

// truncate keeps the first k refs held, k <= size.
func (x *refIndex) truncate(k int) {
	end := x.head + x.size
	for i := x.head + k; i < end; {
		b := x.blocks[i>>refBlockBits]
		m := min(end-i, refBlock-i&(refBlock-1))
		clear(b[i&(refBlock-1) : i&(refBlock-1)+m])
		i += m
	}
	x.size = k
	keep := (x.head + k + refBlock - 1) >> refBlockBits
	for j := keep; j < len(x.blocks); j++ {
		x.free(x.blocks[j])
		x.blocks[j] = nil
	}
	x.blocks = x.blocks[:keep]
}

// free keeps b, a cleared block, as the spare, unless there is one.
func (x *refIndex) free(b *[refBlock]*ckRef) {
	if x.spare == nil {
		x.spare = b
	}
}

// len is the number of live refs.
func (x *refIndex) len() int { return x.n }

// at is the index of the last ref held whose first lease is at or
// before l, -1 when none: the last block whose first ref is, then the
// ref in it.
func (x *refIndex) at(l model.LeaseID) int {
	if x.size == 0 || x.ref(0).first > l {
		return -1
	}
	lo, hi := 0, len(x.blocks) // blocks[lo]'s first ref is at or before l; none from hi on is
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if x.blocks[m][0].first <= l {
			lo = m
		} else {
			hi = m
		}
	}
	b := x.blocks[lo]
	i, j := 0, refBlock // b[i] is at or before l; b[j], if held, is not
	if lo == 0 {
		i = x.head
	}
	if end := x.head + x.size - lo<<refBlockBits; end < j {
		j = end
	}
	for j-i > 1 {
		m := int(uint(i+j) >> 1)
		if b[m].first <= l {
			i = m
		} else {
			j = m
		}
	}
	return lo<<refBlockBits + i - x.head
}

// get is the live ref whose first lease is l, nil when none.
func (x *refIndex) get(l model.LeaseID) *ckRef {
	if i := x.at(l); i >= 0 {
		if r := x.ref(i); r.first == l && !r.dropped {
			return r
		}
	}
	return nil
}

// holding is the live ref that holds lease l, nil when none. Refs hold
// disjoint runs of leases in the order of their first, so only the last
// one starting at or before l can, and a CK holds at most 32: its first
// is no more than 32 before l.
func (x *refIndex) holding(l model.LeaseID) *ckRef {
	if i := x.at(l); i >= 0 {
		if r := x.ref(i); !r.dropped && l-r.first <= 32 && l < r.first+model.LeaseID(r.ck().Num) {
			return r
		}
	}
	return nil
}

// mkTable maps merge keys (the strings themselves: keys collide exactly
// as upstream's concatenations do) to their entries: an open addressing
// table with linear probing over the keys' hashes (mkHash, kept in the
// entry), where a delete moves the slots after it back (no tombstones).
// A run holds up to ~60 k keys, made and settled in a random order over
// 128 k slots or more: every read of a slot is a cache miss. A slot is
// one 8-byte word and no pointer: its entry's tag (mkTag: the low bits
// of the entry's hash, and so its home slot) in the low half, the
// entry's number in the table's slabs (mkSlabs) in the high half, 0 when
// empty. A lookup walks the slots' tags and reads an entry only where the
// tag is the key's (an absent key, what each new CK looks up, reads no
// entry at all); a delete finds its slot and moves the slots after it
// back by their tags, reading no entry either; an insert or a move writes
// one word; and the collector never scans the slots. Beside the slots a
// bit per slot says which are full (used: 16 KiB for 128 k slots, which
// mostly stays in the cache where the slots' megabyte does not): a lookup
// whose home slot is empty (62 % of a default run's, nearly all of them
// a new CK's key, absent) is answered from it without reading the slots,
// and an insert finds its free slot there and writes the slot's word
// without reading it (a store miss, which the CPU does not wait for). The
// table remembers its last lookup by string: a renewal's or a re-put's
// key is looked up and again, the same string, by newRefKeyed right after
// (a pop's CK hands the entry freeMergeKey found, or its absence, down to
// newRefIn instead).
type mkTable struct {
	slots    []uint64 // a power of two long, at most half full; nil: empty
	used     []uint64 // bit i%64 of word i/64 set when slot i is full (len(slots)/64 words)
	n        int
	lastKey  string
	lastHash uint64
	last     *mkEntry // nil: lastKey has no entry
	lastOK   bool
	ents     mkSlabs // the entries, which the slots number
	// src gives the slabs and the slot arrays (the broker's: New; nil,
	// a new allocation each).
	src *mkSources
}

// mkTag is the tag of hash h: its low 31 bits, which hold the home slot
// of every table up to 1<<31 slots long, and a set top bit, so that no
// slot that holds an entry is 0 (an empty slot).
func mkTag(h uint64) uint32 { return uint32(h) | 1<<31 }

// maxMkSlots bounds the table's length so that a tag holds its home.
const maxMkSlots = 1 << 31

// mkSlot is the slot of entry number k, whose tag is tag.
func mkSlot(k, tag uint32) uint64 { return uint64(k)<<32 | uint64(tag) }

// mkSlotNum is the number of the entry in slot s, which is not empty.
func mkSlotNum(s uint64) uint32 { return uint32(s >> 32) }

// mkSlabs holds a table's entries, carved from slabs of mkSlab entries
// one at a time, and numbers them: entry k is entry k&mkSlabMask of
// slabs[k>>mkSlabBits]. The table keeps a slab while it holds one of its
// entries (live counts them) or carves from it (cur); once neither, the
// slab's place is free for the next slab, and the slab itself goes once
// no lease or key memo holds one of its (dead) entries. So the numbers
// of a long run stay within the places of the slabs it holds at once.
type mkSlabs struct {
	slabs []*[mkSlab]mkEntry // nil: a free place
	live  []int32            // entries of each slab in the table
	free  []uint32           // the free places
	cur   uint32             // the place of the slab carved from (none while slabs is empty)
	left  int                // its entries not carved yet
}

// An entry's number: its slab's place (24 bits) and its index there.
const (
	mkSlabBits = 8
	mkSlabMask = 1<<mkSlabBits - 1
	maxMkSlabs = 1 << (32 - mkSlabBits)
)

// at is entry number k.
func (s *mkSlabs) at(k uint32) *mkEntry { return &s.slabs[k>>mkSlabBits][k&mkSlabMask] }

// carve is a new, zeroed entry and its number, counted as held by the
// table.
func (s *mkSlabs) carve(src *mkSources) (*mkEntry, uint32) {
	if s.left == 0 {
		s.next(src)
	}
	k := s.cur<<mkSlabBits | uint32(mkSlab-s.left)
	s.left--
	s.live[s.cur]++
	return s.at(k), k
}

// next takes a new slab to carve from, freeing the place of the last
// one if the table holds none of its entries.
func (s *mkSlabs) next(src *mkSources) {
	if len(s.slabs) > 0 && s.live[s.cur] == 0 {
		s.drop(s.cur)
	}
	sl := (*[mkSlab]mkEntry)(src.entrySlab())
	if p, ok := takeLast(&s.free); ok {
		s.cur = p
		s.slabs[p] = sl
	} else {
		if invariants {
			assertf(len(s.slabs) < maxMkSlabs, "merge-key table: %d slabs of entries, more than a number can name", len(s.slabs))
		}
		s.cur = uint32(len(s.slabs))
		s.slabs = append(s.slabs, sl)
		s.live = append(s.live, 0)
	}
	s.left = mkSlab
}

// gone counts entry number k out of the table.
func (s *mkSlabs) gone(k uint32) {
	p := k >> mkSlabBits
	s.live[p]--
	if s.live[p] == 0 && p != s.cur {
		s.drop(p)
	}
}

// drop frees the place p.
func (s *mkSlabs) drop(p uint32) {
	s.slabs[p] = nil
	s.free = append(s.free, p)
}

// mkSources is where a table takes its entries' slabs and its slots
// (and the words of their bits, used).
type mkSources struct {
	entries slabSource[mkEntry]
	slots   slabSource[uint64]
}

// mkSlab entries of 48 bytes fill an 8 KiB size class.
const mkSlab = 170

// entrySlab is a zeroed slab of mkSlab entries.
func (s *mkSources) entrySlab() []mkEntry {
	if s == nil {
		return make([]mkEntry, mkSlab)
	}
	return s.entries.take(mkSlab)
}

// slotArray is a zeroed array of n slots (or of n words of used's bits).
func (s *mkSources) slotArray(n int) []uint64 {
	if s == nil {
		return make([]uint64, n)
	}
	return s.slots.take(n)
}

// probe is the entry of key (hash h), nil when there is none.
func (t *mkTable) probe(key string, h uint64) *mkEntry { return probeKey(t, key, h) }

// probeBytes is probe for a key held as bytes.
func (t *mkTable) probeBytes(key []byte, h uint64) *mkEntry { return probeKey(t, key, h) }

// probeKey is the linear probe behind probe and probeBytes; comparing
// string(key) does not copy the bytes.
func probeKey[K string | []byte](t *mkTable, key K, h uint64) *mkEntry {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	tag := mkTag(h)
	i := h & mask
	if !t.full(i) {
		return nil // proven absent without a read of the slots
	}
	for ; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return nil
		}
		if uint32(s) == tag {
			if e := t.ents.at(mkSlotNum(s)); e.hash == h && e.key == string(key) {
				return e
			}
		}
	}
}

// find is the entry of key, nil when there is none.
func (t *mkTable) find(key string) *mkEntry {
	if t.lastOK && t.lastKey == key {
		return t.last
	}
	h := mkHash(key)
	e := t.probe(key, h)
	t.lastKey, t.lastHash, t.last, t.lastOK = key, h, e, true
	return e
}

// findBytes is find for a key held as bytes, and the key's hash. It
// does not remember the lookup (remember does, once the caller has made
// the key a string).
func (t *mkTable) findBytes(key []byte) (*mkEntry, uint64) {
	if t.lastOK && t.lastKey == string(key) {
		return t.last, t.lastHash
	}
	h := mkHash(key)
	return t.probeBytes(key, h), h
}

// findHashed is find for a key whose hash h the caller has. It does not
// remember the lookup (remember does).
func (t *mkTable) findHashed(key string, h uint64) *mkEntry {
	if t.lastOK && t.lastKey == key {
		return t.last
	}
	return t.probe(key, h)
}

// remember records a lookup of key (hash h) that found e (nil: none),
// made by the caller from key's bytes (findBytes).
func (t *mkTable) remember(key string, h uint64, e *mkEntry) {
	t.lastKey, t.lastHash, t.last, t.lastOK = key, h, e, true
}

// peek is the entry of key, nil when none, without the remembered
// lookup (the invariants build's checks).
func (t *mkTable) peek(key string) *mkEntry { return t.probe(key, mkHash(key)) }

// get is the entry of key, made when there is none.
func (t *mkTable) get(key string) *mkEntry {
	if e := t.find(key); e != nil {
		return e
	}
	return t.add(key, t.lastHash) // find has just hashed key
}

// add makes the entry of key, hash h, which the caller has found the
// table not to hold, and remembers it as the lookup of key.
func (t *mkTable) add(key string, h uint64) *mkEntry {
	if invariants {
		assertf(h == mkHash(key) && t.probe(key, h) == nil, "merge-key table: adding %q (hash %x), which it holds or which is not its hash", key, h)
	}
	e := t.put(key, h)
	t.lastKey, t.lastHash, t.last, t.lastOK = key, h, e, true
	return e
}

// put makes the entry of key, which the table does not hold, under hash
// h, in its first free slot.
func (t *mkTable) put(key string, h uint64) *mkEntry {
	e, k := t.ents.carve(t.src)
	e.key, e.hash = key, h
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(mkSlot(k, mkTag(h)))
	t.n++
	return e
}

// insert puts s, a full slot whose entry the table does not hold, in
// the first free slot from its home, found by the bits of used.
func (t *mkTable) insert(s uint64) {
	i := t.freeFrom(s & uint64(len(t.slots)-1)) // the tag's low bits, as the length is at most 1<<31
	t.slots[i] = s
	t.used[i>>6] |= 1 << (i & 63)
}

// full reports whether slot i is full (its bit in used).
func (t *mkTable) full(i uint64) bool { return t.used[i>>6]&(1<<(i&63)) != 0 }

// freeFrom is the first free slot from slot i on, cyclically: the first
// clear bit of used. The table is at most half full, so there is one.
func (t *mkTable) freeFrom(i uint64) uint64 {
	w := i >> 6
	if free := ^t.used[w] >> (i & 63); free != 0 {
		return i + uint64(bits.TrailingZeros64(free))
	}
	wmask := uint64(len(t.used) - 1) // a power of two words
	for w = (w + 1) & wmask; t.used[w] == ^uint64(0); w = (w + 1) & wmask {
	}
	return w<<6 + uint64(bits.TrailingZeros64(^t.used[w]))
}

// grow doubles the table, moving its slots by their tags.
func (t *mkTable) grow() {
	old := t.slots
	n := max(64, 2*len(old))
	if invariants {
		assertf(n <= maxMkSlots, "merge-key table: %d slots, more than its tags can place", n)
	}
	t.slots, t.used = t.src.slotArray(n), t.src.slotArray(n/64)
	for _, s := range old {
		if s != 0 {
			t.insert(s)
		}
	}
}

// warmEntry reads e and its home slot's tag, to have them in the
// cache (warmMerge); its answer means nothing.
func (t *mkTable) warmEntry(e *mkEntry) uint64 {
	v := uint64(len(e.key)) + uint64(e.refs.len())
	if len(t.slots) > 0 {
		v += uint64(uint32(t.slots[e.hash&uint64(len(t.slots)-1)]))
	}
	return v
}

// release takes e out of the table once it holds nothing.
func (t *mkTable) release(e *mkEntry) {
	if e.dead() || e.refs.len() > 0 || e.w != nil {
		return
	}
	e.refs.rest = &deadRefs
	t.delete(e)
	if t.last == e {
		t.last, t.lastOK = nil, false
	}
}

// delete removes e's slot and moves back every slot after it, up to the
// next empty one, that can go nearer its entry's home slot: every entry
// is then still reached from its home slot without passing an empty one.
// A slot's home is its tag's.
func (t *mkTable) delete(e *mkEntry) {
	mask := uint64(len(t.slots) - 1)
	i := t.slotOf(e, mask)
	t.ents.gone(mkSlotNum(t.slots[i]))
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		// the slot at j stays when its home is cyclically in (i, j]
		s := t.slots[j]
		if home := s & mask; (j-home)&mask < (j-i)&mask {
			continue
		}
		t.slots[i] = s
		i = j
	}
	t.slots[i] = 0
	t.used[i>>6] &^= 1 << (i & 63)
	t.n--
}

// slotOf is the slot of e, an entry the table holds (mask: its length
// less one). The entries of e's tag have its home slot, so they are all
// in the run of full slots from there: when the run holds one, it is e,
// found from the tags alone (a delete then reads no entry).
func (t *mkTable) slotOf(e *mkEntry, mask uint64) uint64 {
	tag := mkTag(e.hash)
	home := e.hash & mask
	i, n := home, 0
	for j := home; t.slots[j] != 0; j = (j + 1) & mask {
		if uint32(t.slots[j]) == tag {
			i = j
			n++
		}
	}
	if n > 1 {
		for i = home; uint32(t.slots[i]) != tag || t.ents.at(mkSlotNum(t.slots[i])) != e; i = (i + 1) & mask {
		}
	}
	if invariants {
		assertf(t.slots[i] != 0 && t.ents.at(mkSlotNum(t.slots[i])) == e, "merge-key table: %q not in the slot its tag names", e.key)
	}
	return i
}

// each calls f for every entry, in no particular order.
func (t *mkTable) each(f func(e *mkEntry)) {
	for _, s := range t.slots {
		if s != 0 {
			f(t.ents.at(mkSlotNum(s)))
		}
	}
}
