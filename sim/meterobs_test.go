package sim

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/stats"
)

// Frozen blocks read back exactly as they were written, through each and
// at, and a frozen record changed through at stays changed.
func TestObsStoreFreeze(t *testing.T) {
	var st obsStore
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3*obsBlock + 17
	st.grow(model.MsgID(n))
	want := make([]meterObs, n)
	for i := range want {
		o := meterObs{flags: uint8(rng.IntN(16)), successes: uint8(rng.IntN(3)), group: uint16(rng.IntN(3)),
			client: int32(rng.IntN(600)) - 1, storedMs: uint32(i/10 + rng.IntN(5))}
		if o.flags&obsMeasured != 0 {
			o.e2e, o.svc = rng.Uint32(), uint32(rng.IntN(100000))
			for p := range o.part {
				o.part[p] = uint32(rng.IntN(1 << (4 * p)))
			}
			if i%2 == 0 { // attributed: the latencies are the parts' sums
				o.e2e, o.svc = sumParts(&o, partBroker, nParts), sumParts(&o, partLocal, partAck+1)
			}
		}
		want[i] = o
		*st.at(model.MsgID(i + 1)) = o
	}
	st.freeze(model.MsgID(2 * obsBlock)) // block 1 ends at id 2*obsBlock, still open
	if st.nFrozen != 1 || st.blocks[0] != nil || st.blocks[1] == nil {
		t.Fatalf("frozen %d blocks", st.nFrozen)
	}
	st.freeze(model.MsgID(n + 1)) // the last, partial block stays live
	if st.nFrozen != 3 || st.blocks[3] == nil {
		t.Fatalf("frozen %d blocks", st.nFrozen)
	}
	if got := *st.at(obsBlock + 5); got != want[obsBlock+4] {
		t.Fatalf("record %d: %+v, want %+v", obsBlock+5, got, want[obsBlock+4])
	}
	st.at(7).successes++
	want[6].successes++
	seen := 0
	st.each(func(id int64, o *meterObs) {
		if *o != want[id-1] {
			t.Fatalf("record %d: %+v, want %+v", id, *o, want[id-1])
		}
		seen++
	})
	if seen != n {
		t.Fatalf("each visited %d of %d", seen, n)
	}
}

// live returns the record at returns for every id in a live block, the
// same pointer, and nil for every other id: a frozen block's, 0, ids past
// the newest record (in its block or past every block), the largest.
func TestObsStoreLive(t *testing.T) {
	var st obsStore
	n := 3*obsBlock + 17
	st.grow(model.MsgID(n))
	for id := 1; id <= n; id++ {
		st.at(model.MsgID(id)).storedMs = uint32(id)
	}
	st.freeze(model.MsgID(2*obsBlock + 1)) // blocks 0 and 1
	if st.nFrozen != 2 {
		t.Fatalf("frozen %d blocks", st.nFrozen)
	}
	ids := []model.MsgID{0, math.MaxUint32, math.MaxUint32 - 1, model.MsgID(len(st.blocks)*obsBlock + 1)}
	for id := range n + obsBlock {
		ids = append(ids, model.MsgID(id))
	}
	for _, id := range ids {
		inLive := id >= 1 && int(id) <= n && int(id-1)/obsBlock >= st.nFrozen
		got := st.live(id)
		if inLive != (got != nil) || inLive && got != st.at(id) {
			t.Fatalf("live(%d) = %p, at = %p (live block: %v)", id, got, st.at(id), inLive)
		}
		if o := st.at(id); (o != nil) != (id >= 1 && int(id) <= n) || o != nil && o.storedMs != uint32(id) {
			t.Fatalf("at(%d) = %+v", id, o)
		}
	}
}

