// Command popbench runs popsim's hot-path benchmarks (internal/bench) and
// compares their results.
//
//	popbench run [-count N] [-benchtime D] [-sizes 1k,100k,1M] [-run REGEXP] [-out out/bench] [-cpuprofile F]
//	popbench compare [-threshold METRIC=LIMIT]... [-alpha 0.05] OLD NEW
//	popbench smoke [-budgets FILE] [-sizes 1k,100k]
//	popbench soak [-scenario S] [-duration D] [-rate R] [-shards N] [-baseline F] ...
//
// run executes every case -count times with testing.Benchmark, one case
// after the other in each round, so engine and floor runs interleave. A
// -run that selects no case is bad input, and -out (default out/bench, a
// scratch folder; make bench writes the committed results/bench) is
// checked to be writable before the first benchmark. It writes, atomically: bench.txt (Go benchmark format, one line per run,
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
// A -threshold on a metric no benchmark of both files reports is bad
// input. Without -threshold the gates are ns/msg=10% and allocs/msg=0.
// Changes under 0.5% of the old median never fail: per-message counts
// move that much with the iteration count alone. Nor do allocation
// changes under 0.01 per unit (allocs/msg, allocs/op): an allocation made
// once per run or per growth of b.N is amortised to 1e-7..1e-3 per
// message, while one real extra allocation per 32-message batch is 0.031.
//
// smoke is the CI gate: it runs briefly and fails only on what is stable on
// a shared machine: allocations per message against the budgets in
// budgets.json (embedded; -budgets overrides), and deterministic results
// of the simulator's default seed. Wall-clock figures are printed, never
// gated. A budget for a metric smoke does not measure at any size is bad
// input (it would check nothing).
//
// soak is one long simulator run of a built-in scenario, measured for
// virtual time per wall and CPU second and for its memory peaks. With
// -shards N it splits the scenario into N independent sub-simulations
// (1/N of the queues, consumers and rate each, seeds derived from the
// run's) and runs them in goroutines of this command, each its own
// single-threaded sim.Run: an approximation for capacity questions about
// independent topics, not a parallel simulation of one queue set.
// -cpuprofile F writes a CPU profile of the run, -memprofile F a heap
// profile near its peak heap, each atomically.
//
// Exit status: 0 success, 1 a regression or a broken budget (or a failed
// benchmark), 2 bad usage or input: an unknown flag, metric, case or
// budget key, an unreadable file, an unwritable -out.
//
// The statistics are golang.org/x/perf/benchmath's (median with a
// distribution-free confidence interval, Mann-Whitney U), as benchstat
// computes them.
package main
