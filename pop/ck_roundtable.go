package pop

// A revive round pairs the acks it reads with the CKs it read by merge
// key (upstream's HashMap<String, PopCheckPoint>): a CK message is looked
// up and put, an ack looked up (upstream reads each message again every
// round until the revive offset passes it; popsim's rounds carry the map
// from one to the next, taking out the keys the revive passed: remove).
// A Go map would hash the key (some 60 to 100 bytes) at each of those. The key's hash is a pure
// function of the stored message, so its decoded body keeps it
// (reviveBody.hash, set with the key), and the round's table is an open
// addressing table over those hashes: a lookup compares hashes, and the
// strings only when the hashes are equal. Keys are the strings
// themselves: they collide exactly as upstream's do, never by hash.

// mkHash is the hash of merge key s (a string, or its bytes): 8 bytes at a time, multiplied and
// folded, the same on every run (nothing iterates the table in hash
// order; the hash only decides where a key sits).
func mkHash[K ~string | ~[]byte](s K) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * m
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ w) * m
		h ^= h >> 29
	}
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * m
	}
	h ^= h >> 32
	return h * m
}

// roundTable maps a round's merge keys to its CKs. Slots of an earlier
// round (gen) count as empty, so a round that reads from its start
// starts without clearing. A slot is 16 bytes: its round, its tag (the
// low 32 bits of the key's hash, which hold its home slot) and the CK,
// which holds the key and its full hash: a probe reads a CK only where
// the tag is the key's, and a remove or a growth moves slots by their
// tags, reading no CK. (Slots that held the key and the hash were 40
// bytes, and a revive queue's table spans ~16 k of them.)
type roundTable struct {
	slots []roundSlot // a power of two long, at most half full
	gen   uint32
	n     int
	src   *slabSource[roundSlot] // where grow takes its arrays (the broker's; nil: new ones)
}

type roundSlot struct {
	gen uint32
	tag uint32 // uint32(rc.hash)
	rc  *roundCk
}

// maxRoundSlots bounds the table's length so that a tag holds its home.
const maxRoundSlots = 1 << 32

// reset empties the table, keeping its storage.
func (t *roundTable) reset() {
	t.gen++
	t.n = 0
	if t.gen == 0 { // wrapped: old stamps could read as live
		clear(t.slots)
		t.gen = 1
	}
}

// index is the index of key's slot: the one holding it, or the empty one
// where it goes. Keys are interned (internKey): a match compares one
// pointer (sameString), not the bytes.
func (t *roundTable) index(key string, h uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.gen != t.gen || s.tag == uint32(h) && s.rc.hash == h && sameString(s.rc.key, key) {
			return i
		}
	}
}

// remove takes key (hash h) out of the table, if there, moving back the
// entries after it that probed past its slot (no tombstones: a carried
// table loses keys round after round).
func (t *roundTable) remove(key string, h uint64) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := t.index(key, h)
	if t.slots[i].gen != t.gen {
		return
	}
	for j := (i + 1) & mask; t.slots[j].gen == t.gen; j = (j + 1) & mask {
		// the entry at j stays unless its home slot is cyclically outside (i, j]
		if home := uint64(t.slots[j].tag) & mask; (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = roundSlot{}
	t.n--
}

// get is the CK under key (hash h), nil when none.
func (t *roundTable) get(key string, h uint64) *roundCk {
	if t.n == 0 {
		return nil
	}
	if s := &t.slots[t.index(key, h)]; s.gen == t.gen {
		return s.rc
	}
	return nil
}

// put sets rc under its key (rc.key, hash rc.hash) and returns the CK it
// replaced, nil when none.
func (t *roundTable) put(rc *roundCk) *roundCk {
	if t.gen == 0 { // a zero table: its zero slots are not this round's
		t.reset()
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	s := &t.slots[t.index(rc.key, rc.hash)]
	if s.gen == t.gen {
		old := s.rc
		s.rc = rc
		return old
	}
	*s = roundSlot{gen: t.gen, tag: uint32(rc.hash), rc: rc}
	t.n++
	return nil
}

// grow doubles the table, moving this round's entries by their tags.
func (t *roundTable) grow() {
	old := t.slots
	n := max(64, 2*len(old))
	if invariants {
		assertf(n <= maxRoundSlots, "revive round table: %d slots, more than its tags can place", n)
	}
	if t.src != nil {
		t.slots = t.src.take(n)
	} else {
		t.slots = make([]roundSlot, n)
	}
	mask := uint64(n - 1)
	for k := range old {
		if s := &old[k]; s.gen == t.gen {
			i := uint64(s.tag) & mask
			for t.slots[i].gen == t.gen {
				i = (i + 1) & mask
			}
			t.slots[i] = *s
		}
	}
}

// peek reads the home slot of hash h, to have it in the cache
// (reviveService.warmBatch); its answer means nothing.
func (t *roundTable) peek(h uint64) uint64 {
	if len(t.slots) == 0 {
		return 0
	}
	return uint64(t.slots[h&uint64(len(t.slots)-1)].tag)
}

// each calls f for every CK the table holds, in no particular order.
func (t *roundTable) each(f func(*roundCk)) {
	for i := range t.slots {
		if s := &t.slots[i]; s.gen == t.gen {
			f(s.rc)
		}
	}
}
