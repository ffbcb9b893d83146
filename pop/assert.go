package pop

import (
	"fmt"
	"reflect"

	"popsim/clock"
	"popsim/model"
)

// Cheap rules the broker asserts under the invariants build tag; each call
// site is guarded by the constant invariants, so none of this runs (or
// even evaluates its arguments) in a normal build.

// assertf panics with the rule when cond is false.
func assertf(cond bool, format string, args ...any) {
	if !cond {
		panic("pop: invariant: " + fmt.Sprintf(format, args...))
	}
}

// assertPopResult: a found pop's messages each carry a fresh lease, newer
// than every lease granted before the call, in grant order, the
// deadline its handle names and the real topic its handle and shown topic
// name (getRealTopic) for the request's group; its stages read all its
// messages, each of which a stage read has its stage's retry flag, queue
// and start offset in its handle (the offset-info headers say what the
// handles do).
func (b *Broker) assertPopResult(res *PopResult, before model.LeaseID, group string) {
	last := before
	stage, left := -1, int32(0)
	for i := range res.Messages {
		m := &res.Messages[i]
		real := m.Message.Topic // getRealTopic; a leaked retry topic name is its own
		if !model.IsRetryTopic(real) {
			real = m.Handle.RealTopic(real, group)
		}
		assertf(m.RealTopic == real, "pop result message %d: real topic %q, its handle and shown topic %q say %q", i, m.RealTopic, m.Message.Topic, real)
		assertf(m.Lease > last && m.Lease <= b.lease.last, "pop result message %d has lease %d, want one granted by this pop (after %d, up to %d)", i, m.Lease, last, b.lease.last)
		assertf(m.Deadline == clock.FromMillis(m.Handle.NextVisibleTime()), "pop result message %d: deadline %v but its handle says %d ms", i, m.Deadline, m.Handle.NextVisibleTime())
		for left == 0 && stage+1 < len(res.Stages) {
			stage++
			left = res.Stages[stage].Count
		}
		assertf(left > 0, "pop result message %d read by no stage of %+v", i, res.Stages)
		s := &res.Stages[stage]
		assertf(m.Handle.RetryFlag == s.RetryFlag && m.Handle.QueueID == s.QueueID && m.Handle.CkQueueOffset == s.StartOffset,
			"pop result message %d: handle %+v, read by stage %+v", i, m.Handle, *s)
		left--
		last = m.Lease
	}
	assertf(left == 0 && stage == len(res.Stages)-1, "pop result stages %+v read more than its %d messages", res.Stages, len(res.Messages))
}

// assertWrite: a stored message lands at the end of its queue.
func assertWrite(q *queue, m *model.Message) {
	assertf(m.QueueOffset == q.maxOffset()-1, "message stored at offset %d of a queue ending at %d", m.QueueOffset, q.maxOffset())
}

// assertReplaced: a record a write overwrote is older than the one that
// overwrote it.
func assertReplaced(replaced, by model.LeaseID) {
	assertf(replaced == 0 || replaced < by, "lease %d overwritten by the older lease %d", replaced, by)
}

// assertCacheSize: the cache never counts fewer than zero records.
func (c *cache) assertSize() {
	assertf(c.size >= 0, "cache size %d", c.size)
}

// assertPrefill: the body the engine kept for its own revive message is
// the one decoding the stored message gives.
func assertPrefill(kept, decoded *reviveBody) {
	k := *kept
	k.bound, k.unbuilt = false, false        // the engine's link to its ref and its build state, no decoding's
	k.kind, k.rq, k.seq, k.born = 0, 0, 0, 0 // the timer's, no decoding's
	if k.skip {
		k = reviveBody{skip: true, deliver: k.deliver} // what fill alone needs of a skipped CK
	}
	dh := *decoded
	if k.part == ackOfCkPart {
		k.part = ackPart // the ack's fields are where the engine had them (ackBody.msg)
	}
	same := k.part == dh.part
	if same && k.part == ckPart {
		kc, dc := kept.c(), decoded.c()
		same = reflect.DeepEqual(kc.ck, dc.ck) && kc.lease == dc.lease
	}
	if same && k.part == ackPart {
		ka, da := kept.a(), decoded.a()
		same = ka.msg() == da.msg() && ka.off == da.off && (ka.list == nil) == (da.list == nil) && reflect.DeepEqual(ka.offs(), da.offs())
	}
	if same && (k.mk == nil) == (dh.mk == nil) && k.mk != nil {
		same = *k.mk == *dh.mk // the key, held where keyOf found it
		k.mk, dh.mk = nil, nil
	}
	assertf(same && k == dh, "revive message body kept as %+v, decodes as %+v", *kept, *decoded)
}
