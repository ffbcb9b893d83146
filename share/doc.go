// Package share is popsim's Kafka share-group engine ("Queues for Kafka",
// KIP-932): one Kafka broker's partition logs, its share-partition leaders
// (Kafka's SharePartitionManager and SharePartition), the group
// coordinator's share groups with the simple assignor, and the share
// coordinator that persists share-group state. Names, defaults, limits and
// error codes are Kafka's; docs/share.md says what was followed, which
// Kafka classes and KIPs, and where a reading had to be chosen.
//
// # Contract
//
// Broker is a single-threaded, clockless state machine, shaped like
// pop.Broker. Every method takes now from its caller, runs to completion
// and returns what happened as values. It starts no goroutine, reads no
// clock, draws no random number and does no I/O. Lock timeouts and member
// session timeouts happen only in Tick, which the driver calls at
// NextDeadline. Faults come in as data (SetPersisterFault) and their
// effects come back in results.
//
// # Identity
//
// Every acquisition of a record is one lease, numbered 1, 2, 3 … in grant
// order (model.LeaseID), never reused, not even across Restart. A
// ShareFetchResult lists every Delivery (lease, message with its unchanged
// model.MsgID, location, delivery count, owner, lock deadline). Every
// result that ends leases lists them as LeaseEvents (how it ended, the
// record's state afterwards); RENEW keeps the lease and reports the new
// deadline as a Renewal.
//
// # Operations
//
//	CreateTopic, Produce, DeleteRecords        the logs (record batches)
//	Heartbeat                                  ShareGroupHeartbeat
//	ShareFetch, ShareAcknowledge, CloseSession share sessions, acquisition, acknowledgement
//	Tick, NextDeadline                         lock timeouts, member session timeouts
//	Restart                                    broker restart
//	SetGroupConfig, SetPersisterFault          configuration, fault injection
//	State, SharePartition, Records, Batches,   inspection for tests and checks
//	Groups, Sessions, Stats, CheckInvariants
//
// # Example
//
//	b, _ := share.New(share.DefaultConfig())
//	_ = b.CreateTopic("orders", 1)
//	now := clock.Epoch
//	b.Heartbeat(now, share.HeartbeatRequest{GroupID: "billing", MemberID: "m1", SubscribedTopicNames: []string{"orders"}})
//	tp := share.TopicPartition{Topic: "orders", Partition: 0}
//	f := b.ShareFetch(now, share.ShareFetchRequest{GroupID: "billing", MemberID: "m1", MaxRecords: 500, BatchSize: 500, Partitions: []share.TopicPartition{tp}})
//	// (share.auto.offset.reset is latest: produce after the first fetch, or set earliest)
//	b.Produce(now, share.ProduceRequest{TopicPartition: tp, Records: []*model.Message{{ID: 1}}})
//	f = b.ShareFetch(now, share.ShareFetchRequest{GroupID: "billing", MemberID: "m1", ShareSessionEpoch: 1, MaxRecords: 500, BatchSize: 500, Partitions: []share.TopicPartition{tp}})
//	d := f.Deliveries[0] // d.Lease, d.Msg.ID, d.Deadline ...
//	a := b.ShareAcknowledge(now, share.ShareAcknowledgeRequest{GroupID: "billing", MemberID: "m1", ShareSessionEpoch: 2,
//		Acks: []share.PartitionAcks{{TopicPartition: tp, Batches: []share.AckBatch{{FirstOffset: d.Offset, LastOffset: d.Offset, Types: []share.AckType{share.AckAccept}}}}}})
//	// a.Ended[0].End == share.EndAccepted
//	if t, ok := b.NextDeadline(); ok {
//		b.Tick(t) // expired locks and members
//	}
package share
