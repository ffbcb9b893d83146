// Package check is popsim's at-least-once checker. It reads a simulation
// trace (model.Event, in order) and keeps a ledger per message (UNIQ_KEY):
// where the message lives, every delivery and what its consumer did, the
// in-flight records the broker holds for it, and how it ended. Safety
// invariants are checked at the event that breaks them; liveness and the
// ledger's balance at Finish. Every violation carries the seed, the event's
// Seq, the message's last trace lines and the replay command.
//
// It owns the verdict only: it reads no simulator or engine state, draws no
// random number, reads no clock and never lets map order decide anything
// (violations come out in trace order, then in produce order at Finish).
// It follows one consumer group: the trace has no group field, so a run
// with several groups on one topic needs one Checker per group (the
// simulator allows one group per topic). The FIFO (orderly) variant is not
// checked yet: it would hook into onDeliver with per-queue state.
//
// # Usage
//
//	c := check.New(check.Options{Seed: seed, Replay: "popsim run -seed 42"})
//	for each trace event e { c.Observe(&e) }
//	rep := c.Finish(check.Final{CommitLag: lags, Drained: drained})
//	// rep.Produced == rep.Acked + rep.DLQ + rep.Dropped + rep.Lost
//
// # Trace conventions the checker relies on
//
//   - EvDeliver is written when the client gets the message. Topic, Queue
//     and Offset say where the message really lives (a retry topic for a
//     retry copy); Detail is "topic=<topic the client was shown>"; Handle is
//     the receipt handle, whose popTime and popTime+invisibleTime are the
//     broker's pop time and record deadline (the checker reasons in broker
//     time, since a paused client may get a response long after the pop). A
//     delivery with no Handle is a Pull consumer's: no lease, no record.
//   - Consumer events (EvConsumeStart/End, EvExpiredLocal, acks, renews)
//     name their lease by Handle; EvConsumeEnd.Detail is success, later or
//     exception; EvExpiredLocal.Detail is before (given up unconsumed),
//     after, ack, change or renew (not sent).
//   - The broker's effect is reported even when the answer is then lost:
//     EvAckAccepted (N = 1 if a record was deleted) before
//     EvAckResponseLost, EvChangeAccepted (new Handle, N = 1 if the old
//     record was deleted) before EvChangeLost. A lost request is EvAckLost
//     / EvChangeLost with the old handle. An ack with Detail "proxy" is the
//     proxy acking a message it popped and sent to the DLQ itself.
//   - Revive-loop events carry the record's location (Topic/Queue/Offset,
//     for EvRevive the copy's) and Deadline = the record's deadline
//     (EvReviveRetried: its new one). Without a Deadline the checker takes
//     the first expired record in the broker's key order.
//   - EvPopRequest carries Topic and Deadline = invisibleTime; EvPopLost
//     with N > 0 is a response with messages that never reached the client.
//
// # Invariants (model.Violation.Invariant)
//
//   - lost: at Finish a produced message is neither acked (an accepted
//     SUCCESS ack of a delivery consumed successfully; a late ack counts),
//     in the DLQ (EvDLQ), nor dropped by a named client policy (EvDrop,
//     counted per policy). Also at EvReviveDropped/EvReviveSkipped when the
//     message is not settled and no copy or record can bring it back.
//   - unexplained-redelivery: a delivery after the first without a cause
//     (below): a location popped twice with no broker restart between the
//     two pops, a retry copy with no expired record behind it (or one
//     revived before its deadline), a revived record whose lease had been
//     acked with its current handle.
//   - concurrent-lease: a delivery popped while another lease of the same
//     line is live (made earlier, deadline later, not acked or renewed
//     away). Extra lines (below) may overlap: those duplicates are by design.
//   - presented-topic: the client was shown a topic other than the produced
//     one (a %RETRY% name leaking), or the delivery does not say.
//   - delivery-location: delivered from a location the message does not
//     live at, a handle naming another location, or a message never produced.
//   - ack-location: an accepted ack or renew names a location the message
//     does not live at, or a lease the client never received.
//   - ack-ignored / renew-ignored: the broker answered N = 0 although the
//     record the handle names was in flight by the ledger's reckoning (and
//     no broker restart or offset-only cache delete makes that uncertain).
//   - bad-handle: a receipt handle that does not parse.
//   - unnamed-drop: EvDrop without a policy name.
//   - missed-wakeup: a message became visible on topic T (EvProduce on queue
//     q, or an EvRevive copy) at time t while a pop request on T was
//     suspended (EvPopSuspended not yet answered by EvPopResponse/EvPopLost
//     for that client; all-queue requests, or queue q for a produce), and by
//     t + WakeupSlack there was neither a delivery of a message of T nor an
//     answer to a suspended request on T. Requests of crashed clients do
//     not count; while a paused client holds a suspended request on T no
//     arrival there is judged (the broker may wake that one, and its answer
//     is written only when the client resumes); a broker restart drops them
//     all; an arrival whose slack runs past the end of the trace is not
//     judged. Tag filters are not
//     seen: a subscription that filters the arrival out would be reported.
//   - no-drain: Final.Drained is false.
//   - commit-offset-lag: a Final.CommitLag entry is not 0.
//   - trace-order: Seq did not grow or time went back.
//
// # Lines and redelivery causes (Report.RedeliveriesByCause)
//
// A message's main line is one lease at a time. Some by-design behaviours
// fork an extra line that lives alongside it: renew_after_revive,
// stale_handle (a renew with a superseded handle), broker_restart (a
// re-pop), pop_lost (a pop whose response never reached a consumer: which
// location it took is a guess), producer_retry, rebalance. A renew continues the line of the record it renews; a retry
// copy inherits the line of the record that revived. Causes, decided from
// the revived record's story when the copy is written (or from the
// previous pop, for a re-pop):
//
//   - lease_expiry: the lease ended without an ack: slow consumer, pause,
//     the client's own expiry check, or an ack that came late.
//   - reconsume_later: the consumer failed and asked for a retry (a retry,
//     never a duplicate by itself).
//   - consumer_crash: the lease holder crashed.
//   - ack_lost: an ack was sent and never reached the broker (EvAckLost, or
//     still in flight when the copy was delivered).
//   - ack_rejected: the broker answered the ack with an error code.
//   - stale_handle: an ack or renew used a handle older than the lease's
//     latest EvChangeAccepted, so the newer record revived.
//   - renew_after_revive: EvChangeAccepted with N = 0 after the record was
//     revived, re-keyed by a failed revive, or acked: an extra record.
//   - broker_restart: a location popped again after a restart between the
//     two pops (the pull offset is lost; pops restart at the commit offset),
//     including the other record of an offset-only cache delete.
//   - clock_skew: the client judged its lease expired before the broker's
//     deadline and did not ack.
//   - pop_lost: the pop response carrying the message never reached the
//     consumer.
//   - producer_retry: the same UNIQ_KEY stored twice.
//   - rebalance (Pull): a new queue owner re-pulled from the committed offset.
//   - unexplained: none of these; always also a violation.
//
// A duplicate (Report.Duplicates) is a successful consumption of a message
// already consumed successfully by an earlier delivery: the business logic
// saw it twice. It is blamed on the fork when the two deliveries are on
// different lines, else on what brought the message back after its first
// success (a reconsume_later retry passes on its predecessor's cause).
//
// # Upstream bugs and what catches them (pop.Bugs switches)
//
//   - apache/rocketmq#10276, same-deadline changeInvisibleTime deletes the
//     new record: ack-ignored when the consumer later acks (the broker has
//     silently dropped the lease; the commit offset then never passes it),
//     lost when nothing else brings it back.
//   - #10667, cache cleanup ignores a failed revive: EvReviveDropped with
//     nothing left, reported as lost at that event.
//   - #9632, V1 retry copies do not wake suspended pops: missed-wakeup.
//   - #10949, the KV commit offset lags and never converges:
//     commit-offset-lag at Finish. (pop's Bugs.CommitOffsetLag commits
//     an empty pop's start offset, which is the max offset once drained,
//     so consumers that keep polling hide the lag by the end of a run.)
//   - #11195/#10945, retry re-encoding shows the %RETRY% topic to clients:
//     presented-topic at the delivery (then ack failures and lost messages).
//
// # What the checker knows it cannot see
//
// The broker's cache deletes by queue offset, so with two records at one
// location (a re-pop after a restart) an ack may remove the other one:
// the ledger keeps the removed record as a ghost that may still revive and
// judges neither record strictly. Records made before a broker restart may
// have been lost with the cache: an N=0 answer naming one removes it, and
// none of them is reported as ignored. A failed revive names only the
// location; if a later revive shows it was the other record there, the
// ledger swaps them. A revive within 50 ms of its deadline comes from the
// cache, so from a pop-made record. A delivery event is written when the
// client gets the message, so a paused client's pop can be seen after its
// record revived or failed a revive: such revives are held as orphans that
// the late delivery claims. Pop responses that never arrived (EvPopLost
// with N > 0, or a crash with a pop request open) explain revives of
// records no delivery made, within the window of deadlines they allow.
// Two leases of one client on one location make renew answers ambiguous:
// they are paired by deadline and not judged. These are the places where
// the checker is lenient by design; everywhere else it is strict.
//
// # Memory
//
// A message is held in full while it is unsettled or may still come back
// (a copy not yet popped, a record that may revive, a consumer still
// working on it, a Pull retry pending). Then it shrinks to a tombstone
// (topic, how it settled, its locations' pop times) that lets a broker
// re-pop after a restart be recognised. Records the ledger cannot be sure
// of (made before a restart, or left ambiguous by the cache's offset-only
// delete) stop holding a message 60 s after their deadline. A message's
// history keeps its first event and its last 29.
package check
