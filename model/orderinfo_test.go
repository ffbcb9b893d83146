package model

import (
	"reflect"
	"slices"
	"testing"
)

func TestOrderInfo(t *testing.T) {
	o := OrderInfo{PopTime: 1000, InvisibleTime: 500, HasInvisibleTime: true, OffsetList: BuildOffsetList([]int64{10, 11, 13}), AttemptID: "a1"}
	if want := []int64{10, 1, 3}; !reflect.DeepEqual(o.OffsetList, want) {
		t.Fatalf("offset list %v, want %v", o.OffsetList, want)
	}
	if got := BuildOffsetList([]int64{7}); !reflect.DeepEqual(got, []int64{7}) {
		t.Fatalf("one-element list %v", got)
	}
	if o.QueueOffset(2) != 13 || o.Index(11) != 1 || o.Index(12) != -1 || o.NextOffset() != 10 {
		t.Fatalf("offsets: %d %d %d %d", o.QueueOffset(2), o.Index(11), o.Index(12), o.NextOffset())
	}
	if !o.NeedBlock("", 500, 1499) || o.NeedBlock("", 500, 1500) || o.NeedBlock("a1", 500, 1000) {
		t.Fatal("needBlock by time or attemptId")
	}
	o.SetNextVisible(13, 3000)
	o.SetNextVisible(11, 2000)
	if lf, ok := o.LockFreeTimestamp(1200); !ok || lf != 1500 {
		t.Fatalf("lock-free %d %v, want the first pending index's time 1500", lf, ok)
	}
	if u, ok := o.UnblockTime(); !ok || u != 3000 {
		t.Fatalf("unblock %d %v, want 3000", u, ok)
	}
	o.CommitOffsetBit |= 1 << 1 // 11 acked
	if o.NextOffset() != 10 {
		t.Fatalf("next offset %d with index 0 not acked", o.NextOffset())
	}
	o.CommitOffsetBit |= 1
	if o.NextOffset() != 13 {
		t.Fatalf("next offset %d, want 13", o.NextOffset())
	}
	if lf, ok := o.LockFreeTimestamp(2500); !ok || lf != 3000 {
		t.Fatalf("lock-free %d %v", lf, ok)
	}
	o.CommitOffsetBit |= 4
	if o.NextOffset() != 14 {
		t.Fatalf("next offset %d when all acked, want 14", o.NextOffset())
	}
	if lf, ok := o.LockFreeTimestamp(2500); !ok || lf != 2500 {
		t.Fatalf("lock-free %d %v with nothing pending, want now", lf, ok)
	}
	if _, ok := o.UnblockTime(); ok {
		t.Fatal("an all-acked batch still blocks")
	}
	null := OrderInfo{PopTime: 1000, OffsetList: []int64{1}}
	if !null.NeedBlock("", 700, 1600) || !null.HasInvisibleTime || null.InvisibleTime != 700 {
		t.Fatalf("a null invisible time takes the caller's: %+v", null)
	}
}

func TestOrderInfoMergeAndCounts(t *testing.T) {
	prev := OrderInfo{OffsetList: BuildOffsetList([]int64{5, 6}), AttemptID: "x", ConsumedCount: []OffsetValue{{5, 2}}}
	next := OrderInfo{OffsetList: BuildOffsetList([]int64{5, 6, 7}), AttemptID: "y"}
	next.MergeConsumedCount(&prev)
	if want := []OffsetValue{{5, 3}, {6, 1}}; !reflect.DeepEqual(next.ConsumedCount, want) {
		t.Fatalf("counts %v, want %v", next.ConsumedCount, want)
	}
	if got := string(next.AppendOrderCountInfo(nil, 0, 2)); got != "0 qo2%5 3;0 qo2%6 1;0 2 0" {
		t.Fatalf("orderCountInfo %q", got)
	}
	same := OrderInfo{OffsetList: BuildOffsetList([]int64{5, 6}), AttemptID: "x"}
	same.MergeConsumedCount(&prev)
	if !reflect.DeepEqual(same.ConsumedCount, prev.ConsumedCount) {
		t.Fatalf("a re-entrant retry keeps the counts: %v", same.ConsumedCount)
	}
	if got := string(same.AppendOrderCountInfo(nil, 0, 2)); got != "0 qo2%5 2;0 2 0" {
		t.Fatalf("orderCountInfo %q", got)
	}
	all := OrderInfo{OffsetList: BuildOffsetList([]int64{5, 6}), ConsumedCount: []OffsetValue{{5, 4}, {6, 2}}}
	if got := string(all.AppendOrderCountInfo(nil, 0, 1)); got != "0 qo1%5 4;0 qo1%6 2;0 1 2" {
		t.Fatalf("orderCountInfo %q", got)
	}
	fresh := OrderInfo{OffsetList: []int64{9}}
	if got := string(fresh.AppendOrderCountInfo(nil, 0, 1)); got != "0 1 0" {
		t.Fatalf("orderCountInfo %q", got)
	}
	// AppendOrderCounts (which AppendOrderCountInfo formats, above) keeps
	// the entries already there, and an empty count list with offsets
	// left uncounted gives the queue entry a count of 0.
	none := OrderInfo{OffsetList: []int64{9}, ConsumedCount: []OffsetValue{}}
	before := OrderCount{RetryFlag: 1, QueueID: 3, Offset: -1, Count: 9}
	got := none.AppendOrderCounts([]OrderCount{before}, 2, 7)
	if want := []OrderCount{before, {RetryFlag: 2, QueueID: 7, Offset: -1, Count: 0}}; !slices.Equal(got, want) {
		t.Fatalf("AppendOrderCounts %+v, want %+v", got, want)
	}
}

func TestOrderInfoJSON(t *testing.T) {
	o := OrderInfo{PopTime: 1000, InvisibleTime: 60000, HasInvisibleTime: true, OffsetList: []int64{3, 1}, AttemptID: "at",
		NextVisible: []OffsetValue{{4, 70000}}, ConsumedCount: []OffsetValue{{3, 1}}, LastConsumeTimestamp: 999, CommitOffsetBit: 2}
	enc := string(o.AppendJSON(nil))
	want := `{"a":"at","cm":2,"i":60000,"l":999,"o":[3,1],"oc":{"3":1},"ot":{"4":70000},"popTime":1000}`
	if enc != want {
		t.Fatalf("JSON %s, want %s", enc, want)
	}
	back, err := ParseOrderInfo([]byte(enc))
	if err != nil || !reflect.DeepEqual(back, o) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	bare, err := ParseOrderInfo([]byte(`{"oc":{3:1},"o":[3],"popTime":1,"i":null}`))
	if err != nil || bare.Count(3) != 1 || bare.HasInvisibleTime {
		t.Fatalf("fastjson's bare keys and a null lease: %+v %v", bare, err)
	}
}
