// Package pop is popsim's POP engine: one RocketMQ 5 broker's message store,
// consumer offsets, in-flight records, in-memory cache, long polling and
// revive, behaving like the record-based (KV) path, PopConsumerService.
// ../shared/spec/rocketmq-pop.md is the reference; names, defaults, limits
// and response codes are RocketMQ's.
//
// # Contract
//
// Broker is a single-threaded, clockless state machine. Every method takes
// now from its caller, runs to completion and returns what happened. It
// starts no goroutine, reads no clock, draws no random number and does no
// I/O. Periodic work runs only when the driver calls it, on RocketMQ's
// cadence: Revive (every ReviveIdleInterval, at once after a full page),
// CleanupCache (CacheCleanupInterval), PollTick (at NextPollExpiry).
// Suspended pop requests come back to the driver as Wakeups (from Put,
// Revive, CleanupCache, PollTick, or a found Pop with restNum > 0) and the
// driver re-runs them with Pop.
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
//   - Ack of a stale or duplicate handle answers SUCCESS and deletes nothing
//     (AckResult.Deleted tells the harness).
//   - changeInvisibleTime has no existence check: renewing an acked or
//     revived message makes a record that revives again (an extra copy).
//   - A record is revived once now-50 passes its visibility timeout; an ack
//     that arrives after the deadline but before the revive pass still
//     deletes it.
//   - Retry messages are presented under their original topic; their
//     handle's retryFlag routes ack and renew to the retry topic.
//   - The commit offset converges to the smallest offset still owed an ack
//     (the fix for apache/rocketmq#10949); Bugs.CommitOffsetLag restores
//     upstream's lagging value.
//
// Upstream defects are opt-in switches in Config.Bugs, off by default.
// The orderly (FIFO) variant and the checkpoint (FS) path are not built
// yet; FIFO requests are refused with INVALID_PARAMETER rather than faked.
//
// # Example
//
//	b, _ := pop.New(pop.DefaultConfig())
//	_ = b.CreateTopic(pop.TopicConfig{Name: "orders", ReadQueueNums: 4, WriteQueueNums: 4})
//	_ = b.CreateGroup(pop.DefaultGroup("billing"))
//	now := clock.Epoch
//	b.Put(now, &model.Message{Topic: "orders", QueueID: 1, UniqKey: "m1"})
//	var res pop.PopResult // lent to every Pop: reused, never retained by the broker
//	b.Pop(now, &pop.PopRequest{ConsumerGroup: "billing", Topic: "orders", QueueID: -1, MaxMsgNums: 32, InvisibleTime: clock.Minute}, &res)
//	m := &res.Messages[0]
//	ack := pop.NewAckRequest("billing", m.Message.Topic, &m.Handle)
//	b.Ack(now, &ack)
package pop
