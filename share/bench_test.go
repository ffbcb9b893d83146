package share

// Fetch+accept benchmarks: one member fetches up to n records (batch =
// produced batch size = MaxRecords) and accepts them in one range; b.N
// counts records, so ns/op is per record. Records are produced outside the
// timer, in chunks.
//
//	go test ./share -run '^$' -bench FetchAccept -benchtime=200000x -count 5

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

func BenchmarkFetchAccept(b *testing.B) {
	for _, n := range []int{1, 32, 500} {
		b.Run("batch="+itoa(n), func(b *testing.B) { benchFetchAccept(b, n) })
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return s
		}
	}
}

func benchFetchAccept(b *testing.B, n int) {
	cfg := DefaultConfig()
	cfg.Group.AutoOffsetReset = ResetEarliest
	br, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := br.CreateTopic("t", 1); err != nil {
		b.Fatal(err)
	}
	tp := TopicPartition{"t", 0}
	now := clock.Epoch
	br.Heartbeat(now, HeartbeatRequest{GroupID: "g", MemberID: "m", SubscribedTopicNames: []string{"t"}})
	req := ShareFetchRequest{GroupID: "g", MemberID: "m", MaxRecords: int32(n), BatchSize: int32(n), Partitions: []TopicPartition{tp}}
	if r := br.ShareFetch(now, req); r.Err != None {
		b.Fatal(r.Err)
	}
	epoch := int32(1)
	ack := ShareAcknowledgeRequest{GroupID: "g", MemberID: "m", Acks: []PartitionAcks{{TopicPartition: tp, Batches: []AckBatch{{Types: []AckType{AckAccept}}}}}}
	var id model.MsgID
	produce := func(records int) {
		for left := records; left > 0; left -= n {
			k := min(n, left)
			msgs := make([]*model.Message, k)
			for i := range msgs {
				id++
				msgs[i] = &model.Message{ID: id}
			}
			br.Produce(now, ProduceRequest{TopicPartition: tp, Records: msgs})
		}
	}
	const chunk = 20000
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		todo := min(chunk, b.N-done)
		todo = (todo + n - 1) / n * n
		produce(todo)
		b.StartTimer()
		for got := 0; got < todo; {
			req.ShareSessionEpoch = epoch
			f := br.ShareFetch(now, req)
			epoch++
			if f.Err != None || len(f.Deliveries) == 0 {
				b.Fatalf("fetch: %v, %d records", f.Err, len(f.Deliveries))
			}
			ab := &ack.Acks[0].Batches[0]
			ab.FirstOffset, ab.LastOffset = f.Deliveries[0].Offset, f.Deliveries[len(f.Deliveries)-1].Offset
			ack.ShareSessionEpoch = epoch
			if a := br.ShareAcknowledge(now, ack); a.Err != None || a.Partitions[0].Err != None {
				b.Fatalf("ack: %v %v", a.Err, a.Partitions)
			}
			epoch++
			got += len(f.Deliveries)
		}
		done += todo
	}
}
