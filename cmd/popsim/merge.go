package main

import (
	"fmt"
	"path/filepath"

	"popsim/report"
	"popsim/sweep"
)

func (e *env) cmdMerge(args []string) int {
	fs := e.newFlags("merge", "-out DIR [-level L] SHARD_DIR...",
		"Combines the folders of a sharded sweep (popsim sweep -shard i/n) into one sweep folder:\n"+
			"the run folders are copied, the histograms of each parameter point are merged exactly\n"+
			"(HdrHistogram merge, from each run's histograms.hlog), the intervals over the seeds are\n"+
			"recomputed from the runs' summaries (so they are exactly those of the whole sweep run on one\n"+
			"machine), and one report is written.\n"+
			"Every shard 0..n-1 of the same sweep must be given exactly once, complete. DIR must be a\n"+
			"new folder or an earlier merge's (none of the shards); the merge is built beside it and\n"+
			"renamed into place at the end, so a failed merge leaves nothing.")
	out := fs.String("out", "", "output `DIR` for the merged sweep (required)")
	level := fs.Float64("level", 0, "confidence `L` of the intervals, 0 < L < 1 (default: the shards' sweep's, 0.95 unless it gave -level)")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if *out == "" || fs.NArg() == 0 {
		return e.badInput("merge: want -out DIR and at least one shard folder")
	}
	if *level != 0 {
		if err := report.CheckLevel(*level); err != nil {
			return e.badInput("merge: %v", err)
		}
	}
	rs, m, err := sweep.Merge(*out, fs.Args(), *level)
	if err != nil {
		return e.badInput("merge: %v", err)
	}
	fmt.Fprintf(e.stdout, "popsim merge: %d shard folders of sweep %s into %s\n", fs.NArg(), m.Scenario, *out)
	return e.finishSweep(rs, *out)
}

func (e *env) cmdReport(args []string) int {
	fs := e.newFlags("report", "DIR",
		"Re-renders report.md and the charts of a run folder (from summary.json and histograms.hlog)\n"+
			"or of a sweep or plan folder (from its runs), e.g. after upgrading popsim. A sweep folder\n"+
			"that lacks runs (interrupted, marked INCOMPLETE) is reported as incomplete, with the\n"+
			"missing runs listed, and exit code 1.")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.badInput("report: want exactly one folder, a run's or a sweep's")
	}
	dir := fs.Arg(0)
	if sweep.IsRunDir(dir) {
		return e.reportRun(dir)
	}
	if _, err := sweep.ReadManifest(dir); err != nil {
		if why, marked := sweep.Incomplete(dir); marked {
			fmt.Fprintf(e.stderr, "popsim: report: %s is incomplete (%s): %s\n", dir, sweep.IncompleteFile, why)
			return exitViolation
		}
		return e.badInput("report: %s is neither a run folder (summary.json) nor a sweep folder (%s): %v", dir, sweep.ManifestFile, err)
	}
	rs, missing, err := sweep.Rerender(dir)
	if err != nil {
		return e.badInput("report: %v", err)
	}
	code := e.finishSweep(rs, dir)
	if len(missing) > 0 {
		fmt.Fprintf(e.stdout, "\nINCOMPLETE: %d run(s) of this sweep are missing (interrupted, or never run); re-run the sweep:\n", len(missing))
		for _, r := range missing {
			fmt.Fprintf(e.stdout, "  %s\n", r)
		}
		return exitViolation
	}
	return code
}

// reportRun re-renders a run folder; one marked incomplete is refused.
func (e *env) reportRun(dir string) int {
	if why, marked := sweep.Incomplete(dir); marked {
		fmt.Fprintf(e.stderr, "popsim: report: run folder %s is incomplete (%s: %s): run it again\n", dir, sweep.IncompleteFile, why)
		return exitViolation
	}
	run, err := report.ReadRun(dir)
	if err != nil {
		return e.badInput("report: %v", err)
	}
	if err := sweep.RewriteRun(dir, run); err != nil {
		return e.badInput("report: %v", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", filepath.Join(dir, report.ReportFile))
	if len(run.Summary.Violations) > 0 {
		return exitViolation
	}
	return exitOK
}
