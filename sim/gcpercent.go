package sim

// GCPercent is the collector's setting (runtime/debug.SetGCPercent) that
// popsim runs the simulator with when the environment sets no GOGC: a heap
// goal of five times the live heap (400 % above it) instead of Go's
// default of twice. A run allocates short-lived objects at a steady rate
// over a live heap of a few megabytes: with 100 the collector ran 10 times
// in a default `popsim run`, with 400 once (GODEBUG=gctrace=1, stop 36),
// and in a process that makes many runs (a sweep, popbench) the runtime's
// scavenger hands a finished run's pages back to the system for the next
// run to fault in again (4.1 % of popbench's CPU at 100, 0.6 % at 400).
// It measured 18-21 % faster runs for about twice the peak memory.
// (popbench's SimRun cases and each worker of a sweep have since passed
// their runs a Reuse, which keeps a run's largest buffers for the next: at
// GOGC 100 popbench's default-scenario case collects 26 times in 40 runs
// and the scavenger returns little; a lone popsim run has nothing to
// reuse.)
// cmd/popsim sets it for the process, and popbench's simulator cases
// (internal/bench, SimRun) for their run, each unless GOGC is set (sim
// reads no environment), so that they measure a run as popsim makes it.
// Both set it above a heap floor (internal/gcfloor, since stop 49): no
// collection before the heap reaches 256 MiB, so that a run whose state
// all lives to its end (sim.DefaultConfig's) is not marked while it grows.
const GCPercent = 400
