// Package sweep runs scenarios many times and keeps the results: one run
// (Execute), a grid of parameter points × seeds in a fixed order, split
// into shards for many machines (Prepare, Jobs, Sweep.Run), the folders
// those runs are written to and read back from (WriteRun, Manifest,
// Reread), the exact merge of shard folders (Merge), and the capacity
// plan — the smallest value of a parameter that meets a target, with its
// uncertainty (Plan, Search, ParseTarget, ParseSpace). cmd/popsim is its
// command line: flag parsing, printing and exit codes only.
//
// Layer 7: it imports scenarios, sim, report, stats, model and clock. It is not
// deterministic code itself — it measures wall time, runs simulations on a
// worker pool and writes files — but everything it records besides
// wall_seconds is a deterministic function of scenario, parameters and seed.
//
// # Run order and shards
//
// The parameter points are scenarios.Grid(params) (the first parameter
// varies slowest); run k is point k / len(seeds) with seed k % len(seeds).
// Shard i/n holds the runs with k % n == i, so every shard gets a share of
// every point and n shards partition the sweep exactly.
//
// # Folders
//
//	<run>/                  report.WriteRun's files (summary.json, histograms.hlog, ...)
//	<sweep>/popsim-sweep.json  the Manifest: scenario, -set flags, parameters, seeds, shard
//	<sweep>/runs/<run>/     one run folder per run, named by RunFolder
//	<sweep>/sweep.json, report.md, sweep-*.png/.svg   report.WriteSweep's files
//	<plan>/plan.json        a plan's question and answer first, then the
//	                        boundary in numbers, target, range, levels, seeds
//	                        and every value's decision with its intervals
//	INCOMPLETE              in any of them: written first, removed last
//
// A folder holding INCOMPLETE was interrupted (or is being written):
// Reread lists the runs it lacks, CheckShards refuses it, and a command
// that is stopped (its context cancelled) leaves its folder marked, or
// nothing at all when no run had finished. Output folders are checked
// before any simulation (OpenRunDir, OpenSweepDir): they must be writable
// and must not hold files popsim did not write there. Merge builds its
// folder under a temporary name beside the output and renames it into
// place, so a failed merge leaves nothing.
//
// # Cancellation
//
// Execute passes the context to the simulator through
// sim.RunOptions.Progress, which the simulator polls every
// sim.ProgressEvery events; the simulator itself reads no signals.
// Interrupted(err) tells a cancelled run from a failed one.
//
// # Usage
//
//	sw, err := sweep.Prepare(sweep.Source{Name: "default"}, params, "1..20", sweep.Whole)
//	out, err := sweep.OpenSweepDir("out/d", false)
//	res, err := sw.Run(ctx, out, runtime.GOMAXPROCS(0), func(f sweep.Finished) { ... })
//	// res.Report is the report.Sweep; res.Interrupted, res.Errors
//
//	rs, m, err := sweep.Merge("out/all", []string{"out/s0", "out/s1"})
//
//	t, _ := sweep.ParseTarget("p99<=200ms,dup<=0.5%")
//	sp, _ := sweep.ParseSpace("consumers=4..64")
//	p, err := sweep.NewPlan(sweep.PlanSpec{Source: src, Target: t, Space: sp, MaxSeeds: 30, Level: 0.95, Parallel: 2})
//	r, err := p.Run(ctx, out) // r.Answer (stats.Answer), r.Found(), r.Undecided, r.Evals
//	fmt.Println(p.AnswerText(r)) // "consumers=9, but 10 is not excluded at 95%"
//
// # Intervals and decisions
//
// A sweep's report gives every metric of a parameter point a confidence
// interval over its seeds (report.SweepCell.Stats: independent
// replications, one value per seed from its summary), so a merge of shard
// folders recomputes exactly what one machine would. A plan decides each
// value it tries with stats.Decide on the per-seed values of every clause,
// adding seeds while undecided (Schedule bounds the looks; each is taken
// at stats.PerLookLevel so all of them together keep the plan's level),
// and reads its answer off the verdicts with stats.Boundary.
package sweep
