package pop

import "popsim/model"

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

// keyMemo is a direct-mapped cache from merge-key fields to the key, as a
// string the engine keeps, and its hash (mkHash).
type keyMemo struct {
	slots []keyMemoSlot // keyMemoSlots long once used
}

type keyMemoSlot struct {
	f    mkFields
	key  string // "" when the slot is empty: a merge key never is
	hash uint64
}

// keyMemoSlots is the memo's size: a power of two well above the CKs a
// run makes between a pop and its acks (the default run: about a thousand
// a second, acked within tens of milliseconds), small enough (48 KiB) to
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

// get is the key of fields f and its hash; ok is false when the memo does
// not hold them.
func (m *keyMemo) get(f *mkFields) (key string, hash uint64, ok bool) {
	if s := m.slot(f); s.key != "" && s.f == *f {
		return s.key, s.hash, true
	}
	return "", 0, false
}

// put remembers key, with hash h, as the merge key of fields f.
func (m *keyMemo) put(f *mkFields, key string, h uint64) {
	*m.slot(f) = keyMemoSlot{f: *f, key: key, hash: h}
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
// its merge key as internKey keeps it, and its hash, the key taken from
// the memo when it holds a's fields. The table is looked up, and the
// lookup remembered, as internKey does; the memo's string stands in for
// the arena's copy when the table has no entry.
func (b *Broker) ackKeyOf(a *model.AckMsg) (string, uint64) {
	f := ackFields(a)
	key, h, ok := b.keyMemo.get(&f)
	if !ok {
		var kb [keyBuf]byte
		key, h = b.internKey(a.AppendMergeKey(kb[:0]))
		b.keyMemo.put(&f, key, h)
		return key, h
	}
	if invariants {
		var kb [keyBuf]byte
		assertf(key == string(a.AppendMergeKey(kb[:0])) && h == mkHash(key), "merge-key memo: %q (hash %x) for an ack whose key is not it", key, h)
	}
	t := &b.ckl.keys
	e := t.findHashed(key, h)
	if e != nil {
		key = e.key
	}
	t.remember(key, h, e)
	return key, h
}
