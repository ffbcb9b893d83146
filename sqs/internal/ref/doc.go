// Package ref is a slow, plain reference of sqs.Service: the same SQS
// semantics written for reading, not speed. The sqs package's differential
// and property tests run random operation sequences against both and
// require identical results (error codes, not messages) and state after
// every step.
//
// # What it owns and must not do
//
// It owns a second, independent implementation of the rules docs/sqs.md
// lists. It imports sqs only for the request/result types, Config, the
// exported limits, ParseAttributes (pure attribute syntax, tested by the
// scripts) and the receipt-handle format; it never calls the engine's
// logic, or a shared bug would hide itself. Like the engine it reads no
// clock, draws no random number and starts no goroutine. Every operation
// is linear (or worse) in the state size.
//
// # Why it is obviously right
//
//   - A queue's messages are one slice in position order; states are a
//     field; counts are computed by counting.
//   - "What is due next" is a scan of every message and parked poll for the
//     smallest (instant, kind, queue, position or poll id), taken one at a
//     time: the definition of running time forward.
//   - Answering parked polls is: scan the queues in creation order and try
//     the oldest poll of each; after any answer or any move to a
//     dead-letter queue, start again from the first queue; stop when a full
//     scan changed nothing.
//   - A standard receive sorts the visible messages of the sampled servers
//     by position; a FIFO receive lists the groups with nothing in flight
//     and a visible first message, sorted by that message's position, and
//     walks each group from its first message.
//   - Deduplication ids and receive attempt ids are plain slices searched
//     linearly, with their 5 minutes checked at use.
//
// # Usage
//
//	r, _ := ref.New(sqs.DefaultConfig())
//	r.CreateQueue(now, "q", nil)
//	r.SendMessage(now, &sqs.SendMessageRequest{Queue: "q", MsgID: 1, MessageBody: []byte("x")})
//	res := r.ReceiveMessage(now, &sqs.ReceiveMessageRequest{Queue: "q"})
package ref
