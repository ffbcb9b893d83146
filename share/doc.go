// Package share is popsim's Kafka share-group engine ("Queues for Kafka",
// KIP-932): one Kafka broker's partition logs, its share-partition leaders
// (Kafka's SharePartitionManager and SharePartition), the group
// coordinator's share groups with the simple assignor, and the share
// coordinator that persists share-group state. Names, defaults, limits and
// error codes are Kafka's (ErrorCode, Config with the Kafka keys).
// docs/share.md says what was followed (Kafka classes, KIPs, JIRAs), where a
// reading had to be chosen, and what is not modelled.
//
// # What it owns and must not do
//
// Broker is a single-threaded, clockless state machine, shaped like
// pop.Broker. Every method takes now from its caller, runs to completion
// and returns what happened as values; nothing calls back. It starts no
// goroutine, reads no clock, draws no random number and does no I/O; it
// imports only clock, model and the standard library (and tidwall/btree).
// Lock timeouts and member session timeouts happen only in Tick, which the
// driver calls at NextDeadline. Faults come in as data (SetPersisterFault)
// and their effects come back in results.
//
// # Identity (the checker's contract)
//
// Every acquisition of a record is one lease (model.LeaseID), numbered 1,
// 2, 3 … in grant order, never reused, not even across Restart. A
// ShareFetchResult lists every Delivery: lease, the stored message (its
// model.MsgID unchanged on every delivery and on a dead-letter copy),
// location, delivery count, owner and lock deadline. Every lease ends
// exactly once, in the result of the call that ended it, as a LeaseEvent
// saying how (LeaseEnd) and the record's state afterwards: acknowledgements
// (ShareFetch, ShareAcknowledge), session closes (final epoch,
// CloseSession), lock timeouts (Tick) and Restart. RENEW keeps the lease and
// reports its new deadline as a Renewal.
//
// # Operations
//
//	CreateTopic, Produce, DeleteRecords          logs of record batches
//	Heartbeat                                    ShareGroupHeartbeat (join, leave, rebalance)
//	ShareFetch, ShareAcknowledge, CloseSession   share sessions, acquisition, acknowledgements
//	NextDeadline, Tick                           lock timeouts, member session timeouts
//	Restart                                      what survives: logs, persisted state, groups
//	SetGroupConfig, SetPersisterFault            group configuration, write faults
//	State, SharePartition, Records, Batches,     inspection for tests and the
//	Groups, Sessions, Stats, NextLease,          simulator's liveness checks
//	CheckInvariants
//
// # Example
//
//	b, _ := share.New(share.DefaultConfig())
//	_ = b.CreateTopic("orders", 1)
//	tp := share.TopicPartition{Topic: "orders", Partition: 0}
//	b.Heartbeat(now, share.HeartbeatRequest{GroupID: "billing", MemberID: "m1", SubscribedTopicNames: []string{"orders"}})
//	f := b.ShareFetch(now, share.ShareFetchRequest{GroupID: "billing", MemberID: "m1", ShareSessionEpoch: 0,
//		MaxRecords: 500, BatchSize: 500, Partitions: []share.TopicPartition{tp}})
//	for _, d := range f.Deliveries { /* d.Lease, d.Msg.ID, d.Deadline ... */ }
//	a := b.ShareAcknowledge(now, share.ShareAcknowledgeRequest{GroupID: "billing", MemberID: "m1", ShareSessionEpoch: 1,
//		Acks: []share.PartitionAcks{{TopicPartition: tp, Batches: []share.AckBatch{{FirstOffset: 0, LastOffset: 0, Types: []share.AckType{share.AckAccept}}}}}})
//	// a.Ended: one LeaseEvent per record, End == share.EndAccepted
//	if t, ok := b.NextDeadline(); ok {
//		b.Tick(t) // expired locks (LeaseEvents) and members
//	}
//
// Example (example_test.go) runs this path.
package share
