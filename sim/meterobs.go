package sim

import (
	"encoding/binary"

	"popsim/model"
)

// obsStore holds a meterObs per message id in blocks of obsBlock ids, so
// that it grows without copying, and keeps a long run's memory small: once
// every message of a block is closed (acked, in a DLQ or dropped) the meter
// freezes it, unless it is among the newest keep, encoding its records
// compactly (appendObs: about 14 bytes a message instead of 40; freeze). The records must outlive the run, since the
// automatic warm-up cut is found in them only at its end (measure.go), and
// with it everything measured after the cut: no aggregate kept as the run
// goes could give the same numbers. A frozen record that the trace touches
// again (a late delivery or consumption of a closed message, rare) is
// decoded once into late, which then stands for it (thaw, which decodes
// from the nearest of the block's marks).
type obsStore struct {
	blocks  [][]meterObs                       // live blocks; nil once frozen
	frozen  [][]byte                           // frozen blocks' records, encoded (appendObs), then obsPad zero bytes
	marks   [][obsBlock / obsMarkEvery]obsMark // by frozen block: where every obsMarkEvery-th record starts
	nFrozen int                                // blocks [0, nFrozen) are frozen
	late    map[model.MsgID]*meterObs
	lateIDs [][]model.MsgID // by frozen block: its records in late
	n       int             // ids 1..n have a record
	scratch []meterObs      // a block decoded (each)
	enc     []byte          // a block being encoded (freeze)
	spare   []meterObs      // a frozen block's live records, zeroed for the next block (grow)
	agg     *obsAgg         // gets every block's records as it freezes (nil: none)
	keep    int             // how many of the newest blocks freeze leaves live (the meter's: obsKeepLive)
}

const obsBlock = 4096

// obsKeepLive is how many of the newest blocks the meter's store keeps
// live, unfrozen: a run of up to that many blocks of messages (65 536;
// the default scenario has 30 000) never encodes a record nor decodes
// one at its end (each about 400 instructions), and a longer one keeps at
// most 2.6 MB of records at 40 bytes instead of about 14.
const obsKeepLive = 16

// obsMarkEvery is how many records apart thaw may start decoding a frozen
// block: it decodes at most that many to reach one.
const obsMarkEvery = 128

// obsMark is where a frozen record starts in its block's data, and the
// storedMs of the record before it (the base of its delta).
type obsMark struct{ off, prev uint32 }

// at returns message id's record, nil when it has none. The pointer is
// valid until the next freeze. The meter's hot paths ask live first,
// which is inlined, and at only when it has none.
func (st *obsStore) at(id model.MsgID) *meterObs {
	if o := st.live(id); o != nil {
		return o
	}
	if id < 1 || int(id) > st.n {
		return nil
	}
	return st.thaw(id, int(id-1)/obsBlock)
}

// live returns message id's record when it is in a live block, else nil
// (at's case for every record but a late event's): one unsigned
// comparison tells the block.
func (st *obsStore) live(id model.MsgID) *meterObs {
	if b := uint(id-1) / obsBlock; b-uint(st.nFrozen) < uint(len(st.blocks)-st.nFrozen) && int(id) <= st.n {
		return &st.blocks[b][uint(id-1)%obsBlock]
	}
	return nil
}

// thaw returns frozen record id of block b, decoded into late.
func (st *obsStore) thaw(id model.MsgID, b int) *meterObs {
	if o := st.late[id]; o != nil {
		return o
	}
	if st.late == nil {
		st.late = map[model.MsgID]*meterObs{}
	}
	o := new(meterObs)
	k := int(id-1) % obsBlock
	mk := st.marks[b][k/obsMarkEvery]
	data, prev := st.frozen[b][mk.off:], mk.prev
	for range k % obsMarkEvery {
		data = decodeObs(data, o, &prev)
	}
	decodeObs(data, o, &prev)
	st.late[id] = o
	for len(st.lateIDs) <= b {
		st.lateIDs = append(st.lateIDs, nil)
	}
	st.lateIDs[b] = append(st.lateIDs[b], id)
	return o
}

// grow gives ids up to id a record. A new block reuses the live records
// of the last block frozen.
func (st *obsStore) grow(id model.MsgID) {
	for int(id) > len(st.blocks)*obsBlock {
		blk := st.spare
		if st.spare = nil; blk == nil {
			blk = make([]meterObs, obsBlock)
		} else {
			clear(blk)
		}
		st.blocks = append(st.blocks, blk)
	}
	st.n = max(st.n, int(id))
}

