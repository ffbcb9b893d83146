package pop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestHeadersAreModels checks the header methods against
// model.AppendOffsetInfo and model.AppendOrderCount entry by entry, and
// against the writer a pop used before the headers were formatted on
// demand (todaysOffsetInfos): the same bytes for every retry flag, queue
// ids and offsets of every length (signs included), after an empty or a
// non-empty dst.
func TestHeadersAreModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 13))
	nums := []int64{0, 1, 9, 10, 99, 100, 101, 110, 499, 999, 1000, 12345, 99999999, 100000000, 1 << 40, math.MaxInt64, -1, -10, math.MinInt64}
	pick := func() int64 {
		if rng.IntN(2) == 0 {
			return nums[rng.IntN(len(nums))]
		}
		return rng.Int64N(1 << uint(rng.IntN(62)+1))
	}
	for i := range 2000 {
		var got PopResult
		var old oldHeaders
		var start, msg, count []byte
		for range rng.IntN(4) { // a pop's stages, one entry each
			flag := model.RetryType(rng.IntN(3))
			qid := int32(pick())
			if rng.IntN(4) == 0 {
				qid = int32(rng.Int64N(math.MaxInt32)) - math.MaxInt32/2
			}
			st := pick()
			msgs := make([]*model.Message, rng.IntN(33))
			offs := make([]int64, len(msgs))
			for j := range msgs {
				offs[j] = pick()
				msgs[j] = &model.Message{QueueOffset: offs[j]}
			}
			if len(msgs) > 0 && rng.IntN(2) == 0 { // the common case: the first message at the start offset
				offs[0], msgs[0].QueueOffset = st, st
			}
			for _, m := range msgs {
				got.addMessage(m, "t")
			}
			got.addStage(flag, qid, st, len(msgs))
			old.append(flag, qid, st, msgs)
			start = model.AppendOffsetInfo(start, model.OffsetInfo{RetryFlag: flag, QueueID: qid, Offsets: []int64{st}})
			msg = model.AppendOffsetInfo(msg, model.OffsetInfo{RetryFlag: flag, QueueID: qid, Offsets: offs})
			for range rng.IntN(3) {
				e := model.OrderCount{RetryFlag: flag, QueueID: qid, Offset: pick(), Count: int32(pick())}
				if rng.IntN(3) == 0 {
					e.Offset = -1
				}
				got.OrderCounts = append(got.OrderCounts, e)
				count = model.AppendOrderCount(count, e)
			}
		}
		pre := []byte("x;")[:rng.IntN(3)]
		for _, c := range []struct {
			name      string
			got, want string
		}{
			{"startOffsetInfo", string(got.AppendStartOffsetInfo(pre)), string(pre) + string(start)},
			{"msgOffsetInfo", string(got.AppendMsgOffsetInfo(pre)), string(pre) + string(msg)},
			{"orderCountInfo", string(got.AppendOrderCountInfo(pre)), string(pre) + string(count)},
			{"today's startOffsetInfo", got.StartOffsetInfo(), string(old.start)},
			{"today's msgOffsetInfo", got.MsgOffsetInfo(), string(old.msg)},
			{"OrderCountInfo", got.OrderCountInfo(), string(count)},
		} {
			if c.got != c.want {
				t.Fatalf("case %d: %s %q, want %q", i, c.name, c.got, c.want)
			}
		}
	}
}

// TestPopScratchHoldsNoReferences checks that a pop hands its buffers back
// to the scratch without references, on both paths: no message pointer in
// the read buffer and no attempt id in the records, up to their capacity.
func TestPopScratchHoldsNoReferences(t *testing.T) {
	for _, cfg := range []Config{KVConfig(), DefaultConfig()} {
		const n = 4
		b := queuesBroker(t, cfg, n)
		now := clock.Epoch
		for i := range 10 {
			b.Put(now, &model.Message{Topic: "t", QueueID: int32(i % n)})
		}
		req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 3, InvisibleTime: 60 * clock.Second, AttemptID: "attempt"}
		var res PopResult
		for range 3 {
			now = now.Add(clock.Millisecond)
			b.Pop(now, &req, &res)
			if res.Status != PopFound {
				t.Fatalf("UsesKV %v: pop %v, want FOUND", cfg.UsesKV(), res.Status)
			}
			for i, m := range b.scratch.msgs[:cap(b.scratch.msgs)] {
				if m != nil {
					t.Fatalf("UsesKV %v: the read buffer keeps a message at %d", cfg.UsesKV(), i)
				}
			}
			for i, r := range b.scratch.records[:cap(b.scratch.records)] {
				if r.attemptID != "" {
					t.Fatalf("UsesKV %v: the records keep an attempt id at %d", cfg.UsesKV(), i)
				}
			}
		}
		if cfg.UsesKV() && cap(b.scratch.records) == 0 || cap(b.scratch.msgs) == 0 {
			t.Fatalf("UsesKV %v: the pops left no buffers to check", cfg.UsesKV())
		}
	}
}

