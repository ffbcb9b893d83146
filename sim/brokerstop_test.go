package sim

import (
	"testing"

	"popsim/model"
)

// stopConfig is scheduleConfig with one message a second: the consumers'
// pops are parked in long polls most of the time.
func stopConfig() Config {
	c := scheduleConfig()
	c.Producers[0].Arrivals = arrivals("const(1/s)")
	return c
}

// parkedAnswers counts the empty answers (POLLING_TIMEOUT) clients got
// within the response latency after t, and returns the broker-restart
// event at t.
func parkedAnswers(t *testing.T, r *Result, stopAt float64) (answered int, restart model.Event) {
	t.Helper()
	for _, e := range r.Events {
		switch {
		case e.Kind == model.EvReceived && at(e) >= sec(stopAt) && at(e) <= sec(stopAt+0.001) && e.Code == int32(model.PollingTimeout):
			answered++
		case e.Kind == model.EvBrokerRestart && at(e) == sec(stopAt):
			restart = e
		}
	}
	if restart.Kind != model.EvBrokerRestart {
		t.Fatalf("no broker-restart event at +%vs", stopAt)
	}
	return answered, restart
}

// A graceful stop answers the parked pops (POLLING_TIMEOUT at once) before
// the broker restarts and drops none; a crash answers none and drops them.
func TestBrokerStopAnswersParkedPopsCrashDropsThem(t *testing.T) {
	stop, err := RunScheduled(stopConfig(), Schedule{{At: sec(6.5), Kind: FaultBrokerStop}}, RunOptions{KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, stop)
	answered, ev := parkedAnswers(t, stop, 6.5)
	if answered == 0 || ev.Count != 0 {
		t.Fatalf("graceful stop: %d parked pops answered POLLING_TIMEOUT, %d dropped; want some answered, none dropped", answered, ev.Count)
	}
	crash, err := RunScheduled(stopConfig(), Schedule{{At: sec(6.5), Kind: FaultBrokerRestart}}, RunOptions{KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, crash)
	answered, ev = parkedAnswers(t, crash, 6.5)
	if answered != 0 || ev.Count == 0 {
		t.Fatalf("crash: %d parked pops answered, %d dropped; want none answered, some dropped", answered, ev.Count)
	}
}

// The graceful stop is RocketMQ's: the other engines refuse it, as a rate
// and as a scheduled step.
func TestBrokerStopRefusedOutsideRocketMQ(t *testing.T) {
	for _, kind := range []EngineKind{KafkaShare, SQSStandard} {
		c := stopConfig()
		c.Engine = EngineSpec{Kind: kind}
		c.Consumers[0].Kind, c.Consumers[0].Settings = "", nil
		c.Faults.BrokerStop.Every = sec(5)
		if _, err := Run(c, RunOptions{}); err == nil {
			t.Errorf("%s: faults.brokerStop accepted", kind)
		}
	}
}
