package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"popsim/report"
	"popsim/scenarios"
	"popsim/sim"
)

// MaxParallel bounds the runs a sweep or plan does at a time.
const MaxParallel = 4096

// CheckParallel bounds -parallel.
func CheckParallel(n int) error {
	if n < 1 || n > MaxParallel {
		return fmt.Errorf("-parallel %d out of range: want 1..%d", n, MaxParallel)
	}
	return nil
}

// Sweep is a prepared sweep: every parameter point loaded and checked,
// and the shard's runs listed.
type Sweep struct {
	Manifest Manifest
	Source   Source
	Points   []scenarios.Point
	Loaded   []*scenarios.Scenario // by point
	Todo     []Job                 // this shard's runs, in run order
}

// Prepare loads the scenario at every point of the parameters' grid. Every
// error is the caller's input: the source, a parameter value, the seeds.
func Prepare(src Source, params []scenarios.Param, seedList string, shard Shard) (*Sweep, error) {
	base, err := src.Load()
	if err != nil {
		return nil, err
	}
	seeds, err := SeedsOf(base, seedList)
	if err != nil {
		return nil, err
	}
	sw := &Sweep{Source: src, Points: scenarios.Grid(params)}
	for _, p := range sw.Points {
		s, err := src.Load(p.Overrides()...)
		if err != nil {
			return nil, fmt.Errorf("parameter point %s: %v", PointLabel(p), err)
		}
		sw.Loaded = append(sw.Loaded, s)
	}
	x, group := Axes(params)
	sw.Manifest = Manifest{Scenario: base.Name, Source: src.Args(), Params: params, Seeds: seeds,
		Jobs: len(sw.Points) * len(seeds), Shard: shard.I, Shards: shard.N, X: x, Group: group}
	sw.Todo = Jobs(len(sw.Points), seeds, shard)
	return sw, nil
}

// DefaultDir is out/<scenario>-sweep, or ...-shard<i>of<n> for a shard.
func (sw *Sweep) DefaultDir() string {
	dir := filepath.Join("out", sw.Manifest.Scenario+"-sweep")
	if sw.Manifest.Shards > 1 {
		dir += fmt.Sprintf("-shard%dof%d", sw.Manifest.Shard, sw.Manifest.Shards)
	}
	return dir
}

// Finished tells a progress display that one run is done.
type Finished struct {
	Done, Total int // runs finished so far (this one included); Total 0 when unknown (plan)
	Job         Job
	Point       scenarios.Point
	Outcome     *Outcome // nil when Err is set
	Err         error
	Wall        time.Duration
}

// JobError is a run that could not be done or written: bad input or an
// unwritable folder, not a failing seed.
type JobError struct {
	Job   Job
	Point scenarios.Point
	Err   error
}

// Result is what a sweep produced.
type Result struct {
	Report      *report.Sweep // every finished run; written to the folder when Complete
	Errors      []JobError
	Done        int  // runs finished and written
	Interrupted bool // ctx was cancelled: the folder is marked incomplete
}

// Complete reports whether every run of the shard finished and was written.
func (r Result) Complete() bool { return !r.Interrupted && len(r.Errors) == 0 }

// Run runs the shard's runs, parallel at a time, into the folder out: the
// IncompleteFile first, then the manifest, one run folder per run, and
// (when every run is done) the sweep report, and last the marker is
// removed. progress, when set, is called once per finished run, one call
// at a time. On cancellation the runs in progress stop, the folder keeps
// its marker (saying how many runs finished) and Result.Interrupted is
// set; a folder Run created with no run finished is removed.
func (sw *Sweep) Run(ctx context.Context, out *Output, parallel int, progress func(Finished)) (Result, error) {
	dir := out.Dir
	if err := Mark(dir, "popsim sweep in progress, or interrupted: re-run it (popsim report lists the missing runs)"); err != nil {
		return Result{}, err
	}
	if err := sw.Manifest.Write(dir); err != nil {
		return Result{}, err
	}
	outcomes := make([]*Outcome, len(sw.Todo))
	errs := make([]error, len(sw.Todo))
	var mu sync.Mutex
	done := 0
	reuse := make([]sim.Reuse, max(parallel, 1)) // one per worker: a worker's runs take the last one's buffers
	started := ForEach(ctx, len(sw.Todo), parallel, func(w, i int) {
		start := time.Now()
		outcomes[i], errs[i] = sw.one(ctx, dir, sw.Todo[i], &reuse[w])
		if Interrupted(errs[i]) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		if progress != nil {
			j := sw.Todo[i]
			progress(Finished{Done: done, Total: len(sw.Todo), Job: j, Point: sw.Points[j.Point], Outcome: outcomes[i], Err: errs[i], Wall: time.Since(start)})
		}
	})
	return sw.collect(ctx, out, started, outcomes, errs)
}

// one runs and writes one job, with reuse.
func (sw *Sweep) one(ctx context.Context, dir string, j Job, reuse *sim.Reuse) (*Outcome, error) {
	p := sw.Points[j.Point]
	o, err := RunSeed(ctx, &sw.Source, sw.Loaded[j.Point], j.Seed, Labelled(p), reuse, p.Overrides()...)
	if err != nil {
		return nil, err
	}
	if err := WriteRun(filepath.Join(dir, RunsDir, RunFolder(j.Point, p, j.Seed)), o); err != nil {
		return nil, err
	}
	return o, nil
}

// collect builds the result and finishes (or marks) the folder.
func (sw *Sweep) collect(ctx context.Context, out *Output, started []bool, outcomes []*Outcome, errs []error) (Result, error) {
	m := sw.Manifest
	res := Result{Report: m.NewReport()}
	for i, j := range sw.Todo {
		switch {
		case !started[i] || Interrupted(errs[i]):
			res.Interrupted = true
		case errs[i] != nil:
			res.Errors = append(res.Errors, JobError{Job: j, Point: sw.Points[j.Point], Err: errs[i]})
		default:
			res.Done++
			if err := res.Report.Add(report.SweepPoint{Summary: outcomes[i].Summary, Hists: outcomes[i].Hists}); err != nil {
				return res, err
			}
		}
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil && res.Done < len(sw.Todo)
	if res.Interrupted {
		if res.Done == 0 {
			out.Abandon()
			return res, nil
		}
		return res, Mark(out.Dir, fmt.Sprintf("popsim sweep interrupted after %d of %d runs: re-run it (popsim report lists the missing runs)", res.Done, len(sw.Todo)))
	}
	if len(res.Errors) > 0 {
		return res, nil // the marker stays: runs are missing
	}
	if err := report.WriteSweep(out.Dir, res.Report); err != nil {
		return res, err
	}
	return res, Unmark(out.Dir)
}
