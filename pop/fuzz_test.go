package pop_test

import (
	"fmt"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// FuzzEngineAPI drives one broker (KV with and without the cache, or the
// checkpoint path) through a call sequence the fuzzer's bytes choose:
// topics and groups with names of any length and alphabet, puts, pops,
// acks and renewals with real and mangled handles, pulls, offset
// commits, truncation, admin resets, restarts, and the periodic tasks.
// No call may panic, and CheckInvariants must hold after every call.
// go test -fuzz FuzzEngineAPI ./pop runs it; the seeds below run in CI.
func FuzzEngineAPI(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 3, 4, 5, 6, 7})
	f.Add([]byte{1, 0, 9, 1, 9, 2, 3, 0, 3, 1, 4, 0, 6, 7, 11, 3})
	f.Add([]byte("\x02\x00\x05\xfe\x01\x03\x02\x03\x06\x07\x08\x09\x0a\x0b\x0c\x0d"))
	f.Add([]byte(strings.Repeat("\x00\x04\x01\x03\x02\x05\x03\x07", 8)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &byteSrc{b: data}
		cfg := []pop.Config{pop.KVConfig(), pop.KVConfig(), pop.DefaultConfig()}[s.n(3)]
		cfg.EnablePopBufferMerge = s.n(2) == 0
		b, err := pop.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := &fuzzDriver{b: b, now: clock.Epoch, s: s}
		for s.more() {
			op := s.n(len(fuzzOps))
			d.call(t, fuzzOps[op].name, fuzzOps[op].run)
		}
	})
}

// byteSrc hands out the fuzzer's bytes as choices; once they run out
// every choice is 0.
type byteSrc struct {
	b []byte
	i int
}

func (s *byteSrc) more() bool { return s.i < len(s.b) }

func (s *byteSrc) u8() int {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return int(s.b[s.i-1])
}

// n is a choice in [0, k).
func (s *byteSrc) n(k int) int { return s.u8() % k }

// i64 is one of the boundary values or a small number.
func (s *byteSrc) i64() int64 {
	edges := []int64{0, 1, -1, 2, 3, 31, 32, 33, 127, 1 << 31, -1 << 31, 1<<63 - 1, -1 << 63}
	v := s.u8()
	if v < len(edges) {
		return edges[v]
	}
	return int64(v - len(edges))
}

// name is a topic or group name: a usual one, or one of any length and
// alphabet (RocketMQ's limits are 120, 127 and 255 characters).
func (s *byteSrc) name() string {
	usual := []string{"t", "g", "t2", "g2", "%RETRY%g_t", "%RETRY%g+t", "%DLQ%g", "", "t g", "TBW102"}
	k := s.u8()
	if k < len(usual) {
		return usual[k]
	}
	alpha := []string{"a", "_", "%", "|", "é", "-", ".", "\x00"}
	return strings.Repeat(alpha[k%len(alpha)], s.u8()+k%3*100)
}

type fuzzDriver struct {
	b       *pop.Broker
	now     clock.Time
	s       *byteSrc
	handles []string // ExtraInfo texts of popped messages, and mangled ones
	topics  []string
	groups  []string
}

func (d *fuzzDriver) topic() string {
	if len(d.topics) > 0 && d.s.n(4) != 0 {
		return d.topics[d.s.n(len(d.topics))]
	}
	return d.s.name()
}

func (d *fuzzDriver) group() string {
	if len(d.groups) > 0 && d.s.n(4) != 0 {
		return d.groups[d.s.n(len(d.groups))]
	}
	return d.s.name()
}

func (d *fuzzDriver) qid() int32 { return int32(d.s.i64()) }

