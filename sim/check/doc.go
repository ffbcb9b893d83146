// Package check is popsim's at-least-once checker. It reads a simulation
// trace (model.Event, in order) and keeps a ledger per consumer group and
// message: where the message lives, every lease an engine granted on it
// and what became of each, what the consumers did with their deliveries,
// and how the message ended. Safety invariants are checked at the event
// that breaks them; liveness and the ledger's balance at Finish. Every
// violation carries the seed, the event's Seq, the message's recent trace
// lines and the replay command.
//
// It owns the verdict only: it reads no simulator or engine state, draws no
// random number, reads no clock and never lets map order decide anything
// (violations come out in trace order, then in group and message order at
// Finish). The same checker judges every engine: RocketMQ's paths, Kafka
// share groups, SQS. `popsim check TRACE` runs it on a saved trace.
//
// # Usage
//
//	c := check.New(check.Options{Seed: seed, Replay: "popsim run -seed 42"})
//	for each trace event e { c.Observe(&e) }
//	rep := c.Finish(check.Final{CommitLag: lags, Drained: drained})
//	// rep.Produced == rep.Acked + rep.DLQ + rep.Dropped + rep.Lost, counted
//	// per (group, message); rep.Groups is each group's share
//
// # What the checker sees
//
// Every lease has an identity (model.LeaseID) that the engine hands out
// and the trace carries, so nothing is guessed:
//
//   - EvSubscribe tells which group each consumer belongs to and which
//     topic it consumes; EvProduce opens the message in every group
//     consuming its topic (a message stored twice gets an extra line).
//   - EvLease is the engine lending a message, at the engine's time: the
//     lease, the client, the place (topic, queue, offset) and the deadline.
//     EvDeliver is the client getting it (later, or never if the response
//     is lost: that lease was never delivered). Pull deliveries carry no
//     lease.
//   - Every engine answer names the lease the client named (Lease) and the
//     lease the engine actually removed (Ended): RocketMQ's KV cache
//     deletes by queue offset only and may remove another lease of the
//     message at the same place, which the checker then follows exactly.
//     A renewal names its new lease (Next). An answer to a late word about
//     a message the checker had forgotten still counts: what it removed
//     ends, and a lease a renewal made brings the message back on an
//     extra line.
//   - A lease that runs out ends by a named event: a revive with a copy
//     elsewhere (EvRevive), in place (EvLapse: FIFO, Kafka, SQS), a retry
//     of a failed revive with a new lease (EvReviveRetried), the message
//     gone (EvReviveSkipped), given up (EvReviveDropped), forgotten by a
//     restart or overwritten by an equal store key (EvLeaseLost), or
//     dead-lettered by the engine's own policy (EvDeadLetter).
//   - An ack an engine accepted ends the lease it names (Ended) for good:
//     RocketMQ's checkpoint path names the lease of an ack written as an
//     ack message (its promise to skip the lease when revive pairs it),
//     so a later revive of that lease is unexplained. The one exception
//     is EvLeaseReopened: a broker restart lost an accepted ack (merged
//     into a written checkpoint, not yet written itself), or a revive
//     round stopped at reviveScanTime before reading the ack message
//     (Reason ack-cut-off), and the lease is in flight again until its
//     deadline, settled by its holder (not promised), on a line of its
//     own whose redelivery is broker_restart or revive_cut_off.
//     A reopened lease of a message the checker had forgotten brings the
//     message back (the event names its group and place).
//
// The ledger: a message is available at a place once per token — its
// produce, a copy, a lapse or release in place. A lease takes a token; the
// token says why (the story of the lease whose end made it, read when the
// token is taken). A lease at a place with no token is explained only by a
// broker restart since the place was last lent (the engine lost where it
// was and starts again from the commit offset); anything else is an
// unexplained redelivery.
//
// # Invariants (model.Violation.Invariant)
//
//   - lost: at Finish a message is neither acked (an accepted ack of a
//     delivery consumed successfully; a late ack counts; through a proxy
//     that keys handles by message id, the same client's accepted ack of
//     its other delivery of the message counts too; for an orderly group,
//     the engine's commit offset passing a message consumed successfully
//     counts, as upstream's commitAndNext commits past a lost ack once a
//     restart lost the OrderInfo), in a DLQ (EvDLQ, or EvDeadLetter with
//     a place), nor dropped by a named policy.
//   - unexplained-redelivery: a lease with no token and no restart to
//     explain it; a lease the engine ran out before its deadline, or after
//     it had ended; a redelivery from a lease whose ack the engine had
//     accepted and kept.
//   - concurrent-lease: a lease granted while another lease of the same
//     line is still promised (not settled by its client, deadline later
//     than now: a lease that ends exactly now is not promised). Extra lines
//     (below) may overlap the main one: those duplicates are by design.
//   - presented-topic: the client was shown a topic other than the
//     produced one (a %RETRY% name leaking), or nothing.
//   - delivery-location: a lease or delivery at a place the message never
//     lived, or of a message never produced on the group's topic.
//   - ack-location: a client acted on a lease it was never given.
//   - ack-ignored / renew-ignored: the engine accepted an ack or renewal of
//     a lease in flight and removed nothing.
//   - unnamed-drop: a drop or dead letter without a policy.
//   - missed-wakeup: a message became visible to a group (a produce, a
//     copy, a lapse or release) at t while a receive of the group on that
//     topic was parked (all queues, or its queue for a message in place),
//     and by t + WakeupSlack the group was neither lent a message of the
//     topic nor answered on a parked receive. Receives of crashed clients
//     do not count; while a paused client holds a parked receive on the
//     topic no arrival is judged (the engine may wake it and its answer is
//     written only when it resumes); a broker restart drops them all; an
//     arrival whose slack runs past the end of the trace is not judged.
//     A copy in another topic of an orderly group's message is owed no
//     wakeup: orderly pops never read a retry topic.
//   - fifo-order, fifo-reentry (orderly groups: subscribe r=orderly): a
//     lease past an earlier offset of its queue that is still lent to
//     another answer, or owed an ack and not lent again first in the same
//     answer, or one answer lending its queue out of order; an empty answer
//     to a same-attemptId retry while the lost answer's leases live
//     (#10827). order.go says what orderly groups do by design.
//   - fifo-stall (liveness, orderly groups): in the liveness phase a queue
//     unblocked (its leases lapsed) later than the latest deadline of its
//     leases since it was last free plus the group's slack (subscribe
//     Span), or is still blocked past that at the end. A late renewal's
//     lease counts even when its message was settled and forgotten: after
//     a restart lost the ack, the engine blocks the queue for it.
//   - no-drain, commit-offset-lag: liveness, from Final.
//   - trace-order: Seq did not grow or time went back. trace-form: an event
//     that names something never introduced (a lease granted twice, a
//     client that never subscribed).
//
// # Lines and causes (Report.RedeliveriesByCause, DuplicatesByCause)
//
// A message's main line holds at most one promised lease at a time. By
// design some behaviours fork an extra line that lives alongside it: a
// renewal of a lease that had ended (renew_after_revive, or stale_handle
// when a renewal had replaced it), a lease after a broker restart
// (broker_restart), a message stored twice (producer_retry). A renewal's
// lease and a failed revive's retry continue their lease's line; a copy
// or lapse continues the line of the lease that ran out. The cause of a
// redelivery is read from that lease's story:
//
//   - reconsume_later: the consumer failed (RECONSUME_LATER, an exception,
//     a RELEASE): a retry, never a duplicate by itself.
//   - pop_lost: the lease was never delivered (its response was lost).
//   - consumer_crash: its holder crashed before sending an ack, or its
//     ack was lost with the crashed client's connection (client-gone).
//   - ack_lost: an ack was lost, or still had no answer when the copy was
//     lent; ack_rejected: the engine answered with an error an ack sent
//     before the lease's deadline (a refused late ack is lease_expiry).
//   - stale_handle: the client acked or renewed a lease a renewal had
//     replaced, so the newer lease ran out.
//   - clock_skew: the client judged the lease expired before its deadline.
//   - lease_expiry: none of these: a slow consumer, a pause, a late ack.
//   - duplicate_delivery: an SQS standard queue delivered a second copy
//     of a message in flight (lease-lost r=superseded): a fork, like a
//     broker restart's.
//   - order_gap (orderly): acked while an earlier message of its queue was
//     not, so the queue's commit offset stayed before it and the next
//     answer, which reads from that earlier message, lends it again. An
//     ack by the handle of an earlier pop than the queue's latest acks
//     nothing (the broker ignores another pop's popTime), so its message
//     stays "not acked" here.
//   - mode_switch: a group switched from PULL to POP (request-mode): a
//     lease at a place a pull delivery took last (the checkpoint path's
//     pops start at the commit offset), or a pull delivery at a place a
//     lease took last (a pull owner not yet rebalanced reads what a pop
//     took, on the KV path's pull offset). A lease forks a line.
//   - rebalance (Pull) also covers two pull owners of one queue: members
//     that take PULL queues from the broker apply an assignment each at
//     its own rebalance (rebalance r=pull ... r=dropped), and while a
//     queue has two owners each reads what the other read; tombstones
//     stay while two readers share a queue (two owners, or a pull owner
//     of a switched group).
//   - broker_restart, revive_cut_off, rebalance (Pull), producer_retry,
//     renew_after_revive:
//     the fork's origin, for leases of an extra line and for a lease the
//     engine kept when it removed another one in its place.
//   - unexplained: none; always also a violation.
//
// Engines that redeliver in place use the same causes: a Kafka lock or
// an SQS visibility timeout running out is a lapse, judged like a revive;
// a Kafka lapse before its deadline must say why (r=session-closed: its
// holder's session closed, which a crash does). A lease lent again in
// place counts one more delivery than the lease it came back from
// (delivery-count), unless a broker restart came in between: the engine
// then reloads the count it last wrote, which is the count of the
// message's latest lease that was released or ran out, except a lapse
// traced r=unpersisted (Kafka keeps a lock timeout whose state write
// failed in memory only); the next lease must count more than that. A
// Kafka RENEW or an SQS ChangeMessageVisibility may keep its lease id
// (renewed with Next = Lease); engine dead letters (delivery-limit,
// redrive, retention) end the message's availability (retention counts as
// a drop by policy). A group subscribed r=ordered (SQS FIFO) is owed no
// wakeup for a queue with a lease in flight.
//
// A duplicate (Report.Duplicates) is a successful consumption of a message
// the group had already consumed successfully. It is blamed on the fork
// its line is when it is on another line than the first success (on the
// first success's fork when it is on the main line), else on what brought
// the message back after the first success (a retry passes on the cause
// before it).
//
// # Memory
//
// A message is held while it is unsettled or may still come back: a lease
// in flight, a lease on its way to its client (lent, the answer carrying it
// neither received nor lost), a token not yet taken, a consumer still
// holding it or about to retry it (Pull). Then it is forgotten; what
// remains is a tombstone per place it was lent at, so that a broker
// restart lending it again is recognised (its other places' tombstones
// come back as they are named), until the group's
// commit offset (EvCommit) passes the place. Leases are forgotten with
// their message. Message and lease ids are dense, so both live in slices
// from the oldest id still held. Violations print a message's history from
// a ring of the most recent events (Options.HistoryEvents), kept in their
// binary form: copied, or, for a caller that writes every event's binary
// form into a buffer of its own (the simulator's tracer), read where it
// wrote them, the caller giving each event's length alone
// (Checker.ShareBuffer, Checker.ObserveShared, Checker.Seal).
//
// The trace does not say which of a client's receives an answer, a loss or
// a lease belongs to, and a client with several pop loops (one per broker,
// or per queue the broker assigned it) has several out at once. A lent
// lease is therefore held as on its way until counts of the client's
// receives prove that no answer still travelling can carry it: no live
// receive is out, or the losses announced since the last release account
// for every lease still awaited (receives.go). The counts err towards
// holding: a lease may be held longer than needed (memory), never let go
// while its answer may still deliver it. A fifo-reentry check blames only
// leases a loss took for certain.
package check
