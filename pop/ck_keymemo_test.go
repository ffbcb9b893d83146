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
// slot in turn, half of them a live CK's (which the memo holds until
// another takes its slot).
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
	for i := 5; i < len(acks); i += 2 {
		a := &acks[i]
		ck := model.PopCheckPoint{Num: 1, PopTime: a.PopTime, InvisibleTime: 60000, StartOffset: a.StartOffset, CID: a.ConsumerGroup,
			Topic: a.Topic, QueueID: a.QueueID, QueueOffsetDiff: []int32{0}, BrokerName: a.BrokerName}
		key, _, _ := b.freeMergeKey(&ck)
		b.newRefKeyed(b.newCkBody(&ck), 0, key)
	}
	for round := range 2 { // the second round finds the rest in the memo but where slots are shared
		for i := range acks {
			a := &acks[i]
			got, gh, ge, _ := b.ackKeyOf(a)
			want, wh := b.ackKey(a, nil)
			if got != want || gh != wh || got != a.MergeKey() {
				t.Fatalf("round %d, ack %+v: ackKeyOf %q (hash %x), ackKey %q (hash %x), MergeKey %q", round, *a, got, gh, want, wh, a.MergeKey())
			}
			if ge != b.ckl.keys.peek(got) {
				t.Fatalf("round %d, ack %+v: entry %p, not the table's %p", round, *a, ge, b.ckl.keys.peek(got))
			}
		}
	}
	// the colliding fields share their key string but not their memo slot
	k1, _, _, _ := b.ackKeyOf(&acks[0])
	k2, _, _, _ := b.ackKeyOf(&acks[1])
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
		key, h, e, _ := b.ackKeyOf(&a)
		if e != want || e != b.ckl.keys.peek(a.MergeKey()) || key != a.MergeKey() || h != mkHash(key) {
			t.Fatalf("%s: ackKeyOf gives key %q, entry %p; want entry %p, the table's %p", what, key, e, want, b.ckl.keys.peek(a.MergeKey()))
		}
		if e != nil && e.dead() {
			t.Fatalf("%s: a dead entry", what)
		}
	}
	r := mk()
	if s := b.keyMemo.slot(7, 100, 1); s.ck != r.ck() || s.e != r.e {
		t.Fatal("newRefKeyed left its CK out of the memo")
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

// ackNames is ackOfCk, for names held in the same bytes or in copies.
func TestAckNames(t *testing.T) {
	cp := func(s string) string { return string(append([]byte(nil), s...)) }
	ck := model.PopCheckPoint{Topic: "orders", CID: "billing", QueueID: 3, StartOffset: 17, PopTime: 1000, BrokerName: "broker-a"}
	base := model.AckMsg{AckOffset: 20, Topic: ck.Topic, ConsumerGroup: ck.CID, QueueID: 3, StartOffset: 17, PopTime: 1000, BrokerName: ck.BrokerName}
	vary := []func(a *model.AckMsg){
		func(a *model.AckMsg) {},
		func(a *model.AckMsg) {
			a.Topic, a.ConsumerGroup, a.BrokerName = cp(a.Topic), cp(a.ConsumerGroup), cp(a.BrokerName)
		},
		func(a *model.AckMsg) { a.AckOffset = 21 },
		func(a *model.AckMsg) { a.Topic = "orderz" },
		func(a *model.AckMsg) { a.Topic = "order" },
		func(a *model.AckMsg) { a.ConsumerGroup = cp("billinG") },
		func(a *model.AckMsg) { a.BrokerName = "" },
		func(a *model.AckMsg) { a.QueueID = 4 },
		func(a *model.AckMsg) { a.StartOffset = 18 },
		func(a *model.AckMsg) { a.PopTime = 1001 },
	}
	for i, v := range vary {
		a := base
		v(&a)
		if got, want := ackNames(&a, &ck), ackOfCk(&a, &ck); got != want {
			t.Errorf("variant %d (%+v): ackNames %v, ackOfCk %v", i, a, got, want)
		}
	}
}

// ackOfCk reports that a's fields but its AckOffset are ck's: ackNames by
// definition.
func ackOfCk(a *model.AckMsg, ck *model.PopCheckPoint) bool {
	return a.StartOffset == ck.StartOffset && a.PopTime == ck.PopTime && a.QueueID == ck.QueueID &&
		a.Topic == ck.Topic && a.ConsumerGroup == ck.CID && a.BrokerName == ck.BrokerName
}
