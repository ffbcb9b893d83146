package sim

import (
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
)

// holMeter measures head-of-line blocking in orderly groups from the
// trace's engine-neutral events (model.HeadOfLine): which topics an
// orderly group consumes (subscribe), where each message lives (produce),
// which of them failed (consume-end not success, expired-local, lapse) and
// when each is settled (the meter's close). A queue is blocked from its
// first failed message until no failed message of it is left unsettled.
// Each orderly group has its own queues: with several groups on a topic a
// message is the meter's unit (meter.unitAt), one per group.
type holMeter struct {
	orderly []holSub // the orderly groups and their topics
	unit    func(model.MsgID, int32) model.MsgID
	queues  map[holKey]*holQueue
	qlist   []*holQueue             // queues in the order they were first seen
	msgs    map[model.MsgID]*holMsg // open units of orderly queues
	now     clock.Time              // the latest event's time
	lengths *hdrhistogram.Histogram // episode lengths, µs; nil until the first ends (a histogram is 188 KB)
	total   clock.Duration
	backlog int64
}

type holKey struct {
	topic string
	queue int32
	pos   int32 // the group's position on the topic
}

// holSub is an orderly group's subscription.
type holSub struct{ group, topic string }

// holQueue is one orderly queue: its open (stored, unsettled) messages,
// how many of them failed, and its current episode.
type holQueue struct {
	open, failed int64
	since        clock.Time // the episode's start, when failed > 0
	episodes     int64
	// ok: its open messages consumed successfully (passed looks only at
	// these); closed ones leave at passed's next visit.
	ok []*holMsg
}

type holMsg struct {
	q      *holQueue
	id     model.MsgID
	offset int64
	// ok: consumed successfully at least once; closed: settled
	failed, ok, closed bool
}

func newHolMeter() *holMeter {
	return &holMeter{queues: map[holKey]*holQueue{}, msgs: map[model.MsgID]*holMsg{},
		unit: func(id model.MsgID, _ int32) model.MsgID { return id }}
}

// observe follows one trace event; u is the unit it is about (the
// meter's unitOf) and pos the groups' positions on their topics.
func (h *holMeter) observe(e *model.Event, u model.MsgID, pos map[string]int32) {
	h.now = e.At
	switch e.Kind {
	case model.EvSubscribe:
		if e.Reason == model.ROrderly && !h.isOrderly(e.Group, e.Topic) {
			h.orderly = append(h.orderly, holSub{e.Group, e.Topic})
		}
	case model.EvProduce:
		for _, o := range h.orderly {
			if o.topic == e.Topic {
				h.produced(e, pos[o.group])
			}
		}
	case model.EvConsumeEnd:
		if !e.Reason.Consumed() {
			h.fail(u)
		} else if m := h.msgs[u]; m != nil && !m.ok {
			m.ok = true
			m.q.ok = append(m.q.ok, m)
		}
	case model.EvExpiredLocal, model.EvLapse:
		h.fail(u)
	}
}

func (h *holMeter) isOrderly(group, topic string) bool {
	for _, o := range h.orderly {
		if o.topic == topic && o.group == group {
			return true
		}
	}
	return false
}

// produced opens the unit of e's message for the orderly group at pos.
func (h *holMeter) produced(e *model.Event, pos int32) {
	k := holKey{e.Topic, e.Queue, pos}
	q := h.queues[k]
	if q == nil {
		q = &holQueue{}
		h.queues[k] = q
		h.qlist = append(h.qlist, q)
	}
	q.open++
	u := h.unit(e.Msg, pos)
	h.msgs[u] = &holMsg{q: q, id: u, offset: e.Offset}
	if q.failed > 0 {
		h.backlog = max(h.backlog, q.open-1)
	}
}

// fail marks an open orderly message failed; its queue's episode starts
// with the first.
func (h *holMeter) fail(id model.MsgID) {
	m := h.msgs[id]
	if m == nil || m.failed {
		return
	}
	m.failed = true
	if m.q.failed++; m.q.failed == 1 {
		m.q.since = h.now
		m.q.episodes++
		h.backlog = max(h.backlog, m.q.open-1)
	}
}

// settled: message id was acked, sent to a DLQ or dropped.
func (h *holMeter) settled(id model.MsgID) {
	m := h.msgs[id]
	if m == nil {
		return
	}
	delete(h.msgs, id)
	m.closed = true
	m.q.open--
	if m.failed {
		if m.q.failed--; m.q.failed == 0 {
			h.end(m.q, h.now)
		}
	}
}

func (h *holMeter) end(q *holQueue, at clock.Time) {
	d := at.Sub(q.since)
	h.total += d
	if h.lengths == nil {
		h.lengths = newHist()
	}
	record(h.lengths, int64(clampUs(d)))
}

// passed returns, in id order, the open units of an orderly queue that
// were consumed successfully and that the engine's commit offset e
// (commit c=-1, its group's) has passed. RocketMQ's commitAndNext commits ackOffset+1
// when a restart lost the queue's OrderInfo, so an ack of a later offset
// can pass a message whose own ack was lost: nothing will redeliver it,
// and it was consumed (an orderly client acks a later offset only after
// the earlier ones), so it is settled.
func (h *holMeter) passed(e *model.Event, pos map[string]int32) []model.MsgID {
	if e.Client >= 0 || !h.isOrderly(e.Group, e.Topic) {
		return nil
	}
	q := h.queues[holKey{e.Topic, e.Queue, pos[e.Group]}]
	if q == nil {
		return nil
	}
	var ids []model.MsgID
	n := 0
	for _, m := range q.ok {
		if m.closed {
			continue // settled since: leaves the list
		}
		if m.offset < e.Offset {
			ids = append(ids, m.id)
		}
		q.ok[n] = m
		n++
	}
	clear(q.ok[n:])
	q.ok = q.ok[:n]
	slices.Sort(ids) // the callers settle them in id order
	return ids
}

// summary returns the run's head-of-line blocking, episodes still open
// ending at end; nil when no group consumes orderly.
func (h *holMeter) summary(end clock.Time) *model.HeadOfLine {
	if len(h.orderly) == 0 {
		return nil
	}
	lengths, total := h.lengths, h.total
	if lengths == nil { // no episode ended: a fresh one, which the open ones may go into
		lengths = newHist()
	}
	s := &model.HeadOfLine{MaxBacklog: h.backlog}
	for _, q := range h.qlist {
		if q.episodes > 0 {
			s.Blocked++
		}
		if q.failed > 0 {
			if lengths == h.lengths {
				lengths = hdrhistogram.Import(h.lengths.Export())
			}
			d := end.Sub(q.since)
			total += d
			record(lengths, int64(clampUs(d)))
		}
	}
	s.Queues = len(h.qlist)
	s.Episodes, s.TotalUs = latency(lengths), int64(total)
	return s
}