func (d *fuzzDriver) handle() string {
	if len(d.handles) > 0 && d.s.n(4) != 0 {
		h := d.handles[d.s.n(len(d.handles))]
		switch d.s.n(4) {
		case 1:
			return h[:d.s.n(len(h)+1)]
		case 2:
			return strings.Replace(h, " ", "  ", 1)
		}
		return h
	}
	return []string{"", " ", "0 0 0 0 0 broker-a 0 0", "1 2 3 4 5 b 6 7 8", "x y z", "-1 -1 -1 -1 -1 broker-a -1 -1"}[d.s.n(6)]
}

// call runs one operation, turning a panic into a failure, and checks
// the invariants after it.
func (d *fuzzDriver) call(t *testing.T, name string, op func(d *fuzzDriver) string) {
	t.Helper()
	var what string
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s %s panicked: %v", name, what, r)
			}
		}()
		what = op(d)
	}()
	if err := d.b.CheckInvariants(); err != nil {
		t.Fatalf("after %s %s: %v", name, what, err)
	}
}

var fuzzOps = []struct {
	name string
	run  func(d *fuzzDriver) string
}{
	{"createTopic", func(d *fuzzDriver) string {
		c := pop.TopicConfig{Name: d.s.name(), ReadQueueNums: int32(d.s.n(5)), WriteQueueNums: int32(d.s.n(5)), Perm: pop.PermRead | pop.PermWrite}
		if d.b.CreateTopic(c) == nil {
			d.topics = append(d.topics, c.Name)
		}
		return fmt.Sprintf("%+v", c)
	}},
	{"createGroup", func(d *fuzzDriver) string {
		g := pop.DefaultGroup(d.s.name())
		g.RetryMaxTimes = int32(d.s.i64())
		if d.b.CreateGroup(g) == nil {
			d.groups = append(d.groups, g.Name)
		}
		return fmt.Sprintf("%+v", g)
	}},
	{"put", func(d *fuzzDriver) string {
		m := &model.Message{Topic: d.topic(), QueueID: d.qid(), Tags: []string{"", "A", "B", "A||B"}[d.s.n(4)], UniqKey: fmt.Sprint("m", d.s.i)}
		if d.s.n(8) == 0 {
			m.ReconsumeTimes = int32(d.s.i64())
		}
		d.b.Put(d.now, m)
		return m.String()
	}},
	{"pop", func(d *fuzzDriver) string {
		r := &pop.PopRequest{ClientID: "c", ConsumerGroup: d.group(), Topic: d.topic(), QueueID: d.qid(),
			MaxMsgNums: int32(d.s.i64()), InvisibleTime: clock.MillisDuration(d.s.i64() * 1000), PollTime: clock.MillisDuration(int64(d.s.n(3)) * 1000),
			InitMode: []int32{pop.InitModeMin, pop.InitModeMax, 7}[d.s.n(3)], Expression: []string{"", "*", "A", "A || B", "||", "a > 1"}[d.s.n(6)],
			ExpressionType: []string{"", "TAG", "SQL92", "XML"}[d.s.n(4)], Order: d.s.n(8) == 0}
		var res pop.PopResult
		d.b.Pop(d.now, r, &res)
		for _, m := range res.Messages {
			d.handles = append(d.handles, m.Handle.String())
		}
		return fmt.Sprintf("%+v", *r)
	}},
	{"ack", func(d *fuzzDriver) string {
		h := &pop.AckMessageRequestHeader{ClientID: "c", ConsumerGroup: d.group(), Topic: d.topic(), QueueID: d.qid(), Offset: d.s.i64(), ExtraInfo: d.handle()}
		d.b.AckHeader(d.now, h)
		return fmt.Sprintf("%+v", *h)
	}},
	{"change", func(d *fuzzDriver) string {
		h := &pop.ChangeInvisibleTimeRequestHeader{ClientID: "c", ConsumerGroup: d.group(), Topic: d.topic(), QueueID: d.qid(), Offset: d.s.i64(), ExtraInfo: d.handle(), InvisibleTime: d.s.i64() * 1000}
		if r := d.b.ChangeInvisibleTimeHeader(d.now, h); r.Code == model.Success {
			d.handles = append(d.handles, r.Handle.String())
		}
		return fmt.Sprintf("%+v", *h)
	}},
	{"tick", func(d *fuzzDriver) string {
		dt := clock.MillisDuration(int64(d.s.u8()) * 100)
		d.now = d.now.Add(dt)
		d.b.Revive(d.now)
		d.b.CleanupCache(d.now)
		d.b.PollTick(d.now)
		d.b.CheckHoldRequest(d.now)
		d.b.CheckpointTick(d.now)
		return dt.String()
	}},
	{"pull", func(d *fuzzDriver) string {
		r := &pop.PullRequest{ConsumerGroup: d.group(), Topic: d.topic(), QueueID: d.qid(), QueueOffset: d.s.i64(), MaxMsgNums: int32(d.s.i64()),
			Suspend: d.s.n(2) == 0, SuspendTimeout: clock.MillisDuration(int64(d.s.n(3)) * 1000), HasCommitOffset: d.s.n(2) == 0, CommitOffset: d.s.i64()}
		var res pop.PullResult
		d.b.Pull(d.now, r, &res)
		return fmt.Sprintf("%+v", *r)
	}},
	{"offsets", func(d *fuzzDriver) string {
		u := &pop.UpdateConsumerOffsetRequest{ConsumerGroup: d.group(), Topic: d.topic(), QueueID: d.qid(), CommitOffset: d.s.i64()}
		d.b.UpdateConsumerOffset(u)
		d.b.QueryConsumerOffset(&pop.QueryConsumerOffsetRequest{ConsumerGroup: u.ConsumerGroup, Topic: u.Topic, QueueID: u.QueueID, NoZeroIfNotFound: d.s.n(2) == 0})
		return fmt.Sprintf("%+v", *u)
	}},
	{"truncate", func(d *fuzzDriver) string {
		t, q, o := d.topic(), d.qid(), d.s.i64()
		_, _ = d.b.Truncate(t, q, o)
		return fmt.Sprintf("%q %d %d", t, q, o)
	}},
	{"reset", func(d *fuzzDriver) string {
		g, t, q, o := d.group(), d.topic(), d.qid(), d.s.i64()
		_, _ = d.b.ResetOffset(g, t, q, o)
		return fmt.Sprintf("%q %q %d %d", g, t, q, o)
	}},
	{"restart", func(d *fuzzDriver) string {
		d.b.Restart(d.now)
		return ""
	}},
	{"disconnect", func(d *fuzzDriver) string {
		d.b.Disconnect("c")
		return ""
	}},
	{"assignment", func(d *fuzzDriver) string {
		m := &pop.SetMessageRequestModeRequest{Topic: d.topic(), ConsumerGroup: d.group(), Mode: []pop.MessageRequestMode{"", "POP", "PULL", "pop"}[d.s.n(4)], PopShareQueueNum: int32(d.s.i64())}
		d.b.SetMessageRequestMode(m)
		q := &pop.QueryAssignmentRequest{Topic: m.Topic, ConsumerGroup: m.ConsumerGroup, ClientID: d.s.name(), StrategyName: []string{"AVG", "AVG_BY_CIRCLE", "", "x"}[d.s.n(4)],
			MessageModel: []pop.MessageModel{"CLUSTERING", "BROADCASTING", ""}[d.s.n(3)]}
		for range d.s.n(12) {
			q.ClientIDs = append(q.ClientIDs, d.s.name())
		}
		route := d.b.Route(q.Topic)
		if d.s.n(2) == 0 {
			route = append(route, pop.RouteBroker{BrokerName: d.s.name(), ReadQueueNums: int32(d.s.n(70000) - 2)})
		}
		d.b.QueryAssignmentRoute(q, route)
		return fmt.Sprintf("%+v %+v %+v", *m, *q, route)
	}},
}