// freeze encodes every whole block whose ids are all below closed (the
// meter's oldest open message: nothing but a late trace event changes
// their records any more), but the newest st.keep blocks.
func (st *obsStore) freeze(closed model.MsgID) {
	for st.nFrozen < len(st.blocks)-st.keep && (st.nFrozen+1)*obsBlock < int(closed) && (st.nFrozen+1)*obsBlock <= st.n {
		if st.agg != nil {
			for i := range st.blocks[st.nFrozen] {
				st.agg.add(int64(st.nFrozen*obsBlock+i+1), &st.blocks[st.nFrozen][i])
			}
		}
		data, prev := st.enc[:0], uint32(0)
		var marks [obsBlock / obsMarkEvery]obsMark
		for i := range st.blocks[st.nFrozen] {
			if i%obsMarkEvery == 0 {
				marks[i/obsMarkEvery] = obsMark{off: uint32(len(data)), prev: prev}
			}
			data = appendObs(data, &st.blocks[st.nFrozen][i], &prev)
		}
		st.enc = data
		enc := make([]byte, len(data)+obsPad)
		copy(enc, data)
		st.frozen = append(st.frozen, enc)
		st.marks = append(st.marks, marks)
		st.spare, st.blocks[st.nFrozen] = st.blocks[st.nFrozen], nil
		st.nFrozen++
	}
}

// feedRest adds to a the records from a.next on, which are in live
// blocks (a frozen block's were added as it froze), and ends its batches:
// every record is in.
func (st *obsStore) feedRest(a *obsAgg) {
	for id := max(a.next, 1); id <= int64(st.n); id++ {
		i := int(id - 1)
		if i/obsBlock < st.nFrozen {
			panic("sim: a frozen record did not reach the meter's aggregate")
		}
		a.add(id, &st.blocks[i/obsBlock][i%obsBlock])
	}
	a.flush()
}

// each calls f with every record in id order; o is valid only during the
// call.
func (st *obsStore) each(f func(id int64, o *meterObs)) { st.eachBelow(int64(st.n)+1, f) }

// eachBelow calls f with every record below id end in id order, as each.
func (st *obsStore) eachBelow(end int64, f func(id int64, o *meterObs)) {
	st.blocksBelow(end, func(first int64, recs []meterObs) {
		for i := range recs {
			f(first+int64(i), &recs[i])
		}
	})
}

// eachBlock calls f with every record in id order, a block at a time: recs
// are ids first on, valid only during the call.
func (st *obsStore) eachBlock(f func(first int64, recs []meterObs)) { st.blocksBelow(int64(st.n)+1, f) }

// blocksBelow calls f with every record below id end, as eachBlock.
func (st *obsStore) blocksBelow(end int64, f func(first int64, recs []meterObs)) {
	end = min(end, int64(st.n)+1)
	for b := 0; b < len(st.blocks) && int64(b*obsBlock)+1 < end; b++ {
		recs := st.blocks[b]
		if b < st.nFrozen {
			recs = st.decodeBlock(b)
			if b < len(st.lateIDs) {
				for _, id := range st.lateIDs[b] {
					recs[int(id-1)%obsBlock] = *st.late[id]
				}
			}
		}
		first := int64(b*obsBlock) + 1
		f(first, recs[:min(int64(len(recs)), end-first)])
	}
}

// decodeBlock decodes frozen block b into the store's scratch block.
func (st *obsStore) decodeBlock(b int) []meterObs {
	if st.scratch == nil {
		st.scratch = make([]meterObs, obsBlock)
	}
	data, prev := st.frozen[b], uint32(0)
	for i := range st.scratch {
		data = decodeObs(data, &st.scratch[i], &prev)
	}
	return st.scratch
}

// appendObs encodes o after the previous record, whose storedMs is prev:
// flags, successes, then group, client+1 and the change of storedMs as
// varints; for a measured message then a 16-bit tag and its parts and,
// unless they are the parts' sums (as they are for every attributed
// message: obsDerived), its latencies, each in the fewest little-endian
// bytes (none for 0, then 1, 2 or 4) that hold it, whose code the tag holds in two
// bits (obsCode; the parts' from bit 0, then e2e's and svc's). Decoding
// such a value is a 4-byte load and a mask, without the branch per byte a
// varint takes (the end of a run decodes every record once, and those
// before the cut twice).
func appendObs(b []byte, o *meterObs, prev *uint32) []byte {
	b, derived := appendObsHead(b, o, prev)
	if o.flags&obsMeasured == 0 {
		return b
	}
	vals := [nParts + 2]uint32{}
	copy(vals[:], o.part[:])
	nv := nParts
	if !derived {
		vals[nParts], vals[nParts+1], nv = o.e2e, o.svc, nParts+2
	}
	var tag uint16
	for i, v := range vals[:nv] {
		tag |= uint16(obsCode(v)) << (2 * i)
	}
	b = binary.LittleEndian.AppendUint16(b, tag)
	for _, v := range vals[:nv] {
		b = binary.LittleEndian.AppendUint32(b, v)[:len(b)+int(obsLen[obsCode(v)])]
	}
	return b
}

