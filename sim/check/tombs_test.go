package check

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"popsim/model"
)

// tombstones must behave as the map of maps it replaces: the same
// tombstone back for every place, the same count, whatever the order of
// the offsets (mostly growing, with stragglers behind, jumps far ahead or
// behind, drops below the commit offset), stored by put or by forgot.
func TestTombstonesMatchMap(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		matchMap(t, seed, 20000, nil, false)
	}
}

// The slots outside a queue's window may hold anything (tombQueue): with
// every one of them overwritten by a used slot after each step, the
// tombstones still behave as the map of maps (a put that brings a slot
// into the window must write or clear it).
func TestTombstonesIgnoreSlotsOutsideWindow(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		matchMap(t, seed, 4000, nil, true)
	}
}

// junkOutside overwrites the slots outside each of the queues' windows, in
// their slices, with used slots of a tomb that is nowhere.
func junkOutside(ts *tombstones) {
	junk := tombSlot{lastLease: -7, msg: 0xdead, pulled: true, used: true}
	for i := range ts.byTopic {
		for j := range ts.byTopic[i].queues {
			q := &ts.byTopic[i].queues[j]
			all := q.slots[:cap(q.slots)]
			for k := range all[:q.head] {
				all[k] = junk
			}
			for k := range all[len(q.slots):] {
				all[len(q.slots)+k] = junk
			}
		}
	}
}

// A topic whose index does not fit in a slot's 16 bits is kept in its
// queue's far map, and behaves the same: the group's tombstones name
// 65535 topics already, so "t" is the last that fits and "u" and "t2" do
// not (put must clear the window's slot of an offset it moves to far).
func TestTombstonesWideTopicMatchMap(t *testing.T) {
	names := make([]string, math.MaxUint16)
	for i := range names {
		names[i] = "pre" + itoa(int64(i))
	}
	for seed := uint64(1); seed <= 2; seed++ {
		matchMap(t, seed, 4000, names, false)
	}
}

// matchMap checks tombstones against a map of maps over steps random
// steps; the tombstones' names start as names. With junk, every step
// ends by filling the slots outside the windows with junk (junkOutside).
func matchMap(t *testing.T, seed uint64, steps int, names []string, junk bool) {
	r := rand.New(rand.NewPCG(seed, 99))
	ts := tombstones{names: append([]string(nil), names...)}
	ref := map[queueKey]map[int64]tomb{}
	keys := []queueKey{{"t", 0}, {"t", 1}, {"t", 7}, {"%RETRY%g_t", 0}, {"t", -1}, {"t", tombQueues}}
	topics := []string{"t", "u", "t2"}
	next := map[queueKey]int64{}
	n := 0 // entries in ref
	commit := map[queueKey]int64{}
	for step := 0; step < steps; step++ {
		k := keys[r.IntN(len(keys))]
		var o int64
		switch x := r.IntN(100); {
		case x < 60: // the common case: just past the last
			next[k] += 1 + int64(r.IntN(3))
			o = next[k]
		case x < 75: // a straggler behind
			o = next[k] - int64(r.IntN(50))
		case x < 80: // far ahead
			o = next[k] + tombGap + int64(r.IntN(3*tombGap))
		case x < 83: // behind, within the gap: past tombBehind, mostly
			o = next[k] - int64(r.IntN(tombGap))
		case x < 85: // far behind, perhaps below the commit offset
			o = next[k] - tombGap - int64(r.IntN(3*tombGap))
		case x < 90: // ahead, within the gap
			o = next[k] + int64(r.IntN(tombGap))
		default:
			o = commit[k] + int64(r.IntN(200)) - 100
		}
		p := place{topic: k.topic, queue: k.queue, offset: o}
		switch x := r.IntN(100); {
		case x < 55:
			v := tomb{msg: model.MsgID(r.Int64N(1 << 40)), topic: topics[r.IntN(len(topics))], lastLease: r.Int64N(1 << 40), pulled: r.IntN(2) == 0}
			if x < 25 { // as forgetSettled stores it (forgot), the same
				if v.lastLease == 0 {
					v.lastLease = 1 // a place never leased has no tomb
				}
				m := &msgState{msgHead: msgHead{id: v.msg, topic: v.topic}}
				if v.pulled {
					m.pulledAt = v.lastLease
				}
				ts.forgot(&placeRec{place: p, leased: v.lastLease}, m)
			} else {
				ts.put(p, v)
			}
			if ref[k] == nil {
				ref[k] = map[int64]tomb{}
			}
			if _, ok := ref[k][o]; !ok {
				n++
			}
			ref[k][o] = v
		case x < 60:
			c := commit[k] + int64(r.IntN(400))
			if r.IntN(10) == 0 {
				c = next[k] + 1 // everything goes
			}
			commit[k] = c
			ts.dropBelow(k, c)
			for off := range ref[k] {
				if off < c {
					delete(ref[k], off)
					n--
				}
			}
		}
		if junk {
			junkOutside(&ts)
		}
		got, ok := ts.get(p)
		want, wok := ref[k][o]
		if ok != wok || got != want {
			t.Fatalf("seed %d step %d: get %v = %+v %v, want %+v %v", seed, step, p, got, ok, want, wok)
		}
		// len counts what the windows hold, a walk: every 50 steps.
		if step%50 == 0 && ts.len() != n {
			t.Fatalf("seed %d step %d: len %d, want %d", seed, step, ts.len(), n)
		}
	}
	if ts.len() != n {
		t.Fatalf("seed %d: end: len %d, want %d", seed, ts.len(), n)
	}
	// Every place agrees at the end, present or not.
	for _, k := range keys {
		for o := next[k] - 5*tombGap; o <= next[k]+5*tombGap; o++ {
			got, ok := ts.get(place{k.topic, k.queue, o})
			want, wok := ref[k][o]
			if ok != wok || got != want {
				t.Fatalf("seed %d: end: get %v@%d = %+v %v, want %+v %v", seed, k, o, got, ok, want, wok)
			}
		}
	}
}

