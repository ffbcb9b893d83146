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
	"popsim/sim"
	"popsim/stats"
)

// Plan defaults.
const (
	// DefaultMaxSeeds is the default seed budget per evaluated value.
	DefaultMaxSeeds = 30
	// MinStartSeeds is how many seeds a value starts with at least (when
	// the budget allows): an interval needs 2, and with 3 the first look
	// can already settle a value far from the target.
	MinStartSeeds = 3
	// MaxFill bounds the values a plan tries between the largest value
	// that clearly misses and the smallest that clearly meets the target.
	MaxFill = 16
)

// PlanSpec is a capacity question: the smallest value of Space whose runs
// meet Target, decided at confidence Level from as many seeds per value as
// it takes, up to MaxSeeds.
type PlanSpec struct {
	Source   Source
	Target   Target
	Space    Space
	Seeds    string  // the seeds every value starts with, continued upwards; "" for the scenario's
	MaxSeeds int     // seeds per value at most; 0 for DefaultMaxSeeds
	Level    float64 // overall confidence; 0 for report.DefaultLevel
	Parallel int
}

// Eval is one evaluated value of the searched parameter: its runs and the
// decision on each condition of the target.
type Eval struct {
	Value int64
	// Point holds one decision per condition at the plan's per-look
	// level, plus a not-met decision when a run broke an invariant.
	Point      stats.Point
	Verdict    stats.Verdict
	Seeds      []uint64 // the runs at this value, in the order run
	Looks      int      // times the data were looked at (seeds added between looks)
	Violations int
	Failing    []model.Summary // runs that broke an invariant, by seed
	Stats      model.PointStats
}

// Plan answers a PlanSpec by running it.
type Plan struct {
	spec     PlanSpec
	name     string   // the scenario's
	seeds    []uint64 // the seed sequence: a value runs a prefix of it
	start    int      // seeds every value starts with
	level    float64  // overall
	perLook  float64  // the level of each decision
	looks    int      // the most looks at one value
	evals    map[int64]*Eval
	order    []int64 // values in evaluation order
	rs       *report.Sweep
	done     int
	fillNote string // values between the bounds left untried (MaxFill)

	// run runs seeds at a value (runSeeds; tests substitute synthetic runs).
	run func(ctx context.Context, dir string, x int64, idx int, seeds []uint64) ([]*Outcome, error)

	// OnEval, when set, is called after each evaluated value.
	OnEval func(Eval)
	// OnRun, when set, is called once per finished run, one call at a time.
	OnRun func(Finished)
}

// NewPlan checks a spec: the scenario loads at both ends of the range,
// the seeds parse and fit the budget. Every error is the caller's input.
func NewPlan(spec PlanSpec) (*Plan, error) {
	if err := CheckParallel(spec.Parallel); err != nil {
		return nil, err
	}
	if spec.Level == 0 {
		spec.Level = report.DefaultLevel
	}
	if err := report.CheckLevel(spec.Level); err != nil {
		return nil, err
	}
	if spec.MaxSeeds == 0 {
		spec.MaxSeeds = DefaultMaxSeeds
	}
	base, err := spec.Source.Load()
	if err != nil {
		return nil, err
	}
	list, err := SeedsOf(base, spec.Seeds)
	if err != nil {
		return nil, err
	}
	if spec.MaxSeeds < len(list) || spec.MaxSeeds > 100_000 {
		return nil, fmt.Errorf("-max-seeds %d: want %d (the seeds listed) to 100000", spec.MaxSeeds, len(list))
	}
	for _, x := range []int64{spec.Space.Lo, spec.Space.Hi} {
		if _, err := spec.Source.Load(spec.Space.Override(x)); err != nil {
			return nil, fmt.Errorf("%s=%s: %v", spec.Space.Name, spec.Space.Format(x), err)
		}
	}
	p := &Plan{spec: spec, name: base.Name, seeds: seedSequence(list, spec.MaxSeeds), level: spec.Level, evals: map[int64]*Eval{}}
	p.start = min(max(len(list), MinStartSeeds), spec.MaxSeeds)
	p.looks = len(Schedule(p.start, spec.MaxSeeds))
	p.perLook = stats.PerLookLevel(spec.Level, p.looks*len(spec.Target))
	p.rs = report.NewSweep(base.Name, spec.Space.Name, "")
	p.rs.Level = spec.Level
	p.run = p.runSeeds
	return p, nil
}

