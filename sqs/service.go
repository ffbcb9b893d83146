package sqs

import (
	"fmt"
	"slices"

	"github.com/tidwall/btree"

	"popsim/clock"
	"popsim/model"
)

// Service is one region of Amazon SQS for one account: its queues, their
// messages, leases and parked long polls. It is a clockless,
// single-threaded state machine (see the package documentation).
type Service struct {
	cfg    Config
	now    clock.Time
	queues []*queue
	byName map[string]*queue
	timers *btree.BTreeG[timer]

	lastLease model.LeaseID
	lastPoll  uint64
	pollQueue map[uint64]*queue // parked poll id -> its queue

	dirty []int // queues (indexes, ascending) that may now answer a parked poll
	fx    Effects
}

// New returns an empty service. The configuration must be valid.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{
		cfg:       cfg,
		byName:    map[string]*queue{},
		timers:    btree.NewBTreeGOptions(timerLess, btreeOpts),
		pollQueue: map[uint64]*queue{},
	}, nil
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// Now returns the latest instant the service has been advanced to.
func (s *Service) Now() clock.Time { return s.now }

// ---- time ----

// advance runs everything due at or before now, in timer order: retention
// ends, visibility deadlines, delay ends and poll waits, each followed by
// answering the parked polls it made answerable. Time never moves back: a
// now before the last one is a driver bug and panics.
func (s *Service) advance(now clock.Time) {
	if now < s.now {
		panic(fmt.Sprintf("sqs: time moved backwards from %v to %v", s.now, now))
	}
	for {
		t, ok := s.timers.Min()
		if !ok || t.at > now {
			break
		}
		// A dead-letter copy whose retention already ran out is due in
		// the past: it goes at once.
		s.now = max(s.now, t.at)
		s.fire(t) // removes t
		s.serve()
	}
	s.now = now
}

// begin starts a public call at now.
func (s *Service) begin(now clock.Time) { s.advance(now) }

// end finishes a public call: answers parked polls the call made
// answerable, runs what that made due (receives with visibility timeout
// 0), and hands over the call's effects.
func (s *Service) end() Effects {
	s.serve()
	s.advance(s.now)
	fx := s.fx
	s.fx = Effects{}
	return fx
}

func (s *Service) event(e Event) {
	e.At = s.now
	s.fx.Events = append(s.fx.Events, e)
}

// fire runs one due timer at s.now; the transition it makes removes the
// timer.
func (s *Service) fire(t timer) {
	q := s.queues[t.q]
	if t.kind == tPoll {
		s.expirePoll(q, uint64(t.id))
		return
	}
	m := q.msgs[t.id]
	switch t.kind {
	case tRetention:
		e := Event{Kind: RetentionExpired, Queue: q.name, Seq: m.seq, MsgID: m.id}
		if m.state == stInFlight {
			e.Lease, e.Ended = m.lease, true
		}
		s.remove(q, m)
		q.stats.RetentionExpired++
		s.event(e)
	case tVisibility:
		s.leave(q, m)
		s.enter(q, m, stVisible)
		q.stats.Expired++
		s.event(Event{Kind: Expired, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: m.lease, Ended: true})
	case tDelay:
		s.leave(q, m)
		s.enter(q, m, stVisible)
	}
}

// NextDue returns the earliest instant at which something is due (a
// visibility deadline, a delay end, a retention end, a long poll's wait
// end), or false when nothing is pending. The driver calls Tick then, so
// that answers and events come out at the right time.
func (s *Service) NextDue() (clock.Time, bool) {
	t, ok := s.timers.Min()
	return t.at, ok
}

// Tick advances the service to now and returns what happened on the way.
func (s *Service) Tick(now clock.Time) TickResult {
	s.begin(now)
	return TickResult{Effects: s.end()}
}

// ---- queues ----

// CreateQueue creates a queue with SQS attribute names and string values
// (see ParseAttributes). A RedrivePolicy's deadLetterTargetArn must name an
// existing queue of this service of the same type (FIFO or standard).
// Creating an existing queue with the same attributes succeeds
// (Existed); with different ones it fails with QueueAlreadyExists.
func (s *Service) CreateQueue(now clock.Time, name string, attrs map[string]string) CreateQueueResult {
	s.begin(now)
	r := CreateQueueResult{}
	a, err := ParseAttributes(name, attrs)
	if err == nil {
		err = s.checkRedrive(&a)
	}
	if err == nil {
		if q := s.byName[name]; q != nil {
			if attr, same := q.attrs.diff(a); !same {
				err = newErr(QueueAlreadyExists, "A queue already exists with the same name and a different value for attribute %s", attr)
			}
			r.ARN, r.Existed = q.arn, err == nil
		} else {
			r.ARN = s.addQueue(name, a)
		}
	}
	r.Err = err
	r.Effects = s.end()
	return r
}

