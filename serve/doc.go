// Package serve is popsim's POP engine live over RocketMQ 5's gRPC
// protocol: a server of apache.rocketmq.v2.MessagingService, in front of a
// pop.Broker and a proxy.Proxy, driven by the wall clock, so that real
// RocketMQ 5 clients (and the user's own consumer code) can run against
// lease expiry, lost acks, revives and restarts without a name server, a
// broker or a proxy. Command: `popsim serve`.
//
// # What it owns, what it must not do
//
// This is the one package with a wall clock and goroutines. One goroutine
// (the loop) owns the engine and the proxy: it serves requests in arrival
// order, sent as closures on a channel, and runs the engine's periodic
// work when due (on the checkpoint path, RocketMQ's default and serve's,
// CheckpointTick at NextCheckpointTick: the timer wheel, the buffer's
// scans and the revive rounds; on the KV path Revive every 500 ms or at
// once after a full page and CleanupCache every second with the cache on;
// on both PollTick at the broker's next poll expiry and the proxy's
// auto-renewals). gRPC handlers never call
// the engine; they translate the protocol, hand the loop a closure and
// wait. Receives the broker suspends are parked by poll id and re-run when
// the broker hands them back (an arrival, a revive, a poll timeout).
//
// The proxy's logic (receive checks and clamps, the maxAttempts DLQ
// filter, expired-handle rejection, the latest renewed handle, auto-renew)
// is package proxy's, shared with the simulator; this package only maps
// the protocol to it. Wall-clock runs are not repeatable: nothing here may
// be used by the deterministic packages.
//
// # The protocol
//
// Implemented: QueryRoute, Telemetry, Heartbeat, SendMessage,
// ReceiveMessage, AckMessage, ChangeInvisibleDuration and
// NotifyClientTermination; the rest (QueryAssignment, EndTransaction,
// ForwardMessageToDeadLetterQueue) answer gRPC UNIMPLEMENTED. Per-client
// state is keyed on the x-mq-client-id metadata, as the proxy does.
// Topics are NORMAL: a FIFO, delay or transactional message is refused
// with MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, as the proxy refuses a message
// whose type its topic does not accept; an SQL92 filter gets the broker's
// answer with its default enablePropertyFilter = false
// (INTERNAL_SERVER_ERROR); groups are created on first use.
//
// # Faults
//
// Faults (ack, receive, renewal and send losses, a response delay, a
// revive pause, periodic restarts, store-write failures) are applied
// around the engine by the loop, the store failures by the engine itself
// as data; SetFaults changes them at run time and Restart restarts the
// server in place.
//
// # Usage
//
//	cfg := serve.DefaultConfig()
//	cfg.Addr = "127.0.0.1:0"
//	s, err := serve.New(cfg)
//	if err != nil { ... }
//	if err := s.Start(); err != nil { ... }
//	defer s.Stop()
//	// point a client at s.Addr(); s.SetFaults(serve.Faults{AckLoss: 0.1})
package serve
