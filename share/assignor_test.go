package share

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"popsim/internal/rapidfail"
)

// TestSimpleAssignExamples pins the assignments of small groups.
func TestSimpleAssignExamples(t *testing.T) {
	tp := func(topic string, p int32) TopicPartition { return TopicPartition{topic, p} }
	for _, c := range []struct {
		name    string
		members []AssignMember
		parts   map[string]int32
		want    map[string][]TopicPartition
	}{
		{"one member takes all", []AssignMember{{ID: "a", Topics: []string{"t"}}}, map[string]int32{"t": 3},
			map[string][]TopicPartition{"a": {tp("t", 0), tp("t", 1), tp("t", 2)}}},
		{"two members split", []AssignMember{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t"}}}, map[string]int32{"t": 2},
			map[string][]TopicPartition{"a": {tp("t", 0)}, "b": {tp("t", 1)}}},
		{"more members than partitions share", []AssignMember{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t"}}, {ID: "c", Topics: []string{"t"}}},
			map[string]int32{"t": 1}, map[string][]TopicPartition{"a": {tp("t", 0)}, "b": {tp("t", 0)}, "c": {tp("t", 0)}}},
		{"sticky: the current owner keeps its partition", []AssignMember{{ID: "a", Topics: []string{"t"}, Current: []TopicPartition{tp("t", 1)}}, {ID: "b", Topics: []string{"t"}}},
			map[string]int32{"t": 2}, map[string][]TopicPartition{"a": {tp("t", 1)}, "b": {tp("t", 0)}}},
		{"heterogeneous: per topic", []AssignMember{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t", "u"}}},
			map[string]int32{"t": 2, "u": 1}, map[string][]TopicPartition{"a": {tp("t", 0)}, "b": {tp("t", 1), tp("u", 0)}}},
		{"unknown topic", []AssignMember{{ID: "a"}}, map[string]int32{}, map[string][]TopicPartition{"a": {}}},
	} {
		got := SimpleAssign(c.members, c.parts)
		for id, want := range c.want {
			if !slices.Equal(got[id], want) && !(len(got[id]) == 0 && len(want) == 0) {
				t.Errorf("%s: %s got %v, want %v (all: %v)", c.name, id, got[id], want, got)
			}
		}
	}
}

// TestSimpleAssignProperties checks, over random groups with homogeneous
// subscriptions, what the simple assignor promises: every partition
// assigned; ceil(M/P) members per partition when members outnumber
// partitions, exactly one otherwise; member loads within one of each other
// when partitions outnumber members; deterministic; and stable, since
// assigning again from its own output changes nothing.
func TestSimpleAssignProperties(t *testing.T) {
	rapid.Check(rapidfail.Strict(t), func(rt *rapid.T) {
		nm := rapid.IntRange(1, 12).Draw(rt, "members")
		np := rapid.Int32Range(1, 12).Draw(rt, "partitions")
		parts := map[string]int32{"t": np}
		var ms []AssignMember
		for i := 0; i < nm; i++ {
			m := AssignMember{ID: fmt.Sprintf("m%02d", i), Topics: []string{"t"}}
			for p := int32(0); p < np; p++ {
				if rapid.Bool().Draw(rt, fmt.Sprintf("current.%d.%d", i, p)) {
					m.Current = append(m.Current, TopicPartition{"t", p})
				}
			}
			ms = append(ms, m)
		}
		got := SimpleAssign(ms, parts)
		if again := SimpleAssign(ms, parts); fmt.Sprint(again) != fmt.Sprint(got) {
			rt.Fatalf("not deterministic: %v then %v", got, again)
		}
		sharing := map[int32]int{}
		loads := map[string]int{}
		for id, tps := range got {
			loads[id] = len(tps)
			for _, tp := range tps {
				sharing[tp.Partition]++
			}
		}
		want := 1
		if nm > int(np) {
			want = (nm + int(np) - 1) / int(np)
		}
		for p := int32(0); p < np; p++ {
			if sharing[p] == 0 || sharing[p] > want {
				rt.Fatalf("partition %d has %d members, want 1..%d: %v", p, sharing[p], want, got)
			}
		}
		if int(np) >= nm {
			lo, hi := int(np), 0
			for _, n := range loads {
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				rt.Fatalf("loads from %d to %d: %v", lo, hi, got)
			}
		}
		var next []AssignMember
		for _, m := range ms {
			next = append(next, AssignMember{ID: m.ID, Topics: m.Topics, Current: got[m.ID]})
		}
		if again := SimpleAssign(next, parts); fmt.Sprint(again) != fmt.Sprint(got) {
			rt.Fatalf("not stable: %v then %v", got, again)
		}
	})
}

func TestDefaultConfigValidates(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	gc := cfg.resolve(cfg.Group)
	if gc.RecordLockDurationMs != 30000 || gc.DeliveryCountLimit != 5 || gc.PartitionMaxRecordLocks != 2000 ||
		gc.HeartbeatIntervalMs != 5000 || gc.SessionTimeoutMs != 45000 || gc.AutoOffsetReset != ResetLatest || !gc.RenewAcknowledgeEnable ||
		gc.DeadLetterTopic != "" || gc.DeadLetterCopyRecord {
		t.Fatalf("group defaults: %+v", gc)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("a zero config validated")
	}
}
