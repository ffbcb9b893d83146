package sqs

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// Int is an optional integer request parameter: SQS tells "not given"
// (take the queue's value) from an explicit 0 for VisibilityTimeout,
// WaitTimeSeconds, DelaySeconds and MaxNumberOfMessages. The zero value
// is "not given"; Some(v) gives v.
type Int struct {
	Value int
	Set   bool
}

// Some returns the given parameter v.
func Some(v int) Int { return Int{Value: v, Set: true} }

// or returns the parameter's value, or def when it is not given.
func (i Int) or(def int) int {
	if i.Set {
		return i.Value
	}
	return def
}

func (i Int) String() string {
	if !i.Set {
		return "-"
	}
	return strconv.Itoa(i.Value)
}

// ---- SendMessage ----

// SendMessageRequest is SendMessage's input.
type SendMessageRequest struct {
	Queue string
	// MsgID is the simulator's identity of the message. The engine keeps it
	// on every copy (a dead-letter copy too) and never interprets it.
	MsgID model.MsgID
	// MessageBody is kept, not copied: the caller must not change it.
	MessageBody []byte
	// DelaySeconds is the per-message delay 0..900; not given means the
	// queue's DelaySeconds. FIFO queues accept only 0 (which still means
	// the queue's delay).
	DelaySeconds           Int
	MessageGroupID         string // required on FIFO queues; on standard queues only validated
	MessageDeduplicationID string // FIFO only; optional with ContentBasedDeduplication
}

// SendMessageResult is SendMessage's output.
type SendMessageResult struct {
	Effects
	Err *Error
	// Seq is the message's position in its queue (its "offset": SQS's
	// SequenceNumber on FIFO queues, an engine counter on standard ones).
	Seq int64
	// Deduplicated is true when a FIFO queue had seen the deduplication id
	// within 5 minutes: the send succeeds and nothing is enqueued. Seq and
	// Original then name the message the send was folded into, which may
	// already be deleted.
	Deduplicated bool
	Original     model.MsgID
}

// SendMessageBatchRequest is SendMessageBatch's input: 1 to 10 entries.
type SendMessageBatchRequest struct {
	Queue   string
	Entries []SendMessageBatchEntry
}

// SendMessageBatchEntry is one entry of a SendMessageBatch: a batch entry
// Id and the fields of SendMessageRequest.
type SendMessageBatchEntry struct {
	ID                     string
	MsgID                  model.MsgID
	MessageBody            []byte
	DelaySeconds           Int
	MessageGroupID         string
	MessageDeduplicationID string
}

// SendMessageBatchResultEntry is the outcome of one entry: Err is nil for
// a successful entry.
type SendMessageBatchResultEntry struct {
	ID           string
	Err          *Error
	Seq          int64
	Deduplicated bool
	Original     model.MsgID
}

// SendMessageBatchResult is SendMessageBatch's output: Err is a
// request-level error (then Entries is empty), otherwise one entry per
// request entry, in request order.
type SendMessageBatchResult struct {
	Effects
	Err     *Error
	Entries []SendMessageBatchResultEntry
}

// ---- ReceiveMessage ----

// ReceiveMessageRequest is ReceiveMessage's input.
type ReceiveMessageRequest struct {
	Queue               string
	MaxNumberOfMessages Int // 1..10, not given: 1
	VisibilityTimeout   Int // 0..43200 seconds, not given: the queue's
	WaitTimeSeconds     Int // 0..20, not given: the queue's ReceiveMessageWaitTimeSeconds
	// ReceiveRequestAttemptID (FIFO only; ignored on standard queues): a
	// retry with the same id within 5 minutes returns the same messages and
	// receipt handles while none of them was deleted or had its visibility
	// changed, and resets their visibility timeout.
	ReceiveRequestAttemptID string

	// Sample selects the servers a short poll queries: bit i set queries
	// server i. Bits at or above Config.Servers are ignored; a sample that
	// selects no server queries all of them (sampling off). Long polls
	// always query all servers. The caller draws it (the engine draws no
	// random numbers); AWS describes the choice as a weighted random one.
	Sample uint64
	// DuplicateSeq is an opt-in fault (0: none), standard queues only: if
	// the message at this position of the queue is in flight, the receive
	// returns it once more, as a stale copy on a server that missed its
	// receipt would. The copy gets a new lease (superseding the old one)
	// and counts towards MaxNumberOfMessages. AWS: standard queues deliver
	// a message "at least once" and "occasionally more than one copy".
	DuplicateSeq int64
}

