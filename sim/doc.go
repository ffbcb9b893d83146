// Package sim is popsim's deterministic simulator: the only loop in the
// system. It drives producers, consumers, the network, faults and the POP
// engine (package pop) from one event queue, writes the trace, feeds the
// checker (package sim/check) and summarises the run.
//
// # What it owns
//
//   - The scheduler: a heap of events ordered by (virtual time, seeded
//     tie-break, sequence number), one dispatch switch, an event budget and
//     a virtual-time limit that fail with ErrEventBudget / ErrTimeLimit.
//     The clock.Virtual is advanced by the scheduler only.
//   - Random streams: math/rand/v2 PCG streams derived from the run seed,
//     one per concern (tie-breaks, network, fault activation, each fault
//     family, each producer, each consumer), so enabling a fault family
//     does not shift the workload's draws.
//   - The trace: every model.Event gets a Seq; a running SHA-256 covers
//     each event's canonical text (Event.AppendText + '\n'). The text goes
//     to an optional writer and stays in memory only when asked.
//   - Clients, each a small state machine driven by events, never a
//     goroutine: the POP push consumer (ConsumeMessagePopConcurrentlyService),
//     the proxy-style simple consumer, the Pull clustering baseline, and
//     open-loop producers.
//   - The network (request and response latencies, lost requests versus
//     lost responses, client timeouts) and the faults: consumer crashes and
//     restarts, GC pauses, slow consumers, message loss per request type,
//     renewals at edge moments, broker restarts, revive write failures and
//     client clock skew, with two-level activation, swarm mode and
//     coverage counters.
//   - The run structure: a safety phase with faults, then a liveness phase
//     without them in which everything must drain within Drain; the
//     engine's periodic work runs on RocketMQ's cadence (Revive every
//     pop.ReviveIdleInterval or at once after a full page, CleanupCache every
//     pop.CacheCleanupInterval, PollTick exactly at NextPollExpiry).
//   - The configuration (Config): one typed value that is also the
//     scenario file format (package scenarios decodes YAML onto it), its
//     defaults (WithDefaults), its one validation (Validate: a *ConfigError
//     of *FieldErrors by key path), its canonical hash (SHA256) and a
//     run's cost estimate (Estimate). A consumer holds its kind's own
//     settings and the engine section its kind's (Variant); a new engine
//     or consumer kind is one registration in config.go.
//
// # Trace
//
// Client is the consumer index (producer index for produce events, -1 for
// the broker). Every event about a message carries Msg (UNIQ_KEY) and,
// where the message lives, Topic/Queue/Offset (the retry topic for retry
// copies).
//
//   - produce (at the broker, Client = producer), produce-failed.
//   - pop-request (Queue -1, N = maxMsgNums, Deadline = invisibleTime ms);
//     pop-suspended once per request the broker parks (Deadline = poll
//     expiry ms); then one pop-response (Code, N, Detail = PopStatus) at the
//     client, or pop-lost (Detail request, response, timeout, late or
//     client-gone; N = messages the lost response carried).
//   - deliver per message: Attempt = reconsumeTimes, Handle = the receipt
//     handle, Deadline = lease end ms, Detail "topic=<topic shown to the
//     client>" (plus " to=proxy" when only the proxy saw it, on its way to
//     the DLQ). Pull deliveries have no Handle and no Deadline.
//   - consume-start, consume-end (Detail success, later, exception),
//     expired-local (Detail before, after, ack, change or renew), each with
//     the location and the handle the client holds.
//   - ack-sent, then ack-lost (Detail request or client-gone) or
//     ack-accepted (Code, N = 1 when a record was deleted), then possibly
//     ack-response-lost. Acks are fire and forget, as upstream's ackAsync.
//   - change-sent (Handle = the one renewed, Deadline = requested invisible
//     ms, Detail names an injected edge), then change-lost (request,
//     client-gone) or change-accepted (Handle = new handle, Deadline = new
//     lease end, N = 1 when the old record was deleted), then possibly
//     change-lost with Detail response.
//   - revive (the copy's Topic/Queue/Offset, Attempt = its reconsumeTimes,
//     Deadline = the expired record's), revive-skipped, revive-retried
//     (Deadline = the record's new deadline), revive-dropped, cache-flush.
//   - dlq, drop (Detail = the policy: push-max-reconsume, push-age-4h).
//   - crash, restart, pause (Deadline = end ms), resume, broker-restart
//     (N = suspended polls dropped), put-failure, phase (safety, liveness,
//     done), rebalance, pull, commit.
//
// # Simplifications, on purpose
//
//   - The push consumer runs one pop loop over all queues (QueueID -1)
//     rather than one per assigned queue, and acks each message with Ack.
//   - The simple consumer receives only for free threads; an exception
//     leaves the lease to run out, RECONSUME_LATER renews with the group's
//     retry policy. The proxy sits next to the broker: no network between
//     them.
//   - The pull baseline retries failures locally instead of sending them
//     back through %RETRY%group, commits only every CommitInterval (not on
//     its pull requests) and adopts an OFFSET_ILLEGAL answer's next offset
//     at once.
//   - Producers are not subject to loss; their messages reach the broker
//     after a request latency.
//
// # What it must not do
//
// Read the wall clock, start goroutines, use a global random source, or
// let map iteration order decide anything. It never changes the engine:
// the pull baseline uses the broker's Pull, its hold service and its
// consumer offsets, as a RocketMQ client does. Summary.WallSeconds is the
// caller's to fill. One seed gives one trace, byte for byte.
//
// # Usage
//
//	cfg := sim.DefaultConfig()
//	cfg.Seed = 42
//	if err := cfg.Validate(); err != nil { ... }        // names the field and its range
//	res, err := sim.Run(cfg, sim.RunOptions{Scenario: "default", Replay: "popsim run -seed 42"})
//	if err != nil { ... }                               // bad config, or a budget was hit
//	for _, l := range res.Header { fmt.Println(l) }      // derived parameters first
//	fmt.Println(res.Summary.TraceSHA256, len(res.Summary.Violations))
//	if err := sim.SelfCheck(cfg); err != nil { ... }    // same seed twice, first divergent event
package sim
