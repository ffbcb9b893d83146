package ref

import (
	"popsim/model"
	"popsim/pop"
)

// queryOffset is the commit offset, or the pending reset when server-side
// reset is on; -1 when neither exists.
func (b *Broker) queryOffset(k qk) int64 {
	if v, ok := b.reset[k]; ok && b.cfg.UseServerSideResetOffset {
		return v
	}
	if v, ok := b.commit[k]; ok {
		return v
	}
	return -1
}

// popOffset is the KV getPopOffset for a non-FIFO request (docs/rocketmq/kv-path.md §5.2): the
// pull offset, else queryOffset, else the initial offset (committed); a
// pending reset wins (reset is true) and clears the queue's cache
// (records overwritten in the store go to p.replaced).
func (b *Broker) popOffset(k qk, q *queue, initMode int32, p *popping) (offset int64, reset bool) {
	o, ok := b.pull[k]
	if !ok {
		o = b.queryOffset(k)
	}
	if o < 0 {
		o = initOffset(q, k.topic, initMode, b.cfg.InitPopOffsetByCheckMsgInMem)
		b.commit[k] = o
	}
	if v, ok := b.reset[k]; ok {
		delete(b.reset, k)
		_, replaced := b.flushCached(k)
		p.replaced = append(p.replaced, replaced...)
		b.clearBlock(k)
		b.commit[k] = v
		return v, true
	}
	return o, false
}

// initOffset is getInitOffset: MIN mode and retry topics start at the
// queue's first offset; MAX mode at 0 while offset 0 is still stored (when
// initPopOffsetByCheckMsgInMem), else at the last message.
func initOffset(q *queue, topicName string, initMode int32, checkMem bool) int64 {
	if initMode == pop.InitModeMin || model.IsRetryTopic(topicName) {
		return q.min
	}
	if checkMem && q.min <= 0 && q.at(0) != nil {
		return 0
	}
	return max(q.max()-1, 0)
}

// stageCommit is a stage's commit (docs/rocketmq/kv-path.md §5.3). Fixed:
// the stage's next offset becomes the queue's pending commit (none after
// a reset), made by commitPending once the pop's records are kept. With
// the #10949 bug: the offset the stage started from (its next offset when
// it found nothing, with #9339), or the smallest cached offset while the
// queue has cached records.
func (b *Broker) stageCommit(p *popping, k qk, start, next int64, found, reset bool) {
	if b.cfg.Bugs.CommitOffsetLag {
		v := start
		if !found && b.cfg.Bugs.EmptyStageCommitsNextBegin {
			v = next
		}
		if m := b.cacheMin(k); m >= 0 && b.cfg.EnablePopBufferMerge {
			v = m
		}
		b.commit[k] = v
		return
	}
	if reset {
		delete(b.pending, k)
		return
	}
	b.pending[k] = next
	p.stages = append(p.stages, k)
}

// commitPending commits queue k's pending commit, capped at its smallest
// cached offset, never backwards.
func (b *Broker) commitPending(k qk) {
	v, ok := b.pending[k]
	if !ok {
		return
	}
	if m := b.cacheMin(k); m >= 0 && m < v && b.cfg.EnablePopBufferMerge {
		v = m
	}
	if c, ok := b.commit[k]; !ok || v > c {
		b.commit[k] = v
	}
}
