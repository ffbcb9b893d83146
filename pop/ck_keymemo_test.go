package pop

import (
	"strings"
	"testing"

	"popsim/model"
)

// ackKeyOf gives the key ackKey builds, from the memo or not: for acks
// whose fields collide into one key string (queue 1 offset 23 and queue
// 12 offset 3; topic "t" and group "g", topic "tg" and no group), for
// acks that differ in the broker alone, and for fields that share a memo
// slot in turn.
func TestAckKeyOfMatchesAckKey(t *testing.T) {
	b := testBroker(t, DefaultConfig(), 4)
	acks := []model.AckMsg{
		{Topic: "t", ConsumerGroup: "g", QueueID: 1, StartOffset: 23, PopTime: 5, BrokerName: "b"},
		{Topic: "t", ConsumerGroup: "g", QueueID: 12, StartOffset: 3, PopTime: 5, BrokerName: "b"},
		{Topic: "tg", ConsumerGroup: "", QueueID: 1, StartOffset: 23, PopTime: 5, BrokerName: "b"},
		{BrokerName: "x"},
		{Topic: "t", ConsumerGroup: "g", QueueID: 1, StartOffset: 23, PopTime: 5, BrokerName: "c"},
	}
	for i := range 2000 { // many fields, so that slots are shared and overwritten
		acks = append(acks, model.AckMsg{Topic: "t", ConsumerGroup: "g", QueueID: int32(i % 3), StartOffset: int64(i), PopTime: int64(i / 7), BrokerName: "b"})
	}
	for round := range 2 { // the second round finds most in the memo
		for i := range acks {
			a := &acks[i]
			got, gh, ge := b.ackKeyOf(a)
			want, wh := b.ackKey(a, nil)
			if got != want || gh != wh || got != a.MergeKey() {
				t.Fatalf("round %d, ack %+v: ackKeyOf %q (hash %x), ackKey %q (hash %x), MergeKey %q", round, *a, got, gh, want, wh, a.MergeKey())
			}
			if ge != nil {
				t.Fatalf("round %d, ack %+v: entry %q in a table of no CK", round, *a, ge.key)
			}
		}
	}
	// the colliding fields share their key string but not their memo slot
	k1, _, _ := b.ackKeyOf(&acks[0])
	k2, _, _ := b.ackKeyOf(&acks[1])
	if k1 != k2 {
		t.Fatalf("colliding fields: keys %q and %q", k1, k2)
	}
}

// ackKeyOf gives the entry of its CK's key from the memo while the entry
// lives (newRefKeyed binds the entry it makes to the slot freeMergeKey
// filled), none once the entry is dead, and the new entry of a later CK
// with the same key: never a dead entry, always the table's.
func TestAckKeyOfEntry(t *testing.T) {
	b := testBroker(t, DefaultConfig(), 4)
	mk := func() *ckRef {
		ck := model.PopCheckPoint{Num: 1, PopTime: 100, InvisibleTime: 60000, StartOffset: 7, CID: "g", Topic: "t", QueueID: 1,
			QueueOffsetDiff: []int32{0}, BrokerName: "b"}
		key, _, _ := b.freeMergeKey(&ck)
		if ck.PopTime != 100 {
			t.Fatalf("freeMergeKey moved a CK with a free key to popTime %d", ck.PopTime)
		}
		return b.newRefKeyed(b.newCkBody(&ck), 0, key)
	}
	a := model.AckMsg{AckOffset: 7, StartOffset: 7, ConsumerGroup: "g", Topic: "t", QueueID: 1, PopTime: 100, BrokerName: "b"}
	check := func(what string, want *mkEntry) {
		t.Helper()
		key, h, e := b.ackKeyOf(&a)
		if e != want || e != b.ckl.keys.peek(a.MergeKey()) || key != a.MergeKey() || h != mkHash(key) {
			t.Fatalf("%s: ackKeyOf gives key %q, entry %p; want entry %p, the table's %p", what, key, e, want, b.ckl.keys.peek(a.MergeKey()))
		}
		if e != nil && e.dead() {
			t.Fatalf("%s: a dead entry", what)
		}
	}
	r := mk()
	if b.keyMemo.pend != nil {
		t.Fatal("newRefKeyed left the memo's slot unbound")
	}
	check("live CK", r.e)
	check("live CK, again", r.e)
	b.end(r, 0)
	b.drop(r)
	if !r.e.dead() {
		t.Fatal("dropping the key's one ref left its entry in the table")
	}
	check("dropped CK", nil)
	r2 := mk() // the key is free again: a new entry
	if r2.e == r.e {
		t.Fatal("the table reused a dead entry")
	}
	check("new CK with the key", r2.e)
}

// blankName is strings.TrimSpace(s) == "".
func TestBlankName(t *testing.T) {
	for _, s := range []string{"", " ", "\t\n", "\u00a0", "\u2003 ", "b", " b", "broker-a", "\u00e9", "\x00", "-", "\u2003x"} {
		if got, want := blankName(s), strings.TrimSpace(s) == ""; got != want {
			t.Errorf("blankName(%q) = %v, TrimSpace says %v", s, got, want)
		}
	}
}

// mkFields.same is ==, for names held in the same bytes or in copies.
func TestMkFieldsSame(t *testing.T) {
	cp := func(s string) string { return string(append([]byte(nil), s...)) }
	base := mkFields{topic: "orders", group: "billing", qid: 3, start: 17, popTime: 1000, broker: "broker-a"}
	vary := []func(f *mkFields){
		func(f *mkFields) {},
		func(f *mkFields) { f.topic, f.group, f.broker = cp(f.topic), cp(f.group), cp(f.broker) },
		func(f *mkFields) { f.topic = "orderz" },
		func(f *mkFields) { f.topic = "order" },
		func(f *mkFields) { f.group = cp("billinG") },
		func(f *mkFields) { f.broker = "" },
		func(f *mkFields) { f.qid = 4 },
		func(f *mkFields) { f.start = 18 },
		func(f *mkFields) { f.popTime = 1001 },
	}
	for i, v := range vary {
		g := base
		v(&g)
		if got, want := base.same(&g), base == g; got != want {
			t.Errorf("variant %d (%+v): same %v, == %v", i, g, got, want)
		}
	}
}
