package pop

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// oldHeaders is the writer every pop ran until the headers were formatted
// on demand (appendOffsetInfos, kept here as the reference): a stage's
// startOffsetInfo and msgOffsetInfo entries, written as model.AppendOffsetInfo
// writes them, with their common "retryFlag queueId " prefix written once
// and the first message's offset copied from the start offset's digits.
type oldHeaders struct{ start, msg []byte }

func (r *oldHeaders) append(flag model.RetryType, qid int32, start int64, msgs []*model.Message) {
	var buf [24]byte
	var p []byte
	if uint32(flag) < 10 && uint32(qid) < 1000 {
		buf[0], buf[1] = '0'+byte(flag), ' '
		n := 2
		if qid >= 100 {
			buf[n], n = '0'+byte(qid/100), n+1
		}
		if qid >= 10 {
			buf[n], n = '0'+byte(qid/10%10), n+1
		}
		buf[n], buf[n+1] = '0'+byte(qid%10), ' '
		p = buf[:n+2]
	} else {
		p = model.AppendDec(buf[:0], int64(flag))
		p = append(p, ' ')
		p = model.AppendDec(p, int64(qid))
		p = append(p, ' ')
	}
	head := func(dst []byte) []byte {
		if len(dst) > 0 {
			dst = append(dst, ';')
		}
		return append(dst, p...)
	}
	si := head(r.start)
	digits := len(si)
	r.start = model.AppendDec(si, start)
	dst := head(r.msg)
	for i, m := range msgs {
		switch {
		case i > 0:
			dst = append(dst, ',')
			fallthrough
		case m.QueueOffset != start:
			dst = model.AppendDec(dst, m.QueueOffset)
		default:
			dst = append(dst, r.start[digits:]...)
		}
	}
	r.msg = dst
}

// TestLazyHeadersAreTodays runs random pops on both paths (KV and
// checkpoint), plain and orderly, of one queue or all four, through tag
// filters that leave gaps between the offsets read, with messages in both
// retry topics, and checks every found pop's headers, formatted on demand,
// against the bytes the pop wrote before (oldHeaders fed each stage's
// messages) and against model.AppendOffsetInfo of entries built from the
// messages' receipt handles alone (a stage's messages are those in a row
// with the same retry flag, queue and start offset). A FIFO pop's
// orderCountInfo is checked against what each stage's queue's OrderInfo
// writes right after the pop (model.OrderInfo.AppendOrderCountInfo, the
// writer pops used before), every header is checked to parse, and the
// pops must have covered every kind of stage.
func TestLazyHeadersAreTodays(t *testing.T) {
	const queues = 4
	for _, path := range []string{"kv", "checkpoint"} {
		cfg := DefaultConfig()
		if path == "kv" {
			cfg = KVConfig()
		}
		cfg.EnableRetryTopicV2, cfg.RetrieveMessageFromPopRetryTopicV1 = true, true
		b := queuesBroker(t, cfg, queues)
		v1, v2 := model.BuildPopRetryTopicV1("t", "g"), model.BuildPopRetryTopicV2("t", "g")
		for _, n := range []string{v1, v2} {
			must(t, b.CreateTopic(TopicConfig{Name: n, ReadQueueNums: 1, WriteQueueNums: 1}))
		}
		rng := rand.New(rand.NewPCG(7, uint64(len(path))))
		now := clock.Epoch
		var res PopResult
		seen := map[string]bool{}
		for i := range 3000 {
			now = now.Add(clock.MillisDuration(rng.Int64N(400)))
			if rng.IntN(3) > 0 {
				topic, qid := "t", int32(rng.IntN(queues))
				if k := rng.IntN(6); k < 2 {
					topic, qid = []string{v1, v2}[k], 0
				}
				tag := []string{"a", "b", "c"}[rng.IntN(3)]
				if r := b.Put(now, &model.Message{Topic: topic, QueueID: qid, Tags: tag, UniqKey: fmt.Sprintf("m%d", i)}); r.Code != model.Success {
					t.Fatalf("%s: put to %s: %v", path, topic, r.Code)
				}
				continue
			}
			req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: int32(rng.IntN(queues+1)) - 1, MaxMsgNums: int32(1 + rng.IntN(32)),
				InvisibleTime: clock.MillisDuration(500 + rng.Int64N(3000)), Order: rng.IntN(3) == 0}
			if rng.IntN(2) == 0 {
				req.ExpressionType, req.Expression = "TAG", "a || b"
			}
			if req.Order && rng.IntN(2) == 0 {
				req.AttemptID = []string{"x", "y"}[rng.IntN(2)]
			}
			b.Pop(now, &req, &res)
			if res.Status != PopFound {
				continue
			}
			where := fmt.Sprintf("%s pop %d %+v", path, i, req)
			checkHeaders(t, b, where, &req, &res, seen)
		}
		for _, k := range []string{"retry flag 0", "retry flag 1", "retry flag 2", "several stages", "gap", "orderly", "orderly count"} {
			if !seen[k] {
				t.Errorf("%s: no pop with %s", path, k)
			}
		}
	}
}