// seedSequence is list continued by the seeds after its largest, up to n
// seeds in all.
func seedSequence(list []uint64, n int) []uint64 {
	seq := slices.Clone(list)
	next := slices.Max(append([]uint64{0}, list...)) + 1
	for len(seq) < n {
		if !slices.Contains(list, next) {
			seq = append(seq, next)
		}
		next++
	}
	return seq
}

// Schedule is the seed counts at which a value is looked at when every
// look adds the fewest seeds a plan adds (half as many again, at least
// one): start, then up to budget. A plan adds more when an estimate says
// more are needed, so it never looks more often than this: its length
// is the number of looks the per-look level accounts for.
func Schedule(start, budget int) []int {
	ns := []int{start}
	for n := start; n < budget; {
		n = min(budget, n+grow(n))
		ns = append(ns, n)
	}
	return ns
}

// grow is the fewest seeds added after a look at n: half as many again.
func grow(n int) int { return max(1, (n+1)/2) }

// Seeds are the seed sequence: every value runs a prefix of it.
func (p *Plan) Seeds() []uint64 { return p.seeds }

// Level is the plan's overall confidence level and PerLook the level of
// each decision (Bonferroni over Looks looks and every condition).
func (p *Plan) Level() float64   { return p.level }
func (p *Plan) PerLook() float64 { return p.perLook }
func (p *Plan) Looks() int       { return p.looks }

// Target is the plan's target.
func (p *Plan) Target() Target { return p.spec.Target }

// DefaultDir is out/<scenario>-plan.
func (p *Plan) DefaultDir() string { return filepath.Join("out", p.name+"-plan") }

// Question is the plan's question in words.
func (p *Plan) Question() string {
	sp := p.spec.Space
	return fmt.Sprintf("the smallest %s in %s..%s meeting %s, at %s confidence from %d to %d seeds per value",
		sp.Name, sp.Format(sp.Lo), sp.Format(sp.Hi), p.spec.Target, levelText(p.level), p.start, p.spec.MaxSeeds)
}

// PlanResult is a plan's answer and its evidence.
type PlanResult struct {
	// Answer is the boundary read off every evaluated value
	// (stats.Boundary), at the plan's overall level.
	Answer stats.Answer
	// Undecided: no value clearly meets the target and some value is
	// still undecided: the seed budget ran out before the data could tell.
	Undecided   bool
	Failed      bool   // some run broke an invariant
	Evals       []Eval // every evaluated value, in increasing order
	Interrupted bool   // ctx was cancelled: the folder is marked incomplete
}

// Found reports whether some value clearly meets the target.
func (r PlanResult) Found() bool { return r.Answer.Found }

// AnswerText is the answer for people, as stats.Answer.String words it
// but with the parameter's name and values: "consumers=9 (clear at 95%)",
// "consumers=9, but 10 is not excluded at 95%"; "undecided: ..." when the
// budget ran out first, "none: ..." when no value meets the target.
func (p *Plan) AnswerText(r PlanResult) string {
	sp := p.spec.Space
	a := r.Answer
	f := func(x float64) string { return sp.Format(int64(x)) }
	switch {
	case a.Found:
	case r.Undecided:
		return fmt.Sprintf("undecided: %s; at most %d seeds per value could not tell (raise -max-seeds)", a.Note, p.spec.MaxSeeds)
	default:
		return fmt.Sprintf("none: no %s up to %s meets the target (every value tried clearly misses it at %s)", sp.Name, sp.Format(sp.Hi), levelText(p.level))
	}
	s := sp.Name + "=" + f(a.Est)
	lv := levelText(a.Level)
	switch n := len(a.NotExcluded); {
	case n == 0:
		s += " (clear at " + lv + ")"
	case n == 1:
		s += ", but " + f(a.NotExcluded[0]) + " is not excluded at " + lv
	case n <= 3:
		parts := make([]string, n)
		for i, v := range a.NotExcluded {
			parts[i] = f(v)
		}
		s += ", but " + joinAnd(parts) + " are not excluded at " + lv
	default:
		s += fmt.Sprintf(", but %s to %s (%d values tried) are not excluded at %s", f(a.NotExcluded[0]), f(a.NotExcluded[n-1]), n, lv)
	}
	if a.Note != "" {
		s += "; " + a.Note
	}
	return s
}