// A queue whose tombstones come in order and are dropped by its commits
// keeps a window as large as what is between them, not what passed.
func TestTombstonesWindowStaysSmall(t *testing.T) {
	ts := tombstones{}
	k := queueKey{"t", 0}
	for o := int64(0); o < 1_000_000; o++ {
		ts.put(place{"t", 0, o}, tomb{msg: model.MsgID(o + 1), topic: "t", lastLease: o + 1})
		if o%1000 == 999 {
			ts.dropBelow(k, o-500)
		}
	}
	q := ts.queue(k.topic, k.queue, false)
	if ts.len() > 1500 || cap(q.slots) > 8192 || q.far != nil {
		t.Fatalf("len %d, slots cap %d, far %+v", ts.len(), cap(q.slots), q.far)
	}
}

// Stragglers just behind a queue's window after each of its commits (as
// when messages settle out of order) cost no new window each time.
func TestTombstonesStragglersDoNotRegrow(t *testing.T) {
	ts := tombstones{}
	k := queueKey{"t", 0}
	put := func(o int64) { ts.put(place{"t", 0, o}, tomb{msg: model.MsgID(o + 1), topic: "t", lastLease: o + 1}) }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for o := int64(100); o < 1_000_000; o++ {
		put(o)
		if o%500 == 0 {
			ts.dropBelow(k, o-2000)
			put(o - 2001) // behind the window: a straggler settled late
		}
	}
	runtime.ReadMemStats(&after)
	// The window holds about 2 000 slots of 24 bytes; growing it a few
	// times is well under 4 MB, once per commit would be about 300 MB.
	if b := after.TotalAlloc - before.TotalAlloc; b > 4<<20 {
		t.Fatalf("the tombstones allocated %d bytes for a window of about %d", b, ts.len())
	}
}

// Offsets at the ends of int64 (a malformed trace can carry any) are
// kept and found like any other, without the window's distances
// overflowing: each sequence once panicked or lost a tombstone.
func TestTombstonesExtremeOffsets(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	for i, offsets := range [][]int64{
		{-1, hi}, {5, lo}, {-5, hi, hi - 1}, {hi - 1, hi, lo + 3}, {lo, lo + 1, hi, hi - 1, 0},
		{hi - 10, hi}, {lo + 10, lo}, {0, hi, lo, 1, -1},
	} {
		ts := tombstones{}
		ref := map[int64]tomb{}
		k := queueKey{"t", 0}
		for j, o := range offsets {
			v := tomb{msg: model.MsgID(j + 1), topic: "t", lastLease: int64(j)}
			ts.put(place{topic: k.topic, queue: k.queue, offset: o}, v)
			ref[o] = v
		}
		for _, o := range offsets {
			if got, ok := ts.get(place{topic: k.topic, queue: k.queue, offset: o}); !ok || got != ref[o] {
				t.Fatalf("case %d: get(%d) = %+v %v, want %+v", i, o, got, ok, ref[o])
			}
		}
		for _, o := range []int64{hi, 0, lo + 1} { // drops, from the top of the range down
			ts.dropBelow(k, o)
			for off := range ref {
				if off < o {
					delete(ref, off)
				}
			}
			if ts.len() != len(ref) {
				t.Fatalf("case %d: after dropBelow(%d) len %d, want %d", i, o, ts.len(), len(ref))
			}
		}
		if _, ok := ts.get(place{topic: k.topic, queue: k.queue, offset: hi}); ok != (len(ref) == 1) {
			t.Fatalf("case %d: the tombstone at MaxInt64 is %v after the drops, want %v", i, ok, len(ref) == 1)
		}
	}
}
