package sim

import "math"

// Receipt handles a client may still renew with, for the release of
// consumed messages (pop.Broker.ReleaseConsumed).
//
// On the KV path a changeInvisibleTime writes its new record at its
// handle's offset even when the old record is gone (acked, or revived
// while the renewal was on its way, or a stale handle's), and that record's
// revive reads the message there. So a run whose consumers renew may free
// a message only below the lowest offset such a request can still carry:
// the floor of its pins. A pin is taken where a handle starts a life in
// which it may be sent in a renewal, and dropped where that life ends:
//
//   - a held message (popHeld.pin), from its delivery until its client
//     is done with it (a RECONSUME_LATER renewal is sent before that, and
//     the proxy's auto-renewal of it ends there: simpleConsumer.done);
//   - an injected renewal's task (renewFault.pin), which may keep a
//     delivery's handle past the end of its held message;
//   - a renewal on its way (changeReq.pin), from its making until the
//     engine serves it or it is dropped before reaching it.
//
// The first two die with their client's incarnation: its lists, its
// proxy's registrations and its tasks die with it, and a request it sent
// reaches the engine only while it lives (atEngine). A pin whose consumer
// has moved to another epoch counts for nothing and is dropped at the
// next floor. A pin that is never dropped only holds memory back; a
// handle sent without a pin would be a bug, which the invariants build
// catches (pop's CheckInvariants: no in-flight record on a released
// message).

// pin is one handle's place: a message of topic on a broker's queue.
type pin struct {
	slot   *int32 // the owner's index into pins.ps, plus one
	topic  string // where the message lives (its real topic)
	broker int32
	queue  int32
	offset int64
	// c, epoch: the consumer incarnation that holds it (nil for a renewal
	// on its way, which outlives its sender until the engine has it).
	c     *consumer
	epoch uint32
	what  pinOwner
}

// pinOwner is what holds a pin (in test failures).
type pinOwner uint8

const (
	pinHeld    pinOwner = iota // a held message
	pinFault                   // an injected renewal's task
	pinRequest                 // a renewal on its way
)

// pins is the run's live pins, in no order that matters: a floor is a
// minimum.
type pins struct {
	ps []pin
}

// add pins a handle for owner slot, which holds none (its owner is new,
// or dropped its pin before it was reused).
func (p *pins) add(slot *int32, x pin) {
	if p == nil {
		return
	}
	x.slot = slot
	p.ps = append(p.ps, x)
	*slot = int32(len(p.ps))
}

// drop unpins slot's handle, if it has one.
func (p *pins) drop(slot *int32) {
	if p == nil || *slot == 0 {
		return
	}
	i, n := int(*slot-1), len(p.ps)-1
	if i != n {
		p.ps[i] = p.ps[n]
		*p.ps[i].slot = int32(i + 1)
	}
	p.ps[n] = pin{}
	p.ps = p.ps[:n]
	*slot = 0
}

// floor writes into dst, by queue id, the lowest offset a live pin names
// on each queue of topic on broker (math.MaxInt64 for none; queues past
// its end have none), and returns it. It drops the pins of dead
// incarnations on the way.
func (p *pins) floor(broker int32, topic string, dst []int64) []int64 {
	dst = dst[:0]
	for i := 0; i < len(p.ps); {
		x := &p.ps[i]
		if x.c != nil && x.c.epoch != x.epoch {
			p.drop(x.slot) // moves the last pin to i
			continue
		}
		if x.broker == broker && x.topic == topic && x.queue >= 0 {
			for int(x.queue) >= len(dst) {
				dst = append(dst, math.MaxInt64)
			}
			dst[x.queue] = min(dst[x.queue], x.offset)
		}
		i++
	}
	return dst
}

// handlePin is h's pin for its client's incarnation, held by what: the
// message's place.
func (h *held) handlePin(what pinOwner) pin {
	return pin{topic: h.topic, broker: h.broker, queue: h.queue, offset: h.offset, c: h.c, epoch: h.epoch, what: what}
}
