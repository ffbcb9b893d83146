package sim

import (
	"popsim/clock"
	"popsim/model"
)

// Orderly (FIFO) consumption, shared by the POP clients of a group with
// consumeMessageOrderly: each queue's messages are consumed one at a time,
// in offset order (the rest of a response's messages of the queue wait in
// the client), and a message that fails ends the rest of its queue's batch
// (the client lets them go unconsumed; the broker hands them out again, in
// order, once the queue unblocks).

// orderQueueRef names a queue a client consumes.
type orderQueueRef struct {
	topic  string
	broker int32
	queue  int32
}

// orderly is a client's per-queue sequencing of an orderly group.
type orderly struct {
	// busy: a message of the queue is with the consume threads; pending
	// are the ones waiting behind it, in offset order.
	busy    map[orderQueueRef]bool
	pending map[orderQueueRef][]*popHeld
	waiting int // messages in pending, over all queues
}

func newOrderly() *orderly {
	return &orderly{busy: map[orderQueueRef]bool{}, pending: map[orderQueueRef][]*popHeld{}}
}

func refOf(h *popHeld) orderQueueRef { return orderQueueRef{h.topic, h.broker, h.queue} }

// take hands a response's message to the consume threads when its queue
// has none there, else queues it behind.
func (o *orderly) take(c *consumer, h *popHeld) {
	q := refOf(h)
	if !o.busy[q] {
		o.busy[q] = true
		c.buf = append(c.buf, h)
		return
	}
	o.pending[q] = append(o.pending[q], h)
	o.waiting++
}

// next hands the queue's next waiting message to the threads after h
// finished; false when none waits.
func (o *orderly) next(c *consumer, h *popHeld) bool {
	q := refOf(h)
	ps := o.pending[q]
	if len(ps) == 0 {
		delete(o.busy, q)
		delete(o.pending, q)
		return false
	}
	n := ps[0]
	ps[0] = nil
	o.pending[q] = ps[1:]
	o.waiting--
	c.buf = append(c.buf, n)
	return true
}

// rest takes the messages waiting behind h: h failed, and the queue's
// batch ends with it.
func (o *orderly) rest(h *popHeld) []*popHeld {
	q := refOf(h)
	ps := o.pending[q]
	delete(o.pending, q)
	delete(o.busy, q)
	o.waiting -= len(ps)
	return ps
}

func (o *orderly) clear() {
	clear(o.busy)
	clear(o.pending)
	o.waiting = 0
}

// skip lets h go unconsumed because an earlier message of its queue failed
// (or expired): traced, and the client is done with it.
func (s *sim) skip(h *popHeld) {
	h.finished = true
	s.emitHeld(model.EvExpiredLocal, &h.held, model.RSkipped)
}

// orderSlack is how late after the latest deadline of its live leases an
// orderly queue may unblock (the checker's fifo-stall): the lock-free
// timer's tick and the driver's cadence, with room to spare.
const orderSlack = clock.Second
