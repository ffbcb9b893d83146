package model

import (
	"strconv"

	"popsim/clock"
)

// EventKind is the type of a trace event. New kinds are only ever appended,
// so a trace keeps its meaning and its binary encoding.
type EventKind uint8

// Trace event kinds, grouped by where they happen. The fields each kind
// sets are listed in eventFields (and in docs/trace.md); every other field
// is zero. "Client" is the consumer index (the producer index for produce
// events, -1 for the broker).
const (
	EvNone EventKind = iota

	// The run.
	EvPhase     // the run changed phase: Reason = safety, liveness, done (or undrained: the end, unsettled)
	EvSubscribe // consumer Client belongs to Group and consumes Topic (one per consumer, at the start)

	// Producers.
	EvProduce       // message Msg stored at Topic/Queue/Offset by producer Client
	EvProduceFailed // the engine refused producer Client's message Msg: Code

	// Receiving (pop, fetch, receive, pull).
	EvReceive     // Client asks for up to Count messages of Topic (Queue -1: any) for Span
	EvParked      // the engine parked Client's request for long polling until Deadline
	EvLease       // the engine lent Msg (at Topic/Queue/Offset, delivery Attempt) to Client: Lease, until Deadline
	EvReceived    // Client got the response to its request: Code, Count messages
	EvReceiveLost // the request or its response never reached its end: Reason, Count messages it carried
	EvDeliver     // Client has Msg of Lease (0 for Pull) at Topic/Queue/Offset, Attempt; Shown is the topic it was told

	// Consumption.
	EvConsumeStart // Client starts processing Msg (Lease)
	EvConsumeEnd   // Client finished Msg: Reason = success, later, exception
	EvExpiredLocal // Client found Lease expired by its own clock and did not act: Reason = before, after, at-ack, at-renew (skipped: an orderly client gave it up after an earlier message of its queue failed; dropped: a rebalance dropped the queue it was popped for)

	// Settling a lease: the client's request, then the engine's answer.
	EvAck             // Client acks Lease
	EvAckLost         // the ack never reached the engine: Reason
	EvAcked           // the engine answered the ack of Lease: Code, Ended = the lease it removed (0 none)
	EvAckResponseLost // the engine's answer to the ack was lost
	EvRenew           // Client asks to extend Lease by Span: Reason = why (nack, auto-renew, an injected edge)
	EvRenewed         // the engine answered: Code, Next = the new lease until Deadline, Ended = the lease it removed
	EvRenewLost       // the renewal or its answer was lost: Reason
	EvRelease         // Client gives Lease back for redelivery (Kafka RELEASE, SQS visibility 0)
	EvReleased        // the engine answered: Code, Ended
	EvReject          // Client rejects Lease for good (Kafka REJECT)
	EvRejected        // the engine answered: Code, Ended

	// The engine's own work on leases that ran out.
	EvRevive        // Lease expired and a copy of Msg was written at Topic/Queue/Offset with Attempt
	EvReviveSkipped // Lease expired; its message is gone (retention): nothing to redeliver
	EvReviveRetried // Lease expired, writing its copy failed: Next replaces it until Deadline
	EvReviveDropped // Lease expired and its copy failed too often: the engine gives up on Msg
	EvLapse         // Lease ran out; Msg is available again where it lives (FIFO, Kafka, SQS)
	EvLeaseLost     // the engine forgot Lease without redelivering it: Reason = restart, replaced
	EvDeadLetter    // the engine itself moved Msg (Lease) to Topic/Queue/Offset: Reason = its policy
	EvCacheFlush    // Count cached records moved to the store
	EvPutFailure    // an injected store write failure on Topic/Queue

	// Client policies.
	EvDLQ  // Client (or its proxy) sent Msg (Lease) to the DLQ at Topic/Queue/Offset with Attempt
	EvDrop // Client dropped Msg (Lease) by a named policy: Reason

	// Faults and lifecycle.
	EvCrash         // Client crashed: its local state and work are gone
	EvRestart       // Client came back
	EvPause         // Client paused (GC) until Deadline
	EvResume        // Client resumed
	EvBrokerRestart // the engine lost its volatile state; Count parked requests were dropped
	EvRebalance     // Pull: Client now owns Topic/Queue, starting at Offset. POP (broker-assigned queues): Client pops Topic/Queue (-1: every queue), Offset -1; Reason dropped: it stopped
	EvPull          // Pull: Client fetched Count messages of Topic/Queue from Offset
	EvCommit        // Group's commit offset of Topic/Queue is Offset (Client -1: the engine's; else the client's)

	// Appended after the first release of the trace format.

	// EvLeaseReopened: the engine broke an ack it had accepted and
	// reported (Ended) before, so Lease of Msg (Group's, at
	// Topic/Queue/Offset) is in flight again until Deadline and will run
	// out. Reason: none, a broker restart lost the ack (RocketMQ's
	// checkpoint path: an ack merged into a written CK and not yet written
	// itself); ack-cut-off, the revive round stopped at reviveScanTime
	// before reading the ack message (the lease's revive follows at once).
	EvLeaseReopened
	// EvRequestMode: an admin set Group's request mode for Topic on every
	// broker (SET_MESSAGE_REQUEST_MODE) during the run: Reason pop, with
	// popShareQueueNum Count. Its consumers see it at their next rebalance.
	EvRequestMode

	evKinds // number of kinds
)

