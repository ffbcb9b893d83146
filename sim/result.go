package sim

import (
	"fmt"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/model"
	"popsim/sim/check"
)

// result closes the run: the "done" phase event, the checker's liveness
// verdict, and the summary.
func (s *sim) result() (*Result, error) {
	s.traceCommits()
	end := model.RDone
	if !s.drained {
		end = model.RUndrained
	}
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Reason: end})
	if invariantsOn {
		s.checkEngine()
	}
	if last := s.meter.series; len(last) == 0 || last[len(last)-1].AtMs != s.q.now().Sub(s.start).Millis() {
		s.record() // the final, partial interval
	}
	rep := s.chk.Finish(check.Final{CommitLag: s.commitLags(), Drained: s.drained})
	sum, err := s.tr.finish()
	if err != nil {
		return nil, fmt.Errorf("sim: writing the trace: %w", err)
	}
	if cp := s.opts.capture; cp != nil {
		cp.checkpoints, cp.lines, cp.traceHash, cp.dispatched = s.tr.checkpoints, s.tr.captured, sum, s.q.dispatched
	}
	ms := s.meter.analyze(s.cfg.Duration)
	r := &Result{EndToEnd: ms.e2e.hdr(), ServiceTime: ms.svc.hdr(), Parts: map[string]*hdrhistogram.Histogram{}, ReviveLag: s.meter.reviveLag.hdr(),
		Events: s.tr.events, Header: s.headerLines(), traceEvents: s.tr.seq}
	for _, i := range s.meter.partOrder() {
		r.Parts[partNames[i]] = ms.parts[i].hdr()
	}
	r.Summary = s.summary(rep, sum, &ms)
	return r, nil
}

func (s *sim) summary(rep check.Report, traceSum string, ms *measurement) model.Summary {
	cfg := s.cfg
	sum := model.Summary{
		Scenario: s.opts.Scenario, Seed: cfg.Seed, ConsumerKind: s.consumerKind(),
		ConfigSHA256: s.c.sha256, TraceXXH3: traceSum,
		Produced: rep.Produced, Acked: rep.Acked, DLQ: rep.DLQ, Dropped: rep.Dropped, Lost: rep.Lost,
		Deliveries: rep.Deliveries, Duplicates: rep.Duplicates,
		DuplicatesByCause: rep.DuplicatesByCause, DroppedByPolicy: rep.DroppedByPolicy, Violations: rep.Violations,
		AckedNotDone: rep.AckedNotDone,
		EndToEnd:     ms.e2eLat, ServiceTime: ms.svc.latency(), ReviveLag: s.meter.reviveLag.latency(),
		Warmup: ms.warmup, Intervals: ms.intervals, Breakdown: ms.breakdown, Notes: s.notes(ms), Broker: s.brokerUsage(),
		SimEvents: s.q.dispatched, SimSeconds: s.q.now().Sub(s.start).Seconds(),
		Coverage: s.cov.snapshot(), Series: s.meter.series,
	}
	if c, ok := s.eng.(engineCounters); ok {
		sum.EngineCounters = c.Counters()
	}
	if sum.Violations == nil {
		sum.Violations = []model.Violation{}
	}
	if s.meter.redeliver != nil && s.meter.redeliver.total > 0 {
		l := s.meter.redeliver.latency()
		sum.RedeliverAfterCrash = &l
	}
	sum.HeadOfLine = s.meter.hol.summary(s.q.now())
	sum.Groups = s.groupSummaries(rep, ms)
	if l, ok := s.eng.(limiter); ok {
		sum.LimitsHit = l.limits()
	}
	sum.ThroughputPerSec = ms.tput
	if d, fixed := cfg.Warmup.Fixed(); fixed {
		sum.ThroughputPerSec = float64(s.meter.nWarmAcks) / (cfg.Duration - d).Seconds()
	}
	return sum
}

// groupSummaries is each group's share of the run when it has more than
// one group: the checker's counts and the meter's latencies.
func (s *sim) groupSummaries(rep check.Report, ms *measurement) []model.GroupSummary {
	if len(ms.groups) == 0 {
		return nil
	}
	out := make([]model.GroupSummary, len(s.groups))
	for i, g := range s.groups {
		out[i] = model.GroupSummary{Group: g.name, Topic: g.topic,
			EndToEnd: ms.groups[i].e2e.latency(), ServiceTime: ms.groups[i].svc.latency()}
	}
	for _, gr := range rep.Groups {
		if g := s.byName[gr.Group]; g != nil {
			o := &out[g.idx]
			o.Produced, o.Acked, o.DLQ, o.Dropped, o.Lost = gr.Produced, gr.Acked, gr.DLQ, gr.Dropped, gr.Lost
			o.Deliveries, o.Duplicates = gr.Deliveries, gr.Duplicates
		}
	}
	return out
}

// limiter is an engine adapter that reports the documented caps a run
// ran into (Summary.LimitsHit).
type limiter interface {
	limits() []model.LimitHit
}

func (s *sim) consumerKind() string {
	k := s.cons[0].spec.Kind
	for _, c := range s.cons {
		if c.spec.Kind != k {
			return "mixed"
		}
	}
	return string(k)
}

// headerLines are the run's derived parameters, printed first by callers.
func (s *sim) headerLines() []string {
	out := []string{
		"seed " + strconv.FormatUint(s.cfg.Seed, 10),
		"config_sha256 " + s.c.sha256,
		"swarm " + strconv.FormatBool(s.cfg.Faults.Swarm),
	}
	return append(out, s.faults.lines()...)
}
