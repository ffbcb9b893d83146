package sim

// GCPercent is the collector's setting (runtime/debug.SetGCPercent) that
// popsim runs the simulator with when the environment sets no GOGC. A run
// allocates short-lived objects at a steady rate over a live heap of a few
// megabytes; with Go's default of 100 the collector runs two or three
// times a default run and the runtime hands freed pages back to the
// system between them, so the next run's allocations fault them in again.
// A heap target of four times the live heap measured 18-21 % faster runs
// for about twice the peak memory. popbench's simulator cases (package
// internal/bench, SimRun) use it too, so that they measure a run as popsim
// makes it.
const GCPercent = 400
