package scenarios

import (
	"testing"

	"popsim/model"
	"popsim/sim"
)

// runBuiltinSeed runs a built-in for one seed with overrides and fails
// the test on any violation or on a message that did not settle.
func runBuiltinSeed(t *testing.T, name string, seed uint64, over ...Override) model.Summary {
	t.Helper()
	s, err := Builtin(name, over...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(s.Config(seed), sim.RunOptions{Scenario: name})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	for _, v := range sum.Violations {
		t.Errorf("%s seed %d: violation %s at event %d: %s", name, seed, v.Invariant, v.EventIndex, v.Detail)
	}
	if sum.Produced == 0 || sum.Acked+sum.DLQ+sum.Dropped != sum.Produced {
		t.Errorf("%s seed %d: produced %d, acked %d, dlq %d, dropped %d: not everything settled", name, seed, sum.Produced, sum.Acked, sum.DLQ, sum.Dropped)
	}
	return sum
}

// broker-stop shows what a graceful stop spares long-polling consumers:
// its stops drop no parked pop and leave the latency as it is, where a
// crash at the same instants drops them and the clients wait out their
// pop timeouts (pollTime 15 s + slack 10 s). Shortened to 20 s with a
// strike every 4 s, so that both see several.
func TestBrokerStopBuiltin(t *testing.T) {
	short := []Override{{Path: "duration", Value: "20s"}, {Path: "warmup", Value: "2s"}}
	stop := runBuiltinSeed(t, "broker-stop", 1, append(short, Override{Path: "faults.brokerStop.every", Value: "4s"})...)
	crash := runBuiltinSeed(t, "broker-stop", 1, append(short, Override{Path: "faults.brokerStop.every", Value: "0s"},
		Override{Path: "faults.brokerRestart.every", Value: "4s"})...)
	if stop.Coverage["broker-stop"] == 0 || stop.Coverage["broker-restart"] != 0 {
		t.Fatalf("stop run: coverage %v: want broker stops and no crash", stop.Coverage)
	}
	if crash.Coverage["broker-restart"] != stop.Coverage["broker-stop"] {
		t.Errorf("crash run: %d crashes, stop run %d stops: want the same instants (one fault stream)",
			crash.Coverage["broker-restart"], stop.Coverage["broker-stop"])
	}
	if n := stop.Coverage["dropped-polls"]; n != 0 {
		t.Errorf("graceful stops dropped %d parked pops: want 0", n)
	}
	if crash.Coverage["dropped-polls"] == 0 || crash.Coverage["client-timeout"] == 0 {
		t.Errorf("crashes: coverage %v: want parked pops dropped and clients timing out", crash.Coverage)
	}
	const second = 1_000_000 // µs
	if stop.EndToEnd.P99 > second/2 || crash.EndToEnd.P99 < 10*second {
		t.Errorf("end-to-end p99: stop %d µs, crash %d µs: want under 0.5 s and over 10 s", stop.EndToEnd.P99, crash.EndToEnd.P99)
	}
}
