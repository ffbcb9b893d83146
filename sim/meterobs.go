package sim

import (
	"bytes"
	"encoding/binary"

	"popsim/model"
)

// obsStore holds a meterObs per message id in blocks of obsBlock ids, so
// that it grows without copying, and keeps a long run's memory small: once
// every message of a block is closed (acked, in a DLQ or dropped) the meter
// freezes it, encoding its records in varints (about 14 bytes a message
// instead of 40; freeze). The records must outlive the run, since the
// automatic warm-up cut is found in them only at its end (measure.go), and
// with it everything measured after the cut: no aggregate kept as the run
// goes could give the same numbers. A frozen record that the trace touches
// again (a late delivery or consumption of a closed message, rare) is
// decoded once into late, which then stands for it.
type obsStore struct {
	blocks  [][]meterObs // live blocks; nil once frozen
	frozen  [][]byte     // frozen blocks' records, encoded (appendObs)
	nFrozen int          // blocks [0, nFrozen) are frozen
	late    map[model.MsgID]*meterObs
	nLate   []int32    // by frozen block: how many of its records are in late
	n       int        // ids 1..n have a record
	scratch []meterObs // a block decoded (each)
	enc     []byte     // a block being encoded (freeze)
}

const obsBlock = 4096

// at returns message id's record, nil when it has none. The pointer is
// valid until the next freeze.
func (st *obsStore) at(id model.MsgID) *meterObs {
	if id < 1 || int(id) > st.n {
		return nil
	}
	i := int(id - 1)
	if b := i / obsBlock; b < st.nFrozen {
		return st.thaw(id, b)
	}
	return &st.blocks[i/obsBlock][i%obsBlock]
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
	data, prev := st.frozen[b], uint32(0)
	for range int(id-1) % obsBlock {
		data = decodeObs(data, o, &prev)
	}
	decodeObs(data, o, &prev)
	st.late[id] = o
	for len(st.nLate) <= b {
		st.nLate = append(st.nLate, 0)
	}
	st.nLate[b]++
	return o
}

// grow gives ids up to id a record.
func (st *obsStore) grow(id model.MsgID) {
	for int(id) > len(st.blocks)*obsBlock {
		st.blocks = append(st.blocks, make([]meterObs, obsBlock))
	}
	st.n = max(st.n, int(id))
}

// freeze encodes every whole block whose ids are all below closed (the
// meter's oldest open message: nothing but a late trace event changes
// their records any more).
func (st *obsStore) freeze(closed model.MsgID) {
	for st.nFrozen < len(st.blocks) && (st.nFrozen+1)*obsBlock < int(closed) && (st.nFrozen+1)*obsBlock <= st.n {
		data, prev := st.enc[:0], uint32(0)
		for i := range st.blocks[st.nFrozen] {
			data = appendObs(data, &st.blocks[st.nFrozen][i], &prev)
		}
		st.enc = data
		st.frozen = append(st.frozen, bytes.Clone(data))
		st.blocks[st.nFrozen] = nil
		st.nFrozen++
	}
}

// each calls f with every record in id order; o is valid only during the
// call.
func (st *obsStore) each(f func(id int64, o *meterObs)) {
	id := int64(0)
	for b := range st.blocks {
		recs := st.blocks[b]
		if b < st.nFrozen {
			recs = st.decodeBlock(b)
		}
		late := b < len(st.nLate) && st.nLate[b] > 0
		for i := range recs {
			if id++; id > int64(st.n) {
				return
			}
			o := &recs[i]
			if late {
				if x := st.late[model.MsgID(id)]; x != nil {
					o = x
				}
			}
			f(id, o)
		}
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
// flags, successes, group, client+1 and the change of storedMs, then for a
// measured message its parts and, unless they are the parts' sums (as
// they are for every attributed message: obsDerived), its latencies, each
// a varint.
func appendObs(b []byte, o *meterObs, prev *uint32) []byte {
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
	if o.flags&obsMeasured == 0 {
		return b
	}
	for _, p := range o.part {
		b = binary.AppendUvarint(b, uint64(p))
	}
	if !derived {
		b = binary.AppendUvarint(b, uint64(o.e2e))
		b = binary.AppendUvarint(b, uint64(o.svc))
	}
	return b
}

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
// The end of a run decodes every frozen record three times (measure.go),
// so the varints are read by readUvarint, whose one-byte case is inline.
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
	var v uint64
	for i := range o.part {
		v, n = readUvarint(b)
		o.part[i], b = uint32(v), b[n:]
	}
	if derived {
		o.e2e, o.svc = sumParts(o, partBroker, nParts), sumParts(o, partLocal, partAck+1)
		return b
	}
	v, n = readUvarint(b)
	o.e2e, b = uint32(v), b[n:]
	v, n = readUvarint(b)
	o.svc, b = uint32(v), b[n:]
	return b
}

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
