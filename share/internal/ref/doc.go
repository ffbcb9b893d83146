// Package ref is a slow, plain reference of share.Broker: the same Kafka
// share-group semantics (docs/share.md) written for reading, not speed.
// share's differential and property tests run random operation sequences
// against both and require identical results and observable state after
// every step.
//
// # What it owns and must not do
//
// It owns a second, independent implementation of the share-partition
// state machine (acquire, acknowledge, release, lock timeout, SPSO/SPEO,
// restart and reload, dead-letter copies), the share sessions and the
// group coordinator. It imports share only for the request/result types,
// Config, the error codes and share.SimpleAssign, the assignor, which is a
// pure function checked on its own by share's assignor tests (balance,
// stickiness, sharing); it never calls into the engine's state machine, or
// a shared bug would hide itself. Like the engine it reads no clock, draws
// no random number and starts no goroutine. Every operation is linear (or
// worse) in the state size.
//
// # Why it is obviously right
//
//   - A record's state is one map entry per cached offset; there is no
//     batch-level state to keep in sync. The in-flight batches are a list of
//     spans with a "split" flag, kept only because Kafka's acquisition and
//     throttling look at them.
//   - There is no timer index: a lock expires when Tick finds an ACQUIRED
//     record whose deadline passed, by scanning everything.
//   - The share coordinator's record is a map offset -> (state, count);
//     its batches are produced by grouping on demand.
//   - Leases are handed out one record at a time in the order records are
//     acquired.
//
// # What it simplifies, and why that is safe
//
//   - Errors are compared by code only; there are no messages.
//
// # Usage
//
//	r, _ := ref.New(share.DefaultConfig())
//	_ = r.CreateTopic("t", 1)
//	r.Heartbeat(now, share.HeartbeatRequest{GroupID: "g", MemberID: "m", SubscribedTopicNames: []string{"t"}})
package ref