// readUvarint reads and putUvarint writes what encoding/binary writes,
// at every length's bounds and offsets in the view, readUvarint leaving
// the bytes after the varint alone; zigzag64 is AppendVarint's form.
func TestReadVarintIsBinarys(t *testing.T) {
	var us []uint64
	for k := 0; k < 64; k++ {
		us = append(us, 1<<k-1, 1<<k, 1<<k+1)
	}
	us = append(us, math.MaxUint64)
	for _, u := range us {
		for _, at := range []uint{0, 7, 40} {
			var w [obsView]byte
			b := append(binary.AppendUvarint(nil, u), 0x85, 0x01)
			copy(w[at:], b)
			if got, i := readUvarint(&w, at); got != u || i != at+uint(len(b))-2 {
				t.Fatalf("readUvarint(%x) at %d = %d, %d; want %d, %d", b, at, got, i, u, at+uint(len(b))-2)
			}
			var p [obsView]byte
			if i := putUvarint(&p, at, u); string(p[at:i]) != string(b[:len(b)-2]) {
				t.Fatalf("putUvarint(%d) at %d wrote %x, want %x", u, at, p[at:i], b[:len(b)-2])
			}
		}
		for _, v := range []int64{int64(u), -int64(u), int64(u >> 1), -int64(u >> 1)} {
			if got, want := binary.AppendUvarint(nil, zigzag64(v)), binary.AppendVarint(nil, v); string(got) != string(want) || unzigzag(zigzag64(v)) != v {
				t.Fatalf("zigzag64(%d): varint %x, binary.AppendVarint's %x; back %d", v, got, want, unzigzag(zigzag64(v)))
			}
		}
	}
}

// A frozen record read alone (thaw, which starts at the nearest mark
// before it) is the record written, wherever it sits in its block, and
// a new block reuses the records of the last one frozen, zeroed.
func TestObsStoreThawEveryPosition(t *testing.T) {
	var st obsStore
	rng := rand.New(rand.NewPCG(3, 4))
	n := 2*obsBlock + 1
	st.grow(model.MsgID(n))
	want := make([]meterObs, n)
	for i := range want {
		o := meterObs{flags: obsStored | uint8(rng.IntN(2))*obsMeasured, successes: uint8(rng.IntN(2)),
			client: int32(rng.IntN(9)) - 1, storedMs: uint32(1000 + i - rng.IntN(50))}
		if o.flags&obsMeasured != 0 {
			for p := range o.part {
				o.part[p] = uint32(rng.Uint64N(1 << (8 * (1 + rng.IntN(4)))))
			}
			o.e2e, o.svc = sumParts(&o, partBroker, nParts), sumParts(&o, partLocal, partAck+1)
			if rng.IntN(3) == 0 {
				o.e2e, o.svc = rng.Uint32(), uint32(rng.IntN(300))
			}
		}
		want[i] = o
		*st.at(model.MsgID(i + 1)) = o
	}
	spare := &st.blocks[1][0] // the last block frozen
	st.freeze(model.MsgID(n + 1))
	if st.nFrozen != 2 {
		t.Fatalf("frozen %d blocks", st.nFrozen)
	}
	st.grow(model.MsgID(3*obsBlock + 1))
	if &st.blocks[3][0] != spare || st.blocks[3][5] != (meterObs{}) {
		t.Fatal("the new block is not the last frozen one's records, zeroed")
	}
	for id := 1; id <= 2*obsBlock; id++ {
		if got := *st.at(model.MsgID(id)); got != want[id-1] {
			t.Fatalf("record %d: %+v, want %+v", id, got, want[id-1])
		}
	}
}

// The meter's window of open messages: whatever order messages close in
// (one held open across many chunks, bursts that close all), get finds
// exactly the open ones with their send time (and nothing below base,
// before head or past end), and closed chunks are
// reused rather than grown.
func TestMeterWindowChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := newMeter(0, WarmupAuto, 1<<40)
	g := &group{}
	open := map[model.MsgID]bool{}
	next := model.MsgID(1)
	for step := range 60000 {
		if rng.IntN(2) == 0 || len(open) == 0 {
			m.produced(g, next, clock.Time(next), clock.Time(step))
			open[next] = true
			next++
		} else {
			id := next - 1 - model.MsgID(rng.IntN(min(int(next-1), 300)))
			if id == 1 || step == 50000 {
				id = 1 // message 1 stays open until late: the window spans it all
				if step < 50000 {
					id = 2
				}
			}
			if open[id] {
				m.finish(g, id)
				delete(open, id)
			}
		}
		if step%997 == 0 || step > 59900 {
			for id := model.MsgID(0); id < next+3; id++ { // none before 1, nor past the newest
				x := m.get(id)
				if (x != nil) != open[id] || x != nil && x.intended != clock.Time(id) {
					t.Fatalf("step %d: message %d: get %+v, open %v", step, id, x, open[id])
				}
			}
		}
	}
	if m.outstanding() != int64(len(open)) {
		t.Fatalf("outstanding %d, want %d", m.outstanding(), len(open))
	}
	if max := int(next)/msgChunk + 2; len(m.msgs.chunks)+len(m.msgs.spare) > max {
		t.Fatalf("%d chunks for %d messages", len(m.msgs.chunks)+len(m.msgs.spare), next)
	}
}