// checkHeaders checks a found pop's headers (TestLazyHeadersAreTodays).
func checkHeaders(t *testing.T, b *Broker, where string, req *PopRequest, res *PopResult, seen map[string]bool) {
	t.Helper()
	var old oldHeaders
	var start, msg, count []byte
	j := 0
	for _, s := range res.Stages {
		if j+int(s.Count) > len(res.Messages) {
			t.Fatalf("%s: stages %+v read more than the %d messages", where, res.Stages, len(res.Messages))
		}
		msgs := make([]*model.Message, s.Count)
		for k := range msgs {
			msgs[k] = &res.Messages[j+k].Message
		}
		old.append(s.RetryFlag, s.QueueID, s.StartOffset, msgs)
		if req.Order {
			q := b.order.get(qkey{b.names.pair(req.ConsumerGroup, res.Messages[j].RealTopic), s.QueueID})
			count = q.info.AppendOrderCountInfo(count, s.RetryFlag, s.QueueID)
		}
		j += int(s.Count)
	}
	if j != len(res.Messages) {
		t.Fatalf("%s: stages %+v read %d of the %d messages", where, res.Stages, j, len(res.Messages))
	}
	for i := 0; i < len(res.Messages); {
		h := &res.Messages[i].Handle
		e := model.OffsetInfo{RetryFlag: h.RetryFlag, QueueID: h.QueueID}
		for ; i < len(res.Messages); i++ {
			g := &res.Messages[i].Handle
			if g.RetryFlag != h.RetryFlag || g.QueueID != h.QueueID || g.CkQueueOffset != h.CkQueueOffset {
				break
			}
			if n := len(e.Offsets); n > 0 && g.QueueOffset > e.Offsets[n-1]+1 {
				seen["gap"] = true
			}
			e.Offsets = append(e.Offsets, g.QueueOffset)
		}
		msg = model.AppendOffsetInfo(msg, e)
		e.Offsets = []int64{h.CkQueueOffset}
		start = model.AppendOffsetInfo(start, e)
		seen[fmt.Sprintf("retry flag %d", h.RetryFlag)] = true
	}
	if len(res.Stages) > 1 {
		seen["several stages"] = true
	}
	if req.Order {
		seen["orderly"] = true
		for _, e := range res.OrderCounts {
			if e.Offset >= 0 { // an offset popped again, with its count
				seen["orderly count"] = true
			}
		}
	}
	for _, c := range []struct {
		name      string
		got, want string
	}{
		{"startOffsetInfo", res.StartOffsetInfo(), string(start)},
		{"msgOffsetInfo", res.MsgOffsetInfo(), string(msg)},
		{"today's startOffsetInfo", res.StartOffsetInfo(), string(old.start)},
		{"today's msgOffsetInfo", res.MsgOffsetInfo(), string(old.msg)},
		{"orderCountInfo", res.OrderCountInfo(), string(count)},
	} {
		if c.got != c.want {
			t.Fatalf("%s: %s %q, want %q", where, c.name, c.got, c.want)
		}
	}
	if _, err := model.ParseStartOffsetInfo(res.StartOffsetInfo()); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if _, err := model.ParseMsgOffsetInfo(res.MsgOffsetInfo()); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if _, err := model.ParseOrderCountInfo(res.OrderCountInfo()); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}
