package model

// MsgID is the simulator's dense identity of a produced message: 1, 2, 3 …
// in the order the engine stores them (0 means none). Engines copy it
// unchanged into every copy they make of a message (a retry copy, a DLQ
// copy, a redelivery in place), so it names the message across all of its
// deliveries. It is the checker's ledger key; UNIQ_KEY stays the
// RocketMQ-visible message id.
type MsgID uint32

// LeaseID identifies one lease an engine granted: one in-flight record of
// RocketMQ's KV path, one message of a checkpoint on the checkpoint path,
// one acquisition of a Kafka share-partition record, one receive of an SQS
// message. An engine numbers its leases 1, 2, 3 … in the order it grants
// them and never reuses a number, not even across a restart; 0 means
// none. Results and the trace carry lease ids, so nobody has to guess
// which lease a delivery, an ack, a renewal or a redelivery belongs to.
type LeaseID uint64
