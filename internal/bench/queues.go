package bench

import (
	"fmt"
	"strconv"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// QueueCounts are the topic sizes PopAckQueues runs at; the smallest is
// the baseline the others are divided by.
var QueueCounts = []int{8, 1000, 8000}

// busyQueues is how many queues of a PopAckQueues topic hold messages.
const busyQueues = 4

// QueuesParams configures PopAckQueues.
type QueuesParams struct {
	Queues int  // read and write queues of the topic
	KV     bool // the KV path (cache off); else the checkpoint path (buffer on)
	// Latency, when set, samples wall-clock time per round.
	Latency *Latency
}

// queuesFixture is a broker whose topic has many queues, few of them busy.
type queuesFixture struct {
	b    *pop.Broker
	now  clock.Time
	req  pop.PopRequest
	res  pop.PopResult
	busy []int32
	kv   bool
}

func newQueuesFixture(p QueuesParams) (*queuesFixture, error) {
	cfg := pop.DefaultConfig()
	if p.KV {
		cfg = pop.KVConfig()
	}
	b, err := pop.New(cfg)
	if err != nil {
		return nil, err
	}
	n := int32(p.Queues)
	if err := b.CreateTopic(pop.TopicConfig{Name: Topic, ReadQueueNums: n, WriteQueueNums: n}); err != nil {
		return nil, err
	}
	if err := b.CreateGroup(pop.DefaultGroup(Group)); err != nil {
		return nil, err
	}
	f := &queuesFixture{b: b, now: clock.Epoch, kv: p.KV}
	f.req = pop.PopRequest{ConsumerGroup: Group, Topic: Topic, QueueID: -1, MaxMsgNums: Batch, InvisibleTime: hotInvisible}
	for i := range busyQueues {
		f.busy = append(f.busy, int32(i*p.Queues/busyQueues))
	}
	// Two pops of the empty topic give every queue its offsets: each queue
	// is then empty and caught up, as in a long-running broker.
	for range 2 {
		f.b.Pop(f.now, &f.req, &f.res)
		f.tick()
	}
	return f, f.hold()
}

// queuesInFlight is how many records PopAckQueues keeps in flight (popped
// once with a one-day invisible time, never acked), as PopAck32 does.
const queuesInFlight = 1000

// hold pops queuesInFlight messages of the busy queues with a one-day
// invisible time and never acks them.
func (f *queuesFixture) hold() error {
	if err := f.stock(queuesInFlight/busyQueues + Batch); err != nil {
		return err
	}
	req := f.req
	req.InvisibleTime = longInvisible
	for got := 0; got < queuesInFlight; {
		req.MaxMsgNums = int32(min(Batch, queuesInFlight-got))
		if f.b.Pop(f.now, &req, &f.res); f.res.Status != pop.PopFound {
			return fmt.Errorf("bench: holding %d records: pop %d: %v %s", queuesInFlight, got, f.res.Status, f.res.Remark)
		}
		got += len(f.res.Messages)
		f.tick()
	}
	return nil
}

func (f *queuesFixture) tick() {
	f.now = f.now.Add(roundMs * clock.Millisecond)
	if f.kv {
		return
	}
	for {
		t, ok := f.b.NextCheckpointTick()
		if !ok || t > f.now {
			return
		}
		f.b.CheckpointTick(f.now)
	}
}

// consumed is the offset below which queue q's messages are done with.
func (f *queuesFixture) consumed(q int32) int64 {
	o := f.b.ConsumerOffsets(Group, Topic, q)
	if f.kv {
		return o.Pull
	}
	return o.Commit
}

// stock drops what the busy queues' consumers are done with and tops
// each busy queue up to n messages ahead of its consumer.
func (f *queuesFixture) stock(n int64) error {
	for _, q := range f.busy {
		c := max(f.consumed(q), 0)
		if c > 0 {
			_, _ = f.b.Truncate(Topic, q, c)
		}
		for a := f.b.MaxOffset(Topic, q) - c; a < n; a++ {
			m := model.Message{Topic: Topic, QueueID: q, BornTimestamp: f.now.Millis()}
			if r := f.b.Put(f.now, &m); r.Code != model.Success {
				return fmt.Errorf("bench: put on %s/%d: %v %s", Topic, q, r.Code, r.Remark)
			}
		}
	}
	return nil
}

func (f *queuesFixture) round() error {
	res := &f.res
	f.b.Pop(f.now, &f.req, res)
	if len(res.Messages) != Batch {
		return fmt.Errorf("bench: pop returned %d messages (%v %s), want %d", len(res.Messages), res.Status, res.Remark, Batch)
	}
	for i := range res.Messages {
		p := &res.Messages[i]
		ack := pop.NewAckRequest(Group, p.Message.Topic, &p.Handle)
		if r := f.b.Ack(f.now, &ack); r.Code != model.Success || r.Removed == 0 && r.Pending == 0 {
			return fmt.Errorf("bench: ack %s: %v %s removed=%d pending=%d", p.Handle.String(), r.Code, r.Remark, r.Removed, r.Pending)
		}
	}
	f.tick()
	return nil
}

// PopAckQueues measures one all-queue pop of 32 messages and its 32 single
// acks, per message, on a topic of p.Queues queues of which only four
// hold messages (and 1000 other records are in flight): the others are
// empty and caught up. Its cost should not
// depend on p.Queues. The checkpoint path's round includes the periodic
// work that falls due (CheckpointTick).
func PopAckQueues(b *testing.B, p QueuesParams) {
	f, err := newQueuesFixture(p)
	if err != nil {
		fatalf(b, "%v", err)
	}
	ahead := int64(refillRounds * Batch / busyQueues * 2)
	if err := f.stock(ahead); err != nil {
		fatalf(b, "%v", err)
	}
	p.Latency.setRound(Batch)
	m := startMeter(b)
	for i := 1; b.Loop(); i++ {
		t0, s := p.Latency.begin()
		if err := f.round(); err != nil {
			fatalf(b, "%v", err)
		}
		p.Latency.end(t0, s)
		if i%refillRounds == 0 {
			m.pause()
			if err := f.stock(ahead); err != nil {
				fatalf(b, "%v", err)
			}
			m.resume()
		}
	}
	m.report(Batch)
}

// queueCases are PopAckQueues' cases: each path at every count in
// QueueCounts, each paired with the smallest count on its path.
func queueCases() []Case {
	var out []Case
	for _, kv := range []bool{true, false} {
		path := map[bool]string{true: "kv", false: "fs"}[kv]
		sub := func(n int) string {
			return "inflight=" + SizeLabel(queuesInFlight) + "/queues=" + strconv.Itoa(n) + "/path=" + path
		}
		base := "PopAckQueues/" + sub(QueueCounts[0])
		for _, n := range QueueCounts {
			p := QueuesParams{Queues: n, KV: kv}
			c := Case{Op: "PopAckQueues", Sub: sub(n), Size: queuesInFlight, PerOp: Batch, Base: base,
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; PopAckQueues(b, q) }}
			if c.Name() == base {
				c.Base = ""
			}
			out = append(out, c)
		}
	}
	return out
}