// appendObsHead appends what every record has: its flags (obsDerived
// added when its e2e and svc are its parts' sums), successes, group,
// client and stored time (from *prev, which it moves on), and reports
// whether the record is derived.
func appendObsHead(b []byte, o *meterObs, prev *uint32) ([]byte, bool) {
	flags := o.flags
	derived := o.flags&obsMeasured != 0 && o.e2e == sumParts(o, partBroker, nParts) && o.svc == sumParts(o, partLocal, partAck+1)
	if derived {
		flags |= obsDerived
	}
	b = append(b, flags, o.successes)
	b = binary.AppendUvarint(b, uint64(o.group))
	b = binary.AppendVarint(b, int64(o.client)+1)
	b = binary.AppendVarint(b, int64(o.storedMs)-int64(*prev))
	*prev = o.storedMs
	return b, derived
}

// obsCode is the tag's code of v: 0 for 0 (no bytes), 1, 2 or 3 for a
// value of 1, 2 or 4 bytes.
func obsCode(v uint32) uint {
	switch {
	case v == 0:
		return 0
	case v < 1<<8:
		return 1
	case v < 1<<16:
		return 2
	}
	return 3
}

// obsLen and obsMask are the bytes a value of each code takes, and the
// mask that keeps them of a 4-byte load.
var (
	obsLen  = [4]uint8{0, 1, 2, 4}
	obsMask = [4]uint32{0, 0xff, 0xffff, 0xffffffff}
)

// obsPad is how many zero bytes follow a frozen block's records, so that
// the decoder may take obsMeasuredMax+4 bytes from the last one's tag.
const obsPad = obsMeasuredMax + 4

// obsDerived marks an encoded record whose latencies are its parts' sums;
// it is no flag of a meterObs.
const obsDerived uint8 = 1 << 7

// sumParts is the sum of parts [from, to), or 0 when it overflows a
// uint32 (no measured latency is 0 with parts that large, so such a
// record is never taken for a derived one).
func sumParts(o *meterObs, from, to int) uint32 {
	var s uint64
	for _, p := range o.part[from:to] {
		s += uint64(p)
	}
	if s >= 1<<32 {
		return 0 // an e2e or svc of 0 with parts that large is impossible
	}
	return uint32(s)
}

// decodeObs decodes one record of appendObs into o and returns the rest.
// The end of a run decodes every frozen record once, and those before the
// cut twice (measure.go): the varints are read by readUvarint, whose one-byte case is inline, and
// the latencies by a load and a mask each.
func decodeObs(b []byte, o *meterObs, prev *uint32) []byte {
	*o = meterObs{flags: b[0] &^ obsDerived, successes: b[1]}
	derived := b[0]&obsDerived != 0
	b = b[2:]
	g, n := readUvarint(b)
	b = b[n:]
	c, n := readVarint(b)
	b = b[n:]
	d, n := readVarint(b)
	b = b[n:]
	o.group, o.client, o.storedMs = uint16(g), int32(c-1), uint32(int64(*prev)+d)
	*prev = o.storedMs
	if o.flags&obsMeasured == 0 {
		return b
	}
	// The tag and values take at most obsMeasuredMax bytes, and obsPad
	// more follow the block's last record: one bounds check for all.
	w := (*[obsMeasuredMax + 4]byte)(b)
	tag := uint(w[0]) | uint(w[1])<<8
	i := uint(2)
	for p := range o.part {
		k := tag >> (2 * p) & 3
		o.part[p] = binary.LittleEndian.Uint32(w[i&31:]) & obsMask[k]
		i += uint(obsLen[k])
	}
	if derived {
		o.e2e, o.svc = sumParts(o, partBroker, nParts), sumParts(o, partLocal, partAck+1)
		return b[i:]
	}
	k := tag >> (2 * nParts) & 3
	o.e2e = binary.LittleEndian.Uint32(w[i&31:]) & obsMask[k]
	i += uint(obsLen[k])
	k = tag >> (2*nParts + 2) & 3
	o.svc = binary.LittleEndian.Uint32(w[i&31:]) & obsMask[k]
	return b[i+uint(obsLen[k]):]
}

// obsMeasuredMax is the most bytes a measured record's tag and values
// take: the tag's 2 and 4 for each value. A value starts within 31 bytes
// of the tag (decodeObs masks its offset with 31 to drop bounds checks).
const obsMeasuredMax = 2 + 4*(nParts+2)

// readUvarint reads a varint of binary.AppendUvarint, small enough to be
// inlined: it trusts its input (the store's own encoding) to hold a whole
// varint that fits 64 bits, where binary.Uvarint checks.
func readUvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		if c < 0x80 {
			return x | uint64(c)<<(7*i), i + 1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	return 0, 0
}

// readVarint reads a varint of binary.AppendVarint (as readUvarint).
func readVarint(b []byte) (int64, int) {
	u, n := readUvarint(b)
	return int64(u>>1) ^ -int64(u&1), n
}
