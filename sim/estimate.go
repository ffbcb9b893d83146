package sim

import (
	"fmt"

	"popsim/clock"
)

// Estimate is what a run is expected to cost, from its configuration
// alone: the expected message count of its arrival processes over the
// safety phase, the events those messages and the periodic work
// dispatch, and the peak memory of a process running it. It exists to
// refuse runs that cannot fit before they start (a valid configuration
// can ask for backlog(1000000000) or poisson(1e9/s) for 720 h); it is a
// model fitted to measurements, not a bound: a real run may differ by
// tens of percent, more with heavy faults or retries.
type Estimate struct {
	Messages float64 // produced messages (mean)
	Burst    float64 // of which arrive within the first millisecond (backlogs)
	Events   float64 // dispatched tasks (Summary.SimEvents)
	Bytes    float64 // peak resident memory of popsim running it
}

// The estimate's constants, measured with popsim run (GOGC=400, as
// cmd/popsim sets it), peak RSS by /usr/bin/time -f %M, on 8 consumers
// with 32 threads and const(100us) processing over 8 queues:
//
//   - poisson(2000/s) and poisson(10000/s) for 100 s (2e5 and 1e6
//     messages): 1.01 KiB (pop-push) and 1.04 KiB (pull) of peak memory
//     per message more, so every produced message stays resident (the
//     broker's store keeps it to the end);
//   - backlog(200000) and backlog(1000000): 2.85 KiB (pop-push), 3.31 KiB
//     (simple) and 2.63 KiB (pull) per message more, so a message that
//     waits in a backlog costs about 2.3 KiB on top;
//   - events per message: 6.0 (pop-push), 6.0 (simple) and 6.9 (pull) for
//     those Poisson streams; 6.0 to 7.7 in the built-in scenarios with
//     faults (7.7: simple consumers with auto-renew);
//   - a small run's process takes 30 to 60 MiB before any message;
//   - the meter keeps 40 bytes per stored message to the end of the run
//     (its latency record, so the warm-up can be cut where the data
//     says), counted on top of the 1.1 KiB measured before it.
const (
	estBaseBytes     = 64 << 20
	estRetainedBytes = 1100 + 40 // per produced message
	estWaitingBytes  = 2400      // more per message of a burst (backlog)
	estPollEvents    = 4         // an empty long poll: request, suspend, expiry, response
	estBurstSpan     = clock.Millisecond
)

// estEventsPerMessage is the events one message costs, by the kind of
// the group that consumes it.
var estEventsPerMessage = map[ConsumerKind]float64{PopPush: 6, Simple: 7, Pull: 7}

// Estimate validates the configuration and estimates the run's cost.
func (c *Config) Estimate() (Estimate, error) {
	l, err := c.WithDefaults().layout()
	if err != nil {
		return Estimate{}, err
	}
	cfg := &l.cfg
	kindOf := map[string]ConsumerKind{}
	for _, s := range l.consumers {
		kindOf[s.Topic] = s.Kind
	}
	var e Estimate
	for _, p := range l.producers {
		n := p.Arrivals.Expected(cfg.Duration)
		e.Messages += n
		e.Burst += min(n, p.Arrivals.Expected(estBurstSpan))
		e.Events += n * estEventsPerMessage[kindOf[p.Topic]]
	}
	span := float64(cfg.Duration)
	for _, s := range l.consumers {
		poll := s.pollTime()
		e.Events += span / float64(poll) * estPollEvents
	}
	e.Events += span/float64(500*clock.Millisecond) + span/float64(cfg.SampleInterval)
	e.Bytes = estBaseBytes + e.Messages*estRetainedBytes + e.Burst*estWaitingBytes
	return e, nil
}

// pollTime is the consumer's long-polling time (its settings, defaults
// applied).
func (s *ConsumerSpec) pollTime() clock.Duration {
	switch set := s.Settings.(type) {
	case *PopPushSettings:
		return set.PollTime
	case *SimpleSettings:
		return set.PollTime
	case *PullSettings:
		return set.PollTime
	}
	return 15 * clock.Second
}

func (e Estimate) String() string {
	return fmt.Sprintf("%s messages, %s events and %s of memory", count(e.Messages), count(e.Events), Bytes(e.Bytes))
}

// count renders a large count readably: 30000, 2.6e+15.
func count(x float64) string {
	if x < 1e7 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2g", x)
}

// Bytes renders a byte count with a binary unit: 512 MiB, 3.2 TiB.
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1024 {
		return fmt.Sprintf("%.2g %s", b, units[i])
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}
