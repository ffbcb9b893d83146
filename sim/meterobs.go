package sim

import (
	"encoding/binary"
	"math/bits"

	"popsim/model"
)

// obsStore holds a meterObs per message id in blocks of obsBlock ids, so
// that it grows without copying, and keeps a long run's memory small: once
// every message of a block is closed (acked, in a DLQ or dropped) the meter
// freezes it, unless it is among the newest keep, encoding its records
// compactly (appendObs: about 6 bytes a message of the hot topic instead
// of 40; freeze). The records must outlive the run, since the
// automatic warm-up cut is found in them only at its end (measure.go), and
// with it everything measured after the cut: no aggregate kept as the run
// goes could give the same numbers. A frozen record that the trace touches
// again (a late delivery or consumption of a closed message, rare) is
// decoded once into late, which then stands for it (thaw, which decodes
// from the nearest of the block's marks).
type obsStore struct {
	blocks  []*[obsBlock]meterObs              // live blocks; nil once frozen (arrays: a record's index in one takes no bounds check)
	frozen  [][]byte                           // frozen blocks' records, encoded (appendObs), then obsPad zero bytes
	marks   [][obsBlock / obsMarkEvery]obsMark // by frozen block: where every obsMarkEvery-th record starts
	nFrozen int                                // blocks [0, nFrozen) are frozen
	late    map[model.MsgID]*meterObs
	lateIDs [][]model.MsgID        // by frozen block: its records in late
	n       int                    // ids 1..n have a record
	scratch []meterObs             // a block decoded (each)
	enc     []byte                 // a block being encoded (freeze)
	spare   *[obsBlock]meterObs    // a frozen block's live records, zeroed for the next block (grow)
	more    *[]*[obsBlock]meterObs // a finished run's blocks, taken when spare is nil (nil: none; Reuse)
	agg     *obsAgg                // gets every block's records as it freezes (nil: none)
	keep    int                    // how many of the newest blocks freeze leaves live (the meter's: obsKeepLive)
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

// obsMark is where a frozen record starts in its block's data, and what
// it is encoded against (obsPrev).
type obsMark struct {
	off  uint32
	prev obsPrev
}

// obsPrev is what appendObs encodes a record against, and decodeObs
// decodes it with: the storedMs of the record before it (the base of its
// delta) and the tag of the last measured record before it (zero at a
// block's start).
type obsPrev struct {
	storedMs uint32
	tag      uint16
}

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

// grow gives ids up to id a record. It inlines: only an id past the last
// block pays the call (addBlocks).
func (st *obsStore) grow(id model.MsgID) {
	if int(id) > len(st.blocks)*obsBlock {
		st.addBlocks(id)
	}
	st.n = max(st.n, int(id))
}

// addBlocks adds blocks until id has a record. A new block reuses the
// live records of the last block frozen, else a finished run's block
// (more).
func (st *obsStore) addBlocks(id model.MsgID) {
	for int(id) > len(st.blocks)*obsBlock {
		blk := st.spare
		if st.spare = nil; blk != nil {
			clear(blk[:])
		} else if blk = takeSpare(st.more); blk != nil {
			clear(blk[:])
		} else {
			blk = new([obsBlock]meterObs)
		}
		st.blocks = append(st.blocks, blk)
	}
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
		data, prev := st.enc[:0], obsPrev{}
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
		i := uint(id - 1) // id >= 1: a shift and a mask, no sign correction
		if int(i/obsBlock) < st.nFrozen {
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
		var recs []meterObs
		if b >= st.nFrozen {
			recs = st.blocks[b][:]
		} else {
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
	data, prev := st.frozen[b], obsPrev{}
	for i := range st.scratch {
		data = decodeObs(data, &st.scratch[i], &prev)
	}
	return st.scratch
}

// appendObs encodes o after the records prev stands for (obsPrev):
// flags, then successes and the group as a varint, unless they are 1 and
// 0 (obsUsual: every record of a one-group run's message consumed at its
// first delivery, 2 of a hot-topic record's 10 bytes), then client+1 and
// the change of storedMs as varints; for a measured message then a 16-bit
// tag, unless it is the last measured record's (obsSameTag), and its
// parts and, unless they are the parts' sums (as they are for every
// attributed message: obsDerived), its latencies, each in the fewest
// little-endian bytes (none for 0, then 1, 2 or 4) that hold it, whose
// code the tag holds in two bits (obsCode; the parts' from bit 0, then
// e2e's and svc's). Decoding such a value is a 4-byte load and a mask,
// without the branch per byte a varint takes (the end of a run decodes
// every record once, and those before the cut twice). It writes the
// record into obsView bytes of room at the end of b, each value with one
// 4-byte store, and keeps those the record takes.
func appendObs(b []byte, o *meterObs, prev *obsPrev) []byte {
	n := len(b)
	if cap(b)-n < obsView {
		b = append(b, make([]byte, obsView)...)[:n]
	}
	w := (*[obsView]byte)(b[n : n+obsView])
	e2e, svc := partSums(o)
	measured := o.flags&obsMeasured != 0
	derived := measured && o.e2e == e2e && o.svc == svc
	w[0] = o.flags
	if derived {
		w[0] |= obsDerived
	}
	i := uint(1)
	if o.successes == 1 && o.group == 0 {
		w[0] |= obsUsual
	} else {
		w[1] = o.successes
		i = putUvarint(w, 2, uint64(o.group))
	}
	i = putUvarint(w, i, zigzag64(int64(o.client)+1))
	i = putUvarint(w, i, zigzag64(int64(o.storedMs)-int64(prev.storedMs)))
	prev.storedMs = o.storedMs
	if !measured {
		return b[:n+int(i)]
	}
	// The tag, unless it is the last measured record's (obsSameTag), then
	// the six parts, then e2e and svc unless derived, written out: a loop
	// over them costs twice as much.
	p := &o.part
	tag := obsCode(p[0]) | obsCode(p[1])<<2 | obsCode(p[2])<<4 | obsCode(p[3])<<6 | obsCode(p[4])<<8 | obsCode(p[5])<<10
	if !derived {
		tag |= obsCode(o.e2e)<<(2*nParts) | obsCode(o.svc)<<(2*nParts+2)
	}
	if uint16(tag) == prev.tag {
		w[0] |= obsSameTag
	} else {
		w[i&obsMask63], w[(i+1)&obsMask63] = byte(tag), byte(tag>>8)
		i += 2
		prev.tag = uint16(tag)
	}
	i = putObsValue(w, i, p[0])
	i = putObsValue(w, i, p[1])
	i = putObsValue(w, i, p[2])
	i = putObsValue(w, i, p[3])
	i = putObsValue(w, i, p[4])
	i = putObsValue(w, i, p[5])
	if !derived {
		i = putObsValue(w, i, o.e2e)
		i = putObsValue(w, i, o.svc)
	}
	return b[:n+int(i)]
}

// appendObs and decodeObs write out the six parts.
var _ = [1]struct{}{}[nParts-6]

// putObsValue writes v at w[i] in one 4-byte store and returns the index
// after the bytes of it that the record keeps (its code's: obsCode).
func putObsValue(w *[obsView]byte, i uint, v uint32) uint {
	binary.LittleEndian.PutUint32(w[i&obsMask63:], v)
	return i + uint(obsLen[obsCode(v)])
}

// obsValue reads the value of code k at w[i] (putObsValue's) and returns
// it and the index after it.
func obsValue(w *[obsView]byte, i, k uint) (uint32, uint) {
	return binary.LittleEndian.Uint32(w[i&obsMask63:]) & obsMask[k], i + uint(obsLen[k])
}

// obsView is the room appendObs writes a record into and decodeObs reads
// one from: a record takes at most obsRecordMax bytes, and a value's
// 4-byte store or load starts at most obsRecordMax-1 bytes in. Indices
// into it are masked with obsMask63 so that the compiler can tell every
// access is in it; the mask never wraps an index (obsRecordMax < 64).
const (
	obsMask63 = 63
	obsView   = obsMask63 + 1 + 4
)

// obsHeadMax is the most bytes a record's head takes: flags, successes,
// and the varints of group (16 bits), client+1 (33 bits, zig-zag) and
// the change of storedMs (33 bits, zig-zag); obsRecordMax adds a measured
// record's tag and values.
const (
	obsHeadMax   = 2 + 3 + 5 + 5
	obsRecordMax = obsHeadMax + obsMeasuredMax
)

// A record fits obsView without wrapping its masked indices.
var _ = [1]struct{}{}[obsRecordMax/(obsMask63+1)]

// putUvarint writes v's varint (binary.AppendUvarint's) at w[i] and
// returns the index after it.
func putUvarint(w *[obsView]byte, i uint, v uint64) uint {
	for v >= 0x80 {
		w[i&obsMask63] = byte(v) | 0x80
		v >>= 7
		i++
	}
	w[i&obsMask63] = byte(v)
	return i + 1
}

// zigzag64 is binary.AppendVarint's unsigned form of v.
func zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// obsCode is the tag's code of v: 0 for 0 (no bytes), 1, 2 or 3 for a
// value of 1, 2 or 4 bytes; a lookup by v's bit length, without a branch.
func obsCode(v uint32) uint { return uint(obsCodes[bits.Len32(v)]) }

// obsCodes is obsCode by bit length.
var obsCodes = [33]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}

// obsLen and obsMask are the bytes a value of each code takes, and the
// mask that keeps them of a 4-byte load.
var (
	obsLen  = [4]uint8{0, 1, 2, 4}
	obsMask = [4]uint32{0, 0xff, 0xffff, 0xffffffff}
)

// obsPad is how many zero bytes follow a frozen block's records, so that
// the decoder may view obsView bytes from the last one's start.
const obsPad = obsView

// obsDerived marks an encoded record whose latencies are its parts' sums,
// obsUsual one whose successes are 1 and group 0, which it leaves out,
// and obsSameTag a measured one whose tag is the last measured record's,
// which it leaves out too (nearly every record of a run whose latencies
// take as many bytes from one message to the next: 2 of a hot-topic
// record's 8 bytes); none is a flag of a meterObs.
const (
	obsDerived uint8 = 1 << 7
	obsUsual   uint8 = 1 << 6
	obsSameTag uint8 = 1 << 5
)

// The meter's flags leave the encoding's bits free.
var _ = [1]struct{}{}[(obsStored|obsMeasured|obsWarm|obsUnattributed)&(obsDerived|obsUsual|obsSameTag)]

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

// partSums is sumParts of the parts an e2e and a svc are the sums of
// (every part; partLocal to partAck), written out: appendObs and
// decodeObs take them for every measured record.
func partSums(o *meterObs) (e2e, svc uint32) {
	p := &o.part
	sv := uint64(p[partLocal]) + uint64(p[partProcessing]) + uint64(p[partAck])
	all := uint64(p[partBroker]) + uint64(p[partRedelivery]) + sv + uint64(p[partAtBroker])
	if all < 1<<32 { // then sv is too
		return uint32(all), uint32(sv)
	}
	e2e = 0 // an e2e or svc of 0 with parts that large is impossible
	if sv < 1<<32 {
		svc = uint32(sv)
	}
	return e2e, svc
}

// decodeObs decodes one record of appendObs into o and returns the rest.
// The end of a run decodes every frozen record once, and those before the
// cut twice (measure.go): it views obsView bytes from the record's start
// (obsPad more follow a block's last record), whose varints readUvarint
// reads inline, and whose latencies are a load and a mask each.
func decodeObs(b []byte, o *meterObs, prev *obsPrev) []byte {
	w := (*[obsView]byte)(b)
	*o = meterObs{flags: w[0] &^ (obsDerived | obsUsual | obsSameTag), successes: 1}
	derived := w[0]&obsDerived != 0
	g, i := uint64(0), uint(1)
	if w[0]&obsUsual == 0 {
		o.successes = w[1]
		g, i = readUvarint(w, 2)
	}
	c, i := readUvarint(w, i)
	d, i := readUvarint(w, i)
	o.group, o.client, o.storedMs = uint16(g), int32(unzigzag(c)-1), uint32(int64(prev.storedMs)+unzigzag(d))
	prev.storedMs = o.storedMs
	if o.flags&obsMeasured == 0 {
		return b[i:]
	}
	if w[0]&obsSameTag == 0 {
		prev.tag = uint16(w[i&obsMask63]) | uint16(w[(i+1)&obsMask63])<<8
		i += 2
	}
	tag, p := uint(prev.tag), &o.part
	p[0], i = obsValue(w, i, tag&3)
	p[1], i = obsValue(w, i, tag>>2&3)
	p[2], i = obsValue(w, i, tag>>4&3)
	p[3], i = obsValue(w, i, tag>>6&3)
	p[4], i = obsValue(w, i, tag>>8&3)
	p[5], i = obsValue(w, i, tag>>10&3)
	if derived {
		o.e2e, o.svc = partSums(o)
		return b[i:]
	}
	o.e2e, i = obsValue(w, i, tag>>(2*nParts)&3)
	o.svc, i = obsValue(w, i, tag>>(2*nParts+2)&3)
	return b[i:]
}

// obsMeasuredMax is the most bytes a measured record's tag and values
// take: the tag's 2 and 4 for each value.
const obsMeasuredMax = 2 + 4*(nParts+2)

// readUvarint reads the varint of binary.AppendUvarint at w[i] and returns
// it and the index after it, small enough to be inlined: it trusts its
// input (the store's own encoding) to hold a whole varint that fits 64
// bits, where binary.Uvarint checks.
func readUvarint(w *[obsView]byte, i uint) (uint64, uint) {
	var x uint64
	for s := uint(0); ; s += 7 {
		c := w[i&obsMask63]
		i++
		if c < 0x80 {
			return x | uint64(c)<<s, i
		}
		x |= uint64(c&0x7f) << s
	}
}

// unzigzag is zigzag64's inverse: binary.AppendVarint's signed value.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