// Delivery is one message in a receive result. Each delivery is one lease.
type Delivery struct {
	MsgID model.MsgID
	Queue string
	Seq   int64 // position in Queue, as in SendMessageResult
	// Lease numbers this receive; ReceiptHandle is built from it. A
	// retried ReceiveRequestAttemptId returns the same lease and handle.
	Lease         model.LeaseID
	ReceiptHandle string
	// Deadline is when the message becomes visible again unless deleted or
	// changed: the receive time plus the visibility timeout.
	Deadline clock.Time
	// ReceiveCount is ApproximateReceiveCount including this receive; it
	// carries over into a dead-letter queue.
	ReceiveCount int
	// FirstReceive is ApproximateFirstReceiveTimestamp, Sent is
	// SentTimestamp (both kept by a dead-letter copy).
	FirstReceive clock.Time
	Sent         clock.Time
	Body         []byte
	// MessageGroupID and MessageDeduplicationID as sent (FIFO).
	MessageGroupID         string
	MessageDeduplicationID string
	// DeadLetterSource is the queue a dead-letter copy came from
	// (DeadLetterQueueSourceArn, as a name), "" otherwise.
	DeadLetterSource string
	// Retry is true when a retried ReceiveRequestAttemptId returned this
	// delivery again: same lease, same handle, new Deadline.
	Retry bool
	// Duplicate is true when the delivery came from the DuplicateSeq fault.
	Duplicate bool
}

func (d *Delivery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "msg=%d %s@%d lease=%d rc=%d deadline=%v", d.MsgID, d.Queue, d.Seq, d.Lease, d.ReceiveCount, d.Deadline)
	if d.MessageGroupID != "" {
		fmt.Fprintf(&b, " group=%s", d.MessageGroupID)
	}
	if d.DeadLetterSource != "" {
		fmt.Fprintf(&b, " dlq-from=%s", d.DeadLetterSource)
	}
	if d.Retry {
		b.WriteString(" retry")
	}
	if d.Duplicate {
		b.WriteString(" duplicate")
	}
	return b.String()
}

// ReceiveMessageResult is ReceiveMessage's output. A long poll that finds
// nothing is parked: Parked is true, PollID names it, and its answer comes
// in some call's Effects.Answers (messages, or empty when the wait ends at
// WaitUntil) — possibly this very result's, when the receive's own
// dead-letter moves made a FIFO message reachable.
type ReceiveMessageResult struct {
	Effects
	Err       *Error
	Messages  []Delivery
	Parked    bool
	PollID    uint64
	WaitUntil clock.Time
}

// ---- DeleteMessage ----

// DeleteMessageRequest is DeleteMessage's input.
type DeleteMessageRequest struct {
	Queue         string
	ReceiptHandle string
}

// DeleteMessageResult is DeleteMessage's output. Deleted is false for a
// delete that succeeds without deleting anything: the handle is not the
// message's latest (standard queues) or the message is already gone.
// Lease is the lease the handle names.
type DeleteMessageResult struct {
	Effects
	Err     *Error
	Deleted bool
	Lease   model.LeaseID
}

// DeleteMessageBatchRequest is DeleteMessageBatch's input: 1 to 10
// entries.
type DeleteMessageBatchRequest struct {
	Queue   string
	Entries []DeleteMessageBatchEntry
}

// DeleteMessageBatchEntry is one entry of DeleteMessageBatch.
type DeleteMessageBatchEntry struct {
	ID            string
	ReceiptHandle string
}

// DeleteMessageBatchResultEntry is the outcome of one entry.
type DeleteMessageBatchResultEntry struct {
	ID      string
	Err     *Error
	Deleted bool
	Lease   model.LeaseID
}

// DeleteMessageBatchResult is DeleteMessageBatch's output (Err: request
// level; otherwise one entry per request entry, in order).
type DeleteMessageBatchResult struct {
	Effects
	Err     *Error
	Entries []DeleteMessageBatchResultEntry
}

// ---- ChangeMessageVisibility ----

// ChangeMessageVisibilityRequest is ChangeMessageVisibility's input: the new
// timeout, 0..43200 seconds, counts from the call.
type ChangeMessageVisibilityRequest struct {
	Queue             string
	ReceiptHandle     string
	VisibilityTimeout int
}

// ChangeMessageVisibilityResult is ChangeMessageVisibility's output. On
// success the lease either continues with the new Deadline, or (timeout
// 0) Ended is true and the message is visible at once.
type ChangeMessageVisibilityResult struct {
	Effects
	Err      *Error
	Lease    model.LeaseID
	Deadline clock.Time
	Ended    bool
}

