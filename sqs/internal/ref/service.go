package ref

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
)

type state int

const (
	delayed state = iota
	visible
	inflight
)

var stateNames = []string{"delayed", "visible", "in-flight"}

type message struct {
	seq          int64
	id           model.MsgID
	body         []byte
	groupID      string
	dedupID      string
	sent         clock.Time
	retainFrom   clock.Time
	availableAt  clock.Time
	receiveCount int
	firstReceive clock.Time
	st           state
	lease        model.LeaseID
	leasedAt     clock.Time
	deadline     clock.Time
	changed      bool
	dlqSource    string
}

type dedupRec struct {
	key string
	at  clock.Time
	seq int64
	id  model.MsgID
}

type attemptRec struct {
	id     string
	at     clock.Time
	seqs   []int64
	leases []model.LeaseID
}

type poll struct {
	id    uint64
	req   sqs.ReceiveMessageRequest
	max   int
	vt    int
	until clock.Time
}

type queue struct {
	idx       int
	name, arn string
	attrs     sqs.QueueAttributes
	dlq       *queue
	created   clock.Time
	nextSeq   int64
	msgs      []*message // by position
	dedup     []dedupRec
	attempts  []attemptRec
	polls     []*poll
	purged    bool
	purgedAt  clock.Time
	stats     sqs.QueueStats
}

func (q *queue) fifo() bool { return q.attrs.FifoQueue }

func (q *queue) find(seq int64) *message {
	for _, m := range q.msgs {
		if m.seq == seq {
			return m
		}
	}
	return nil
}

func (q *queue) count(st state) int {
	n := 0
	for _, m := range q.msgs {
		if m.st == st {
			n++
		}
	}
	return n
}

// Service is the reference SQS service.
type Service struct {
	cfg       sqs.Config
	now       clock.Time
	queues    []*queue
	lastLease model.LeaseID
	lastPoll  uint64
	fx        sqs.Effects
}

// New returns an empty reference service.
func New(cfg sqs.Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{cfg: cfg}, nil
}

func (s *Service) queue(name string) *queue {
	for _, q := range s.queues {
		if q.name == name {
			return q
		}
	}
	return nil
}

