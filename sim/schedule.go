package sim

import (
	"fmt"
	"slices"
	"strconv"

	"popsim/clock"
)

// An explicit fault schedule: faults at chosen virtual times, on top of
// (or instead of) the rate-driven faults of FaultSpec. Property tests draw
// and shrink schedules; a schedule prints one readable line per step.
//
// Each step reuses the simulator's own fault code: a crash is the crash
// clock's crash (the consumer restarts after Faults.Crash.RestartDelay), a
// broker restart is the broker-restart clock's restart, and a window
// switches one FaultSpec site fully on (every request of the type is lost,
// every delivered message gets the renewal edge, every retry-topic write
// fails) for its duration. Like every fault, steps act only in the safety
// phase.

// FaultKind is what a scheduled step does.
type FaultKind uint8

// Scheduled fault kinds.
const (
	FaultCrash             FaultKind = iota + 1 // crash Consumer; it restarts after Faults.Crash.RestartDelay
	FaultPause                                  // freeze Consumer for For (a GC pause)
	FaultSlow                                   // Consumer processes Faults.Slow.Factor times slower for For
	FaultLoss                                   // lose every Loss request (or response) for For
	FaultRenewSameDeadline                      // messages delivered within For get a same-deadline renewal
	FaultRenewAtExpiry                          // ... a renewal that reaches the broker exactly at expiry
	FaultRenewAfterRevive                       // ... a late renewal with the delivery's handle after revive
	FaultBrokerRestart                          // restart the broker (its volatile state is lost)
	FaultRevivePutFailure                       // every retry-topic write fails for For
	FaultClockSkew                              // Consumer's clock is off by Skew from now on
	FaultDuplicateDelivery                      // sqs-standard: every receive within For also returns a copy of a message in flight
	FaultLockBusy                               // every pop finds the broker's lock busy for For
	FaultReviveReadFailure                      // every revive read of a message fails for For (checkpoint path)
	FaultBrokerStop                             // stop the broker gracefully (parked pops answered, offsets persisted), then start it
	numFaultKinds
)

var faultKindNames = [numFaultKinds]string{
	FaultCrash: "crash", FaultPause: "pause", FaultSlow: "slow", FaultLoss: "lose",
	FaultRenewSameDeadline: "renew-same-deadline", FaultRenewAtExpiry: "renew-at-expiry",
	FaultRenewAfterRevive: "renew-after-revive", FaultBrokerRestart: "restart broker",
	FaultRevivePutFailure: "fail retry-topic writes", FaultClockSkew: "skew", FaultDuplicateDelivery: "duplicate-delivery",
	FaultLockBusy:          "lock busy",
	FaultReviveReadFailure: "fail revive reads",
	FaultBrokerStop:        "stop broker",
}

func (k FaultKind) String() string {
	if k == 0 || k >= numFaultKinds {
		return "FaultKind(" + strconv.Itoa(int(k)) + ")"
	}
	return faultKindNames[k]
}

// ScheduledFault is one step of a schedule. Fields a kind does not use
// must be zero.
type ScheduledFault struct {
	At       clock.Duration // from the run's start, within the safety phase
	Kind     FaultKind
	Consumer int32          // crash, pause, slow, skew: index in the expanded Consumers list
	For      clock.Duration // pause, slow and the windows (loss, renew-*, put failure)
	Loss     string         // FaultLoss: pop, ack, change or pull
	Response bool           // FaultLoss: lose responses (after the broker acted) instead of requests
	Skew     clock.Duration // FaultClockSkew: client clock = broker clock + Skew (-1h..1h)
	Broker   int32          // FaultBrokerRestart, FaultBrokerStop: which broker (broker.count > 1)
}

// Schedule is a list of steps; order does not matter (ties at one instant
// run in the scheduler's seeded order).
type Schedule []ScheduledFault

// String renders the step as one line, e.g. "t=+12.5s crash consumer 2".
func (f ScheduledFault) String() string {
	at := "t=+" + f.At.Std().String() + " "
	switch f.Kind {
	case FaultCrash:
		return at + "crash consumer " + itoa(int64(f.Consumer))
	case FaultPause, FaultSlow:
		return at + f.Kind.String() + " consumer " + itoa(int64(f.Consumer)) + " for " + f.For.Std().String()
	case FaultLoss:
		dir := "requests"
		if f.Response {
			dir = "responses"
		}
		return at + "lose every " + f.Loss + " " + dir + " for " + f.For.Std().String()
	case FaultRenewSameDeadline, FaultRenewAtExpiry, FaultRenewAfterRevive:
		return at + f.Kind.String() + " for every message delivered within " + f.For.Std().String()
	case FaultBrokerRestart:
		return at + "restart broker" + brokerSuffix(f.Broker)
	case FaultBrokerStop:
		return at + "stop and start broker" + brokerSuffix(f.Broker)
	case FaultRevivePutFailure:
		return at + "fail every retry-topic write for " + f.For.Std().String()
	case FaultDuplicateDelivery:
		return at + "duplicate a message in flight on every receive for " + f.For.Std().String()
	case FaultLockBusy:
		return at + "busy pop lock for " + f.For.Std().String()
	case FaultReviveReadFailure:
		return at + "fail every revive read for " + f.For.Std().String()
	case FaultClockSkew:
		sign := "+"
		if f.Skew < 0 {
			sign = ""
		}
		return at + "skew consumer " + itoa(int64(f.Consumer)) + "'s clock by " + sign + f.Skew.Std().String()
	}
	return at + f.Kind.String()
}

