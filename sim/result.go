package sim

import (
	"fmt"
	"strconv"

	"popsim/model"
	"popsim/sim/check"
)

// result closes the run: the "done" phase event, the checker's liveness
// verdict, and the summary.
func (s *sim) result() (*Result, error) {
	s.emit(model.Event{Kind: model.EvPhase, Client: -1, Detail: "done"})
	if last := s.led.series; len(last) == 0 || last[len(last)-1].AtMs != s.q.now().Sub(s.start).Millis() {
		s.record() // the final, partial interval
	}
	rep := s.chk.Finish(check.Final{CommitLag: s.commitLags(), Drained: s.drained})
	sum, err := s.tr.finish()
	if err != nil {
		return nil, fmt.Errorf("sim: writing the trace: %w", err)
	}
	if cp := s.opts.capture; cp != nil {
		cp.checkpoints, cp.lines, cp.traceSHA256, cp.dispatchedEv = s.tr.checkpoints, s.tr.captured, sum, s.q.dispatched
	}
	r := &Result{EndToEnd: s.led.e2e, ServiceTime: s.led.svc, Events: s.tr.events, Header: s.headerLines(), traceEvents: s.tr.seq}
	r.Summary = s.summary(rep, sum)
	return r, nil
}

func (s *sim) summary(rep check.Report, traceSum string) model.Summary {
	cfg := s.cfg
	sum := model.Summary{
		Scenario: s.opts.Scenario, Seed: cfg.Seed, ConsumerKind: s.consumerKind(),
		ConfigSHA256: s.c.sha256, TraceSHA256: traceSum,
		Produced: rep.Produced, Acked: rep.Acked, DLQ: rep.DLQ, Dropped: rep.Dropped, Lost: rep.Lost,
		Deliveries: rep.Deliveries, Duplicates: rep.Duplicates,
		DuplicatesByCause: rep.DuplicatesByCause, DroppedByPolicy: rep.DroppedByPolicy, Violations: rep.Violations,
		EndToEnd: latency(s.led.e2e), ServiceTime: latency(s.led.svc),
		SimEvents: s.q.dispatched, SimSeconds: s.q.now().Sub(s.start).Seconds(),
		Coverage: s.cov.snapshot(), Series: s.led.series,
	}
	if sum.Violations == nil {
		sum.Violations = []model.Violation{}
	}
	if w := cfg.Duration - cfg.Warmup; w > 0 {
		sum.ThroughputPerSec = float64(s.led.nWarmAcks) / w.Seconds()
	}
	return sum
}

func (s *sim) consumerKind() string {
	k := s.cons[0].kind
	for _, c := range s.cons {
		if c.kind != k {
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
