package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"popsim/model"
	"popsim/report"
	"popsim/scenarios"
)

// PlanSpec is a capacity question: the smallest value of Space whose runs,
// over all Seeds together, meet Target.
type PlanSpec struct {
	Source   Source
	Target   Target
	Space    Space
	Seeds    string // seed list text; "" for the scenario's seeds
	Parallel int
}

// Eval is one evaluated value of the searched parameter.
type Eval struct {
	Value   int64
	Metrics Metrics
	Meets   bool
	Failing []model.Summary // runs that broke an invariant, by seed
}

// Plan answers a PlanSpec by running it (Search over Evaluate).
type Plan struct {
	spec  PlanSpec
	name  string // the scenario's
	seeds []uint64
	evals map[int64]*Eval
	order []int64 // values in evaluation order
	rs    *report.Sweep
	done  int

	// OnEval, when set, is called after each evaluated value.
	OnEval func(Eval)
	// OnRun, when set, is called once per finished run, one call at a time.
	OnRun func(Finished)
}

// NewPlan checks a spec: the scenario loads at both ends of the range and
// the seeds parse. Every error is the caller's input.
func NewPlan(spec PlanSpec) (*Plan, error) {
	if err := CheckParallel(spec.Parallel); err != nil {
		return nil, err
	}
	base, err := spec.Source.Load()
	if err != nil {
		return nil, err
	}
	seeds, err := SeedsOf(base, spec.Seeds)
	if err != nil {
		return nil, err
	}
	for _, x := range []int64{spec.Space.Lo, spec.Space.Hi} {
		if _, err := spec.Source.Load(spec.Space.Override(x)); err != nil {
			return nil, fmt.Errorf("%s=%s: %v", spec.Space.Name, spec.Space.Format(x), err)
		}
	}
	return &Plan{spec: spec, name: base.Name, seeds: seeds, evals: map[int64]*Eval{},
		rs: report.NewSweep(base.Name, spec.Space.Name, "")}, nil
}

// Seeds are the seeds run at every evaluated value.
func (p *Plan) Seeds() []uint64 { return p.seeds }

// DefaultDir is out/<scenario>-plan.
func (p *Plan) DefaultDir() string { return filepath.Join("out", p.name+"-plan") }

// Question is the plan's question in words.
func (p *Plan) Question() string {
	sp := p.spec.Space
	return fmt.Sprintf("the smallest %s in %s..%s meeting %s, over %d seeds per value",
		sp.Name, sp.Format(sp.Lo), sp.Format(sp.Hi), p.spec.Target, len(p.seeds))
}

// PlanResult is a plan's answer and its evidence.
type PlanResult struct {
	Answer      int64
	Found       bool   // some value in range meets the target
	Failed      bool   // some run broke an invariant
	Evals       []Eval // every evaluated value, in increasing order
	Interrupted bool   // ctx was cancelled: the folder is marked incomplete
}

// AnswerText is "name=value", or why there is none.
func (p *Plan) AnswerText(r PlanResult) string {
	sp := p.spec.Space
	if !r.Found {
		return fmt.Sprintf("none: no %s up to %s meets the target", sp.Name, sp.Format(sp.Hi))
	}
	return sp.Name + "=" + sp.Format(r.Answer)
}

// Run searches (Search: gallop up from lo, then bisect), running every
// seed at each value into out's runs/ folder, and writes the plan folder:
// the manifest, PlanFile and a sweep report that leads with the question
// and answer and draws the target. The folder is marked incomplete until
// the end; on cancellation it stays marked (or is removed when nothing
// was run) and PlanResult.Interrupted is set.
func (p *Plan) Run(ctx context.Context, out *Output) (PlanResult, error) {
	if err := Mark(out.Dir, "popsim plan in progress, or interrupted: re-run it"); err != nil {
		return PlanResult{}, err
	}
	meets := func(x int64) (bool, error) {
		e, err := p.evaluate(ctx, out.Dir, x)
		if err != nil {
			return false, err
		}
		if p.OnEval != nil {
			p.OnEval(*e)
		}
		return e.Meets, nil
	}
	answer, found, err := Search(p.spec.Space.Lo, p.spec.Space.Hi, meets)
	res := PlanResult{Answer: answer, Found: found, Evals: p.sortedEvals()}
	for _, e := range res.Evals {
		res.Failed = res.Failed || len(e.Failing) > 0
	}
	if Interrupted(err) {
		res.Interrupted = true
		if len(p.order) == 0 {
			out.Abandon()
			return res, nil
		}
		return res, Mark(out.Dir, fmt.Sprintf("popsim plan interrupted after %d evaluated values: re-run it", len(p.order)))
	}
	if err != nil {
		return res, err
	}
	return res, p.write(out.Dir, res)
}

