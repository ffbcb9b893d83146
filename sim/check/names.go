package check

// Invariant names, as they appear in model.Violation.Invariant.
const (
	InvLost             = "lost"                   // a produced message ended neither acked, in the DLQ, nor dropped by a named policy
	InvUnexplained      = "unexplained-redelivery" // a delivery after the first with no cause
	InvConcurrentLease  = "concurrent-lease"       // a delivery while another lease on the message is live
	InvPresentedTopic   = "presented-topic"        // the client saw a topic other than the produced one
	InvDeliveryLocation = "delivery-location"      // delivered from where the message does not live
	InvAckLocation      = "ack-location"           // an accepted ack/renew names a location the client never received
	InvAckIgnored       = "ack-ignored"            // an accepted ack deleted nothing although its record was in flight
	InvRenewIgnored     = "renew-ignored"          // a renew deleted nothing although the record it renews was in flight
	InvBadHandle        = "bad-handle"             // a receipt handle that does not parse
	InvUnnamedDrop      = "unnamed-drop"           // EvDrop without a policy name
	InvMissedWakeup     = "missed-wakeup"          // a suspended pop was not answered after a matching arrival
	InvNoDrain          = "no-drain"               // Final.Drained is false
	InvCommitLag        = "commit-offset-lag"      // a queue's commit offset did not reach its max offset
	InvTraceOrder       = "trace-order"            // Seq did not grow or time went back
)

// Redelivery causes, as they appear in Report.DuplicatesByCause and
// Report.RedeliveriesByCause.
const (
	CauseLeaseExpiry      = "lease_expiry"       // the lease ended without an ack: slow consumer, client expiry check, pause, late ack
	CauseReconsumeLater   = "reconsume_later"    // the consumer failed and asked for a retry
	CauseConsumerCrash    = "consumer_crash"     // the lease holder crashed
	CauseAckLost          = "ack_lost"           // an ack was sent but never reached the broker
	CauseAckRejected      = "ack_rejected"       // the broker answered the ack with an error code
	CauseStaleHandle      = "stale_handle"       // an ack/renew used a handle older than the latest renew
	CauseRenewAfterRevive = "renew_after_revive" // a renew after revive or ack made an extra record
	CauseBrokerRestart    = "broker_restart"     // re-popped from the commit offset after a restart
	CauseClockSkew        = "clock_skew"         // the client judged its lease expired before the broker's deadline
	CauseProducerRetry    = "producer_retry"     // the same UNIQ_KEY was stored twice
	CauseRebalance        = "rebalance"          // Pull: a new queue owner starts from the committed offset
	CausePopLost          = "pop_lost"           // a pop response with the message never reached the consumer
	CauseUnexplained      = "unexplained"        // no cause: always also an unexplained-redelivery violation
)
