package bench

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// DefaultSizes are the in-flight sizes benchmarked by default.
var DefaultSizes = []int{1_000, 100_000, 1_000_000}

// Case is one benchmark: an operation at one in-flight size and variant.
type Case struct {
	Op      string // "PopAck32", "FloorPopAck32", ...
	Sub     string // "inflight=100k/cache=off"
	Size    int    // records in flight
	Cache   bool
	PerOp   int    // units (messages, or events for SimRun) per iteration
	Unit    string // "msg", or "event" for SimRun
	FloorOp string // the floor op to divide by, "" when none
	// Base is the full name of the case to divide by when it is not a
	// floor at the same in-flight size (PopAckQueues: the fewest queues).
	Base string
	Run  func(b *testing.B, lat *Latency)
}

// Name is the benchmark name without the "Benchmark" prefix.
func (c Case) Name() string { return c.Op + "/" + c.Sub }

// FloorName is the full name of the case c is divided by ("" for none):
// Base, else FloorOp at c's in-flight size.
func (c Case) FloorName() string {
	switch {
	case c.Base != "":
		return c.Base
	case c.FloorOp != "":
		return c.FloorOp + "/inflight=" + SizeLabel(c.Size)
	}
	return ""
}

// Ops lists the operations in the order they run.
var Ops = []string{"PopAck32", "PopAck32Batch", "FloorPopAck32", "ChangeInvisibleTime", "FloorChangeInvisibleTime", "Revive", "LongPollWake", "PopAckQueues", "SimRun"}

// Cases returns every case at the given sizes, engine and floor of one size
// next to each other, so runs of the two interleave, then the queue-count
// cases (which have no in-flight size), then the simulator.
func Cases(sizes []int) []Case {
	var out []Case
	for _, n := range sizes {
		out = append(out, sizeCases(n)...)
	}
	out = append(out, queueCases()...)
	out = append(out, Case{Op: "SimRun", Sub: "default", PerOp: 1, Unit: "event", Run: SimRun},
		Case{Op: "SimRun", Sub: "default-scenario", PerOp: 1, Unit: "event", Run: SimRunDefaultScenario},
		Case{Op: "SimRun", Sub: "hot-topic-500x500", PerOp: 1, Unit: "event", Run: SimRunHotTopic})
	for i := range out {
		if out[i].Unit == "" {
			out[i].Unit = "msg"
		}
	}
	return out
}

func sizeCases(n int) []Case {
	s := "inflight=" + SizeLabel(n)
	var out []Case
	for _, cache := range []bool{false, true} {
		sub := s + "/cache=" + onOff(cache)
		p := Params{InFlight: n, Cache: cache}
		out = append(out,
			Case{Op: "PopAck32", Sub: sub, Size: n, Cache: cache, PerOp: Batch, FloorOp: "FloorPopAck32",
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; PopAck32(b, q) }},
			Case{Op: "PopAck32Batch", Sub: sub, Size: n, Cache: cache, PerOp: Batch, FloorOp: "FloorPopAck32",
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; PopAck32Batch(b, q) }},
			Case{Op: "ChangeInvisibleTime", Sub: sub, Size: n, Cache: cache, PerOp: Batch, FloorOp: "FloorChangeInvisibleTime",
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; ChangeInvisibleTime(b, q) }},
			Case{Op: "LongPollWake", Sub: sub, Size: n, Cache: cache, PerOp: Batch,
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; LongPollWake(b, q) }})
		for _, w := range []bool{true, false} {
			out = append(out, Case{Op: "Revive", Sub: sub + "/write=" + map[bool]string{true: "copy", false: "none"}[w], Size: n, Cache: cache, PerOp: ReviveBatch,
				Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; Revive(b, q, w) }})
		}
	}
	p := Params{InFlight: n}
	out = append(out,
		Case{Op: "FloorPopAck32", Sub: s, Size: n, PerOp: Batch,
			Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; FloorPopAck32(b, q) }},
		Case{Op: "FloorChangeInvisibleTime", Sub: s, Size: n, PerOp: Batch,
			Run: func(b *testing.B, l *Latency) { q := p; q.Latency = l; FloorChangeInvisibleTime(b, q) }})
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Select returns the cases of one operation.
func Select(cases []Case, op string) []Case {
	var out []Case
	for _, c := range cases {
		if c.Op == op {
			out = append(out, c)
		}
	}
	return out
}

// RunSub runs every case of op as a sub-benchmark of b (pop/bench_test.go).
func RunSub(b *testing.B, op string, sizes []int) {
	for _, c := range Select(Cases(sizes), op) {
		b.Run(c.Sub, func(b *testing.B) { c.Run(b, nil) })
	}
}

// SizeLabel renders 1000 as "1k" and 1000000 as "1M".
func SizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// ParseSizes parses a comma-separated list such as "1k,100k,1M".
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, field := range strings.Split(s, ",") {
		f := strings.TrimSpace(field)
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1_000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "M"):
			mult, f = 1_000_000, strings.TrimSuffix(f, "M")
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > 10_000_000/mult {
			return nil, fmt.Errorf("size %q: want a positive count such as 1000, 1k, 100k or 1M (at most 10M)", strings.TrimSpace(field))
		}
		out = append(out, v*mult)
	}
	return out, nil
}
