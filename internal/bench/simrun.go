package bench

import (
	"os"
	"testing"

	"popsim/internal/gcfloor"
	"popsim/internal/meminfo"

	"popsim/scenarios"
	"popsim/sim"
)

// SimRun measures the simulator: each iteration is one sim.Run of
// sim.DefaultConfig (fixed seed), a whole deterministic run in virtual
// time. It reports per simulated event (ns/event, events/s, allocs/event)
// and the virtual-to-wall ratio (virtual-s/wall-s: simulated seconds per
// second of benchmark time), and events per CPU second of the whole
// process (proc-cpu-events/s, Linux: the garbage collector's threads
// included, which cpu-ns/event, the benchmark thread's, leaves out). One
// latency round is one run. It runs with popsim's collector setting,
// sim.GCPercent above gcfloor's heap floor, unless the environment sets
// GOGC, and its runs share one
// sim.Reuse, as a process that makes runs one after another would: each
// run stores its messages in the last one's log chunks.
func SimRun(b *testing.B, lat *Latency) { simRun(b, lat, sim.DefaultConfig()) }

// SimRunDefaultScenario runs the built-in default scenario at seed 1:
// what `popsim run` runs with no flags (default.yaml: the KV path, 30
// virtual seconds). SimRun's sim.DefaultConfig is the checkpoint path
// for 60 s, a different workload.
func SimRunDefaultScenario(b *testing.B, lat *Latency) { SimRunBuiltin(b, lat, "default") }

// SimRunHotTopic runs the built-in hot-topic-500x500 scenario (500 queues,
// 500 POP consumers) at seed 1: the simulator at the scale of the
// motivating capacity question.
func SimRunHotTopic(b *testing.B, lat *Latency) { SimRunBuiltin(b, lat, "hot-topic-500x500") }

// SimRunBuiltin measures a built-in scenario at seed 1, with overrides
// (tests shorten the run).
func SimRunBuiltin(b *testing.B, lat *Latency, name string, overrides ...scenarios.Override) {
	cfg, err := BuiltinConfig(name, overrides...)
	if err != nil {
		fatalf(b, "%v", err)
	}
	simRun(b, lat, cfg)
}

// BuiltinConfig is the configuration the SimRun cases run for built-in
// scenario name: its seed 1, with overrides.
func BuiltinConfig(name string, overrides ...scenarios.Override) (sim.Config, error) {
	s, err := scenarios.Builtin(name, overrides...)
	if err != nil {
		return sim.Config{}, err
	}
	return s.Config(1), nil
}

func simRun(b *testing.B, lat *Latency, cfg sim.Config) {
	defer popsimGC()()
	lat.setRound(1)
	var events int64
	var virtual float64
	proc0, procOK := processCPU()
	m := startMeter(b)
	var reuse sim.Reuse
	for b.Loop() {
		t0, s := lat.begin()
		r, err := sim.Run(cfg, sim.RunOptions{Reuse: &reuse})
		lat.end(t0, s)
		if err != nil {
			fatalf(b, "%v", err)
		}
		events += r.Summary.SimEvents
		virtual += r.Summary.SimSeconds
	}
	m.reportUnits(float64(events), "event")
	if proc1, ok := processCPU(); ok && procOK && events > 0 && proc1 > proc0 {
		// the figure: events per CPU second of the whole process
		// (the collector's threads included), beside the thread's cpu-ns
		b.ReportMetric(float64(events)/(float64(proc1-proc0)/1e9), "proc-cpu-events/s")
	}
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(virtual/sec, "virtual-s/wall-s")
	}
}

// popsimGC sets the collector as popsim does (sim.GCPercent above a heap
// floor, internal/gcfloor, unless the environment sets GOGC) and returns
// what puts the previous setting back.
func popsimGC() (restore func()) {
	mem, _ := meminfo.Read() // unknown: gcfloor.DefaultFloor
	return gcfloor.Popsim(os.Getenv, sim.GCPercent, mem.Total)
}