// ChangeMessageVisibilityBatchRequest is ChangeMessageVisibilityBatch's
// input: 1 to 10 entries.
type ChangeMessageVisibilityBatchRequest struct {
	Queue   string
	Entries []ChangeVisibilityBatchEntry
}

// ChangeVisibilityBatchEntry is one entry of ChangeMessageVisibilityBatch.
type ChangeVisibilityBatchEntry struct {
	ID                string
	ReceiptHandle     string
	VisibilityTimeout int
}

// ChangeVisibilityBatchResultEntry is the outcome of one entry.
type ChangeVisibilityBatchResultEntry struct {
	ID       string
	Err      *Error
	Lease    model.LeaseID
	Deadline clock.Time
	Ended    bool
}

// ChangeMessageVisibilityBatchResult is ChangeMessageVisibilityBatch's
// output (Err: request level; otherwise one entry per request entry).
type ChangeMessageVisibilityBatchResult struct {
	Effects
	Err     *Error
	Entries []ChangeVisibilityBatchResultEntry
}

// ---- the rest ----

// CreateQueueResult is CreateQueue's output.
type CreateQueueResult struct {
	Effects
	Err *Error
	ARN string
	// Existed is true when the queue existed with the same attributes
	// (CreateQueue is idempotent).
	Existed bool
}

// PurgeQueueResult is PurgeQueue's output.
type PurgeQueueResult struct {
	Effects
	Err    *Error
	Purged int // messages deleted
}

// TickResult is Tick's and CancelPoll's output.
type TickResult struct {
	Effects
	// Cancelled is true when CancelPoll removed a parked poll.
	Cancelled bool
}

// ---- effects ----

// Effects is what happened inside the engine during a call, besides the
// call's own answer: lease and message events in the order they happened
// (each stamped with its instant, which may lie before the call's now when
// the driver called late), and the answers of parked long polls.
type Effects struct {
	Events  []Event
	Answers []Answer
}

// EventKind says what an Event is.
type EventKind uint8

// The events. Lease is set when the event concerns a lease; Ended says
// whether that lease ended with this event.
const (
	// Deleted: DeleteMessage removed the message. Lease is the handle's;
	// Ended is false when its lease had already ended (a standard queue
	// deletes with the latest handle even after its visibility timeout).
	Deleted EventKind = iota + 1
	// MadeVisible: ChangeMessageVisibility 0 ended the lease; the message is
	// visible at once.
	MadeVisible
	// Changed: ChangeMessageVisibility gave the lease a new Deadline.
	Changed
	// Expired: the visibility timeout passed; the message is visible again.
	Expired
	// Superseded: a duplicate delivery (the DuplicateSeq fault) replaced the
	// lease while it was in flight.
	Superseded
	// Redriven: a receive found the message with ApproximateReceiveCount at
	// maxReceiveCount and moved it to the dead-letter queue To, position
	// ToSeq. No lease ends: the message was visible.
	Redriven
	// RetentionExpired: MessageRetentionPeriod passed since the message was
	// enqueued; SQS deleted it, in flight or not. This is a loss by policy.
	RetentionExpired
	// Purged: PurgeQueue deleted the message.
	Purged
)

var eventNames = [...]string{Deleted: "deleted", MadeVisible: "made-visible", Changed: "changed", Expired: "expired",
	Superseded: "superseded", Redriven: "redriven", RetentionExpired: "retention-expired", Purged: "purged"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one lease or message transition.
type Event struct {
	At    clock.Time
	Kind  EventKind
	Queue string
	Seq   int64
	MsgID model.MsgID
	Lease model.LeaseID
	Ended bool
	// Deadline is the new deadline of a Changed lease.
	Deadline clock.Time
	// To and ToSeq are where a Redriven message's copy lives.
	To    string
	ToSeq int64
}

func (e Event) String() string {
	s := fmt.Sprintf("%v %s msg=%d %s@%d", e.At, e.Kind, e.MsgID, e.Queue, e.Seq)
	if e.Lease != 0 {
		s += fmt.Sprintf(" lease=%d", e.Lease)
		if e.Ended {
			s += " ended"
		}
	}
	if e.Kind == Changed {
		s += fmt.Sprintf(" deadline=%v", e.Deadline)
	}
	if e.Kind == Redriven {
		s += fmt.Sprintf(" -> %s@%d", e.To, e.ToSeq)
	}
	return s
}

// Answer is a parked long poll's response: the messages it got at At, or
// none when its wait ended at At.
type Answer struct {
	PollID   uint64
	At       clock.Time
	Queue    string
	Messages []Delivery
}