func joinAnd(parts []string) string {
	n := len(parts)
	out := ""
	for i, p := range parts[:n-1] {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out + " and " + parts[n-1]
}

// levelText renders 0.95 as "95%", as stats does.
func levelText(level float64) string {
	return fmt.Sprintf("%s%%", fmtG(level*100))
}

func fmtG(x float64) string { return fmt.Sprintf("%.6g", x) }

// Run searches for the boundary and writes the plan folder: the runs, the
// manifest, PlanFile and a sweep report that leads with the question and
// answer, lists every decision and draws the target. The search (Search:
// gallop up from lo, then bisect) is steered by the verdicts, and by the
// point estimates where a value is undecided; then every value between
// the largest clearly-missing one and the smallest clearly-meeting one is
// tried too (up to MaxFill), so that Boundary can say which could still be
// the answer. The folder is marked incomplete until the end; on
// cancellation it stays marked (or is removed when nothing was run) and
// PlanResult.Interrupted is set.
func (p *Plan) Run(ctx context.Context, out *Output) (PlanResult, error) {
	if err := Mark(out.Dir, "popsim plan in progress, or interrupted: re-run it"); err != nil {
		return PlanResult{}, err
	}
	res, err := p.decide(ctx, out.Dir)
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

// decide searches and fills (see Run), running the seeds into dir, and
// reads the answer off the values evaluated.
func (p *Plan) decide(ctx context.Context, dir string) (PlanResult, error) {
	eval := func(x int64) (*Eval, error) {
		if e := p.evals[x]; e != nil {
			return e, nil
		}
		e, err := p.evaluate(ctx, dir, x)
		if err == nil && p.OnEval != nil {
			p.OnEval(*e)
		}
		return e, err
	}
	steer := func(x int64) (bool, error) {
		e, err := eval(x)
		if err != nil {
			return false, err
		}
		return e.Verdict == stats.Met || e.Verdict == stats.Undecided && e.Point.EstimateMeets(), nil
	}
	_, _, err := Search(p.spec.Space.Lo, p.spec.Space.Hi, steer)
	if err == nil {
		err = p.fill(eval)
	}
	return p.result(), err
}

// fill tries, bottom up, the values Boundary needs judged: first upwards
// (galloping) from the largest value tried until one clearly meets the
// target, when none does yet above the largest clear miss; then every
// untried value between that miss and the smallest clear meet.
func (p *Plan) fill(eval func(int64) (*Eval, error)) error {
	sp := p.spec.Space
	for step := int64(1); ; step *= 2 {
		lastNot, safe := p.bracket()
		if safe >= 0 {
			break
		}
		top := slices.Max(p.order)
		if top >= sp.Hi || top < lastNot {
			return nil // nothing above is left to try
		}
		if _, err := eval(min(sp.Hi, top+step)); err != nil {
			return err
		}
	}
	for tried := 0; ; tried++ {
		lastNot, safe := p.bracket()
		x := lastNot + 1
		for x < safe && p.evals[x] != nil {
			x++
		}
		if x >= safe {
			return nil
		}
		if tried == MaxFill {
			p.fillNote = fmt.Sprintf("%s to %s were not all tried (at most %d values between the bounds)", sp.Format(x), sp.Format(safe-1), MaxFill)
			return nil
		}
		if _, err := eval(x); err != nil {
			return err
		}
	}
}

// bracket is the largest value tried that clearly misses the target (lo-1
// when none does) and the smallest above it that clearly meets it (-1 when
// none does).
func (p *Plan) bracket() (lastNot, safe int64) {
	lastNot, safe = p.spec.Space.Lo-1, -1
	for x, e := range p.evals {
		if e.Verdict == stats.NotMet && x > lastNot {
			lastNot = x
		}
	}
	for x, e := range p.evals {
		if e.Verdict == stats.Met && x > lastNot && (safe < 0 || x < safe) {
			safe = x
		}
	}
	return lastNot, safe
}

// result reads the answer off the evaluated values.
func (p *Plan) result() PlanResult {
	res := PlanResult{Evals: p.sortedEvals()}
	points := make([]stats.Point, len(res.Evals))
	for i, e := range res.Evals {
		res.Failed = res.Failed || len(e.Failing) > 0
		res.Undecided = res.Undecided || e.Verdict == stats.Undecided
		// Each decision was taken at the per-look level so that all of
		// them together hold at the plan's level: state that one.
		pt := stats.Point{X: float64(e.Value), Decisions: slices.Clone(e.Point.Decisions)}
		for j := range pt.Decisions {
			pt.Decisions[j].Interval.Level = p.level
		}
		points[i] = pt
	}
	res.Answer = stats.Boundary(points, stats.Increasing)
	res.Answer.Level = p.level
	if p.fillNote != "" {
		if res.Answer.Note != "" {
			res.Answer.Note += "; "
		}
		res.Answer.Note += p.fillNote
	}
	res.Undecided = res.Undecided && !res.Answer.Found
	return res
}

// evaluate runs seeds at x until the decision is clear or the budget is
// spent: the first p.start seeds, then after each undecided look as many
// more as the estimates say are needed (stats.Decision.More), at least
// half as many again.
func (p *Plan) evaluate(ctx context.Context, dir string, x int64) (*Eval, error) {
	idx := len(p.order) // the value's point index in the manifest's grid
	var outcomes []*Outcome
	var e *Eval
	for n, looks := p.start, 1; ; looks++ {
		more, err := p.run(ctx, dir, x, idx, p.seeds[len(outcomes):n])
		if err != nil {
			return nil, err
		}
		outcomes = append(outcomes, more...)
		e = p.judge(x, outcomes)
		e.Looks = looks
		if e.Verdict != stats.Undecided || n >= p.spec.MaxSeeds {
			break
		}
		add := grow(n)
		for _, d := range e.Point.Decisions {
			if d.Verdict == stats.Undecided && d.More > add {
				add = d.More
			}
		}
		n = min(p.spec.MaxSeeds, n+add)
	}
	runs := make([]model.Summary, len(outcomes))
	for i, o := range outcomes {
		if err := p.rs.Add(report.SweepPoint{Summary: o.Summary, Hists: o.Hists}); err != nil {
			return nil, err
		}
		runs[i] = o.Summary
	}
	e.Stats = report.StatsOf(runs, p.level)
	p.evals[x] = e
	p.order = append(p.order, x)
	return e, p.writeManifest(dir)
}

// runSeeds runs the seeds at value x (point idx of the manifest),
// parallel at a time, and writes their folders.
func (p *Plan) runSeeds(ctx context.Context, dir string, x int64, idx int, seeds []uint64) ([]*Outcome, error) {
	sp := p.spec.Space
	o := sp.Override(x)
	s, err := p.spec.Source.Load(o)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %v", sp.Name, sp.Format(x), err)
	}
	point := scenarios.Point{sp.Name: sp.Format(x)}
	outcomes := make([]*Outcome, len(seeds))
	errs := make([]error, len(seeds))
	var mu sync.Mutex
	reuse := make([]sim.Reuse, max(p.spec.Parallel, 1)) // one per worker (ForEach)
	ForEach(ctx, len(seeds), p.spec.Parallel, func(w, i int) {
		start := time.Now()
		outcomes[i], errs[i] = RunSeed(ctx, &p.spec.Source, s, seeds[i], Labelled(point), &reuse[w], o)
		if errs[i] == nil {
			errs[i] = WriteRun(filepath.Join(dir, RunsDir, RunFolder(idx, point, seeds[i])), outcomes[i])
		}
		if Interrupted(errs[i]) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		p.done++
		if p.OnRun != nil {
			j := Job{Index: p.done - 1, Point: idx, Seed: seeds[i]}
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
	return outcomes, nil
}

// judge decides every condition of the target from the runs at x, at the
// per-look level. A run that broke an invariant makes the value not met.
func (p *Plan) judge(x int64, outcomes []*Outcome) *Eval {
	e := &Eval{Value: x, Point: stats.Point{X: float64(x)}}
	for _, o := range outcomes {
		e.Seeds = append(e.Seeds, o.Summary.Seed)
		if n := len(o.Summary.Violations); n > 0 {
			e.Violations += n
			e.Failing = append(e.Failing, o.Summary)
		}
	}
	for _, c := range p.spec.Target {
		var values []float64
		for _, o := range outcomes {
			if v, ok := c.SeedValue(o.Summary); ok {
				values = append(values, v)
			}
		}
		e.Point.Decisions = append(e.Point.Decisions, stats.Decide(values, c.StatsTarget(), p.perLook))
	}
	if e.Violations > 0 {
		e.Point.Decisions = append(e.Point.Decisions, stats.Decision{
			Target:   stats.Target{Goal: stats.AtMost, Threshold: 0},
			Verdict:  stats.NotMet,
			Interval: stats.Interval{Est: float64(e.Violations), Level: p.perLook, N: len(outcomes), Note: "runs broke an invariant"},
		})
	}
	e.Verdict = e.Point.Verdict()
	return e
}

// Evidence is an evaluated value as its report shows it: each condition's
// verdict and interval in the condition's display unit.
func (p *Plan) Evidence(e Eval) report.PlanEvidence {
	ev := report.PlanEvidence{Value: p.spec.Space.Format(e.Value), Seeds: len(e.Seeds), Verdict: e.Verdict.String(), Violations: e.Violations}
	for i, c := range p.spec.Target {
		d := e.Point.Decisions[i]
		unit, scale := c.Display()
		iv := report.Interval(d.Interval)
		iv.Est, iv.Lo, iv.Hi = iv.Est*scale, iv.Lo*scale, iv.Hi*scale
		ev.Conditions = append(ev.Conditions, report.ConditionEvidence{Condition: c.Text, Verdict: d.Verdict.String(), Unit: unit, Interval: iv})
	}
	return ev
}

// applyPlanInfo gives a sweep read back from a plan folder its question,
// answer, decisions and target lines, from PlanFile; it does nothing
// without one.
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
	rs.Question, rs.Answer, rs.Evidence = pj.Question, pj.AnswerText, pj.Evidence
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

// planJSON is PlanFile's content: the question and the answer first.
type planJSON struct {
	Question   string `json:"question"`
	AnswerText string `json:"answer_text"`
	// Answer is the value that meets the target by the estimates, Provision
	// the smallest that clearly meets it ("" when none does).
	Answer       string                `json:"answer,omitempty"`
	Provision    string                `json:"provision,omitempty"`
	Found        bool                  `json:"found"`
	Undecided    bool                  `json:"undecided"`
	Boundary     stats.Answer          `json:"boundary"` // values in the parameter's unit
	Target       string                `json:"target"`   // as -target takes it
	Search       string                `json:"search"`
	Level        float64               `json:"level"`
	PerLookLevel float64               `json:"per_look_level"`
	Looks        int                   `json:"looks"` // the most looks at one value
	StartSeeds   int                   `json:"start_seeds"`
	MaxSeeds     int                   `json:"max_seeds"`
	Seeds        []uint64              `json:"seeds"` // the sequence: each value ran a prefix of it
	Tried        []string              `json:"tried"` // in evaluation order
	Evidence     []report.PlanEvidence `json:"evidence"`
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
// sweep (value i is point i, with its own number of seeds), so report and
// merge read a plan folder like any sweep folder, even an interrupted one.
func (p *Plan) writeManifest(dir string) error {
	sp := p.spec.Space
	counts := make([]int, len(p.order))
	used, jobs := 0, 0
	for i, x := range p.order {
		counts[i] = len(p.evals[x].Seeds)
		used, jobs = max(used, counts[i]), jobs+counts[i]
	}
	m := Manifest{Scenario: p.name, Source: p.spec.Source.Args(), Params: []scenarios.Param{{Name: sp.Name, Values: p.tried()}},
		Seeds: p.seeds[:used], Jobs: jobs, Shards: 1, X: sp.Name, Level: p.level, PointSeeds: counts}
	return m.Write(dir)
}

// write finishes the plan folder and removes its marker.
func (p *Plan) write(dir string, r PlanResult) error {
	sp := p.spec.Space
	pj := planJSON{Question: p.Question(), AnswerText: p.AnswerText(r), Found: r.Answer.Found, Undecided: r.Undecided,
		Boundary: r.Answer, Target: p.spec.Target.Clauses(), Search: sp.String(), Level: p.level, PerLookLevel: p.perLook,
		Looks: p.looks, StartSeeds: p.start, MaxSeeds: p.spec.MaxSeeds, Seeds: p.seeds, Tried: p.tried(), Evidence: []report.PlanEvidence{}}
	if r.Answer.Found {
		pj.Answer, pj.Provision = sp.Format(int64(r.Answer.Est)), sp.Format(int64(r.Answer.Safe))
	}
	for _, e := range r.Evals {
		pj.Evidence = append(pj.Evidence, p.Evidence(e))
	}
	if err := writeJSON(filepath.Join(dir, PlanFile), pj); err != nil {
		return err
	}
	p.rs.Question, p.rs.Answer, p.rs.Evidence = pj.Question, pj.AnswerText, pj.Evidence
	for _, c := range p.spec.Target {
		p.rs.Thresholds = append(p.rs.Thresholds, c.Threshold())
	}
	if err := report.WriteSweep(dir, p.rs); err != nil {
		return err
	}
	return Unmark(dir)
}
