// Package bench holds the bodies of popsim's hot-path benchmarks: the POP
// engine (package pop) driven through its public API in steady state, next
// to the bare tidwall/btree "floor" doing the same index work, so every
// engine figure has its floor beside it in the same run.
//
// A body takes a *testing.B and Params (records kept in flight, cache on or
// off, an optional sampled latency recorder) and reports, besides ns/op,
// per-message figures: ns/msg, msgs/s, allocs/msg, B/msg and cpu-ns/msg
// (the CPU time of the benchmark's own thread, Linux only: on a shared
// machine it leaves out the time spent waiting for a core). The bodies use
// testing.B.Loop, so their (expensive) setup runs once per measurement.
// pop/bench_test.go wraps them as Go benchmarks; cmd/popbench runs them
// with testing.Benchmark, interleaving engine and floor, and writes results.
//
// What each body measures (one "round" is what one loop iteration does):
//
//   - PopAck32: one pop of MaxMsgNums 32 over all queues (QueueID -1, as the
//     proxy pops; a 4-queue topic, so the batch comes from the queue the
//     request rotation starts at) and 32 single acks in pop order. The pop
//     writes into one result buffer the fixture lends every time; each ack
//     is built from the decoded handle the pop returned (pop.NewAckRequest),
//     so no receipt-handle text is rendered or parsed.
//   - PopAck32Batch: PopAck32's pop, its 32 messages then acked with one
//     batch ack (BATCH_ACK_MESSAGE, Broker.BatchAckMessages): an entry per
//     queue the batch came from, a bit per offset, entries and result
//     reused by every round. Its floor is FloorPopAck32's, which does the
//     same inserts and deletes.
//   - ChangeInvisibleTime: 32 renewals, each of the oldest in-flight record
//     (so the in-flight set is a FIFO of leases), per message.
//   - Revive: a pass over 4096 expired records. cache=off is Revive (the
//     store's expired-range scan); cache=on is CleanupCache reviving the
//     records straight from the cache. write=copy writes each retry copy;
//     write=none finds the original message gone (retention) and writes
//     nothing, which is the bare scan-and-delete cost.
//   - LongPollWake: 32 times: a pop that finds nothing and is suspended, a
//     Put that wakes it, the re-run pop that returns the message, its ack.
//   - PopAckQueues: PopAck32's round (pop 32 over all queues, 32 single
//     acks, 1k other records in flight) on a topic of 8, 1000 or 8000
//     queues of which four hold messages, the rest empty and caught up;
//     path=kv (cache off) or path=fs (the checkpoint path, its periodic
//     CheckpointTick work in the round). Each is paired with its path's
//     8-queue case (Case.Base): the ratio shows whether the cost grows
//     with idle queues.
//   - FloorPopAck32, FloorChangeInvisibleTime: the same key shape (24 bytes:
//     vt, pair, qid, offset), the same in-flight size and the same insert
//     and delete order on a bare BTreeG (NoLocks, one path hint per side).
//   - SimRun: one whole sim.Run of sim.DefaultConfig per iteration, per
//     simulated event (ns/event, events/s) and virtual-s/wall-s.
//
// PhaseAllocs counts the allocations of a pop and of its acks separately,
// for the CI gate (cmd/popbench smoke).
//
// In every engine body the steady state keeps InFlight other records in
// flight: they were popped once with a one-day invisible time and are never
// acked. With the cache on they have been moved to the store, as
// CleanupCache does after popCkStayBufferTime; fresh records live in the
// cache. Message production happens with the timer stopped (except in
// LongPollWake, where the Put is the measured wake-up).
//
// The package must not be imported by the engine or the simulator; it reads
// the wall clock only through clock.Real, for latency samples.
//
// Usage:
//
//	for _, c := range bench.Cases(bench.DefaultSizes) {
//		r := testing.Benchmark(func(b *testing.B) { c.Run(b, nil) })
//		fmt.Println(c.Name, r.Extra["ns/msg"])
//	}
package bench
