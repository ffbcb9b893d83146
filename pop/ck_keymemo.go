package pop

import (
	"unsafe"

	"popsim/model"
)

// An ack's merge key is, as a rule, the key of a CK the broker made a
// moment before: the pop's CK, whose fields the ack's receipt handle
// carries back. Building the key again (three decimals and three strings
// appended) and hashing it cost some 450 instructions an ack, more than
// the lookups it serves. keyMemo remembers the broker's recent CKs by the
// fields their keys are made of, with their keys' entries in the
// merge-key table, so an ack whose fields are a remembered CK's takes the
// key, its hash and the entry from it. A key is a pure function of its
// fields (model.AppendMergeKey), so a remembered one is exactly the key
// the fields would build, whatever has happened since; the memo is a
// cache of that function, direct-mapped and overwritten freely, and
// never decides anything.

// keyMemo is a direct-mapped cache from merge-key fields to the key's
// entry in the merge-key table: an ack finds its CK's entry without
// building the key or probing the table (a table of ~60 k keys, whose
// slots an ack's probe rarely finds in the cache).
type keyMemo struct {
	slots []keyMemoSlot // keyMemoSlots long once used
}

// keyMemoSlot is one CK remembered: its fields, read from the CK itself
// (the engine never changes a CK it made, but for its revive offset, nor
// reuses its memory), and the entry of its key. An entry keeps its key and
// hash once dead, and the table never reuses one and holds at most one
// live entry a key: e is the key's entry for as long as it is not dead.
type keyMemoSlot struct {
	ck *model.PopCheckPoint // nil: the slot is empty
	e  *mkEntry
}

// keyMemoSlots is the memo's size: a power of two well above the CKs a
// run makes between a pop and its acks (the default run: about a thousand
// a second, nearly all acked within a few seconds), 64 KiB. In the
// default run 512 slots missed 4 703 of its 60 181 acks, 2 048 missed
// 1 412 and 4 096 miss 712 (a miss builds the key and probes the table:
// ~600 instructions).
const keyMemoSlots = 4096

// slot is the slot of the fields with start offset start, pop time
// popTime and queue qid.
func (m *keyMemo) slot(start, popTime int64, qid int32) *keyMemoSlot {
	if m.slots == nil {
		m.slots = make([]keyMemoSlot, keyMemoSlots)
	}
	x := (uint64(start)*0x9e3779b97f4a7c15 ^ uint64(popTime)) * 0xbf58476d1ce4e5b9
	x ^= uint64(uint32(qid))
	return &m.slots[(x>>32^x)&(keyMemoSlots-1)]
}

// put remembers ck, whose key's entry is e: newRefIn, as it makes ck's
// ref.
func (m *keyMemo) put(ck *model.PopCheckPoint, e *mkEntry) {
	*m.slot(ck.StartOffset, ck.PopTime, ck.QueueID) = keyMemoSlot{ck: ck, e: e}
}

// sameString reports a == b, at once for the same bytes.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// ackNames reports that a's merge-key fields, all its fields but its
// AckOffset, are ck's: the numbers first, and each name at once when both
// hold the same bytes (an ack's names are, as a rule, the strings its CK
// was made of).
func ackNames(a *model.AckMsg, ck *model.PopCheckPoint) bool {
	return a.StartOffset == ck.StartOffset && a.PopTime == ck.PopTime && a.QueueID == ck.QueueID &&
		sameString(a.Topic, ck.Topic) && sameString(a.ConsumerGroup, ck.CID) && sameString(a.BrokerName, ck.BrokerName)
}

// ackKeyOf is ackKey(a, nil) for an ack that names a broker (not blank):
// its merge key as internKey keeps it, its hash and its entry in the
// merge-key table (nil: none), taken from the memo when it holds a CK
// with a's fields: the entry, or the live one of its key when it is dead.
// Else the key is built and looked up; the memo then remembers the CK of
// the entry found when a's fields are its. The lookup is remembered
// either way, as internKey does. named is a CK whose merge-key fields
// are a's (ackNames), nil when it found none: the remembered CK, which
// the ack body's test (ackBody) then takes by its pointer.
func (b *Broker) ackKeyOf(a *model.AckMsg) (key string, h uint64, e *mkEntry, named *model.PopCheckPoint) {
	t := &b.ckl.keys
	s := b.keyMemo.slot(a.StartOffset, a.PopTime, a.QueueID)
	if s.ck == nil || !ackNames(a, s.ck) {
		var kb [keyBuf]byte
		kbs := a.AppendMergeKey(kb[:0])
		e, h = t.findBytes(kbs)
		if e != nil {
			key = e.key
			if r := e.refs.first; r != nil && ackNames(a, r.ck()) {
				*s = keyMemoSlot{ck: r.ck(), e: e}
				named = r.ck()
			}
		} else {
			key = b.arena.strs.str(kbs)
		}
		t.remember(key, h, e)
		return key, h, e, named
	}
	named = s.ck
	e = s.e
	key, h = e.key, e.hash
	if invariants {
		var kb [keyBuf]byte
		assertf(key == string(a.AppendMergeKey(kb[:0])) && h == mkHash(key), "merge-key memo: %q (hash %x) for an ack whose key is not it", key, h)
	}
	if e.dead() {
		if e = t.findHashed(key, h); e != nil {
			s.e = e
			key = e.key
		}
	}
	if invariants {
		assertf(e == t.peek(key), "merge-key memo: the entry of %q is not the table's", key)
	}
	t.remember(key, h, e)
	return key, h, e, named
}
