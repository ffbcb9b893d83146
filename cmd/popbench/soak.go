package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"time"

	preport "popsim/report"
	"popsim/scenarios"
)

// soakConfig is `popbench soak`: one long simulator run of a built-in
// scenario, measured for speed (virtual time per wall and per CPU second)
// and memory (its peaks), as the hour-long hot-topic row asks.
type soakConfig struct {
	scenario string
	duration string
	rate     string
	seed     uint64
	out      string
	name     string
	every    time.Duration
	memprof  string
	cpuprof  string
	shards   int
	baseline string
}

func parseSoak(args []string, stderr io.Writer) (soakConfig, error) {
	var c soakConfig
	fs := flag.NewFlagSet("popbench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.scenario, "scenario", "hot-topic-500x500", "built-in scenario")
	fs.StringVar(&c.duration, "duration", "1h", "virtual duration of the run (the scenario's duration)")
	fs.StringVar(&c.rate, "rate", "10000/s", "arrival rate of the scenario's first producer, poisson; empty keeps the scenario's")
	fs.Uint64Var(&c.seed, "seed", 1, "seed")
	fs.StringVar(&c.out, "out", "out/bench", "output directory (results/bench for the committed figures)")
	fs.StringVar(&c.name, "name", "", "output file name without .json (default soak-<scenario>-<duration>)")
	fs.DurationVar(&c.every, "sample", 100*time.Millisecond, "how often the memory is sampled (wall clock)")
	fs.StringVar(&c.memprof, "memprofile", "", "write a heap profile (inuse_space) to this file at the run's peak heap")
	fs.StringVar(&c.cpuprof, "cpuprofile", "", "write a CPU profile of the run (all shards) to this file")
	fs.IntVar(&c.shards, "shards", 1, "split the scenario into N independent sub-simulations run concurrently (1..64; must divide the queue and consumer counts): an approximation, see README")
	fs.StringVar(&c.baseline, "baseline", "", "a -shards 1 soak JSON of the same session: record the speedup of virtual/wall against it")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: soak takes no arguments, got %q", errUsage, fs.Args())
	}
	if c.every <= 0 {
		return c, fmt.Errorf("%w: -sample %v: want a positive duration", errUsage, c.every)
	}
	if c.shards < 1 || c.shards > maxShards {
		return c, fmt.Errorf("%w: -shards %d: want 1..%d", errUsage, c.shards, maxShards)
	}
	if c.name == "" {
		c.name = "soak-" + c.scenario + "-" + c.duration
		if c.shards > 1 {
			c.name += fmt.Sprintf("-shards%d", c.shards)
		}
	}
	return c, nil
}

