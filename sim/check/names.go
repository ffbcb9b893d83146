package check

// Invariant names, as they appear in model.Violation.Invariant.
const (
	InvLost             = "lost"                   // a produced message ended neither acked, in a DLQ, nor dropped by a named policy
	InvUnexplained      = "unexplained-redelivery" // a redelivery with no cause, or an engine that redelivered a lease it had not let run out
	InvConcurrentLease  = "concurrent-lease"       // a lease granted while another lease of the same line is promised
	InvPresentedTopic   = "presented-topic"        // the client saw a topic other than the produced one
	InvDeliveryLocation = "delivery-location"      // a lease or delivery where the message does not live, or of a message never produced
	InvAckLocation      = "ack-location"           // a client acted on a lease it was never given
	InvAckIgnored       = "ack-ignored"            // an accepted ack removed nothing although its lease was in flight
	InvRenewIgnored     = "renew-ignored"          // an accepted renewal removed nothing although the lease it renews was in flight
	InvUnnamedDrop      = "unnamed-drop"           // a drop or dead-letter without a policy
	InvMissedWakeup     = "missed-wakeup"          // a parked receive was not answered after a matching arrival
	InvNoDrain          = "no-drain"               // Final.Drained is false
	InvCommitLag        = "commit-offset-lag"      // a queue's commit offset did not reach its max offset
	InvTraceOrder       = "trace-order"            // Seq did not grow or time went back
	InvTraceForm        = "trace-form"             // an event that names something the trace never introduced
	InvDeliveryCount    = "delivery-count"         // a message lent again in place with no more deliveries counted than the lease it came back from
	InvFifoOrder        = "fifo-order"             // orderly group: a lease past an earlier offset of its queue still owed an ack, or out of order
	InvFifoReentry      = "fifo-reentry"           // orderly group: a same-attemptId retry answered empty while the lost answer's leases lived
	InvFifoStall        = "fifo-stall"             // orderly group, liveness: a queue stayed blocked past its leases' deadline plus the group's slack
)

// Redelivery causes, as they appear in Report.DuplicatesByCause and
// Report.RedeliveriesByCause.
const (
	CauseLeaseExpiry      = "lease_expiry"       // the lease ran out without an ack: slow consumer, client expiry check, pause, late ack
	CauseReconsumeLater   = "reconsume_later"    // the consumer failed (or released the message) and it came back as a retry
	CauseConsumerCrash    = "consumer_crash"     // the lease holder crashed
	CauseAckLost          = "ack_lost"           // an ack was sent but never reached the engine
	CauseAckRejected      = "ack_rejected"       // the engine answered an ack sent in time with an error code
	CauseStaleHandle      = "stale_handle"       // the client acked or renewed a lease a renewal had replaced
	CauseRenewAfterRevive = "renew_after_revive" // a renewal of a lease that had already ended made an extra lease
	CauseBrokerRestart    = "broker_restart"     // a lease at a place leased before a broker restart
	CauseReviveCutOff     = "revive_cut_off"     // RocketMQ checkpoint path: the revive round stopped at reviveScanTime before reading the lease's ack
	CauseClockSkew        = "clock_skew"         // the client judged its lease expired before the engine's deadline
	CauseProducerRetry    = "producer_retry"     // the same message was stored twice
	CauseRebalance        = "rebalance"          // Pull: a new queue owner starts from the committed offset; POP: the client dropped a queue it had popped a message for
	CausePopLost          = "pop_lost"           // the response lending the message never reached the consumer
	CauseDuplicateCopy    = "duplicate_delivery" // SQS standard: a second copy of a message in flight was delivered (its first lease went stale)
	CauseOrderGap         = "order_gap"          // orderly: acked while an earlier message of its queue was not, lent again behind it
	CauseModeSwitch       = "mode_switch"        // RocketMQ: the group was switched from PULL to POP; a pop read what a pull consumer had taken, or the other way round
	CauseUnexplained      = "unexplained"        // no cause: always also a violation
)

// causeFirst marks a first delivery (the produce's own token): not a
// redelivery, never counted.
const causeFirst = "first"
