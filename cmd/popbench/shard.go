package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"popsim/clock"
	"popsim/internal/bench"
	"popsim/sim"
	"popsim/workload"
)

// maxShards bounds `popbench soak -shards`.
const maxShards = 64

// shardRun is one shard's own figures in a sharded soak.
type shardRun struct {
	Index          int     `json:"index"`
	Seed           uint64  `json:"seed"`
	Queues         []int32 `json:"queues"`    // per topic
	Consumers      []int   `json:"consumers"` // per consumer entry (count)
	Rate           string  `json:"rate"`      // producers[0]'s arrivals rate
	VirtualSeconds float64 `json:"virtual_seconds"`
	WallSeconds    float64 `json:"wall_seconds"` // its goroutine's, start to end
	// ThreadCPUSeconds is the CPU time of the OS thread the shard's
	// goroutine was locked to (Linux; 0 elsewhere): the shard's own
	// simulation work, without the garbage collector's background workers.
	ThreadCPUSeconds float64 `json:"thread_cpu_seconds"`
	Events           int64   `json:"sim_events"`
	Produced         int64   `json:"produced"`
	Acked            int64   `json:"acked"`
	Violations       int     `json:"violations"`
}

// shardSeed is shard i's seed of n: the run's seed itself when there is
// one shard (so -shards 1 is the plain soak, trace for trace), else a
// SplitMix64 finalisation of the seed offset by i+1 golden-ratio steps.
// The finaliser is a bijection on uint64, so the n seeds of one run are
// distinct and each is a pure function of (seed, i).
func shardSeed(seed uint64, i, n int) uint64 {
	if n == 1 {
		return seed
	}
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// divisors returns the divisors of g in 1..maxShards, for error messages.
func divisors(g int) []int {
	var d []int
	for k := 1; k <= maxShards && k <= g; k++ {
		if g%k == 0 {
			d = append(d, k)
		}
	}
	return d
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// shardConfigs splits base (a scenario's configuration) into n
// independent configurations: each has 1/n of every topic's queues, 1/n
// of every consumer entry's count, 1/n of producers[0]'s rate (rate is the
// -rate value, per producer) and its own seed. With n == 1 it returns
// base with the run's seed, untouched. A split that does not divide, or a
// scenario whose load -rate does not wholly describe, is a usage error
// naming what is allowed.
func shardConfigs(base sim.Config, seed uint64, n int, rate string) ([]sim.Config, error) {
	if n < 1 || n > maxShards {
		return nil, fmt.Errorf("%w: -shards %d: want 1..%d", errUsage, n, maxShards)
	}
	if n == 1 {
		base.Seed = seed
		return []sim.Config{base}, nil
	}
	d := base.WithDefaults()
	if err := checkSplit(d, n, rate); err != nil {
		return nil, err
	}
	arr, err := splitRate(rate, n)
	if err != nil {
		return nil, err
	}
	out := make([]sim.Config, n)
	for i := range out {
		c := base.WithDefaults() // fresh slices per shard
		c.Seed = shardSeed(seed, i, n)
		for k := range c.Topics {
			c.Topics[k].Queues /= int32(n)
		}
		for k := range c.Consumers {
			c.Consumers[k].Count /= n
		}
		c.Producers[0].Arrivals = arr
		out[i] = c
	}
	return out, nil
}

// checkSplit says whether d (with defaults) splits n ways: one producer
// entry whose -rate is given, and n dividing every queue and consumer
// count.
func checkSplit(d sim.Config, n int, rate string) error {
	if rate == "" {
		return fmt.Errorf("%w: -shards %d: want a -rate to split (empty keeps the scenario's, which only -shards 1 runs)", errUsage, n)
	}
	if len(d.Producers) != 1 {
		return fmt.Errorf("%w: -shards %d: want a scenario with one producer entry, it has %d; -shards 1 runs any scenario", errUsage, n, len(d.Producers))
	}
	g := 0
	for _, t := range d.Topics {
		g = gcd(g, int(t.Queues))
	}
	for _, c := range d.Consumers {
		g = gcd(g, c.Count)
	}
	if g%n != 0 {
		return fmt.Errorf("%w: -shards %d must divide every topic's queue count and every consumer count (%s): want one of %s",
			errUsage, n, splitCounts(d), joinInts(divisors(g)))
	}
	return nil
}

// splitRate is poisson arrivals at 1/n of rate, exactly: 1/n of the
// count, or where that is not whole, the count over an n times longer
// period.
func splitRate(rate string, n int) (workload.ArrivalsSpec, error) {
	var arr workload.ArrivalsSpec
	r, err := workload.ParseRate(rate)
	if err != nil {
		return arr, fmt.Errorf("%w: -rate: %v", errUsage, err)
	}
	switch {
	case r.Count%int64(n) == 0:
		r.Count /= int64(n)
	case r.Per*clock.Duration(n) <= clock.Hour:
		r.Per *= clock.Duration(n)
	default:
		return arr, fmt.Errorf("%w: -shards %d: -rate %s split %d ways is not a rate (N per period of at most 1h); give a count divisible by %d", errUsage, n, rate, n, n)
	}
	if err := arr.UnmarshalText([]byte("poisson(" + r.String() + ")")); err != nil {
		return arr, fmt.Errorf("%w: -shards %d: -rate %s split: %v", errUsage, n, rate, err)
	}
	return arr, nil
}

func splitCounts(c sim.Config) string {
	var parts []string
	for _, t := range c.Topics {
		parts = append(parts, fmt.Sprintf("topic %s: %d queues", t.Name, t.Queues))
	}
	for i, k := range c.Consumers {
		parts = append(parts, fmt.Sprintf("consumers[%d]: %d", i, k.Count))
	}
	return strings.Join(parts, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// runShards runs each configuration in a goroutine of its own (each its
// own single-threaded, deterministic sim.Run) and returns their figures
// in shard order, with the first error.
func runShards(cfgs []sim.Config, scenario string) ([]shardRun, error) {
	runs := make([]shardRun, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = runShard(i, c, scenario)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return runs, fmt.Errorf("shard %d (seed %d): %w", i, cfgs[i].Seed, err)
		}
	}
	return runs, nil
}

func runShard(i int, c sim.Config, scenario string) (shardRun, error) {
	d := c.WithDefaults()
	s := shardRun{Index: i, Seed: c.Seed}
	for _, t := range d.Topics {
		s.Queues = append(s.Queues, t.Queues)
	}
	for _, k := range d.Consumers {
		s.Consumers = append(s.Consumers, k.Count)
	}
	if len(d.Producers) > 0 {
		s.Rate = d.Producers[0].Arrivals.String()
	}
	runtime.LockOSThread() // so the thread's CPU time is this shard's
	defer runtime.UnlockOSThread()
	cpu0, _ := bench.ThreadCPU()
	t0 := time.Now()
	r, err := sim.Run(c, sim.RunOptions{Scenario: scenario})
	s.WallSeconds = time.Since(t0).Seconds()
	if cpu1, ok := bench.ThreadCPU(); ok {
		s.ThreadCPUSeconds = float64(cpu1-cpu0) / 1e9
	}
	if err != nil {
		return s, err
	}
	sum := r.Summary
	s.VirtualSeconds, s.Events, s.Produced, s.Acked, s.Violations = sum.SimSeconds, sum.SimEvents, sum.Produced, sum.Acked, len(sum.Violations)
	return s, nil
}