// soakResult is what `popbench soak` records.
type soakResult struct {
	Stamp     stamp    `json:"stamp"`
	Scenario  string   `json:"scenario"`
	Overrides []string `json:"overrides"`
	Seed      uint64   `json:"seed"`
	Command   string   `json:"command"`

	VirtualSeconds float64 `json:"virtual_seconds"` // simulated, drain included
	WallSeconds    float64 `json:"wall_seconds"`
	// CPUSeconds is the process's user+system time (getrusage) on Linux,
	// elsewhere the Go runtime's estimate (Go code, GC, scavenger).
	CPUSeconds     float64 `json:"cpu_seconds"`
	VirtualPerWall float64 `json:"virtual_per_wall"`
	VirtualPerCPU  float64 `json:"virtual_per_cpu"`
	Events         int64   `json:"sim_events"`
	EventsPerCPUS  float64 `json:"events_per_cpu_second"`
	Produced       int64   `json:"produced"`
	Acked          int64   `json:"acked"`
	Violations     int     `json:"violations"`
	// PeakHeapBytes is the largest heap in use (live and not yet swept
	// objects) sampled during the run; PeakTotalBytes the largest memory
	// the runtime had mapped from the OS (heap, stacks, metadata) and not
	// given back (released heap pages are left out).
	PeakHeapBytes  uint64 `json:"peak_heap_bytes"`
	PeakTotalBytes uint64 `json:"peak_total_bytes"`
	Samples        int    `json:"memory_samples"`
	// PeakRSSBytes is the process's peak resident set (getrusage, Linux
	// only; 0 elsewhere), which includes the command's own start-up.
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`

	// Shards is how many independent sub-simulations ran concurrently
	// (-shards; 1 is the plain run). With more than one, the figures
	// above are aggregates: events, produced, acked and violations are
	// sums over ShardRuns, VirtualSeconds is the slowest shard's (the
	// least simulated), so VirtualPerWall is that over the wall time of
	// all of them. A sharded run is an approximation (README: soak).
	Shards    int        `json:"shards"`
	ShardRuns []shardRun `json:"shard_runs,omitempty"`
	// Speedup is VirtualPerWall over the -baseline run's (0 without one).
	// VirtualPerShardCPU is VirtualSeconds over the largest shard's
	// thread CPU time: the virtual/wall the run would have with an idle
	// core per shard and the collector's work elsewhere, which a shared
	// machine's wall clock cannot show (0 where thread CPU is unknown).
	VirtualPerShardCPU float64 `json:"virtual_per_shard_cpu,omitempty"`
	Baseline           string  `json:"baseline,omitempty"`
	Speedup            float64 `json:"speedup_vs_baseline,omitempty"`
}

func cmdSoak(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseSoak(args, stderr)
	if err != nil {
		return flagExit(err, stderr)
	}
	over := []scenarios.Override{{Path: "duration", Value: cfg.duration}, {Path: "eventBudget", Value: "10000000000"}}
	if cfg.rate != "" {
		over = append(over, scenarios.Override{Path: "producers[0].arrivals", Value: "poisson(" + cfg.rate + ")"})
	}
	s, err := scenarios.Builtin(cfg.scenario, over...)
	if err != nil {
		fmt.Fprintf(stderr, "popbench soak: %v\n", err)
		return 2
	}
	cfgs, err := shardConfigs(s.Config(cfg.seed), cfg.seed, cfg.shards, cfg.rate)
	if err != nil {
		return flagExit(err, stderr)
	}
	base, err := readBaseline(cfg.baseline)
	if err != nil {
		fmt.Fprintf(stderr, "popbench soak: -baseline: %v\n", err)
		return 2
	}
	if err := checkWritable(cfg.out); err != nil {
		fmt.Fprintf(stderr, "popbench soak: -out: %v\n", err)
		return 2
	}
	res := soakResult{Stamp: newStamp(1, cfg.duration), Scenario: cfg.scenario, Seed: cfg.seed, Shards: cfg.shards,
		Command: "popbench soak -scenario " + cfg.scenario + " -duration " + cfg.duration + " -rate " + strconv.Quote(cfg.rate)}
	res.Stamp.Note = "one run; cpu_seconds is the whole process's; heap and mapped peaks are sampled every " + cfg.every.String()
	if cfg.shards > 1 {
		res.Command += fmt.Sprintf(" -shards %d", cfg.shards)
		res.Stamp.Note += fmt.Sprintf("; %d independent shards run concurrently, an approximation of the scenario (README: soak)", cfg.shards)
	}
	for _, o := range over {
		res.Overrides = append(res.Overrides, o.String())
	}
	fmt.Fprintf(stderr, "popbench soak: %s for %s of virtual time (%s), %d shard(s)...\n", cfg.scenario, cfg.duration, res.Overrides, cfg.shards)
	if cfg.memprof != "" && runtime.MemProfileRate == 0 {
		runtime.MemProfileRate = defaultMemProfileRate // main turned sampling off
	}
	stopCPU := func() error { return nil }
	if cfg.cpuprof != "" {
		if stopCPU, err = startCPUProfile(cfg.cpuprof); err != nil {
			fmt.Fprintf(stderr, "popbench soak: -cpuprofile: %v\n", err)
			return 2
		}
	}
	mem := startMemSampler(cfg.every, cfg.memprof)
	cpu0, t0 := cpuSeconds(), time.Now()
	runs, err := runShards(cfgs, cfg.scenario)
	res.WallSeconds, res.CPUSeconds = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	res.PeakHeapBytes, res.PeakTotalBytes, res.Samples = mem.stop()
	if perr := stopCPU(); perr != nil {
		fmt.Fprintf(stderr, "popbench soak: -cpuprofile: %v\n", perr)
		return 1
	}
	if mem.profErr != nil {
		fmt.Fprintf(stderr, "popbench soak: -memprofile: %v\n", mem.profErr)
		return 1
	}
	_, res.PeakRSSBytes, _ = processUsage()
	if err != nil {
		fmt.Fprintf(stderr, "popbench soak: the run failed: %v\n", err)
		return 1
	}
	res.aggregate(runs)
	if base != nil {
		res.Baseline, res.Speedup = cfg.baseline, ratioOr0(res.VirtualPerWall, base.VirtualPerWall)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	path := filepath.Join(cfg.out, cfg.name+".json")
	if err := preport.WriteFileAtomic(path, append(data, '\n')); err != nil {
		fmt.Fprintf(stderr, "popbench soak: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %.0f virtual s in %.1f wall s (%.1fx), %.1f CPU s (%.1fx); %d events, %.0f events per CPU s; peak heap %.0f MiB, peak mapped %.0f MiB, peak RSS %.0f MiB; produced %d, violations %d\n",
		cfg.scenario, res.VirtualSeconds, res.WallSeconds, res.VirtualPerWall, res.CPUSeconds, res.VirtualPerCPU, res.Events, res.EventsPerCPUS,
		float64(res.PeakHeapBytes)/(1<<20), float64(res.PeakTotalBytes)/(1<<20), float64(res.PeakRSSBytes)/(1<<20), res.Produced, res.Violations)
	if res.Shards > 1 {
		fmt.Fprintf(stdout, "%d shards (an approximation: independent sub-simulations); virtual/wall is the slowest shard's\n", res.Shards)
	}
	if res.VirtualPerShardCPU > 0 {
		fmt.Fprintf(stdout, "%.1f virtual s per CPU s of the busiest shard's thread (virtual/wall with an idle core per shard)\n", res.VirtualPerShardCPU)
	}
	if res.Speedup > 0 {
		fmt.Fprintf(stdout, "speedup %.2fx against %s\n", res.Speedup, res.Baseline)
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return 0
}

// aggregate fills the run's figures from its shards': sums of what they
// counted, the slowest shard's virtual time.
func (res *soakResult) aggregate(runs []shardRun) {
	for i, r := range runs {
		if i == 0 || r.VirtualSeconds < res.VirtualSeconds {
			res.VirtualSeconds = r.VirtualSeconds
		}
		res.Events += r.Events
		res.Produced += r.Produced
		res.Acked += r.Acked
		res.Violations += r.Violations
	}
	var slowest float64
	for _, r := range runs {
		slowest = max(slowest, r.ThreadCPUSeconds)
	}
	res.VirtualPerShardCPU = ratioOr0(res.VirtualSeconds, slowest)
	if len(runs) > 1 {
		res.ShardRuns = runs
	}
	res.VirtualPerWall = ratioOr0(res.VirtualSeconds, res.WallSeconds)
	res.VirtualPerCPU = ratioOr0(res.VirtualSeconds, res.CPUSeconds)
	res.EventsPerCPUS = ratioOr0(float64(res.Events), res.CPUSeconds)
}

// readBaseline reads a -shards 1 soak record (nil for no path).
func readBaseline(path string) (*soakResult, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b soakResult
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if b.Shards > 1 || b.VirtualPerWall <= 0 {
		return nil, fmt.Errorf("%s: want a -shards 1 soak record with a virtual_per_wall, got shards %d, virtual_per_wall %v", path, b.Shards, b.VirtualPerWall)
	}
	return &b, nil
}

func ratioOr0(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// cpuSeconds is the process's CPU time: getrusage's where known, else
// the Go runtime's estimate (Go code, the garbage collector, the
// scavenger).
func cpuSeconds() float64 {
	if t, _, ok := processUsage(); ok {
		return t
	}
	s := []metrics.Sample{{Name: "/cpu/classes/user:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/scavenge/total:cpu-seconds"}}
	metrics.Read(s)
	var t float64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindFloat64 {
			t += x.Value.Float64()
		}
	}
	return t
}

// memSampler records the peaks of the heap and of all mapped memory from a
// goroutine of its own (the measuring command's, not the simulator's). With
// a profile path it also writes a heap profile (atomically) each time the
// heap exceeds the last profiled heap by 10 %, so the file left describes
// the run near its peak heap, while the simulator still holds its state.
type memSampler struct {
	done    chan struct{}
	result  chan [3]uint64
	profErr error // the first failure to write the profile
}

func startMemSampler(every time.Duration, profile string) *memSampler {
	m := &memSampler{done: make(chan struct{}), result: make(chan [3]uint64, 1)}
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"}}
		var heap, all, n, profiled uint64
		take := func() {
			metrics.Read(s)
			h := s[0].Value.Uint64()
			// Mapped less released: address space given back to the OS
			// (such as hugeheap's advised range before the heap reuses
			// it) holds no memory.
			held := s[1].Value.Uint64() - s[2].Value.Uint64()
			heap, all, n = max(heap, h), max(all, held), n+1
			if profile != "" && m.profErr == nil && (profiled == 0 || h > profiled+profiled/10) {
				profiled = h
				m.profErr = writeHeapProfile(profile)
			}
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			take()
			select {
			case <-m.done:
				take()
				m.result <- [3]uint64{heap, all, n}
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// writeHeapProfile writes the heap profile (as of the last collection)
// to path atomically.
func writeHeapProfile(path string) error {
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return err
	}
	return preport.WriteFileAtomic(path, b.Bytes())
}

// stop ends the sampling; profErr is readable after it returns.
func (m *memSampler) stop() (heap, all uint64, samples int) {
	close(m.done)
	r := <-m.result
	return r[0], r[1], int(r[2])
}

// defaultMemProfileRate is the runtime's own sampling rate (one sample
// every 512 KiB allocated on average), which a heap profile needs.
const defaultMemProfileRate = 512 * 1024
