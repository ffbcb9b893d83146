package check

import "popsim/model"

// onConsume follows the business logic: EvConsumeStart, EvConsumeEnd
// (Detail success, later or exception) and EvExpiredLocal (Detail before:
// not consumed; after: consumed, not acked). A client consumes its
// deliveries of one message in the order it got them.
func (c *Checker) onConsume(e *model.Event) {
	m := c.touch(e, false)
	if m == nil || m.phantom {
		return
	}
	switch e.Kind {
	case model.EvConsumeStart:
		if di := c.consumer(e, m, consumePending); di >= 0 {
			m.dels[di].state = consumeStarted
		}
	case model.EvConsumeEnd:
		if di := c.consumer(e, m, consumeStarted, consumePending); di >= 0 {
			c.consumed(m, di, e.Detail == "success")
		}
	case model.EvExpiredLocal:
		c.expiredLocal(e, m)
	}
	c.maybeForget(m, e.At.Millis())
}

// consumer finds the delivery a consumer-side event is about: by its
// handle when it carries one (the location it names, latest delivery to
// the client there), else the client's earliest delivery in one of states.
func (c *Checker) consumer(e *model.Event, m *msgState, states ...consumeState) int32 {
	if e.Handle != "" {
		if h, err := model.ParseReceiptHandle(e.Handle); err == nil {
			if li := m.findLoc(h.RetryFlag, h.QueueID, h.QueueOffset); li >= 0 {
				return m.leaseOf(e.Client, li, h.NextVisibleTime())
			}
		}
	}
	if e.Topic != "" { // a pull delivery: where the message lives
		if li := m.findLoc(model.RetryFlagOf(e.Topic), e.Queue, e.Offset); li >= 0 {
			return m.latestDelivery(e.Client, li)
		}
	}
	return m.earliestOpen(e.Client, states...)
}

// expiredLocal: before = the client gave the lease up unconsumed; after,
// ack, change, renew = it did not send the ack or renew because it judged
// the lease expired.
func (c *Checker) expiredLocal(e *model.Event, m *msgState) {
	di := c.consumer(e, m, consumePending, consumeStarted, consumeOK, consumeFailed)
	if di < 0 {
		return
	}
	d := &m.dels[di]
	if e.Detail == "before" && (d.state == consumePending || d.state == consumeStarted) {
		d.state = consumeAborted
	}
	if d.expiredAt == 0 {
		d.expiredAt = e.At.Millis()
	}
}

// consumed records an outcome. Every successful consumption but the one of
// the earliest such delivery is a duplicate. It is blamed on the fork when
// the two deliveries are on different lines (an extra line exists only
// because of its cause), else on the later delivery's story (its dupCause:
// reconsume_later passes on what brought the message back).
func (c *Checker) consumed(m *msgState, di int32, ok bool) {
	d := &m.dels[di]
	if !ok {
		d.state = consumeFailed
		return
	}
	d.state = consumeOK
	if d.pull {
		c.settle(m, settledAck, "") // a Pull consumer's success is its ack
	}
	var cause string
	switch {
	case m.okFirst == -1:
		m.okFirst = di
		return
	case m.okFirst == -2: // the first success was forgotten with the tombstone
		cause = firstOf(d.lineage, d.dupCause)
	default:
		early, late := &m.dels[m.okFirst], d
		if di < m.okFirst {
			early, late, m.okFirst = d, early, di
		}
		cause = firstOf(late.dupCause, early.dupCause) // a pop seen late has no cause of its own
		if early.lineage != late.lineage {
			cause = firstOf(late.lineage, early.lineage)
		}
	}
	cause = firstOf(cause, CauseUnexplained)
	c.rep.Duplicates++
	c.rep.DuplicatesByCause[cause]++
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
