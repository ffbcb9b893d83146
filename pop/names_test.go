package pop

import (
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/model"
)

// The longest names RocketMQ allows (a 120-character group, a 127-character
// topic) give retry topics of 255 characters, which the broker creates and
// stores (the commit log writes them in message format V2): a revive
// writes the copy and the consumer gets it back, on both paths and with
// both retry-topic versions. (Before the fix the retry topic's creation
// failed on the 127-character name rule and the revive dereferenced a nil
// topic.)
func TestLongestNamesRevive(t *testing.T) {
	group, topicName := strings.Repeat("g", model.MaxGroupLength), strings.Repeat("t", model.MaxTopicLength)
	for _, kv := range []bool{true, false} {
		for _, v2 := range []bool{false, true} {
			cfg := DefaultConfig()
			if kv {
				cfg = KVConfig()
			}
			cfg.EnableRetryTopicV2 = v2
			b, err := New(cfg)
			must(t, err)
			must(t, b.CreateTopic(TopicConfig{Name: topicName, ReadQueueNums: 1, WriteQueueNums: 1}))
			must(t, b.CreateGroup(DefaultGroup(group)))
			now := clock.Epoch
			if r := b.Put(now, &model.Message{Topic: topicName, UniqKey: "m"}); r.Code != model.Success {
				t.Fatalf("put: %+v", r)
			}
			req := &PopRequest{ConsumerGroup: group, Topic: topicName, QueueID: -1, MaxMsgNums: 1, InvisibleTime: 10 * clock.Second}
			var res PopResult
			b.Pop(now, req, &res)
			if len(res.Messages) != 1 {
				t.Fatalf("kv=%v v2=%v: pop %+v", kv, v2, res)
			}
			retry := model.BuildPopRetryTopic(topicName, group, v2)
			if len(retry) != model.MaxRetryOrDLQTopicLength {
				t.Fatalf("retry topic is %d characters", len(retry))
			}
			now = now.Add(20 * clock.Second)
			if kv {
				rv := b.Revive(now)
				if len(rv.Revivals) != 1 || rv.Revivals[0].Outcome != Revived || rv.Revivals[0].Copy.Topic != retry {
					t.Fatalf("kv v2=%v: revive %+v", v2, rv.Revivals)
				}
			} else {
				driveCheckpoint(b, now)
			}
			if b.MaxOffset(retry, 0) != 1 {
				t.Fatalf("kv=%v v2=%v: the retry topic holds %d messages, want 1", kv, v2, b.MaxOffset(retry, 0))
			}
			got := false
			for i := 0; i < 10 && !got; i++ { // the retry topic is read first on some turns
				b.Pop(now, req, &res)
				got = len(res.Messages) == 1 && res.Messages[0].Message.ReconsumeTimes == 1
			}
			if !got {
				t.Fatalf("kv=%v v2=%v: the retry copy never came back", kv, v2)
			}
			m := &res.Messages[0]
			ack := NewAckRequest(group, m.Message.Topic, &m.Handle)
			if a := b.Ack(now, &ack); a.Code != model.Success || a.Removed == 0 && a.Pending == 0 {
				t.Fatalf("kv=%v v2=%v: ack of the retry copy %+v", kv, v2, a)
			}
			must(t, b.CheckInvariants())
		}
	}
}

// driveCheckpoint runs the checkpoint path's periodic work up to until.
func driveCheckpoint(b *Broker, until clock.Time) {
	for t, ok := b.NextCheckpointTick(); ok && t <= until; t, ok = b.NextCheckpointTick() {
		b.CheckpointTick(t)
	}
}

// Names are held to TopicValidator's rules: groups to 120 characters,
// normal topics to 127, retry and DLQ topics to 255; a producer may not
// send to a topic longer than 127; the broker's own retry topics are
// created whatever their length, and a write the store cannot take (a
// topic over 255) fails instead of panicking.
func TestNameLimits(t *testing.T) {
	b, err := New(KVConfig())
	must(t, err)
	for _, c := range []struct {
		err  error
		want bool
	}{
		{b.CreateGroup(DefaultGroup(strings.Repeat("g", 121))), false},
		{b.CreateGroup(DefaultGroup(strings.Repeat("g", 120))), true},
		{b.CreateGroup(DefaultGroup("a+b")), false},
		{b.CreateTopic(TopicConfig{Name: strings.Repeat("t", 128), ReadQueueNums: 1, WriteQueueNums: 1}), false},
		{b.CreateTopic(TopicConfig{Name: "%DLQ%" + strings.Repeat("g", 120), ReadQueueNums: 1, WriteQueueNums: 1}), true},
		{b.CreateTopic(TopicConfig{Name: "%RETRY%" + strings.Repeat("g", 249), ReadQueueNums: 1, WriteQueueNums: 1}), false},
		{b.CreateTopic(TopicConfig{Name: "a+b", ReadQueueNums: 1, WriteQueueNums: 1}), false},
	} {
		if (c.err == nil) != c.want {
			t.Errorf("got %v, want success %v", c.err, c.want)
		}
	}
	long := "%RETRY%" + strings.Repeat("g", 121)
	must(t, b.CreateTopic(TopicConfig{Name: long, ReadQueueNums: 1, WriteQueueNums: 1}))
	if r := b.Put(clock.Epoch, &model.Message{Topic: long}); r.Code != model.MessageIllegal {
		t.Errorf("a send to a %d-character topic: %+v, want MESSAGE_ILLEGAL", len(long), r)
	}
	// a retry copy for a topic the store refuses: the broker's own topic
	// exists, the write fails as refused, and nothing panics
	b.createTopic(TopicConfig{Name: "%RETRY%" + strings.Repeat("x", 250), ReadQueueNums: 1, WriteQueueNums: 1})
	var f WriteFailure
	if b.append(clock.Epoch, &model.Message{Topic: "%RETRY%" + strings.Repeat("x", 250)}, false, &f) != nil || !f.Refused {
		t.Errorf("a 257-character topic was written: %+v", f)
	}
	must(t, b.CheckInvariants())
}

