// Package ref is a slow, plain reference of pop.Broker: the same non-FIFO
// POP semantics on both paths — the KV (record-based) path and the
// checkpoint (FS) path — and the same Pull path (reads, holds, consumer
// offsets), written for reading, not speed.
// pop's differential and property tests run random operation sequences
// against both and require identical results and state after every step.
//
// # What it owns and must not do
//
// It owns a second, independent implementation of the engine's semantics:
// pop validation, the KV pop, ack, batch ack, changeInvisibleTime, the
// cache, revive, long polling, lease numbering, write faults, Pull with
// its holds, and the consumer offset requests. It imports pop only for the
// request/result types, Config, Stats, the exported constants
// (MaxPopBatch, ReviveIntervalsSeconds, the driver cadence), Faults'
// validation and FaultDraw, the pure hash that defines which writes fail;
// it must never call into the engine's logic, or a shared bug would hide
// itself. Like the engine it reads no clock, draws no random
// number and starts no goroutine. It is not for production: every
// operation is linear (or worse) in the state size.
//
// # Why it is obviously right
//
//   - In-flight records are a plain []pop.LeasedRecord (a
//     model.PopConsumerRecord and its lease, numbered 1, 2, 3 … as granted,
//     from a counter a restart keeps). Their order
//     is bytes.Compare of model.PopConsumerRecord.Key, RocketMQ's own byte
//     key, sorted when needed, so the engine's interned rank ordering and
//     B-tree are checked against the definition rather than against another
//     clever encoding. Put replaces an equal key; delete removes an equal key.
//   - Messages are plain slices per queue; offsets (commit, pull, pending
//     reset) are plain maps keyed by (group, topic, queueId) and are only
//     looked up, never ranged over except to sort.
//   - The cache is a plain slice of records plus the list of cached queues in
//     the order they were first filled (pop.Broker.Cached documents that
//     order and cleanup walks it, so it decides which retry copy gets which
//     offset).
//   - Suspended pop requests are a plain slice; "earliest" is a linear scan
//     for the smallest (expired, id). Held pulls are a plain slice in
//     arrival order; the next hold check is a linear scan for the earliest
//     due one, rounded up to the 5 s check.
//   - The revive scan filters every record by lower <= vt < upper, sorts the
//     matches by key and takes the first page: the definition of
//     scanExpiredRecords, with no early exit.
//   - The checkpoint path (ck.go, ck_revive.go): the timer is a slice
//     scanned for its earliest message; the buffer, its commit queues and
//     the CKs' lease bookkeeping are slices searched linearly by merge key;
//     every PopReviveService pull is taken, one every 100 ms, where the
//     engine steps only at the pulls that change something; the scan
//     times are found by trying the candidate times in order, and
//     NextCheckpointTick by trying the pulls one after the other.
//
// # What it simplifies, and why that is safe
//
//   - No name interning: keys hold the group and topic strings. Interning is
//     not observable (an unknown pair has no records and no offsets).
//   - The group@topic lock table is never pruned. The engine's once-a-minute
//     removeTimeout only deletes entries that are already older than the
//     lock timeout, and an absent entry and an old entry both read as "timed
//     out", so pruning changes no answer.
//   - The fixed commit offset (apache/rocketmq#10949, pop/doc.go) is a map
//     of pending commits: a stage's next begin offset, committed after the
//     pop's records are kept, capped at the smallest cached offset.
//   - Remarks are not reproduced word for word; codes and statuses are (a
//     pull's remark, the store's status name, is).
//
// # Usage
//
//	r, _ := ref.New(pop.DefaultConfig())
//	_ = r.CreateTopic(pop.TopicConfig{Name: "t", ReadQueueNums: 2, WriteQueueNums: 2})
//	_ = r.CreateGroup(pop.DefaultGroup("g"))
//	r.Put(now, &model.Message{Topic: "t", QueueID: 0})
//	var res pop.PopResult
//	r.Pop(now, &pop.PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 32, InvisibleTime: clock.Minute}, &res)
package ref