func (s *Service) checkRedrive(a *QueueAttributes) *Error {
	p := a.RedrivePolicy
	if p == nil {
		return nil
	}
	name, ok := queueNameFromARN(s.cfg, p.DeadLetterTargetArn)
	dlq := s.byName[name]
	bad := func(reason string) *Error {
		return newErr(InvalidParameterValue, "Value {\"deadLetterTargetArn\":%q,\"maxReceiveCount\":%d} for parameter RedrivePolicy is invalid. Reason: %s", p.DeadLetterTargetArn, p.MaxReceiveCount, reason)
	}
	switch {
	case !ok || dlq == nil:
		return bad("Dead letter target does not exist.")
	case dlq.fifo() != a.FifoQueue:
		return bad("Dead-letter queue must be same type of queue as the source.")
	}
	return nil
}

func (s *Service) addQueue(name string, a QueueAttributes) string {
	var dlq *queue
	if a.RedrivePolicy != nil {
		n, _ := queueNameFromARN(s.cfg, a.RedrivePolicy.DeadLetterTargetArn)
		dlq = s.byName[n]
	}
	q := newQueue(len(s.queues), name, s.cfg.ARN(name), a, dlq, s.cfg.Servers, s.now)
	s.queues = append(s.queues, q)
	s.byName[name] = q
	return q.arn
}

// Queues returns the queue names in creation order.
func (s *Service) Queues() []string {
	names := make([]string, len(s.queues))
	for i, q := range s.queues {
		names[i] = q.name
	}
	return names
}

// ---- parked polls ----

func (s *Service) markDirty(q *queue) {
	if len(q.polls) == 0 {
		return
	}
	i, found := slices.BinarySearch(s.dirty, q.idx)
	if !found {
		s.dirty = slices.Insert(s.dirty, i, q.idx)
	}
}

// serve answers parked polls while some can be answered: always the oldest
// poll of the lowest-numbered queue that may have something for it. A
// receive that collects nothing leaves the poll parked and the queue
// quiet until it changes again.
func (s *Service) serve() {
	for len(s.dirty) > 0 {
		q := s.queues[s.dirty[0]]
		if len(q.polls) == 0 {
			s.dirty = s.dirty[1:]
			continue
		}
		p := q.polls[0]
		msgs := s.collect(q, &p.req, p.max, p.vt, true)
		if len(msgs) == 0 {
			// Nothing for the oldest poll means nothing for any: all
			// parked polls query every server. The queue is quiet until
			// it changes again (collect may have dirtied it by moving
			// messages to its dead-letter queue).
			if i, found := slices.BinarySearch(s.dirty, q.idx); found {
				s.dirty = slices.Delete(s.dirty, i, i+1)
			}
			continue
		}
		s.unpark(q, p)
		s.recordAttempt(q, p.req.ReceiveRequestAttemptID, msgs)
		q.stats.LongPollAnswers++
		s.fx.Answers = append(s.fx.Answers, Answer{PollID: p.id, At: s.now, Queue: q.name, Messages: msgs})
	}
}

func (s *Service) park(q *queue, req *ReceiveMessageRequest, max, vt, wait int) *poll {
	s.lastPoll++
	p := &poll{id: s.lastPoll, req: *req, max: max, vt: vt, until: s.now.Add(clock.Duration(wait) * clock.Second)}
	q.polls = append(q.polls, p)
	s.pollQueue[p.id] = q
	s.timers.Set(timer{at: p.until, kind: tPoll, q: int32(q.idx), id: int64(p.id)})
	return p
}

func (s *Service) unpark(q *queue, p *poll) {
	i := slices.Index(q.polls, p)
	q.polls = slices.Delete(q.polls, i, i+1)
	delete(s.pollQueue, p.id)
	s.timers.Delete(timer{at: p.until, kind: tPoll, q: int32(q.idx), id: int64(p.id)})
}

func (s *Service) expirePoll(q *queue, id uint64) {
	for _, p := range q.polls {
		if p.id == id {
			s.unpark(q, p)
			q.stats.LongPollTimeouts++
			s.fx.Answers = append(s.fx.Answers, Answer{PollID: id, At: s.now, Queue: q.name})
			return
		}
	}
	panic(fmt.Sprintf("sqs: poll timer for unknown poll %d on %s", id, q.name))
}

// CancelPoll withdraws a parked long poll (its client went away), so that
// it takes no messages. SQS itself cannot know that a waiting connection is
// dead; the driver decides whether to call this. Unknown ids are ignored.
func (s *Service) CancelPoll(now clock.Time, pollID uint64) TickResult {
	s.begin(now)
	r := TickResult{}
	if q := s.pollQueue[pollID]; q != nil {
		for _, p := range q.polls {
			if p.id == pollID {
				s.unpark(q, p)
				r.Cancelled = true
				break
			}
		}
	}
	r.Effects = s.end()
	return r
}

// ParkedPolls returns how many long polls are parked.
func (s *Service) ParkedPolls() int { return len(s.pollQueue) }