// TestRetryTopicNameIsModels checks retryTopicName against
// model.BuildPopRetryTopic with either retry topic version, for an interned
// pair (the kept name) and one never interned (built).
func TestRetryTopicNameIsModels(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		b, err := New(KVConfig())
		must(t, err)
		b.cfg.EnableRetryTopicV2 = v2
		b.names.pair("g", "t")
		for _, p := range [][2]string{{"g", "t"}, {"g", "u"}, {"h", "t"}, {"g", "t"}} {
			if got, want := b.retryTopicName(p[0], p[1]), model.BuildPopRetryTopic(p[1], p[0], v2); got != want {
				t.Fatalf("v2 %v: retryTopicName(%q, %q) = %q, want %q", v2, p[0], p[1], got, want)
			}
		}
		if _, ok := b.names.lookup("g", "u"); ok {
			t.Fatalf("retryTopicName interned a pair")
		}
	}
}

// TestPopPairIsNamesPair checks popPair against names.pair through pops'
// groups and topics drawn at random, with groups replaced by CreateGroup
// on the way (a new GroupConfig for the same name): a memo that compared
// only the topic, or only the group, answers another pair.
func TestPopPairIsNamesPair(t *testing.T) {
	b, err := New(KVConfig())
	must(t, err)
	topics, groups := []string{"t1", "t2", "t3"}, []string{"g1", "g2"}
	for _, n := range topics {
		must(t, b.CreateTopic(TopicConfig{Name: n, ReadQueueNums: 2, WriteQueueNums: 2}))
	}
	for _, n := range groups {
		must(t, b.CreateGroup(DefaultGroup(n)))
	}
	rng := rand.New(rand.NewPCG(34, 1))
	for i := range 2000 {
		req := PopRequest{Topic: topics[rng.IntN(len(topics))], ConsumerGroup: groups[rng.IntN(len(groups))]}
		if rng.IntN(50) == 0 {
			must(t, b.CreateGroup(DefaultGroup(req.ConsumerGroup)))
		}
		got := b.popPair(b.topicNamed(req.Topic), b.groupNamed(req.ConsumerGroup), &req)
		if want := b.names.pair(req.ConsumerGroup, req.Topic); got != want {
			t.Fatalf("step %d: popPair(%s@%s) = %d, want %d", i, req.ConsumerGroup, req.Topic, got, want)
		}
	}
}

// TestRetryTopicIsLookedUp checks retryTopic against topicNamed and
// names.pair on the retry topic's name, through lookups of both versions
// for pairs drawn at random, with topics (retry topics among them, and
// others) created on the way: a memo of a missing topic that outlived the
// topic's creation answers nil for it. retryFound, asked first, answers
// only a topic retryTopic then gives.
func TestRetryTopicIsLookedUp(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b, err := New(DefaultConfig())
		must(t, err)
		topics, groups := []string{"t1", "t2"}, []string{"g1", "g2"}
		for _, n := range topics {
			must(t, b.CreateTopic(TopicConfig{Name: n, ReadQueueNums: 1, WriteQueueNums: 1}))
		}
		for _, n := range groups {
			must(t, b.CreateGroup(DefaultGroup(n)))
		}
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			g, tn := rapid.SampledFrom(groups).Draw(rt, "group"), rapid.SampledFrom(topics).Draw(rt, "topic")
			v := rapid.IntRange(retryV1, retryV2).Draw(rt, "v")
			if rapid.IntRange(0, 5).Draw(rt, "create") == 0 {
				name := model.BuildPopRetryTopic(tn, g, v == retryV2)
				if rapid.Bool().Draw(rt, "other") {
					name = "x" + strings.Repeat("y", rapid.IntRange(0, 3).Draw(rt, "len"))
				}
				must(t, b.CreateTopic(TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1}))
			}
			id := b.names.pair(g, tn)
			var name string
			var top *topic
			var pair uint32
			found := b.names.retryFound(id, v)
			if r := b.retryTopic(id, v); r != nil {
				name, top, pair = r.t.cfg.Name, r.t, r.pair
			} else if found != nil {
				rt.Fatalf("step %d: retryFound(%s@%s, v%d) found %q, retryTopic nothing", i, g, tn, v, found.t.cfg.Name)
			}
			if found != nil && found.t != top {
				rt.Fatalf("step %d: retryFound(%s@%s, v%d) = %p, retryTopic %p", i, g, tn, v, found.t, top)
			}
			wantName := model.BuildPopRetryTopic(tn, g, v == retryV2)
			want := b.topicNamed(wantName)
			if want == nil {
				wantName = "" // a missing topic has no name to give
			}
			if name != wantName || top != want || want != nil && pair != b.names.pair(g, wantName) {
				rt.Fatalf("step %d: retryTopic(%s@%s, v%d) = %q %p %d, want %q %p", i, g, tn, v, name, top, pair, wantName, want)
			}
		}
	})
}
