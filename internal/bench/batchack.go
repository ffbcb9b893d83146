package bench

import (
	"fmt"
	"testing"

	"popsim/model"
	"popsim/pop"
)

// PopAck32Batch measures PopAck32's round with its 32 acks sent as one
// BATCH_ACK_MESSAGE (request code 200151, Broker.BatchAckMessages) instead
// of 32 ACK_MESSAGEs: one entry per queue the batch came from, a bit per
// acked offset, as a client that acks a whole pop batch at once sends it.
func PopAck32Batch(b *testing.B, p Params) {
	popAckLoop(b, p, (*fixture).batchAck)
}

// batchAck acks every message of res with one batch ack. Its entries and
// their bitmaps reuse the fixture's storage, so a round allocates nothing
// the engine does not.
func (f *fixture) batchAck(res *pop.PopResult) error {
	f.acks = f.acks[:0]
	for i := range res.Messages {
		h := &res.Messages[i].Handle
		a := f.batchEntry(res.Messages[i].Message.Topic, h)
		a.SetBit(int(h.QueueOffset - h.CkQueueOffset))
	}
	f.b.BatchAckMessages(f.now, f.acks, &f.bres)
	if r := &f.bres; r.Code != model.Success || r.Deleted != len(res.Messages) {
		return fmt.Errorf("bench: batch ack of %d messages in %d entries: %v %s deleted=%d skipped=%d",
			len(res.Messages), len(f.acks), r.Code, r.Remark, r.Deleted, r.Skipped)
	}
	return nil
}

// batchEntry is the entry of f.acks that h's message belongs to (same
// queue, start offset, pop time, invisible time, revive queue and retry
// flag), appended with cleared bits when there is none yet.
func (f *fixture) batchEntry(topic string, h *model.ReceiptHandle) *pop.BatchAck {
	for i := range f.acks {
		a := &f.acks[i]
		if a.QueueID == h.QueueID && a.StartOffset == h.CkQueueOffset && a.PopTime == h.PopTime &&
			a.InvisibleTime == h.InvisibleTime && a.ReviveQueueID == h.ReviveQueueID && a.RetryFlag == h.RetryFlag {
			return a
		}
	}
	n := len(f.acks)
	if n < cap(f.acks) {
		f.acks = f.acks[:n+1]
	} else {
		f.acks = append(f.acks, pop.BatchAck{})
	}
	a := &f.acks[n]
	bits := a.Bits[:0]
	*a = pop.BatchAck{ConsumerGroup: Group, Topic: topic, RetryFlag: h.RetryFlag, StartOffset: h.CkQueueOffset,
		QueueID: h.QueueID, ReviveQueueID: h.ReviveQueueID, PopTime: h.PopTime, InvisibleTime: h.InvisibleTime, Bits: bits}
	return a
}
