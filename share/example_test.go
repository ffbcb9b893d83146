package share_test

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
)

// One member joins, opens a share session, gets a record, accepts it; a
// second record times out and comes back with delivery count 2.
func Example() {
	b, _ := share.New(share.DefaultConfig())
	_ = b.CreateTopic("orders", 1)
	tp := share.TopicPartition{Topic: "orders", Partition: 0}
	now := clock.Epoch

	hb := b.Heartbeat(now, share.HeartbeatRequest{GroupID: "billing", MemberID: "m1", SubscribedTopicNames: []string{"orders"}})
	fmt.Println("assignment:", hb.Assignment)

	// The first fetch loads the share-partition; share.auto.offset.reset is
	// latest, so it starts at the log end.
	fetch := share.ShareFetchRequest{GroupID: "billing", MemberID: "m1", MaxRecords: 500, BatchSize: 500, Partitions: []share.TopicPartition{tp}}
	b.ShareFetch(now, fetch)

	b.Produce(now, share.ProduceRequest{TopicPartition: tp, Records: []*model.Message{{ID: 1}, {ID: 2}}})
	fetch.ShareSessionEpoch = 1
	f := b.ShareFetch(now, fetch)
	for _, d := range f.Deliveries {
		fmt.Println("delivered:", d)
	}

	a := b.ShareAcknowledge(now, share.ShareAcknowledgeRequest{GroupID: "billing", MemberID: "m1", ShareSessionEpoch: 2,
		Acks: []share.PartitionAcks{{TopicPartition: tp, Batches: []share.AckBatch{{FirstOffset: 0, LastOffset: 0, Types: []share.AckType{share.AckAccept}}}}}})
	fmt.Println("acknowledged:", a.Partitions[0].Err, a.Ended[0])

	next, _ := b.NextDeadline()
	for _, e := range b.Tick(next).Ended {
		fmt.Println("timed out:", e)
	}
	fetch.ShareSessionEpoch = 3
	f = b.ShareFetch(next, fetch)
	fmt.Println("again:", f.Deliveries[0])
	// Output:
	// assignment: [orders-0]
	// delivered: lease=1 billing/orders-0@0 msg=1 count=1 member=m1 deadline=T+30s
	// delivered: lease=2 billing/orders-0@1 msg=2 count=1 member=m1 deadline=T+30s
	// acknowledged: NONE(0) lease=1 accepted billing/orders-0@0 msg=1 member=m1 count=1 -> ACKNOWLEDGED
	// timed out: lease=2 lock-timeout billing/orders-0@1 msg=2 member=m1 count=1 -> AVAILABLE
	// again: lease=3 billing/orders-0@1 msg=2 count=2 member=m1 deadline=T+60s
}