var eventNames = [evKinds]string{
	"none", "phase", "subscribe", "produce", "produce-failed",
	"receive", "parked", "lease", "received", "receive-lost", "deliver",
	"consume-start", "consume-end", "expired-local",
	"ack", "ack-lost", "acked", "ack-response-lost", "renew", "renewed", "renew-lost",
	"release", "released", "reject", "rejected",
	"revive", "revive-skipped", "revive-retried", "revive-dropped", "lapse", "lease-lost", "dead-letter",
	"cache-flush", "put-failure",
	"dlq", "drop",
	"crash", "restart", "pause", "resume", "broker-restart", "rebalance", "pull", "commit",
	"lease-reopened",
	"request-mode",
}

func (k EventKind) String() string {
	if k < evKinds {
		return eventNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// ParseEventKind is the inverse of EventKind.String.
func ParseEventKind(s string) (EventKind, bool) {
	for k, n := range eventNames {
		if n == s {
			return EventKind(k), true
		}
	}
	return EvNone, false
}

// Reason qualifies an event: an outcome, a loss site, a policy, why a
// renewal was sent, a phase. Each kind uses the values its comment names.
type Reason uint8

// Reasons.
const (
	RNone Reason = iota
	// Phases (EvPhase).
	RSafety
	RLiveness
	RDone // the end of the run, settled within its drain budget
	// Consumption outcomes (EvConsumeEnd).
	RSuccess
	RLater     // RECONSUME_LATER: the consumer asks for a retry
	RException // the listener threw; upstream treats it as RECONSUME_LATER
	// Local expiry checks (EvExpiredLocal): where the client found its lease expired.
	RBefore  // before consuming: given up unconsumed
	RAfter   // after consuming: nothing sent
	RAtAck   // the proxy rejected the ack's expired handle
	RAtRenew // the proxy rejected the renewal's expired handle
	// Where a request or response was lost (EvReceiveLost, EvAckLost, EvRenewLost).
	RRequest    // lost on the way to the engine
	RResponse   // the engine served it, the answer was lost
	RTimeout    // the client gave up waiting
	RLate       // the answer came after the client gave up
	RClientGone // the client crashed before the request or answer reached it
	// Why a renewal was sent (EvRenew).
	RNack          // the client's failure backoff (RECONSUME_LATER)
	RAutoRenew     // the proxy renewing a lease being processed
	RSameDeadline  // injected: renew for exactly the time left
	RAtExpiry      // injected: the renewal reaches the engine at the deadline
	RAfterRevive   // injected: a late renewal with the delivery's handle
	RRenewDeadline // the proxy's last renewal after renewMaxTimeMillis
	// Why the engine forgot a lease (EvLeaseLost).
	RRestart  // a broker restart lost it (the KV cache)
	RReplaced // a write of an equal store key overwrote it
	// Client and engine policies (EvDrop, EvDeadLetter).
	RPushMaxReconsume // push consumer: reconsumeTimes > maxReconsumeTimes, acked on receipt
	RPushAge4h        // push consumer: past maxReconsumeTimes and older than 4 h, acked
	RDeliveryLimit    // Kafka: the delivery count limit archived the record
	RRedrive          // SQS: maxReceiveCount moved the message to the DLQ
	RRetention        // SQS: the retention period deleted the message
	RRejectPolicy     // the client rejected the message for good
	// The end of a run (EvPhase) whose drain budget ran out before it
	// settled (RDone: it settled).
	RUndrained
	// Engines that lend in place (EvLapse, EvLeaseLost, EvDrop).
	RSessionClosed  // EvLapse: Kafka released the lease when its holder's share session closed (connection close)
	RSuperseded     // EvLeaseLost: SQS delivered the message again while the lease was in flight (Next); its handle went stale
	RImplicitAccept // EvDrop: a Kafka consumer in implicit mode accepted a record whose processing failed
	ROrdered        // EvSubscribe: the group consumes each queue in order (SQS FIFO message groups): a queue with a lease in flight lends nothing else
	// Orderly (FIFO) consumption. ROrderly (EvSubscribe): the consumer's
	// group consumes orderly; Span is then the longest an orderly queue
	// may stay blocked once faults stop. RReattempt: a receive that
	// retries the previous one's attemptId (EvReceive), or a lease the
	// engine ended because that retry re-entered its queue (EvLapse, which
	// may then come before the lease's deadline). RReset (EvLeaseLost): an
	// admin offset reset cleared the lease's queue order state.
	ROrderly
	RReattempt
	RReset
	// RSkipped (EvExpiredLocal): an orderly client let the message go
	// unconsumed because an earlier message of its queue failed or expired.
	RSkipped
	// RLockBusy (EvParked): the receive found the engine's lock held by a
	// concurrent request (a lock-busy fault) and parked; traced at every
	// such park, a re-run's too. The concurrent holder serves the group.
	RLockBusy
	// Why a lease was reopened (EvLeaseReopened; RNone: a broker restart).
	// Appended after the first release, as kinds are.
	RAckCutOff // the revive round that held its ack message stopped at reviveScanTime before reading it
	// RUnpersisted (EvLapse): the lease's lock timed out and the engine's
	// write of the record's new state failed; the transition holds in the
	// leader's memory only, so a broker restart reloads the state written
	// before it (Kafka's releaseAcquisitionLockOnTimeout goes ahead when
	// WriteShareGroupState fails).
	RUnpersisted
	// RNotDone (EvConsumeEnd): the listener succeeded and the client acks,
	// but the application's commit after the ack failed: acked, not done.
	// A success for the broker's at-least-once.
	RNotDone
	// RNoMatch (EvDrop, Client -1, Group, no lease): the message does not
	// match the subscription of a group consuming its topic: the broker's
	// filter never hands it out to that group, which owes it nothing.
	// With a client and a lease: the client or its proxy dropped (and
	// acks) a message it was lent whose tag only collides with a
	// subscribed one (the proxy's NO_MATCH).
	RNoMatch
	// RDropped (EvExpiredLocal, EvRebalance): a rebalance dropped the POP
	// process queue the message was popped for (a push consumer that takes
	// its queues from the broker): the client lets it go without consuming
	// it or without acking it, and the broker revives it. On EvRebalance:
	// the client stopped popping Topic/Queue.
	RDropped
	// RPop (EvRequestMode): the group was switched to POP mode.
	RPop
	// RPull (EvRebalance): the broker assigned Client the queue in PULL
	// mode (a push consumer that takes its queues from the broker), which
	// it pulls from Offset until a rebalance drops it (r=dropped, Offset
	// the offset it persisted). Members apply an assignment each at its
	// own rebalance, so two of them may pull one queue for a while.
	RPull

	reasons // number of reasons
)

var reasonNames = [reasons]string{
	"", "safety", "liveness", "done",
	"success", "later", "exception",
	"before", "after", "at-ack", "at-renew",
	"request", "response", "timeout", "late", "client-gone",
	"nack", "auto-renew", "same-deadline", "at-expiry", "after-revive", "renew-deadline",
	"restart", "replaced",
	"push-max-reconsume", "push-age-4h", "delivery-limit", "redrive", "retention", "reject",
	"undrained",
	"session-closed", "superseded", "implicit-accept", "ordered",
	"orderly", "reattempt", "reset", "skipped", "lock-busy",
	"ack-cut-off",
	"unpersisted",
	"not-done",
	"no-match",
	"dropped",
	"pop",
	"pull",
}

// Consumed reports whether an EvConsumeEnd reason is a successful
// consumption for the broker's at-least-once: success, and not-done (the
// client acked; the application's commit after the ack failed).
func (r Reason) Consumed() bool { return r == RSuccess || r == RNotDone }

func (r Reason) String() string {
	if r < reasons {
		return reasonNames[r]
	}
	return "reason" + strconv.Itoa(int(r))
}

// ParseReason is the inverse of Reason.String (the empty string is RNone).
func ParseReason(s string) (Reason, bool) {
	for r, n := range reasonNames {
		if n == s {
			return Reason(r), true
		}
	}
	return RNone, false
}

// Event is one line of a simulation trace. Every field has one meaning in
// every kind; a kind leaves the fields it does not use at zero (Client -1
// for the broker; Queue and Offset count only when Topic is set).
type Event struct {
	Seq  int64      // position in the trace, from 0
	At   clock.Time // virtual time
	Kind EventKind

	Client int32  // consumer (or producer) index, -1 for the broker
	Group  string // consumer group, where the client does not say it

	Msg   MsgID   // the message
	Lease LeaseID // the lease the event is about
	Ended LeaseID // the lease the engine removed while answering (0: none)
	Next  LeaseID // the lease that replaces Lease

	Topic  string // where the message lives: its topic (a retry or DLQ topic for a copy) ...
	Queue  int32  // ... queue (partition) ...
	Offset int64  // ... and offset (the position in the queue)

	Attempt  int32          // the engine's delivery count (RocketMQ: reconsumeTimes)
	Deadline clock.Time     // an instant: a lease's end, a poll's expiry, a pause's end
	Span     clock.Duration // a requested length: an invisible time, a lock time
	Code     int32          // the engine's response code; 0 is success in every engine
	Count    int32          // a number of messages or requests
	Reason   Reason         // why, or which outcome
	Shown    string         // deliver: the topic the client was shown
}

// HasLocation reports whether the event names a place in a queue.
func (e *Event) HasLocation() bool { return e.Topic != "" }