// close calls the window's advance only when it would do something: after
// every close, whatever the order, with ids never opened (the holes of a
// group that does not take a unit, one at the front after a produce) and
// bursts that close every message, another advance is a no-op.
func TestMeterCloseSkipsOnlyNoOpAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := newMeter(0, WarmupAuto, 1<<40)
	g := &group{}
	var open []model.MsgID
	next := model.MsgID(1)
	for step := range 40000 {
		switch r := rng.IntN(100); {
		case r < 50 || len(open) == 0:
			next += model.MsgID(rng.IntN(3)) // some ids are never opened
			m.produced(g, next, clock.Time(next), clock.Time(step))
			open = append(open, next)
			next++
			continue // only a close advances the window (a produce may leave a hole at its front)
		case r < 98:
			k := rng.IntN(min(len(open), 1+rng.IntN(40)))
			m.finish(g, open[k])
			open = append(open[:k], open[k+1:]...)
		default: // a burst: every message closes
			for _, id := range open {
				m.finish(g, id)
			}
			open = open[:0]
		}
		w := &m.msgs
		head, base, chunks := w.head, w.base, len(w.chunks)
		w.advance()
		if w.head != head || w.base != base || len(w.chunks) != chunks {
			t.Fatalf("step %d: advance after close moved the window: head %d -> %d, base %d -> %d, %d -> %d chunks",
				step, head, w.head, base, w.base, chunks, len(w.chunks))
		}
	}
}

// The aggregate the store feeds as blocks freeze (and the end of the run
// the rest) holds exactly the series a pass over every record in id order
// builds, whatever blocks froze during the run and whatever late events
// changed after.
func TestObsAggFedAsBlocksFreeze(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := newMeter(0, WarmupAuto, 1<<40)
	st := &m.obs
	st.keep = 1 // blocks freeze as they close, but the newest
	n := 5*obsBlock + 123
	for id := 1; id <= n; id++ {
		st.grow(model.MsgID(id))
		o := st.at(model.MsgID(id))
		o.flags = obsStored
		if rng.IntN(10) == 0 {
			o.flags |= obsWarm
		}
		if rng.IntN(8) != 0 {
			o.flags |= obsMeasured
			if rng.IntN(20) == 0 {
				o.flags |= obsUnattributed
			}
			for p := range o.part {
				o.part[p] = uint32(rng.IntN(1 << (3 + 2*p)))
			}
			o.e2e, o.svc = sumParts(o, partBroker, nParts), sumParts(o, partLocal, partAck+1)
		}
		if id%obsBlock == 0 && id/obsBlock%2 == 1 {
			st.freeze(model.MsgID(id + 1)) // blocks freeze as the run goes, some late
		}
	}
	st.at(3).successes += 2 // a late consumption of a frozen record
	st.feedRest(&m.agg)
	want := obsAgg{m: m}
	want.begin()
	want.next = 1
	st.each(func(id int64, o *meterObs) { want.add(id, o) })
	want.flush()
	got := &m.agg
	if got.next != int64(n+1) || got.measured != want.measured || got.warmN != want.warmN {
		t.Fatalf("fed up to %d (of %d), %d measured and %d warm, want %d and %d", got.next-1, n, got.measured, got.warmN, want.measured, want.warmN)
	}
	same := func(name string, a, b *stats.Series) {
		if a.Count() != b.Count() || a.MeanCI(math.MinInt64, 0.95) != b.MeanCI(math.MinInt64, 0.95) || a.Warmup() != b.Warmup() {
			t.Fatalf("%s: %d observations, %+v; want %d, %+v", name, a.Count(), a.MeanCI(math.MinInt64, 0.95), b.Count(), b.MeanCI(math.MinInt64, 0.95))
		}
	}
	same("e2e", got.e2e, want.e2e)
	same("warm", got.warm, want.warm)
	same("svc", got.svc, want.svc)
	for _, p := range m.partOrder() {
		same(partNames[p], got.parts[p], want.parts[p])
	}
}

