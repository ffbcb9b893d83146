package bench

import (
	"fmt"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// Shape of the benchmark world.
const (
	Topic  = "bench-topic"
	Group  = "bench-group"
	Queues = 4  // read and write queues of Topic
	Batch  = 32 // MaxMsgNums, and messages per round

	hotInvisible  = 60 * clock.Second // invisible time of measured pops
	longInvisible = 24 * clock.Hour   // one day: the held records never expire
	roundMs       = 1                 // virtual time per round
)

// fixture is a broker with one topic and one group, plus the client-side
// state a benchmark needs.
type fixture struct {
	b   *pop.Broker
	now clock.Time
	req pop.PopRequest
	res pop.PopResult // the pop result buffer every pop reuses
	// acks and bres are the batch ack's request entries and result,
	// reused by every round (PopAck32Batch).
	acks []pop.BatchAck
	bres pop.BatchAckResult
	buf  []byte // receipt-handle text, reused
	// prefixOf is the handle (queue offset zeroed) whose text up to
	// buf[:prefix] is in buf, when prefixOK.
	prefixOf model.ReceiptHandle
	prefix   int
	prefixOK bool
}

func newFixture(cache bool) (*fixture, error) {
	cfg := pop.KVConfig()
	cfg.EnablePopBufferMerge = cache
	b, err := pop.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := b.CreateTopic(pop.TopicConfig{Name: Topic, ReadQueueNums: Queues, WriteQueueNums: Queues}); err != nil {
		return nil, err
	}
	if err := b.CreateGroup(pop.DefaultGroup(Group)); err != nil {
		return nil, err
	}
	f := &fixture{b: b, now: clock.Epoch}
	f.req = pop.PopRequest{ConsumerGroup: Group, Topic: Topic, QueueID: -1, MaxMsgNums: Batch, InvisibleTime: hotInvisible}
	return f, nil
}

func (f *fixture) nowMs() int64 { return f.now.Millis() }

func (f *fixture) tick() { f.now = f.now.Add(roundMs * clock.Millisecond) }

// put stores n new messages on queue q, allocated in one slab.
func (f *fixture) put(topic string, q int32, n int) error {
	slab := make([]model.Message, n)
	for i := range slab {
		slab[i] = model.Message{Topic: topic, QueueID: q, BornTimestamp: f.nowMs()}
		if r := f.b.Put(f.now, &slab[i]); r.Code != model.Success {
			return fmt.Errorf("bench: put on %s/%d: %v %s", topic, q, r.Code, r.Remark)
		}
	}
	return nil
}

// available is how many messages queue q holds beyond the group's pull
// (else commit) offset.
func (f *fixture) available(q int32) int64 {
	off := f.b.ConsumerOffsets(Group, Topic, q)
	o := off.Pull
	if o < 0 {
		o = max(off.Commit, 0)
	}
	return f.b.MaxOffset(Topic, q) - o
}

// stock tops every queue up to at least n messages ahead of the consumer.
func (f *fixture) stock(n int64) error {
	for q := int32(0); q < Queues; q++ {
		if a := f.available(q); a < n {
			if err := f.put(Topic, q, int(n-a)); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropConsumed truncates every queue below its pull offset, so consumed
// messages are garbage (retention); held records keep their keys.
func (f *fixture) dropConsumed() {
	for q := int32(0); q < Queues; q++ {
		if o := f.b.ConsumerOffsets(Group, Topic, q).Pull; o > 0 {
			_, _ = f.b.Truncate(Topic, q, o)
		}
	}
}

// held is a record a benchmark keeps in flight: enough to rebuild its handle.
type held struct {
	popTime, invisible int64
	offset             int64
	qid                int32
}

// hold puts n messages and pops them with a one-day invisible time, so n
// records stay in flight. With the cache on they are then moved to the
// store, as CleanupCache does once they are popCkStayBufferTime old.
func (f *fixture) hold(n int, keep bool) ([]held, error) {
	var out []held
	if keep {
		out = make([]held, 0, n)
	}
	if err := f.stock(int64((n + Queues - 1) / Queues)); err != nil {
		return nil, err
	}
	req := f.req
	req.InvisibleTime = longInvisible
	res := &f.res
	for got := 0; got < n; {
		req.MaxMsgNums = int32(min(Batch, n-got))
		f.b.Pop(f.now, &req, res)
		if res.Status != pop.PopFound {
			return nil, fmt.Errorf("bench: holding %d records: pop %d: %v %s", n, got, res.Status, res.Remark)
		}
		for i := range res.Messages {
			if h := &res.Messages[i].Handle; keep {
				out = append(out, held{popTime: h.PopTime, invisible: h.InvisibleTime, offset: h.QueueOffset, qid: h.QueueID})
			}
		}
		got += len(res.Messages)
		f.tick()
	}
	if f.b.Config().EnablePopBufferMerge {
		f.now = f.now.Add(clock.MillisDuration(f.b.Config().PopCkStayBufferTime))
		f.b.CleanupCache(f.now)
	}
	if c := f.b.InFlightCount(); c != n {
		return nil, fmt.Errorf("bench: holding %d records: %d in flight", n, c)
	}
	return out, nil
}

// steadyFixture is the common set-up of the engine benchmarks: a broker
// with p.InFlight records held in flight (never acked) and the messages
// they came from dropped from the fixture's bookkeeping.
func steadyFixture(b *testing.B, p Params) *fixture {
	f, err := newFixture(p.Cache)
	if err != nil {
		fatalf(b, "%v", err)
	}
	if _, err := f.hold(p.InFlight, false); err != nil {
		fatalf(b, "%v", err)
	}
	f.dropConsumed()
	return f
}
