package model

import (
	"strconv"

	"popsim/clock"
)

// EventKind is the type of a trace event. New kinds are only ever appended,
// so existing traces keep their meaning.
type EventKind uint8

// Trace event kinds. "Client" below is the consumer or producer index.
const (
	EvNone EventKind = iota
	// Producer side.
	EvProduce       // a message stored: Msg, Topic, Queue, Offset
	EvProduceFailed // a put the broker refused (Code)
	// Pop.
	EvPopRequest   // Client asks: Queue (-1 all), N = maxMsgNums, Deadline = invisibleTime ms
	EvPopResponse  // Client gets: Code, N = messages
	EvPopSuspended // the broker parked the request for long polling
	EvPopLost      // the request or its response was lost on the network
	EvDeliver      // one message handed to Client: Msg, Topic/Queue/Offset (where it really is), Attempt = reconsumeTimes, Handle, Deadline = lease end (ms)
	// Consumption.
	EvConsumeStart // Client starts processing Msg
	EvConsumeEnd   // Client finished Msg: Detail = outcome (success, later, exception)
	EvExpiredLocal // Client found the lease expired (by its own clock) and did not ack: Detail = before/after
	// Ack.
	EvAckSent         // Client sends an ack for Msg with Handle
	EvAckLost         // the ack request was lost before the broker
	EvAckAccepted     // the broker processed the ack: Code, N = 1 if a record was deleted
	EvAckResponseLost // the broker processed the ack but the response was lost
	// Lease renewal.
	EvChangeSent     // Client renews Msg: Handle (old), Deadline = requested invisible ms
	EvChangeAccepted // the broker renewed: Handle = new handle, Deadline = new lease end, N = 1 if the old record was deleted
	EvChangeLost     // the renew request or response was lost
	// Broker periodic work.
	EvRevive        // a retry copy of Msg written: Topic/Queue/Offset of the copy, Attempt = its reconsumeTimes
	EvReviveSkipped // the record's message is gone
	EvReviveRetried // the retry write failed; the record comes back at Deadline
	EvReviveDropped // dropped after popReviveMaxAttemptTimes: "message may be lost"
	EvCacheFlush    // N cached records moved to the store
	// Client policies.
	EvDLQ  // Msg sent to %DLQ%<group> (proxy rule: reconsumeTimes >= maxAttempts)
	EvDrop // Msg dropped by a named client policy: Detail names it
	// Faults and lifecycle.
	EvCrash         // Client crashed: local state and buffered work gone
	EvRestart       // Client came back
	EvPause         // Client paused (GC): Deadline = pause end (ms)
	EvResume        // Client resumed
	EvBrokerRestart // the broker lost its volatile state
	EvPutFailure    // an injected store write failure
	EvPhase         // the run changed phase: Detail = safety, liveness, done
	EvRebalance     // Pull consumers: queue ownership changed (Client gets Queue)
	EvPull          // Pull consumer fetched N messages from Queue at Offset
	EvCommit        // Pull consumer committed Offset on Queue
)

var eventNames = [...]string{
	"none", "produce", "produce-failed", "pop-request", "pop-response", "pop-suspended", "pop-lost", "deliver",
	"consume-start", "consume-end", "expired-local", "ack-sent", "ack-lost", "ack-accepted", "ack-response-lost",
	"change-sent", "change-accepted", "change-lost", "revive", "revive-skipped", "revive-retried", "revive-dropped",
	"cache-flush", "dlq", "drop", "crash", "restart", "pause", "resume", "broker-restart", "put-failure", "phase",
	"rebalance", "pull", "commit",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// Event is one line of a simulation trace. Unused fields stay zero (Client,
// Queue and Offset use -1 for "none" where 0 is meaningful).
type Event struct {
	Seq      int64 // position in the trace, from 0
	At       clock.Time
	Kind     EventKind
	Client   int32
	Msg      string // UNIQ_KEY
	Topic    string
	Queue    int32
	Offset   int64
	Attempt  int32
	Handle   string
	Deadline int64
	Code     ResponseCode
	N        int64
	Detail   string
}

// AppendText appends the event's canonical one-line text form, which is
// what the trace hash covers. Every field is printed, in a fixed order, so
// two traces are equal exactly when their texts are.
func (e *Event) AppendText(b []byte) []byte {
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.At), 10)
	b = append(b, ' ')
	b = append(b, e.Kind.String()...)
	b = appendField(b, " c=", int64(e.Client))
	if e.Msg != "" {
		b = append(b, " m="...)
		b = append(b, e.Msg...)
	}
	if e.Topic != "" {
		b = append(b, " t="...)
		b = append(b, e.Topic...)
		b = appendField(b, " q=", int64(e.Queue))
		b = appendField(b, " o=", e.Offset)
	}
	b = appendField(b, " a=", int64(e.Attempt))
	if e.Handle != "" {
		b = append(b, " h="...)
		b = append(b, e.Handle...)
	}
	b = appendField(b, " d=", e.Deadline)
	b = appendField(b, " code=", int64(e.Code))
	b = appendField(b, " n=", e.N)
	if e.Detail != "" {
		b = append(b, " "...)
		b = append(b, e.Detail...)
	}
	return b
}

func appendField(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	return strconv.AppendInt(b, v, 10)
}

// String is the canonical text form.
func (e *Event) String() string { return string(e.AppendText(nil)) }
