package check

import (
	"sort"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// Hand-made traces. Times are milliseconds after clock.Epoch.
const (
	group = "g"
	topic = "orders"
)

var retryTopic = model.RetryTopicV2(group, topic)

func at(ms int64) clock.Time { return clock.Epoch.Add(clock.MillisDuration(ms)) }
func abs(ms int64) int64     { return clock.Epoch.Millis() + ms }

// handle is the receipt handle of a pop at popMs for invisible ms.
func handle(popMs, invisible int64, realTopic string, q int32, off int64) string {
	h := model.ReceiptHandle{CkQueueOffset: off, PopTime: abs(popMs), InvisibleTime: invisible, RetryFlag: model.RetryFlagOf(realTopic),
		BrokerName: "broker-a", QueueID: q, QueueOffset: off, CommitLogOffset: -1}
	return h.String()
}

type trace struct{ evs []model.Event }

func (t *trace) add(ms int64, e model.Event) {
	e.Seq, e.At = int64(len(t.evs)), at(ms)
	t.evs = append(t.evs, e)
}

func (t *trace) produce(ms int64, msg string, q int32, off int64) {
	t.add(ms, model.Event{Kind: model.EvProduce, Client: -1, Msg: msg, Topic: topic, Queue: q, Offset: off})
}

// deliver hands msg, living at realTopic/q@off, to client, shown as topic.
func (t *trace) deliver(ms int64, client int32, msg, realTopic string, q int32, off, invisible int64) string {
	return t.deliverShown(ms, client, msg, realTopic, q, off, invisible, "topic="+topic)
}

func (t *trace) deliverShown(ms int64, client int32, msg, realTopic string, q int32, off, invisible int64, detail string) string {
	h := handle(ms, invisible, realTopic, q, off)
	t.add(ms, model.Event{Kind: model.EvDeliver, Client: client, Msg: msg, Topic: realTopic, Queue: q, Offset: off, Handle: h, Deadline: abs(ms + invisible), Detail: detail})
	return h
}

func (t *trace) consume(startMs, endMs int64, client int32, msg, outcome string) {
	t.add(startMs, model.Event{Kind: model.EvConsumeStart, Client: client, Msg: msg, Queue: -1, Offset: -1})
	t.add(endMs, model.Event{Kind: model.EvConsumeEnd, Client: client, Msg: msg, Queue: -1, Offset: -1, Detail: outcome})
}

// ack sends an ack with h; the broker accepts it, deleting n records.
func (t *trace) ack(ms int64, client int32, msg, h string, n int64) {
	t.add(ms, model.Event{Kind: model.EvAckSent, Client: client, Msg: msg, Handle: h, Queue: -1, Offset: -1})
	t.add(ms, model.Event{Kind: model.EvAckAccepted, Client: client, Msg: msg, Handle: h, Queue: -1, Offset: -1, Code: model.Success, N: n})
}

func (t *trace) ackLost(ms int64, client int32, msg, h string) {
	t.add(ms, model.Event{Kind: model.EvAckSent, Client: client, Msg: msg, Handle: h, Queue: -1, Offset: -1})
	t.add(ms, model.Event{Kind: model.EvAckLost, Client: client, Msg: msg, Handle: h, Queue: -1, Offset: -1})
}

// change renews old for invisible ms at ms; the broker deletes n records.
// It returns the new handle.
func (t *trace) change(ms int64, client int32, msg, old string, invisible, n int64) string {
	o, err := model.ParseReceiptHandle(old)
	if err != nil {
		panic(err)
	}
	nh := o
	nh.CkQueueOffset, nh.PopTime, nh.InvisibleTime = o.QueueOffset, abs(ms), invisible
	t.add(ms, model.Event{Kind: model.EvChangeSent, Client: client, Msg: msg, Handle: old, Deadline: invisible, Queue: -1, Offset: -1})
	t.add(ms, model.Event{Kind: model.EvChangeAccepted, Client: client, Msg: msg, Handle: nh.String(), Deadline: nh.NextVisibleTime(), Queue: -1, Offset: -1, N: n})
	return nh.String()
}

func (t *trace) revive(ms int64, msg string, off int64, attempt int32) {
	t.add(ms, model.Event{Kind: model.EvRevive, Client: -1, Msg: msg, Topic: retryTopic, Queue: 0, Offset: off, Attempt: attempt})
}

func (t *trace) simple(ms int64, kind model.EventKind, client int32, msg, detail string) {
	t.add(ms, model.Event{Kind: kind, Client: client, Msg: msg, Queue: -1, Offset: -1, Detail: detail})
}

func (t *trace) popSuspended(ms int64, client int32) {
	t.add(ms, model.Event{Kind: model.EvPopRequest, Client: client, Topic: topic, Queue: -1, N: 32, Deadline: 60000})
	t.add(ms, model.Event{Kind: model.EvPopSuspended, Client: client, Topic: topic, Queue: -1})
}

func (t *trace) popResponse(ms int64, client int32, code model.ResponseCode, n int64) {
	t.add(ms, model.Event{Kind: model.EvPopResponse, Client: client, Topic: topic, Queue: -1, Code: code, N: n})
}

// run feeds the trace to a fresh Checker and checks the ledger balances.
func run(t *testing.T, tr *trace, f Final) (Report, *Checker) {
	t.Helper()
	c := New(Options{Seed: 42, Replay: "popsim run --seed 42"})
	for i := range tr.evs {
		c.Observe(&tr.evs[i])
	}
	r := c.Finish(f)
	if r.Produced != r.Acked+r.DLQ+r.Dropped+r.Lost {
		t.Errorf("ledger does not balance: produced %d != acked %d + dlq %d + dropped %d + lost %d", r.Produced, r.Acked, r.DLQ, r.Dropped, r.Lost)
	}
	return r, c
}

// invariants is the sorted set of invariant names in r.
func invariants(r Report) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range r.Violations {
		if !seen[v.Invariant] {
			seen[v.Invariant] = true
			out = append(out, v.Invariant)
		}
	}
	sort.Strings(out)
	return out
}

var drained = Final{Drained: true}
