// Package pop is popsim's POP engine: one RocketMQ 5 broker's message store,
// consumer offsets, long polling and both of RocketMQ's POP paths — the
// checkpoint (FS) path a default broker runs (PopMessageProcessor with
// checkpoints in the revive topic, PopBufferMergeService, ack messages, the
// timer wheel, PopReviveService; DefaultConfig) and the record-based (KV)
// path, PopConsumerService with its in-flight records and cache
// (popConsumerKVServiceEnable; KVConfig) — plus the broker's side of
// classic Pull (PullMessageProcessor, its hold service and the consumer
// offset requests). Names, defaults, limits and response codes are
// RocketMQ's; docs/rocketmq/checkpoint-path.md and kv-path.md describe the
// two paths, and where they differ.
//
// # Contract
//
// Broker is a single-threaded, clockless state machine. Every operation
// takes now from its caller, runs to completion and returns what happened
// as values: it starts no goroutine, reads no clock, does no I/O and calls
// back into no caller code; its only random draws (the FS pop's randomQ)
// are a pure function of Config.Seed and a durable counter (RandomQ).
// Periodic work runs only when the driver calls it, on RocketMQ's cadence:
// KV, Revive (every ReviveIdleInterval, at once after a full page) and
// CleanupCache (CacheCleanupInterval); FS, CheckpointTick at
// NextCheckpointTick (the timer, the buffer's 5 ms scans and the revive
// rounds, in time order); both, PollTick (at NextPollExpiry),
// CheckHoldRequest (at NextHoldCheck) and OrderTick (at NextOrderTick: FIFO
// lapses and the lock-free notifications). The broker's clock starts at its
// first call. Suspended pop requests come back to the driver as Wakeups
// (from Put, Revive, CleanupCache, CheckpointTick, PollTick, or a Pop with
// restNum > 0), which it re-runs with Pop; held pulls come back as
// PullWakeups, which it re-runs with RerunPull.
//
// # The boundary
//
//   - Time is clock.Time and clock.Duration everywhere at the API;
//     RocketMQ's milliseconds appear only inside receipt handles, the
//     records' own form (model.PopConsumerRecord) and the wire headers
//     (AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader, BatchAck).
//     Durations are truncated to milliseconds where the broker uses them.
//   - The broker never writes into a request and keeps none of the
//     caller's memory: Pop and Pull work on their own copies (a Wakeup
//     carries the broker's copy, with the born time it defaulted), Put
//     stores a copy of the message.
//   - Results never share memory with the broker. Pop, Pull and
//     BatchAckMessages write into a result the caller lends and may reuse
//     (PopResult, PullResult, BatchAckResult): the call overwrites it and
//     reuses its slices, so a steady caller allocates nothing per call;
//     what it keeps past the next call into the same result it copies.
//     Messages come back as copies, Body and Properties included.
//   - Ack and ChangeInvisibleTime take the receipt handle decoded
//     (NewAckRequest and NewChangeInvisibleTimeRequest build the requests
//     from a handle and the topic the client was shown, as
//     ReceiptHandle.getRealTopic does); AckHeader and
//     ChangeInvisibleTimeHeader take the text, for wire callers, and answer
//     a malformed one SYSTEM_ERROR, never a panic.
//   - State is the one snapshot for inspection; the few getters beside it
//     (InFlightCount, MinOffset/MaxOffset, ConsumerOffsets, NextPollExpiry,
//     NextHoldCheck, Message, Config) exist because drivers call them often
//     or they are RocketMQ requests of their own.
//
// # Leases
//
// Every lease has a model.LeaseID: 1, 2, 3 … in creation order, never
// reused, not even across Restart. On the KV path a lease is an in-flight
// record (a pop's, a renewal's, a failed revive's backoff re-insert); on
// the FS path one message of a checkpoint (a pop's CK lends one per
// message, a renewal's and a re-put's one). Every result names exactly the
// leases its call made and ended: PoppedMessage and
// ChangeInvisibleTimeResult the new ones; AckResult.Removed and
// BatchAckResult.Offsets the one each delete removed (with the cache, the
// delete goes by offset alone and may remove another lease than the
// handle's; FS: an ack merged into a buffered CK); AckResult.Pending (FS)
// the lease an ack message will end when the revive service pairs it with
// its CK, reported then as a ReviveAcked Revival;
// ChangeInvisibleTimeResult.Removed, Pending and Replaced the old lease and
// any record with the new key it overwrote (the #10276 family); Revival
// the expired lease and, when retried, the new one; Replaced fields every
// record a write overwrote; RestartResult.LostLeases the cache's and the
// buffer's, ReopenedLeases (FS) the leases whose merged acks a restart
// lost. docs/rocketmq/checkpoint-path.md §14 says when each FS lease ends.
//
// # Faults
//
// Fault injection is data handed to the broker before a call (SetFaults):
// counted write rules and probabilities decided by FaultDraw, a pure hash
// of a seed and the write's ordinal, and (FS) revive read failures. A rule
// on the revive topic fails CK and ack writes. Failures come back in the
// result of the call they happened in (the Failures of every result).
//
// # Files: shared, KV and FS
//
// RocketMQ chooses between the KV path and the checkpoint (FS) path with
// popConsumerKVServiceEnable, per request; popsim does the same. What both
// paths share lives in broker.go, store.go (messages, reads, Put),
// names.go, offsets.go (ConsumerOffsetManager), polling.go
// (PopLongPollingService), pop.go and ack.go (requests, results,
// validation, the shared halves of the operations), revive.go (results
// and retry copies), lease.go, faults.go, state.go, pull.go, pullhold.go
// and consumeroffset.go. The KV path's own parts are in kv_*.go: the
// records index, the cache, KV pop, ack and renewal, and revive. The FS path's are in ck_*.go: the revive topic and the
// timer (ck_store), the lease bookkeeping (ck_lease), PopBufferMergeService
// (ck_buffer), pop (ck_pop), ack, batch ack and renewal (ck_ack),
// PopReviveService (ck_revive) and CheckpointTick (ck_tick). The orderly
// (FIFO) branches of both paths are in order*.go: the OrderInfo table and
// its leases (order), the pops (order_pop), ack and renewal (order_ack),
// OrderTick, persistence and restart (order_tick). assign.go is the
// request modes and QUERY_ASSIGNMENT (QueryAssignmentProcessor), with the
// allocation a pure function of a route (Assign). Every read (both pop
// paths, their retry stages, Pull) and every wakeup subscribes with
// package filter: TAG and SQL92 as the broker evaluates them.
//
// # Data
//
// In-flight records live in a B-tree ordered exactly like RocketMQ's store
// key (visibilityTimeout, group, topic, queueId, offset; see
// model.PopConsumerRecord.AppendKey). Group/topic pairs are interned and
// ranked in the key's bytewise order so comparisons stay on integers.
//
// # Semantics worth knowing
//
//   - Ack of a stale or duplicate handle answers SUCCESS and deletes
//     nothing (AckResult.Removed is 0).
//   - changeInvisibleTime has no existence check: renewing an acked or
//     revived message makes a record (FS: a CK) that revives again (an
//     extra copy).
//   - KV: a record is revived once now-50 passes its visibility timeout; an ack
//     that arrives after the deadline but before the revive pass still
//     deletes it.
//   - Retry messages are presented under their original topic; their
//     handle's retryFlag routes ack and renew to the retry topic.
//   - KV: each stage commits its next begin offset once the pop's records
//     are stored, capped at the smallest cached offset (the fix for
//     apache/rocketmq#10949 as PR #10964 proposes); cache cleanup commits
//     the rest. Acks do not move it. Bugs.CommitOffsetLag restores
//     upstream's value (the offset the stage started from). A commit offset
//     a client stores (a pull's FLAG_COMMIT_OFFSET, UpdateConsumerOffset)
//     replaces it until the next stage.
//   - KV: after an offset correction (OFFSET_TOO_SMALL and friends) the
//     stage reports the offset it started from in startOffsetInfo and in
//     each handle's ckQueueOffset, not the corrected one.
//   - Pull shares the pop's pull offset (pullOffsetTable), commit offset
//     and pending admin reset: a pull moves the position a later pop of
//     the same group starts from.
//   - A held pull is answered by an arrival its filter matches, else at the
//     first 5 s hold check after its suspend time or after a filtered-out
//     arrival on its queue, as PullRequestHoldService does.
//   - FS: an ack is written as an ack message (or merged into a buffered
//     CK) and the message is skipped when the revive service pairs it;
//     the commit offset follows the read position, not the acks; a lease
//     is revived about 2-7 s after its deadline; a failed revive is re-put
//     with the 17-step table, forever by default.
//   - FIFO (Order pops, reviveQid 999 handles, both paths): no record and
//     no checkpoint; an OrderInfo per queue blocks it until the batch is
//     acked or past its next-visible times, and unacked messages are read
//     again in place from the commit offset (order*.go,
//     docs/rocketmq/fifo.md). Each orderly pop lends new leases; they end
//     by ack, renewal, a Lapse when the queue unblocks (OrderTick at
//     NextOrderTick, or the next call) or when a retry with the batch's
//     attemptId re-enters the queue, or a restart that loses the OrderInfo
//     change since the last 10 s flush.
//
// Upstream defects are opt-in switches in Config.Bugs, off by default.
//
// # Example
//
//	b, _ := pop.New(pop.DefaultConfig()) // the checkpoint path; pop.KVConfig() for KV
//	_ = b.CreateTopic(pop.TopicConfig{Name: "orders", ReadQueueNums: 4, WriteQueueNums: 4})
//	_ = b.CreateGroup(pop.DefaultGroup("billing"))
//	now := clock.Epoch
//	b.Put(now, &model.Message{Topic: "orders", QueueID: 1, UniqKey: "m1"})
//	var res pop.PopResult // lent to every Pop: reused, never retained by the broker
//	b.Pop(now, &pop.PopRequest{ConsumerGroup: "billing", Topic: "orders", QueueID: -1, MaxMsgNums: 32, InvisibleTime: clock.Minute}, &res)
//	m := &res.Messages[0] // m.Lease, m.Deadline, m.Handle, m.Message
//	ack := pop.NewAckRequest("billing", m.Message.Topic, &m.Handle)
//	b.Ack(now, &ack) // FS: AckResult.Pending == m.Lease (KV: Removed)
//	for t, ok := b.NextCheckpointTick(); ok && t <= later; t, ok = b.NextCheckpointTick() {
//		b.CheckpointTick(t) // revive rounds pair the ack: a ReviveAcked Revival
//	}
package pop