func errf(c sqs.Code, format string, args ...any) *sqs.Error {
	return &sqs.Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

func noQueue(name string) *sqs.Error { return errf(sqs.QueueDoesNotExist, "no queue %s", name) }

func secs(n int) clock.Duration { return clock.Duration(n) * clock.Second }

// ---- time ----

// due is one thing that happens at an instant.
type due struct {
	at   clock.Time
	kind int // 0 retention, 1 visibility, 2 delay, 3 poll wait
	q    int
	id   int64
}

func dueLess(a, b due) bool {
	switch {
	case a.at != b.at:
		return a.at < b.at
	case a.kind != b.kind:
		return a.kind < b.kind
	case a.q != b.q:
		return a.q < b.q
	}
	return a.id < b.id
}

// next finds the earliest pending thing.
func (s *Service) next() (due, bool) {
	var best due
	found := false
	consider := func(d due) {
		if !found || dueLess(d, best) {
			best, found = d, true
		}
	}
	for _, q := range s.queues {
		for _, m := range q.msgs {
			consider(due{at: m.retainFrom.Add(secs(q.attrs.MessageRetentionPeriod)), kind: 0, q: q.idx, id: m.seq})
			switch m.st {
			case inflight:
				consider(due{at: m.deadline, kind: 1, q: q.idx, id: m.seq})
			case delayed:
				consider(due{at: m.availableAt, kind: 2, q: q.idx, id: m.seq})
			}
		}
		for _, p := range q.polls {
			consider(due{at: p.until, kind: 3, q: q.idx, id: int64(p.id)})
		}
	}
	return best, found
}

func (s *Service) advance(now clock.Time) {
	if now < s.now {
		panic("ref: time moved backwards")
	}
	for {
		d, ok := s.next()
		if !ok || d.at > now {
			break
		}
		s.now = max(s.now, d.at)
		s.fire(d)
		s.serve()
	}
	s.now = now
}

func (s *Service) event(e sqs.Event) {
	e.At = s.now
	s.fx.Events = append(s.fx.Events, e)
}

func (s *Service) fire(d due) {
	q := s.queues[d.q]
	if d.kind == 3 {
		for i, p := range q.polls {
			if int64(p.id) == d.id {
				q.polls = slices.Delete(q.polls, i, i+1)
				q.stats.LongPollTimeouts++
				s.fx.Answers = append(s.fx.Answers, sqs.Answer{PollID: p.id, At: s.now, Queue: q.name})
				return
			}
		}
	}
	m := q.find(d.id)
	switch d.kind {
	case 0:
		e := sqs.Event{Kind: sqs.RetentionExpired, Queue: q.name, Seq: m.seq, MsgID: m.id}
		if m.st == inflight {
			e.Lease, e.Ended = m.lease, true
		}
		s.drop(q, m)
		q.stats.RetentionExpired++
		s.event(e)
	case 1:
		m.st = visible
		q.stats.Expired++
		s.event(sqs.Event{Kind: sqs.Expired, Queue: q.name, Seq: m.seq, MsgID: m.id, Lease: m.lease, Ended: true})
	case 2:
		m.st = visible
	}
}

func (s *Service) drop(q *queue, m *message) {
	i := slices.Index(q.msgs, m)
	q.msgs = slices.Delete(q.msgs, i, i+1)
}

func (s *Service) begin(now clock.Time) { s.advance(now) }

func (s *Service) end() sqs.Effects {
	s.serve()
	s.advance(s.now)
	fx := s.fx
	s.fx = sqs.Effects{}
	return fx
}

// serve answers parked polls: the oldest poll of the first queue (in
// creation order) that has something for it; after an answer or a move to
// a dead-letter queue, from the first queue again.
func (s *Service) serve() {
	for {
		changed := false
		for _, q := range s.queues {
			if len(q.polls) == 0 {
				continue
			}
			p := q.polls[0]
			moved := q.stats.Redriven
			msgs := s.collect(q, &p.req, p.max, p.vt, true)
			if len(msgs) > 0 {
				q.polls = q.polls[1:]
				s.recordAttempt(q, p.req.ReceiveRequestAttemptID, msgs)
				q.stats.LongPollAnswers++
				s.fx.Answers = append(s.fx.Answers, sqs.Answer{PollID: p.id, At: s.now, Queue: q.name, Messages: msgs})
			}
			if len(msgs) > 0 || q.stats.Redriven != moved {
				changed = true
				break
			}
		}
		if !changed {
			return
		}
	}
}

// NextDue returns the earliest pending instant.
func (s *Service) NextDue() (clock.Time, bool) {
	d, ok := s.next()
	return d.at, ok
}

// Tick advances to now.
func (s *Service) Tick(now clock.Time) sqs.TickResult {
	s.begin(now)
	return sqs.TickResult{Effects: s.end()}
}

// CancelPoll withdraws a parked poll.
func (s *Service) CancelPoll(now clock.Time, id uint64) sqs.TickResult {
	s.begin(now)
	r := sqs.TickResult{}
	for _, q := range s.queues {
		if i := slices.IndexFunc(q.polls, func(p *poll) bool { return p.id == id }); i >= 0 {
			q.polls = slices.Delete(q.polls, i, i+1)
			r.Cancelled = true
		}
	}
	r.Effects = s.end()
	return r
}

// ParkedPolls counts parked polls.
func (s *Service) ParkedPolls() int {
	n := 0
	for _, q := range s.queues {
		n += len(q.polls)
	}
	return n
}

// ---- queues ----

// CreateQueue creates a queue.
func (s *Service) CreateQueue(now clock.Time, name string, attrs map[string]string) sqs.CreateQueueResult {
	s.begin(now)
	r := sqs.CreateQueueResult{}
	a, err := sqs.ParseAttributes(name, attrs)
	var dlq *queue
	if err == nil && a.RedrivePolicy != nil {
		prefix := s.cfg.ARN("")
		target := strings.TrimPrefix(a.RedrivePolicy.DeadLetterTargetArn, prefix)
		if strings.HasPrefix(a.RedrivePolicy.DeadLetterTargetArn, prefix) {
			dlq = s.queue(target)
		}
		switch {
		case dlq == nil:
			err = errf(sqs.InvalidParameterValue, "no dead-letter target")
		case dlq.fifo() != a.FifoQueue:
			err = errf(sqs.InvalidParameterValue, "dead-letter queue of another type")
		}
	}
	if err == nil {
		if q := s.queue(name); q != nil {
			r.ARN = q.arn
			if sameAttrs(q.attrs, a) {
				r.Existed = true
			} else {
				err = errf(sqs.QueueAlreadyExists, "different attributes")
			}
		} else {
			q := &queue{idx: len(s.queues), name: name, arn: s.cfg.ARN(name), attrs: a, dlq: dlq, created: s.now}
			s.queues = append(s.queues, q)
			r.ARN = q.arn
		}
	}
	r.Err = err
	r.Effects = s.end()
	return r
}

func sameAttrs(a, b sqs.QueueAttributes) bool {
	ap, bp := a.RedrivePolicy, b.RedrivePolicy
	a.RedrivePolicy, b.RedrivePolicy = nil, nil
	if a != b {
		return false
	}
	return (ap == nil) == (bp == nil) && (ap == nil || *ap == *bp)
}

// Queues lists queue names in creation order.
func (s *Service) Queues() []string {
	var out []string
	for _, q := range s.queues {
		out = append(out, q.name)
	}
	return out
}

// Counts returns the quiescence view.
func (s *Service) Counts() []sqs.Counts {
	out := make([]sqs.Counts, len(s.queues))
	for i, q := range s.queues {
		out[i] = q.counts()
	}
	return out
}

func (q *queue) counts() sqs.Counts {
	return sqs.Counts{Queue: q.name, Visible: q.count(visible), InFlight: q.count(inflight), Delayed: q.count(delayed), Parked: len(q.polls)}
}

// State returns a queue snapshot.
func (s *Service) State(name string) (sqs.QueueState, bool) {
	q := s.queue(name)
	if q == nil {
		return sqs.QueueState{}, false
	}
	groups := map[string]bool{}
	if q.fifo() {
		for _, m := range q.msgs {
			groups[m.groupID] = true
		}
	}
	st := sqs.QueueState{Name: q.name, ARN: q.arn, Created: q.created, Attributes: q.attrs, Counts: q.counts(),
		NextSeq: q.nextSeq + 1, Groups: len(groups), Stats: q.stats}
	if p := q.attrs.RedrivePolicy; p != nil {
		c := *p
		st.Attributes.RedrivePolicy = &c
	}
	return st, true
}

// Messages lists a queue's messages by position.
func (s *Service) Messages(name string) []sqs.MessageInfo {
	q := s.queue(name)
	if q == nil {
		return nil
	}
	out := make([]sqs.MessageInfo, len(q.msgs))
	for i, m := range q.msgs {
		out[i] = sqs.MessageInfo{Queue: q.name, Seq: m.seq, MsgID: m.id, State: stateNames[m.st], ReceiveCount: m.receiveCount, GroupID: m.groupID}
		switch m.st {
		case inflight:
			out[i].Lease, out[i].Deadline = m.lease, m.deadline
		case delayed:
			out[i].AvailableAt = m.availableAt
		}
	}
	return out
}

func groupServer(id string, servers int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(servers))
}
