package pop

import (
	"github.com/tidwall/btree"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// PullWakeup hands a held pull back to the driver, which re-runs it with
// RerunPull (RocketMQ's executeRequestWhenWakeup).
type PullWakeup struct {
	ID uint64
	// Request is the broker's copy of the held request.
	Request PullRequest
	// Expired is true when its suspend time was up rather than a message
	// having arrived for it.
	Expired bool
}

// holdKey is PullRequestHoldService's key, topic@queueId.
type holdKey struct {
	topic string
	qid   int32
}

// pullHold is one held pull (broker.longpolling.PullRequest).
type pullHold struct {
	id       uint64
	key      holdKey
	req      PullRequest
	f        *pfilter.Filter
	from     int64 // pullFromThisOffset
	expireMs int64 // suspendTimestamp + timeoutMillis
	// dueMs is the earliest time a hold check answers it: its expiry, or
	// the time a message its filter did not match arrived (the check reads
	// the queue's end and wakes it whatever the filter).
	dueMs int64
}

// holds is PullRequestHoldService: held pulls per topic@queueId in arrival
// order (ManyPullRequest), the keys in the order they were first used, and
// every hold ordered by (dueMs, id) for NextHoldCheck. It is volatile,
// but hold ids are never reused (the counter outlives a restart).
type holds struct {
	byKey  map[holdKey][]*pullHold
	keys   []holdKey
	byDue  *btree.BTreeG[*pullHold]
	nextID uint64
}

func newHolds() *holds {
	return &holds{byKey: map[holdKey][]*pullHold{}, byDue: btree.NewBTreeGOptions(holdLess, btree.Options{NoLocks: true})}
}

func holdLess(a, b *pullHold) bool {
	if a.dueMs != b.dueMs {
		return a.dueMs < b.dueMs
	}
	return a.id < b.id
}

// hold is suspendPullRequest: req, which found nothing at its offset, waits
// for an arrival on its queue or its suspend time.
func (h *holds) hold(nowMs int64, req *PullRequest, f *pfilter.Filter) uint64 {
	h.nextID++
	k := holdKey{req.Topic, req.QueueID}
	ph := &pullHold{id: h.nextID, key: k, req: *req, f: f, from: req.QueueOffset, expireMs: nowMs + req.SuspendTimeout.Millis()}
	ph.dueMs = ph.expireMs
	set, seen := h.byKey[k]
	if !seen {
		h.keys = append(h.keys, k)
	}
	h.byKey[k] = append(set, ph)
	h.byDue.Set(ph)
	return ph.id
}

// notify is notifyMessageArriving for the key: every hold is woken when
// the queue now holds a message past its offset that matches its filter
// (any message when msg is nil: the periodic check), or when its time is
// up; the others stay, in order.
func (h *holds) notify(nowMs int64, k holdKey, newest int64, msg *model.Message, out []PullWakeup) []PullWakeup {
	set := h.byKey[k]
	if len(set) == 0 {
		return out
	}
	kept := set[:0]
	for _, ph := range set {
		arrived := newest > ph.from
		switch {
		case arrived && (msg == nil || ph.f.MatchesAll() || matchStored(ph.f, msg)):
			out = append(out, PullWakeup{ID: ph.id, Request: ph.req})
		case nowMs >= ph.expireMs:
			out = append(out, PullWakeup{ID: ph.id, Request: ph.req, Expired: true})
		default:
			if arrived && nowMs < ph.dueMs { // filtered out: the next check wakes it
				h.byDue.Delete(ph)
				ph.dueMs = nowMs
				h.byDue.Set(ph)
			}
			kept = append(kept, ph)
			continue
		}
		h.byDue.Delete(ph)
	}
	clear(set[len(kept):])
	h.byKey[k] = kept
	return out
}

// drain drops every hold (a restart), by key then arrival.
func (h *holds) drain() []PullWakeup {
	var out []PullWakeup
	for _, k := range h.keys {
		for _, ph := range h.byKey[k] {
			out = append(out, PullWakeup{ID: ph.id, Request: ph.req, Expired: true})
		}
	}
	return out
}

func (h *holds) count() int { return h.byDue.Len() }

// notifyPullArrival wakes the pulls held on the queue msg was just stored
// in (the arriving listener's PullRequestHoldService half).
// It inlines: most runs hold no pull (notifyHeld).
func (b *Broker) notifyPullArrival(nowMs int64, msg *model.Message) []PullWakeup {
	if b.holds.count() == 0 {
		return nil
	}
	return b.notifyHeld(nowMs, msg)
}

// notifyHeld is notifyPullArrival when some pull is held, kept out of
// line, where notifyPullArrival inlines it.
//
//go:noinline
func (b *Broker) notifyHeld(nowMs int64, msg *model.Message) []PullWakeup {
	return b.holds.notify(nowMs, holdKey{msg.Topic, msg.QueueID}, msg.QueueOffset+1, msg, nil)
}

// CheckHoldRequest is PullRequestHoldService's periodic scan
// (checkHoldRequest, every PullHoldCheckInterval): each held pull whose
// queue now holds a message past its offset, whatever its filter, or whose
// suspend time is up is handed back, by key (in the order keys were first
// used) then arrival. The driver re-runs each with RerunPull.
func (b *Broker) CheckHoldRequest(now clock.Time) []PullWakeup {
	b.touch(now.Millis())
	nowMs := now.Millis()
	var out []PullWakeup
	for _, k := range b.holds.keys {
		if q := b.queue(k.topic, k.qid); q != nil {
			out = b.holds.notify(nowMs, k, q.maxOffset(), nil, out)
		}
	}
	return out
}

// NextHoldCheck is the time of the first hold scan that will hand a held
// pull back: the first multiple of PullHoldCheckInterval (the scan's
// period, its phase pinned to the epoch) at or after the earliest hold's
// expiry or filtered-out arrival. A driver runs CheckHoldRequest then.
func (b *Broker) NextHoldCheck() (clock.Time, bool) {
	ph, ok := b.holds.byDue.Min()
	if !ok {
		return 0, false
	}
	const p = PullHoldCheckInterval
	return clock.FromMillis((ph.dueMs + p - 1) / p * p), true
}
