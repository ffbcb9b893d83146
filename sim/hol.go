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
type holMeter struct {
	orderly []string // topics an orderly group consumes
	queues  map[holKey]*holQueue
	qlist   []*holQueue             // queues in the order they were first seen
	msgs    map[model.MsgID]*holMsg // open messages of orderly queues
	now     clock.Time              // the latest event's time
	lengths *hdrhistogram.Histogram // episode lengths, µs
	total   clock.Duration
	backlog int64
}

type holKey struct {
	topic string
	queue int32
}

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
		lengths: hdrhistogram.New(histMin, histMax, histSigFig)}
}

// observe follows one trace event.
func (h *holMeter) observe(e *model.Event) {
	h.now = e.At
	switch e.Kind {
	case model.EvSubscribe:
		if e.Reason == model.ROrderly && !h.isOrderly(e.Topic) {
			h.orderly = append(h.orderly, e.Topic)
		}
	case model.EvProduce:
		if h.isOrderly(e.Topic) {
			h.produced(e)
		}
	case model.EvConsumeEnd:
		if e.Reason != model.RSuccess {
			h.fail(e.Msg)
		} else if m := h.msgs[e.Msg]; m != nil && !m.ok {
			m.ok = true
			m.q.ok = append(m.q.ok, m)
		}
	case model.EvExpiredLocal, model.EvLapse:
		h.fail(e.Msg)
	}
}

func (h *holMeter) isOrderly(topic string) bool {
	for _, t := range h.orderly {
		if t == topic {
			return true
		}
	}
	return false
}

func (h *holMeter) produced(e *model.Event) {
	k := holKey{e.Topic, e.Queue}
	q := h.queues[k]
	if q == nil {
		q = &holQueue{}
		h.queues[k] = q
		h.qlist = append(h.qlist, q)
	}
	q.open++
	h.msgs[e.Msg] = &holMsg{q: q, id: e.Msg, offset: e.Offset}
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
	record(h.lengths, int64(clampUs(d)))
}

// passed returns, in id order, the open messages of an orderly queue that
// were consumed successfully and that the engine's commit offset e
// (commit c=-1) has passed. RocketMQ's commitAndNext commits ackOffset+1
// when a restart lost the queue's OrderInfo, so an ack of a later offset
// can pass a message whose own ack was lost: nothing will redeliver it,
// and it was consumed (an orderly client acks a later offset only after
// the earlier ones), so it is settled.
func (h *holMeter) passed(e *model.Event) []model.MsgID {
	if e.Client >= 0 || !h.isOrderly(e.Topic) {
		return nil
	}
	q := h.queues[holKey{e.Topic, e.Queue}]
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
