package ref

import (
	"popsim/model"
	"popsim/pop"
)

// window is the fixed commit offset's bookkeeping for one queue (pop/doc.go,
// apache/rocketmq#10949): the offsets [start, end) handed out since the
// window (re)started, and owed, those popped and not yet acked or revived.
// start is always the smallest owed offset, or end when nothing is owed;
// the commit offset is start.
type window struct {
	start, end int64
	owed       map[int64]bool
}

// settle moves start to the smallest owed offset, or end.
func (w *window) settle() {
	w.start = w.end
	for o := range w.owed { // min: order does not matter
		if o < w.start {
			w.start = o
		}
	}
}

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
// pending reset wins and clears the queue's cache (records overwritten in
// the store go to p.replaced) and window.
func (b *Broker) popOffset(k qk, q *queue, initMode int32, p *popping) int64 {
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
		delete(b.windows, k)
		b.commit[k] = v
		return v
	}
	return o
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

// handedOut records a stage: offsets [from, to) were read and popped were
// returned. A from outside [start, end] restarts the window.
func (b *Broker) handedOut(k qk, from, to int64, popped []int64) {
	w := b.windows[k]
	if w == nil || from < w.start || from > w.end {
		w = &window{start: from, end: from, owed: map[int64]bool{}}
		b.windows[k] = w
	}
	w.end = max(w.end, to)
	for _, o := range popped {
		if o >= w.start && o < w.end {
			w.owed[o] = true
		}
	}
	w.settle()
	b.commit[k] = w.start
}

// settled marks offset o acked, revived or dropped; the commit offset moves
// when the window's start does. With the #10949 bug nothing happens.
func (b *Broker) settled(k qk, o int64) {
	w := b.windows[k]
	if b.cfg.Bugs.CommitOffsetLag || w == nil || o < w.start || o >= w.end {
		return
	}
	delete(w.owed, o)
	old := w.start
	w.settle()
	if w.start != old {
		b.commit[k] = w.start
	}
}
