package pop

import (
	"unsafe"

	"popsim/model"
)

// An ack's merge key is, as a rule, the key of a CK the broker made a
// moment before: the pop's CK, whose fields the ack's receipt handle
// carries back. Building the key again (three decimals and three strings
// appended) and hashing it cost some 450 instructions an ack, more than
// the lookups it serves. keyMemo remembers the keys the broker settled on
// for its recent CKs, and those of recent acks, by the fields they are
// made of, so an ack whose fields it holds takes the key and hash from it.
// A key is a pure function of its fields (model.AppendMergeKey), so a
// remembered one is exactly the key the fields would build, whatever has
// happened since; the memo is a cache of that function, direct-mapped and
// overwritten freely, and never decides anything.

// mkFields are the fields a merge key is made of (model.AppendMergeKey's
// arguments).
type mkFields struct {
	topic, group   string
	qid            int32
	start, popTime int64
	broker         string
}

// same reports f == *g: the numbers first, and each name at once when
// both hold the same bytes (an ack's names are, as a rule, the strings
// its CK's were made of); the generated == called memequal for each name.
func (f *mkFields) same(g *mkFields) bool {
	return f.start == g.start && f.popTime == g.popTime && f.qid == g.qid &&
		sameString(f.topic, g.topic) && sameString(f.group, g.group) && sameString(f.broker, g.broker)
}

// sameString reports a == b, at once for the same bytes.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// keyMemo is a direct-mapped cache from merge-key fields to the key, as a
// string the engine keeps, its hash (mkHash) and, once it has one, the
// key's entry in the merge-key table, so that an ack finds its CK's
// entry without probing the table (a table of ~60 k keys, whose slots
// an ack's probe rarely finds in the cache).
type keyMemo struct {
	slots []keyMemoSlot // keyMemoSlots long once used
	// pend is the slot put filled last, which newRefIn gives the entry
	// it makes for the key (bind); nil once bound.
	pend *keyMemoSlot
}

type keyMemoSlot struct {
	f    mkFields
	key  string // "" when the slot is empty: a merge key never is
	hash uint64
	// e is key's entry when the memo learnt it, nil when not. The table
	// never reuses an entry (mkTable.get carves new ones), and a key has
	// at most one live entry, so e is key's entry as long as it is not
	// dead (mkTable.release).
	e *mkEntry
}

// keyMemoSlots is the memo's size: a power of two well above the CKs a
// run makes between a pop and its acks (the default run: about a thousand
// a second, acked within tens of milliseconds), small enough (52 KiB) to
// stay in the cache.
const keyMemoSlots = 512

// slot is the slot of fields f.
func (m *keyMemo) slot(f *mkFields) *keyMemoSlot {
	if m.slots == nil {
		m.slots = make([]keyMemoSlot, keyMemoSlots)
	}
	x := (uint64(f.start)*0x9e3779b97f4a7c15 ^ uint64(f.popTime)) * 0xbf58476d1ce4e5b9
	x ^= uint64(uint32(f.qid))
	return &m.slots[(x>>32^x)&(keyMemoSlots-1)]
}

// put remembers key, with hash h and entry e (nil: none yet), as the
// merge key of fields f.
func (m *keyMemo) put(f *mkFields, key string, h uint64, e *mkEntry) {
	s := m.slot(f)
	*s = keyMemoSlot{f: *f, key: key, hash: h, e: e}
	m.pend = s
}

// bind gives e, the entry newRefIn has just made or found for key, to
// the slot put filled last when that slot still holds key.
func (m *keyMemo) bind(key string, e *mkEntry) {
	if s := m.pend; s != nil {
		if unsafe.StringData(s.key) == unsafe.StringData(key) && len(s.key) == len(key) {
			s.e = e // (a copy of the slot's key would only leave the entry unlearnt)
		}
		m.pend = nil
	}
}

// ckFields are the merge-key fields of ck.
func ckFields(ck *model.PopCheckPoint) mkFields {
	return mkFields{topic: ck.Topic, group: ck.CID, qid: ck.QueueID, start: ck.StartOffset, popTime: ck.PopTime, broker: ck.BrokerName}
}

// ackFields are the merge-key fields of a.
func ackFields(a *model.AckMsg) mkFields {
	return mkFields{topic: a.Topic, group: a.ConsumerGroup, qid: a.QueueID, start: a.StartOffset, popTime: a.PopTime, broker: a.BrokerName}
}

// ackKeyOf is ackKey(a, nil) for an ack that names a broker (not blank):
// its merge key as internKey keeps it, its hash and its entry in the
// merge-key table (nil: none), the key taken from the memo when it holds
// a's fields, and the entry too while the memo's is live. The table is
// looked up when the memo does not give the entry, and the lookup is
// remembered, as internKey does; the memo's string stands in for the
// arena's copy when the table has no entry.
func (b *Broker) ackKeyOf(a *model.AckMsg) (string, uint64, *mkEntry) {
	f := ackFields(a)
	t := &b.ckl.keys
	s := b.keyMemo.slot(&f)
	if s.key == "" || !s.f.same(&f) {
		var kb [keyBuf]byte
		kbs := a.AppendMergeKey(kb[:0])
		e, h := t.findBytes(kbs)
		var key string
		if e != nil {
			key = e.key
		} else {
			key = b.arena.strs.str(kbs)
		}
		t.remember(key, h, e)
		*s = keyMemoSlot{f: f, key: key, hash: h, e: e}
		return key, h, e
	}
	key, h, e := s.key, s.hash, s.e
	if invariants {
		var kb [keyBuf]byte
		assertf(key == string(a.AppendMergeKey(kb[:0])) && h == mkHash(key), "merge-key memo: %q (hash %x) for an ack whose key is not it", key, h)
	}
	if e == nil || e.dead() {
		e = t.findHashed(key, h)
		s.e = e
	}
	if invariants {
		assertf(e == t.peek(key), "merge-key memo: the entry of %q is not the table's", key)
	}
	if e != nil {
		key = e.key
	}
	t.remember(key, h, e)
	return key, h, e
}
