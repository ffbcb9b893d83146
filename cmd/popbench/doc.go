// Command popbench runs popsim's hot-path benchmarks (internal/bench) and
// compares their results.
//
//	popbench run [-count N] [-benchtime D] [-sizes 1k,100k,1M] [-run REGEXP] [-out results/bench] [-cpuprofile F]
//	popbench compare [-threshold METRIC=LIMIT]... [-alpha 0.05] OLD NEW
//	popbench smoke [-budgets FILE] [-sizes 1k,100k]
//
// run executes every case -count times with testing.Benchmark, one case
// after the other in each round, so engine and floor runs interleave. It
// writes, atomically: bench.txt (Go benchmark format, one line per run,
// benchstat-readable, with the custom metrics), bench.json (the same runs
// stamped with commit, Go version, GOOS/GOARCH, CPU model and date, plus
// medians with 95% confidence intervals and engine/floor ratios) and
// latency/<case>.hgrm (wall-clock time of sampled rounds, HdrHistogram
// percentile format, microseconds). It prints a table: op, size, variant,
// median ns per message with its 95% CI, cpu-ns per message, allocations
// per message, and the ratio to the bare-index floor.
//
// compare reads two files of either format and tests each common metric
// with a Mann-Whitney U test (alpha 0.05). A metric with a -threshold
// fails when the change is significant and worse than the limit (N% is
// relative, a bare number absolute in the metric's unit); it exits 1 then.
// Without -threshold the gates are ns/msg=10% and allocs/msg=0. Changes
// under 0.5% of the old median never fail: per-message counts move that
// much with the iteration count alone.
//
// smoke is the CI gate: it runs briefly and fails only on what is stable on
// a shared machine: allocations per message against the budgets in
// budgets.json (embedded; -budgets overrides), and deterministic results
// of the simulator's default seed. Wall-clock figures are printed, never
// gated.
//
// Exit status: 0 success, 1 a regression or a broken budget (or a failed
// benchmark), 2 bad usage or an unreadable input.
//
// The statistics are golang.org/x/perf/benchmath's (median with a
// distribution-free confidence interval, Mann-Whitney U), as benchstat
// computes them.
package main