// evaluate runs every seed at x and checks the target.
func (p *Plan) evaluate(ctx context.Context, dir string, x int64) (*Eval, error) {
	sp := p.spec.Space
	val := sp.Format(x)
	o := sp.Override(x)
	s, err := p.spec.Source.Load(o)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %v", sp.Name, val, err)
	}
	point := scenarios.Point{sp.Name: val}
	idx := len(p.order) // the value's point index in the manifest's grid
	outcomes := make([]*Outcome, len(p.seeds))
	errs := make([]error, len(p.seeds))
	var mu sync.Mutex
	ForEach(ctx, len(p.seeds), p.spec.Parallel, func(i int) {
		start := time.Now()
		outcomes[i], errs[i] = RunSeed(ctx, &p.spec.Source, s, p.seeds[i], Labelled(point), o)
		if errs[i] == nil {
			errs[i] = WriteRun(filepath.Join(dir, RunsDir, RunFolder(idx, point, p.seeds[i])), outcomes[i])
		}
		if Interrupted(errs[i]) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		p.done++
		if p.OnRun != nil {
			j := Job{Index: idx*len(p.seeds) + i, Point: idx, Seed: p.seeds[i]}
			p.OnRun(Finished{Done: p.done, Job: j, Point: point, Outcome: outcomes[i], Err: errs[i], Wall: time.Since(start)})
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	e, err := p.collect(x, outcomes)
	if err != nil {
		return nil, err
	}
	return e, p.writeManifest(dir)
}

// collect merges one value's runs into its Eval and the report.
func (p *Plan) collect(x int64, outcomes []*Outcome) (*Eval, error) {
	e := &Eval{Value: x, Metrics: Metrics{EndToEnd: report.NewLatencyHistogram(), Runs: len(outcomes)}}
	var dup, produced int64
	for _, o := range outcomes {
		s := o.Summary
		if h := o.Hists[report.HistEndToEnd]; h != nil {
			if err := report.Merge(e.Metrics.EndToEnd, h); err != nil {
				return nil, err
			}
		}
		dup, produced = dup+s.Duplicates, produced+s.Produced
		e.Metrics.Throughput += s.ThroughputPerSec / float64(len(outcomes))
		e.Metrics.Violations += len(s.Violations)
		if len(s.Violations) > 0 {
			e.Failing = append(e.Failing, s)
		}
		if err := p.rs.Add(report.SweepPoint{Summary: s, Hists: o.Hists}); err != nil {
			return nil, err
		}
	}
	if produced > 0 {
		e.Metrics.DupPct = 100 * float64(dup) / float64(produced)
	}
	e.Meets = p.spec.Target.Met(e.Metrics)
	p.evals[x] = e
	p.order = append(p.order, x)
	return e, nil
}

// applyPlanInfo gives a sweep read back from a plan folder its question,
// answer and target lines, from PlanFile; it does nothing without one.
func applyPlanInfo(dir string, rs *report.Sweep) error {
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var pj planJSON
	if err := json.Unmarshal(data, &pj); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	t, err := ParseTarget(pj.Target)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	rs.Question, rs.Answer = pj.Question, pj.AnswerText
	for _, c := range t {
		rs.Thresholds = append(rs.Thresholds, c.Threshold())
	}
	return nil
}

func (p *Plan) sortedEvals() []Eval {
	xs := slices.Sorted(slices.Values(p.order))
	out := make([]Eval, len(xs))
	for i, x := range xs {
		out[i] = *p.evals[x]
	}
	return out
}

// planJSON is PlanFile's content.
type planJSON struct {
	Question   string   `json:"question"`
	Target     string   `json:"target"` // as -target takes it
	Search     string   `json:"search"`
	Seeds      []uint64 `json:"seeds"`
	Found      bool     `json:"found"`
	Answer     string   `json:"answer,omitempty"`
	AnswerText string   `json:"answer_text"`
	Tried      []string `json:"tried"` // in evaluation order
}

// tried is every evaluated value's text, in evaluation order.
func (p *Plan) tried() []string {
	values := make([]string, len(p.order))
	for i, x := range p.order {
		values[i] = p.spec.Space.Format(x)
	}
	return values
}

// writeManifest describes the values evaluated so far as a one-parameter
// sweep (value i is point i), so report and merge read a plan folder like
// any sweep folder, even an interrupted one.
func (p *Plan) writeManifest(dir string) error {
	sp := p.spec.Space
	m := Manifest{Scenario: p.name, Source: p.spec.Source.Args(), Params: []scenarios.Param{{Name: sp.Name, Values: p.tried()}},
		Seeds: p.seeds, Jobs: len(p.order) * len(p.seeds), Shards: 1, X: sp.Name}
	return m.Write(dir)
}

// write finishes the plan folder and removes its marker.
func (p *Plan) write(dir string, r PlanResult) error {
	sp := p.spec.Space
	values := p.tried()
	pj := planJSON{Question: p.Question(), Target: p.spec.Target.Clauses(), Search: sp.String(), Seeds: p.seeds, Found: r.Found, Tried: values}
	if r.Found {
		pj.Answer = sp.Format(r.Answer)
	}
	pj.AnswerText = p.AnswerText(r)
	if err := writeJSON(filepath.Join(dir, PlanFile), pj); err != nil {
		return err
	}
	p.rs.Question, p.rs.Answer = p.Question(), p.AnswerText(r)
	for _, c := range p.spec.Target {
		p.rs.Thresholds = append(p.rs.Thresholds, c.Threshold())
	}
	if err := report.WriteSweep(dir, p.rs); err != nil {
		return err
	}
	return Unmark(dir)
}