// appendObs writes, byte for byte, what the plain encoder of its format
// (encoding/binary's varints, appending each value's kept bytes) writes,
// for varints of every length, decodeObs reads the records back, and
// obsCode is the format's code of every value: 0 for 0, then 1, 2 or 4
// bytes.
func TestAppendObsIsItsFormat(t *testing.T) {
	code := func(v uint32) uint { // the fewest of obsLen's bytes that hold v
		c := uint(0)
		for uint64(v) >= 1<<(8*uint(obsLen[c])) {
			c++
		}
		return c
	}
	for b := range 33 {
		for _, v := range []uint64{1<<b - 1, 1 << b, 1<<b + 1} {
			if v <= math.MaxUint32 && obsCode(uint32(v)) != code(uint32(v)) {
				t.Fatalf("obsCode(%d) = %d, want %d", v, obsCode(uint32(v)), code(uint32(v)))
			}
		}
	}
	plain := func(b []byte, o *meterObs, prev *obsPrev) []byte {
		start := len(b)
		derived := o.flags&obsMeasured != 0 && o.e2e == sumParts(o, partBroker, nParts) && o.svc == sumParts(o, partLocal, partAck+1)
		flags := o.flags
		if derived {
			flags |= obsDerived
		}
		if o.successes == 1 && o.group == 0 {
			b = append(b, flags|obsUsual)
		} else {
			b = append(b, flags, o.successes)
			b = binary.AppendUvarint(b, uint64(o.group))
		}
		b = binary.AppendVarint(b, int64(o.client)+1)
		b = binary.AppendVarint(b, int64(o.storedMs)-int64(prev.storedMs))
		prev.storedMs = o.storedMs
		if o.flags&obsMeasured == 0 {
			return b
		}
		vals := append([]uint32(nil), o.part[:]...)
		if !derived {
			vals = append(vals, o.e2e, o.svc)
		}
		var tag uint16
		for i, v := range vals {
			tag |= uint16(code(v)) << (2 * i)
		}
		if tag == prev.tag {
			b[start] |= obsSameTag
		} else {
			b = binary.LittleEndian.AppendUint16(b, tag)
			prev.tag = tag
		}
		for _, v := range vals {
			b = append(b, binary.LittleEndian.AppendUint32(nil, v)[:obsLen[code(v)]]...)
		}
		return b
	}
	rng := rand.New(rand.NewPCG(41, 42))
	var got, want []byte
	var pg, pw obsPrev
	var recs []meterObs
	for range 20000 {
		o := meterObs{flags: uint8(rng.IntN(16)), successes: uint8(rng.IntN(256)), group: uint16(rng.IntN(3)),
			client: int32(rng.IntN(100)) - 1, storedMs: pg.storedMs + uint32(rng.IntN(1000))}
		if rng.IntN(2) == 0 { // the usual record: one success, group 0, or one of them
			o.successes, o.group = 1, []uint16{0, 0, 1}[rng.IntN(3)]
		}
		if rng.IntN(8) == 0 { // the longest varints: any group, client and stored time (up or down)
			o.group, o.client, o.storedMs = uint16(rng.Uint32()), []int32{math.MinInt32, math.MaxInt32, int32(rng.Uint32())}[rng.IntN(3)], rng.Uint32()
		}
		for p := range o.part {
			o.part[p] = uint32(rng.Int64N(1 << rng.IntN(33)))
		}
		if len(recs) > 0 && rng.IntN(2) == 0 { // the last record's parts: its tag, when both are derived or not
			o.part = recs[len(recs)-1].part
		}
		o.e2e, o.svc = sumParts(&o, partBroker, nParts), sumParts(&o, partLocal, partAck+1)
		if rng.IntN(4) == 0 {
			o.e2e, o.svc = rng.Uint32(), uint32(rng.Int64N(1<<rng.IntN(33)))
		}
		got, want = appendObs(got, &o, &pg), plain(want, &o, &pw)
		recs = append(recs, o)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("appendObs wrote other bytes than its format's plain encoder")
	}
	data, prev := append(got, make([]byte, obsPad)...), obsPrev{}
	for i, o := range recs { // and decodeObs reads them back (an unmeasured record's latencies are not kept)
		if o.flags&obsMeasured == 0 {
			o.e2e, o.svc, o.part = 0, 0, [nParts]uint32{}
		}
		var back meterObs
		if data = decodeObs(data, &back, &prev); back != o {
			t.Fatalf("record %d decodes to %+v, want %+v", i, back, o)
		}
	}
	if len(data) != obsPad {
		t.Fatalf("%d bytes left after the records, want the %d of the padding", len(data), obsPad)
	}
}

