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
			got, gh := b.ackKeyOf(a)
			want, wh := b.ackKey(a, nil)
			if got != want || gh != wh || got != a.MergeKey() {
				t.Fatalf("round %d, ack %+v: ackKeyOf %q (hash %x), ackKey %q (hash %x), MergeKey %q", round, *a, got, gh, want, wh, a.MergeKey())
			}
		}
	}
	// the colliding fields share their key string but not their memo slot
	k1, _ := b.ackKeyOf(&acks[0])
	k2, _ := b.ackKeyOf(&acks[1])
	if k1 != k2 {
		t.Fatalf("colliding fields: keys %q and %q", k1, k2)
	}
}

// blankName is strings.TrimSpace(s) == "".
func TestBlankName(t *testing.T) {
	for _, s := range []string{"", " ", "\t\n", "\u00a0", "\u2003 ", "b", " b", "broker-a", "\u00e9", "\x00", "-", "\u2003x"} {
		if got, want := blankName(s), strings.TrimSpace(s) == ""; got != want {
			t.Errorf("blankName(%q) = %v, TrimSpace says %v", s, got, want)
		}
	}
}