// Lines renders the schedule, one step per line, in time order.
func (sc Schedule) Lines() []string {
	out := make([]string, 0, len(sc))
	for _, i := range sc.order() {
		out = append(out, sc[i].String())
	}
	return out
}

// order is the step indices sorted by time (stable).
func (sc Schedule) order() []int {
	idx := make([]int, len(sc))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ { // insertion sort: schedules are short
		for j := i; j > 0 && sc[idx[j]].At < sc[idx[j-1]].At; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// validate checks every step against the validated configuration.
func (sc Schedule) validate(c *layout) error {
	for i, f := range sc {
		if err := f.validate(c); err != nil {
			return fmt.Errorf("sim: schedule[%d] (%s): %w", i, f, err)
		}
	}
	return nil
}

func (f *ScheduledFault) validate(c *layout) error {
	if f.Kind == 0 || f.Kind >= numFaultKinds {
		return fmt.Errorf("Kind = %d: want 1..%d", f.Kind, numFaultKinds-1)
	}
	if f.At < 0 || f.At >= c.cfg.Duration {
		return fmt.Errorf("At = %v: want 0..%v (the safety phase)", f.At.Std(), c.cfg.Duration.Std())
	}
	targeted := f.Kind == FaultCrash || f.Kind == FaultPause || f.Kind == FaultSlow || f.Kind == FaultClockSkew
	if !targeted && f.Consumer != 0 {
		return fmt.Errorf("Consumer = %d: %s targets no consumer, want 0", f.Consumer, f.Kind)
	}
	if n := int32(len(c.consumers)); f.Consumer < 0 || f.Consumer >= n {
		return fmt.Errorf("Consumer = %d: want 0..%d", f.Consumer, n-1)
	}
	timed := f.Kind != FaultCrash && f.Kind != FaultBrokerRestart && f.Kind != FaultBrokerStop && f.Kind != FaultClockSkew
	switch {
	case timed && (f.For <= 0 || f.For > c.cfg.Duration):
		return fmt.Errorf("For = %v: want 1us..%v", f.For.Std(), c.cfg.Duration.Std())
	case !timed && f.For != 0:
		return fmt.Errorf("For = %v: %s has no duration, want 0", f.For.Std(), f.Kind)
	case (f.Kind == FaultLoss) != (f.Loss != "") || (f.Kind != FaultLoss && f.Response):
		return fmt.Errorf("Loss = %q, Response = %v: only %s uses them", f.Loss, f.Response, FaultLoss)
	case f.Kind == FaultLoss && !knownLoss(f.Loss):
		return fmt.Errorf("Loss = %q: want pop, ack, change or pull", f.Loss)
	case f.Kind != FaultClockSkew && f.Skew != 0:
		return fmt.Errorf("Skew = %v: only %s uses it", f.Skew.Std(), FaultClockSkew)
	case f.Skew < -clock.Hour || f.Skew > clock.Hour:
		return fmt.Errorf("Skew = %v: want -1h..1h", f.Skew.Std())
	case f.Broker != 0 && f.Kind != FaultBrokerRestart && f.Kind != FaultBrokerStop:
		return fmt.Errorf("Broker = %d: only %s and %s use it", f.Broker, FaultBrokerRestart, FaultBrokerStop)
	case f.Broker < 0 || f.Broker >= c.cfg.Broker.brokers():
		return fmt.Errorf("Broker = %d: want 0..%d (broker.count %d)", f.Broker, c.cfg.Broker.brokers()-1, c.cfg.Broker.brokers())
	}
	if r := engineOf(c.cfg.Engine.Kind); r != nil && slices.Contains(r.unscheduled, f.Kind) {
		return fmt.Errorf("the %s engine has no %s fault", r.kind, f.Kind)
	}
	return nil
}

// RunScheduled is Run with the schedule's faults injected at their times.
// The schedule is validated against cfg (after defaults); Result.Header ends
// with the schedule's lines.
func RunScheduled(cfg Config, sc Schedule, opts RunOptions) (*Result, error) {
	c, err := cfg.WithDefaults().layout()
	if err != nil {
		return nil, err
	}
	if err := sc.validate(c); err != nil {
		return nil, err
	}
	w := &windows{}
	opts.script = append([]scriptStep(nil), opts.script...)
	for _, i := range sc.order() {
		f := sc[i]
		opts.script = append(opts.script, scriptStep{after: f.At, f: func(s *sim) { w.apply(s, &f) }})
		opts.restarts = opts.restarts || f.Kind == FaultBrokerRestart || f.Kind == FaultBrokerStop
		opts.renews = opts.renews || f.Kind == FaultRenewSameDeadline || f.Kind == FaultRenewAtExpiry || f.Kind == FaultRenewAfterRevive
	}
	r, err := Run(cfg, opts)
	if err != nil {
		return nil, err
	}
	for _, l := range sc.Lines() {
		r.Header = append(r.Header, "schedule "+l)
	}
	return r, nil
}

// windows counts, per fault site, the open windows, and keeps the site's
// configured state to restore when the last one closes.
type windows struct {
	open  map[*site]int
	saved map[*site]site
}

func (w *windows) apply(s *sim, f *ScheduledFault) {
	if s.live {
		return
	}
	switch f.Kind {
	case FaultCrash:
		if c := s.cons[f.Consumer]; c.alive {
			s.crash(c)
		}
	case FaultPause:
		if c := s.cons[f.Consumer]; c.alive && s.q.now() >= c.pauseUntil {
			s.freeze(c, f.For)
		}
	case FaultSlow:
		if c := s.cons[f.Consumer]; c.alive {
			s.cov.hit("slow")
			c.slowUntil = max(c.slowUntil, s.q.now().Add(f.For))
		}
	case FaultClockSkew:
		s.cons[f.Consumer].skew = f.Skew
		if f.Skew != 0 {
			s.cov.hit("clock-skew")
		}
	case FaultBrokerRestart:
		s.restartBrokerOnce(f.Broker)
	case FaultBrokerStop:
		s.stopBrokerOnce(f.Broker)
	default:
		w.openWindow(s, f)
	}
}

// restartBrokerOnce runs the broker-restart clock's handler and cancels
// the next restart it arms, so that the schedule alone decides restarts.
func (s *sim) restartBrokerOnce(b int32) {
	saved := s.faults.broker
	s.faults.broker.every = clock.Hour // any valid mean: the re-armed restart is cancelled below
	next := s.brokerRestart(b)
	s.faults.broker = saved
	if next != nil {
		s.q.cancel(next, next.seq)
	}
}

// stopBrokerOnce runs the broker-stop handler and cancels the next stop
// it arms, so that the schedule alone decides stops.
func (s *sim) stopBrokerOnce(b int32) {
	saved := s.faults.stop
	s.faults.stop.every = clock.Hour // any valid mean: the re-armed stop is cancelled below
	next := s.brokerStop(b)
	s.faults.stop = saved
	if next != nil {
		s.q.cancel(next, next.seq)
	}
}

// brokerSuffix names a broker other than the first in a step's text
// (" broker-b"); the first, the only one of most runs, goes unnamed.
func brokerSuffix(b int32) string {
	if b == 0 {
		return ""
	}
	return " " + brokerName(b)
}

// siteOf is the FaultSpec site a window switches on.
func (s *sim) siteOf(f *ScheduledFault) *site {
	switch f.Kind {
	case FaultLoss:
		dir := 0
		if f.Response {
			dir = 1
		}
		for k, name := range lossKinds {
			if name == f.Loss {
				return &s.faults.loss[k][dir]
			}
		}
	case FaultRenewSameDeadline:
		return &s.faults.renew[renewSameDeadline]
	case FaultRenewAtExpiry:
		return &s.faults.renew[renewAtExpiry]
	case FaultRenewAfterRevive:
		return &s.faults.renew[renewAfterRevive]
	case FaultRevivePutFailure:
		return &s.faults.putFailure
	case FaultDuplicateDelivery:
		return &s.faults.dup
	case FaultLockBusy:
		return &s.faults.lock
	case FaultReviveReadFailure:
		return &s.faults.readFailure
	}
	panic("sim: no fault site for scheduled " + f.Kind.String())
}

// openWindow switches the step's site fully on until At+For (or the end of
// the safety phase, after which no fault fires anyway).
func (w *windows) openWindow(s *sim, f *ScheduledFault) {
	st := s.siteOf(f)
	if w.open == nil {
		w.open, w.saved = map[*site]int{}, map[*site]site{}
	}
	if w.open[st] == 0 {
		w.saved[st] = *st
	}
	w.open[st]++
	st.on, st.ppm = true, 1_000_000
	// apply opens windows in the safety phase only
	s.lossOn, s.renewOn = s.lossOn || st.fam == famLoss, s.renewOn || st.fam == famRenew
	if st == &s.faults.putFailure || st == &s.faults.dup || st == &s.faults.lock || st == &s.faults.readFailure {
		s.syncFaults()
	}
	end := min(s.q.now().Add(f.For), s.safetyEnd)
	s.q.at(end, tkScripted, -1, 0, &scripted{f: func(s *sim) {
		if w.open[st]--; w.open[st] == 0 {
			*st = w.saved[st]
			if st == &s.faults.putFailure || st == &s.faults.dup || st == &s.faults.lock || st == &s.faults.readFailure {
				s.syncFaults()
			}
		}
	}})
}
