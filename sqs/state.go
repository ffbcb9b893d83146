package sqs

import (
	"fmt"
	"slices"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// QueueStats counts what happened to one queue.
type QueueStats struct {
	Sent             int // messages enqueued by SendMessage(Batch)
	Deduplicated     int // FIFO sends folded into an earlier message
	ReceiveCalls     int // ReceiveMessage calls that passed validation
	EmptyReceives    int // of those, answered at once with no message
	Received         int // leases granted (deliveries, retries excluded)
	AttemptRetries   int // receives answered from a ReceiveRequestAttemptId
	Duplicates       int // deliveries made by the DuplicateSeq fault
	OverLimit        int // receives refused with OverLimit
	LongPollAnswers  int // parked polls answered with messages
	LongPollTimeouts int // parked polls answered empty when their wait ended
	Deleted          int // messages deleted by DeleteMessage(Batch)
	DeleteMisses     int // deletes that succeeded without deleting
	Changed          int // visibility timeouts changed (not to 0)
	MadeVisible      int // visibility timeouts changed to 0
	Expired          int // leases whose visibility timeout passed
	Redriven         int // messages moved out to the dead-letter queue
	DeadLettered     int // messages moved in from source queues
	RetentionExpired int // messages deleted by the retention period
	Purged           int // messages deleted by PurgeQueue
}

// Counts is the quiescence view of one queue: where its messages are, and
// how many long polls wait on it.
type Counts struct {
	Queue    string
	Visible  int // ApproximateNumberOfMessages
	InFlight int // ApproximateNumberOfMessagesNotVisible
	Delayed  int // ApproximateNumberOfMessagesDelayed
	Parked   int
}

func (c Counts) String() string {
	return fmt.Sprintf("%s visible=%d inflight=%d delayed=%d parked=%d", c.Queue, c.Visible, c.InFlight, c.Delayed, c.Parked)
}

// QueueState is a snapshot of a queue: GetQueueAttributes plus the
// engine's counters.
type QueueState struct {
	Name       string
	ARN        string
	Created    clock.Time
	Attributes QueueAttributes
	Counts
	// NextSeq is the position the next message sent (or moved) to the
	// queue gets.
	NextSeq int64
	// Groups is the number of FIFO message groups with stored messages.
	Groups int
	Stats  QueueStats
}

func (q *queue) counts() Counts {
	return Counts{Queue: q.name, Visible: q.visible, InFlight: q.inflight, Delayed: q.delayed, Parked: len(q.polls)}
}

// State returns the snapshot of a queue, as of the latest call (call Tick
// first for a view at a later instant), or false if there is no such
// queue.
func (s *Service) State(queue string) (QueueState, bool) {
	q := s.byName[queue]
	if q == nil {
		return QueueState{}, false
	}
	st := QueueState{Name: q.name, ARN: q.arn, Created: q.created, Attributes: q.attrs, Counts: q.counts(),
		NextSeq: q.nextSeq + 1, Groups: len(q.groups), Stats: q.stats}
	if p := q.attrs.RedrivePolicy; p != nil {
		c := *p
		st.Attributes.RedrivePolicy = &c
	}
	return st, true
}

// Counts returns the quiescence view of every queue, in creation order.
func (s *Service) Counts() []Counts {
	out := make([]Counts, len(s.queues))
	for i, q := range s.queues {
		out[i] = q.counts()
	}
	return out
}

// CountsOf returns one queue's counts without the others' (the simulator
// asks after every empty FIFO receive), or false if there is no such queue.
func (s *Service) CountsOf(queue string) (Counts, bool) {
	q := s.byName[queue]
	if q == nil {
		return Counts{}, false
	}
	return q.counts(), true
}

// MessageInfo describes one stored message, for tests and the simulator's
// liveness reports.
type MessageInfo struct {
	Queue        string
	Seq          int64
	MsgID        model.MsgID
	State        string // "delayed", "visible" or "in-flight"
	Lease        model.LeaseID
	Deadline     clock.Time // while in flight
	AvailableAt  clock.Time // end of the delay
	ReceiveCount int
	GroupID      string
}

func (m MessageInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d msg=%d %s rc=%d", m.Queue, m.Seq, m.MsgID, m.State, m.ReceiveCount)
	if m.GroupID != "" {
		fmt.Fprintf(&b, " group=%s", m.GroupID)
	}
	switch m.State {
	case "in-flight":
		fmt.Fprintf(&b, " lease=%d deadline=%v", m.Lease, m.Deadline)
	case "delayed":
		fmt.Fprintf(&b, " until=%v", m.AvailableAt)
	}
	return b.String()
}

// Messages lists the stored messages of a queue by position.
func (s *Service) Messages(queue string) []MessageInfo {
	q := s.byName[queue]
	if q == nil {
		return nil
	}
	seqs := make([]int64, 0, len(q.msgs))
	for seq := range q.msgs {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	out := make([]MessageInfo, len(seqs))
	for i, seq := range seqs {
		m := q.msgs[seq]
		out[i] = MessageInfo{Queue: q.name, Seq: seq, MsgID: m.id, State: m.state.String(), ReceiveCount: m.receiveCount, GroupID: m.groupID}
		switch m.state {
		case stInFlight:
			out[i].Lease, out[i].Deadline = m.lease, m.deadline
		case stDelayed:
			out[i].AvailableAt = m.availableAt
		}
	}
	return out
}
