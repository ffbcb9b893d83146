// Package sqs is popsim's Amazon SQS engine: standard and FIFO queues,
// their messages, visibility timeouts (leases), long polling, dead-letter
// redrive, retention and purge, with SQS's attribute names, defaults,
// limits and error codes. docs/sqs.md says which AWS documentation each
// rule follows and where the engine chose between readings.
//
// # Contract
//
// Service is a single-threaded, clockless state machine. Every method that
// changes state takes now from its caller, first runs everything due up to
// now (visibility deadlines, delay ends, retention ends, long-poll wait
// ends, in time order), then the request, and returns a result value. It
// starts no goroutine, reads no clock, draws no random number and does no
// I/O: what SQS decides at random comes in as data on the request (the
// servers a short poll samples, ReceiveMessageRequest.Sample; the
// duplicate-delivery fault, ReceiveMessageRequest.DuplicateSeq) or the
// configuration (Config.HandleSalt). Time must not move backwards; doing so
// panics, as clock.Virtual does.
//
// Every result embeds Effects: the events that happened during the call
// (each stamped with the instant it happened, which is earlier than now
// when the driver calls late) and the answers of parked long polls. The
// driver calls Tick at NextDue to have them on time; calling later gives
// the same events and answers, only later.
//
// # Identity
//
// Each receive of a message is one lease, numbered 1, 2, 3 … in grant order
// across the service (model.LeaseID), never reused. A Delivery names the
// message (model.MsgID, kept unchanged on a dead-letter copy), where it
// lives (queue and Seq, its position: a per-queue counter given at send
// and at a dead-letter move), the receive count, the lease, the receipt
// handle (built from queue, position and lease, see ReceiptHandle) and the
// visibility deadline. Every lease ends exactly once, by an Event that
// names it with Ended set: Deleted, MadeVisible (visibility 0), Expired,
// Superseded (duplicate fault), RetentionExpired or Purged. Changed gives a
// live lease a new deadline. Redriven moves a visible message to the
// dead-letter queue (no lease ends: the last one already expired). A
// retried ReceiveRequestAttemptId returns the same leases (Delivery.Retry)
// with a new deadline.
//
// # Usage
//
//	s, _ := sqs.New(sqs.DefaultConfig())
//	now := clock.Epoch
//	s.CreateQueue(now, "orders", map[string]string{"VisibilityTimeout": "60"})
//	s.SendMessage(now, &sqs.SendMessageRequest{Queue: "orders", MsgID: 1, MessageBody: []byte("hi")})
//	r := s.ReceiveMessage(now, &sqs.ReceiveMessageRequest{Queue: "orders", MaxNumberOfMessages: sqs.Some(10), WaitTimeSeconds: sqs.Some(20)})
//	for _, d := range r.Messages { // or r.Parked: the answer comes in a later call's Effects.Answers
//		s.DeleteMessage(now, &sqs.DeleteMessageRequest{Queue: "orders", ReceiptHandle: d.ReceiptHandle})
//	}
//	if t, ok := s.NextDue(); ok {
//		fx := s.Tick(t) // fx.Events, fx.Answers
//		_ = fx
//	}
//
// # What it must not do
//
// Import anything but the standard library, popsim/clock, popsim/model and
// its B-tree; call back into the caller; decide anything by map order.
package sqs
