package sim

import (
	"math"
	"strings"
	"testing"

	"popsim/clock"
)

// The two inputs of issue 16 that pass validation and ran out of memory:
// the estimate must put them far beyond any machine.
func TestEstimateHugeRuns(t *testing.T) {
	backlog := DefaultConfig()
	backlog.Producers[0].Arrivals = arrivals("backlog(1000000000)")
	poisson := DefaultConfig()
	poisson.Producers[0].Arrivals = arrivals("poisson(1000000000/s)")
	poisson.Duration = 720 * clock.Hour
	for _, c := range []struct {
		name     string
		cfg      Config
		messages float64
		minBytes float64
	}{
		{"backlog(1e9)", backlog, 1e9, 3e12},
		{"poisson(1e9/s) over 720h", poisson, 2.592e15, 2e18},
	} {
		if err := c.cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		e, err := c.cfg.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(e.Messages-c.messages) > 1e-6*c.messages || e.Bytes < c.minBytes || e.Events < 6*c.messages {
			t.Errorf("%s: %+v; want %g messages, at least %g bytes and 6 events per message", c.name, e, c.messages, c.minBytes)
		}
		if s := e.String(); !strings.Contains(s, "messages") || !strings.Contains(s, "iB of memory") {
			t.Errorf("%s: String() = %q", c.name, s)
		}
	}
}

// The estimate follows an actual run: messages within 5 %, events within
// 35 % (faults and retries vary them).
func TestEstimateMatchesARun(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple, Pull} {
		cfg := DefaultConfig()
		cfg.Duration = 10 * clock.Second
		cfg.Consumers[0].Kind = kind
		e, err := cfg.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(cfg, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, events := float64(r.Summary.Produced), float64(r.Summary.SimEvents)
		t.Logf("%s: estimated %s; the run produced %.0f messages and dispatched %.0f events", kind, e, got, events)
		if math.Abs(e.Messages-got) > 0.05*got || math.Abs(e.Events-events) > 0.35*events {
			t.Errorf("%s: estimated %.0f messages and %.0f events; the run produced %.0f and dispatched %.0f", kind, e.Messages, e.Events, got, events)
		}
	}
}

func TestEstimateRejectsAnInvalidConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Consumers[0].Batch = 99
	if _, err := cfg.Estimate(); err == nil {
		t.Fatal("Estimate of an invalid configuration")
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[float64]string{0: "0 B", 1536: "1.5 KiB", 64 << 20: "64 MiB", 3.4e12: "3.09 TiB", 2.8e18: "2.43 EiB", 1e25: "8.7e+06 EiB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%g) = %q, want %q", b, got, want)
		}
	}
}