// TestReviveScratchHoldsNoReferences checks that Revive keeps its page of
// expired records for the next call without their attempt ids, and that
// a second Revive on the kept storage revives its own page.
func TestReviveScratchHoldsNoReferences(t *testing.T) {
	const n = 4
	b := queuesBroker(t, KVConfig(), n)
	now := clock.Epoch
	for i := range 8 {
		b.Put(now, &model.Message{Topic: "t", QueueID: int32(i % n)})
	}
	req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 4, InvisibleTime: 10 * clock.Second, AttemptID: "attempt"}
	var res PopResult
	for round := range 2 {
		now = now.Add(clock.Millisecond)
		b.Pop(now, &req, &res)
		if len(res.Messages) != 4 {
			t.Fatalf("round %d: pop found %d messages, want 4", round, len(res.Messages))
		}
		now = now.Add(20 * clock.Second) // past the leases and revive's slack
		r := b.Revive(now)
		if len(r.Revivals) != 4 {
			t.Fatalf("round %d: revive revived %d records, want 4", round, len(r.Revivals))
		}
		for i, rc := range b.scratch.expired[:cap(b.scratch.expired)] {
			if rc.attemptID != "" {
				t.Fatalf("round %d: the kept page holds an attempt id at %d", round, i)
			}
		}
		if cap(b.scratch.expired) == 0 {
			t.Fatalf("round %d: revive kept no page", round)
		}
	}
}

// TestStageRetryFlagIsTopics pops messages put straight into the pair's V1
// and V2 retry topics and into the topic itself, on one queue and on all,
// and checks each handle's retry flag is model.RetryFlagOf of the topic the
// message lives in, and the offset infos' entries carry it too: addResult
// takes the flag from the topic (topic.flag).
func TestStageRetryFlagIsTopics(t *testing.T) {
	for _, qid := range []int32{0, -1} {
		cfg := KVConfig()
		cfg.EnableRetryTopicV2, cfg.RetrieveMessageFromPopRetryTopicV1 = true, true
		b := queuesBroker(t, cfg, 1)
		v1, v2 := model.BuildPopRetryTopicV1("t", "g"), model.BuildPopRetryTopicV2("t", "g")
		for _, n := range []string{v1, v2} {
			must(t, b.CreateTopic(TopicConfig{Name: n, ReadQueueNums: 1, WriteQueueNums: 1}))
		}
		now := clock.Epoch
		for _, n := range []string{"t", v1, v2} {
			if r := b.Put(now, &model.Message{Topic: n}); r.Code != model.Success {
				t.Fatalf("put to %s: %v", n, r.Code)
			}
		}
		req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: qid, MaxMsgNums: 32, InvisibleTime: 60 * clock.Second}
		var res PopResult
		b.Pop(now.Add(clock.Millisecond), &req, &res)
		if len(res.Messages) != 3 {
			t.Fatalf("qid %d: popped %d messages, want 3", qid, len(res.Messages))
		}
		for _, m := range res.Messages {
			if want := model.RetryFlagOf(m.RealTopic); m.Handle.RetryFlag != want {
				t.Fatalf("qid %d: message of %s has retry flag %d, want %d", qid, m.RealTopic, m.Handle.RetryFlag, want)
			}
			entry := fmt.Sprintf("%d %d ", m.Handle.RetryFlag, m.Handle.QueueID)
			if !strings.Contains(res.StartOffsetInfo(), entry) {
				t.Fatalf("qid %d: start offset info %q has no entry %q", qid, res.StartOffsetInfo(), entry)
			}
		}
	}
}

// A pop reads a normalised request in place and applies the defaults of
// one that is not (no born time: now; a negative queue id: -1) to the
// broker's copy, never to the caller's: on both paths a request without a
// born time and with queue id -7 pops as the normalised one does, is left
// as it was, and parks with the born time and queue id it defaulted, which
// its wakeup carries. It fails when normalised writes the caller's request
// or skips either default (checked).
func TestPopNormalisesACopy(t *testing.T) {
	for _, kv := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.PopConsumerKVServiceEnable, cfg.PopConsumerKVServiceInit = kv, kv
		br := newTopicGroupBroker(t, cfg)
		now := clock.Epoch.Add(clock.Second)
		m := model.Message{Topic: "t", QueueID: 1}
		br.Put(now, &m)
		req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -7, MaxMsgNums: 4, InvisibleTime: 30 * clock.Second, PollTime: 5 * clock.Second}
		orig := req
		if n := br.scratch.normalised(now, &orig); n == &orig || n.BornTime != now || n.QueueID != -1 {
			t.Fatalf("kv %v: normalised %+v", kv, *n)
		}
		done := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, BornTime: now}
		if n := br.scratch.normalised(now, &done); n != &done {
			t.Fatalf("kv %v: a normalised request was copied", kv)
		}
		var res PopResult
		br.Pop(now, &req, &res)
		if len(res.Messages) != 1 || req != orig {
			t.Fatalf("kv %v: popped %d, request %+v after the pop, was %+v", kv, len(res.Messages), req, orig)
		}
		br.Pop(now, &req, &res)
		if res.Status != PopSuspended || req != orig {
			t.Fatalf("kv %v: status %v, request %+v after the park, was %+v", kv, res.Status, req, orig)
		}
		later := now.Add(clock.Second)
		var put PutResult
		br.PutInto(later, &model.Message{Topic: "t", QueueID: 0}, &put)
		if len(put.Woken) != 1 || put.Woken[0].Request.BornTime != now || put.Woken[0].Request.QueueID != -1 {
			t.Fatalf("kv %v: woken %+v", kv, put.Woken)
		}
	}
}
