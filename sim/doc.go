// Package sim is popsim's deterministic simulator: the only loop in the
// system. It drives producers, consumers, the network, faults and an
// engine (a broker implementation behind one interface) on one virtual
// timeline, writes the trace, feeds the checker (package sim/check) and
// measures the run.
//
// # Words
//
// A task is the simulator's own unit of work on its timeline (a request
// reaching the engine, a consumption ending, a crash). An event is one
// line of the trace (model.Event): what happened, as the checker and a
// reader see it. An engine is a broker implementation (package pop today;
// share and sqs next). The meter is the simulator's own measurement
// (latency, throughput, the time series); the verdict is the checker's.
//
// # The core
//
//   - The scheduler: a queue of tasks ordered by (virtual time, seeded
//     tie-break, sequence number): a 4-ary heap behind a short sorted run
//     of the nearest tasks (front.go), one dispatch switch, a task budget
//     (Config.EventBudget) and a virtual-time limit that fail with
//     ErrEventBudget / ErrTimeLimit. The virtual clock (a clock.Time the
//     scheduler holds) is advanced by the scheduler only, to the task it
//     takes: tasks are never scheduled in the past (at), so it never moves
//     back. Task payloads are typed (a closed interface).
//   - Random streams: PCG streams (workload/pcg: math/rand/v2's PCG draws,
//     inlined) derived from the run seed, one per concern (tie-breaks,
//     network, fault activation, each fault family, each producer, each
//     consumer), so enabling a fault family does not shift the workload's
//     draws.
//   - The seam (engine.go): the Engine interface through which the core
//     drives any engine — store a produced message, serve a request that
//     reached it, run its periodic work when one of its timers is due,
//     disconnect a crashed client, restart, take its faults as data, report
//     its in-flight leases and the groups' positions, check its own
//     structure. Requests are typed values that carry the engine's answer;
//     every call reports effects (requests answered, timers to arm) that
//     the core carries out in order after the call returns.
//   - The adapter (engine_rocketmq.go) wraps pop.Broker behind the seam: it
//     re-runs woken parked pops and held pulls as RocketMQ resubmits them,
//     and turns every broker result into trace events after the call.
//     Where nothing can read an old offset, its revive pass frees the
//     messages every group consumed (pop.Broker.ReleaseConsumed), below the
//     floor of the receipt handles clients may still renew with when they
//     renew (pins.go).
//   - The network (network.go): request and response latencies, lost
//     requests versus lost answers per request type, client timeouts.
//   - The broker cost model (broker.go, brokerconfig.go; off unless
//     broker.cores is set): requests queue for a thread of RocketMQ's
//     executor for their kind, a pop for its pop lock, then for a core; the
//     engine serves them when they get it and their answers leave after a
//     service time drawn from the broker's own stream plus the cost of the
//     store work the engine's counters report (docs/calibration.md).
//   - Consumers (client.go): a consumer process is what every kind has —
//     its consume threads and their buffer, its clock (with skew), crash,
//     restart, pause and slow — plus its kind's client model behind a small
//     interface: the POP push consumer (push.go, after
//     ConsumeMessagePopConcurrentlyService; with clientRebalance false its
//     queues come from the broker's QUERY_ASSIGNMENT, one pop loop each,
//     assign.go), the simple consumer through
//     its proxy (simple.go, package proxy), the Pull baseline (pull.go,
//     with the engine's Pull and committed offsets, its rebalance on the
//     client side). Producers are open loop (producer.go).
//   - Faults (faults.go, renewfault.go, schedule.go, lifecycle.go):
//     consumer crashes and restarts, GC pauses, slow consumers, message
//     loss per request type, renewals at edge moments, broker restarts,
//     revive write failures (handed to the engine as data) and client
//     clock skew, with two-level activation, swarm mode, coverage counters
//     and explicit schedules (RunScheduled).
//   - The run (phases.go): a safety phase with faults, then a liveness
//     phase without them in which everything must drain within Drain,
//     extended while messages are still being retried up to the longest
//     retry chain the consumers allow (retrychain.go, DrainBudget).
//   - The trace (trace.go): every event gets a Seq; XXH3-128 over the
//     events' binary form (model.Event.AppendBinary) is the trace hash; the
//     text form goes to a writer only when one is given. docs/trace.md is
//     the contract: every kind, the fields it sets, the order of events.
//     Message ids are assigned as messages are stored (1, 2, 3 …); lease ids
//     come from the engine. CheckTrace judges a saved trace offline.
//   - The configuration (config.go): one typed value that is also the
//     scenario file format (package scenarios decodes YAML onto it), its
//     defaults, its one validation, its hash and a run's cost estimate. A
//     consumer holds its kind's own settings and the engine section its
//     kind's (Variant); an engine kind registers its adapter there.
//   - The invariants build tag: with it the loop runs the engine's
//     CheckInvariants every 256 tasks and at each phase change.
//
// # Simplifications, on purpose
//
//   - The push consumer runs, by default (clientRebalance true), one pop
//     loop over all queues (QueueID -1), what the broker assigns in POP
//     mode with its default popShareQueueNum; with clientRebalance false
//     it asks the broker, in place (no network), and runs one loop per
//     assigned queue. It acks each message with Ack (BatchAck: one
//     BATCH_ACK_MESSAGE per listener batch).
//   - Each simple consumer has its own proxy on its side of the network but
//     on the broker's clock (the engine's time, never the client's skewed
//     one): its handle checks and auto-renew timer run with the client
//     process, judged and timed in engine time; its receive's pop (born
//     time stamped then) and result filter (the DLQ send-back and ack) run
//     when the request reaches the engine. An exception leaves the lease to run
//     out; RECONSUME_LATER renews with the group's retry policy.
//   - The Pull baseline retries failures locally instead of sending them
//     back through %RETRY%group, commits only every CommitInterval (not on
//     its pull requests) and adopts an OFFSET_ILLEGAL answer's next offset
//     at once; its offset queries, commits and DLQ send-backs reach the
//     engine without the network.
//   - Producers are not subject to loss; their messages reach the engine
//     after a request latency.
//
// # What it must not do
//
// Read the wall clock, start goroutines, use a global random source, or
// let map iteration order decide anything. It never changes an engine's
// behaviour: it only calls it. Summary.WallSeconds is the caller's to
// fill. One seed gives one trace, byte for byte.
//
// # Usage
//
//	cfg := sim.DefaultConfig()
//	cfg.Seed = 42
//	if err := cfg.Validate(); err != nil { ... }        // names the field and its range
//	res, err := sim.Run(cfg, sim.RunOptions{Scenario: "default", Replay: "popsim run -seed 42"})
//	if err != nil { ... }                               // bad config, or a budget was hit
//	for _, l := range res.Header { fmt.Println(l) }      // derived parameters first
//	fmt.Println(res.Summary.TraceXXH3, len(res.Summary.Violations))
//	if err := sim.SelfCheck(cfg); err != nil { ... }    // same seed twice, first divergent event
//	rep, n, err := sim.CheckTrace(file, check.Options{}) // a saved text trace, judged offline
package sim