// partSums is sumParts of every part and of partLocal to partAck, for
// parts of every size, whose sums overflow 32 bits or not (the e2e's
// alone, or both).
func TestPartSumsIsSumParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for i := range 200000 {
		var o meterObs
		for p := range o.part {
			o.part[p] = uint32(rng.Uint64() >> rng.IntN(64))
			if i%3 == 0 {
				o.part[p] = uint32(rng.IntN(4)) * (math.MaxUint32 / 3)
			}
		}
		e2e, svc := partSums(&o)
		if e2e != sumParts(&o, partBroker, nParts) || svc != sumParts(&o, partLocal, partAck+1) {
			t.Fatalf("parts %v: partSums %d, %d, want %d, %d", o.part, e2e, svc,
				sumParts(&o, partBroker, nParts), sumParts(&o, partLocal, partAck+1))
		}
	}
}

// A delivery of a message a crashed consumer held records the time from
// the crash (the earliest) to it, once; deliveries without a crash
// record nothing, and a message closed after its crash is forgotten.
func TestMeterRedeliverAfterCrash(t *testing.T) {
	m := newMeter(0, WarmupAuto, 1<<40)
	g := &group{}
	for id := model.MsgID(1); id <= 4; id++ {
		m.produced(g, id, clock.Time(id), clock.Time(id))
	}
	m.delivered(g, 1, 10)
	if m.redeliver != nil {
		t.Fatalf("a delivery without a crash made the redelivery histogram")
	}
	m.crash(g, 2, clock.Time(20*clock.Millisecond))
	m.crash(g, 2, clock.Time(25*clock.Millisecond)) // a later crash holding it too: the first counts
	m.crash(g, 3, clock.Time(30*clock.Millisecond))
	m.finish(g, 3) // closed before its next delivery: forgotten
	m.delivered(g, 1, clock.Time(40*clock.Millisecond))
	m.delivered(g, 2, clock.Time(50*clock.Millisecond))
	m.delivered(g, 2, clock.Time(60*clock.Millisecond)) // once
	m.delivered(g, 3, clock.Time(70*clock.Millisecond))
	if m.redeliver == nil {
		t.Fatalf("no redelivery recorded")
	}
	if l := m.redeliver.latency(); l.Count != 1 || m.redeliver.counts[histSlot(int64(30*clock.Millisecond))] != 1 {
		t.Fatalf("redelivery after crash %+v, want one of 30 ms", l)
	}
	if len(m.crashed) != 0 {
		t.Fatalf("crashes left: %v", m.crashed)
	}
}

// A traced delivery (EvDeliver) is counted as the meter reads it: the
// first of a message as a delivery, a second as a redelivery too, and one
// of a closed message as a redelivery, as delivered counts them.
func TestMeterCountsTracedDelivery(t *testing.T) {
	m := newMeter(0, WarmupAuto, 1<<40)
	g := &group{}
	m.produced(g, 1, 1, 1)
	deliver := func(id model.MsgID, at clock.Time) {
		e := model.Event{Kind: model.EvDeliver, Client: 0, Msg: id, Lease: model.LeaseID(at), At: at}
		m.observe(&e)
	}
	deliver(1, 10)
	if m.nDeliveries != 1 || m.nRedelivered != 0 {
		t.Fatalf("after a first delivery: %d deliveries, %d redelivered, want 1, 0", m.nDeliveries, m.nRedelivered)
	}
	deliver(1, 20)
	if m.nDeliveries != 2 || m.nRedelivered != 1 {
		t.Fatalf("after a second delivery: %d deliveries, %d redelivered, want 2, 1", m.nDeliveries, m.nRedelivered)
	}
	m.finish(g, 1)
	deliver(1, 30)
	if m.nDeliveries != 3 || m.nRedelivered != 2 {
		t.Fatalf("after a delivery of a closed message: %d deliveries, %d redelivered, want 3, 2", m.nDeliveries, m.nRedelivered)
	}
	m.produced(g, 2, 2, 2)
	m.crash(g, 2, clock.Time(40*clock.Millisecond))
	deliver(2, clock.Time(50*clock.Millisecond))
	if m.redeliver == nil || m.redeliver.counts[histSlot(int64(10*clock.Millisecond))] != 1 || len(m.crashed) != 0 {
		t.Fatalf("a traced delivery after a crash recorded no time to come back of 10 ms (crashed left: %v)", m.crashed)
	}
}
