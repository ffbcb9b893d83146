package model

import (
	"strconv"
	"strings"
)

// What one run says about its own uncertainty (summary.json's warmup,
// intervals and breakdown): the warm-up it left out, within-run confidence
// intervals, and where its end-to-end latency went.

// WarmupCut is what a run left out of its measurements at its start.
// Measured messages are those whose end-to-end latency the run recorded
// (acked, produced in the safety phase); with "auto" the rule decided the
// cut from the data, with a fixed warm-up the configuration did.
type WarmupCut struct {
	Rule string `json:"rule"` // "MSER-5" (warmup: auto) or "fixed"
	// AtMs is the cut in virtual ms since the run's start: messages the
	// engine stored (MSER-5) or the producer sent (fixed) before it are not
	// measured.
	AtMs     int64  `json:"at_ms"`
	Messages int64  `json:"messages"`         // measured messages left out
	Of       int64  `json:"of"`               // measured messages, before the cut
	Failed   bool   `json:"failed,omitempty"` // the rule found no trustworthy cut: see Note
	Note     string `json:"note,omitempty"`
}

// String renders the cut for a report: "MSER-5 truncated the first 12.4 s
// (1240 messages, 4.1 %)", with the rule's warning appended.
func (w WarmupCut) String() string {
	if w.Rule == "" {
		return "none recorded"
	}
	var b strings.Builder
	switch {
	case w.Rule == "fixed":
		b.WriteString("fixed warm-up: the first ")
	case w.Messages == 0:
		b.WriteString(w.Rule + " found no start-up transient: nothing cut (" + strconv.FormatInt(w.Of, 10) + " messages measured)")
		if w.Failed {
			b.WriteString("; warning: " + w.Note)
		}
		return b.String()
	default:
		b.WriteString(w.Rule + " truncated the first ")
	}
	at := strconv.FormatFloat(float64(w.AtMs)/1000, 'f', 1, 64) + " s"
	if w.AtMs < 1000 {
		at = strconv.FormatInt(w.AtMs, 10) + " ms"
	}
	b.WriteString(at + " (" + strconv.FormatInt(w.Messages, 10) + " messages")
	if w.Of > 0 {
		b.WriteString(", " + strconv.FormatFloat(100*float64(w.Messages)/float64(w.Of), 'f', 1, 64) + " %")
	}
	b.WriteString(")")
	if w.Failed {
		b.WriteString("; warning: " + w.Note)
	}
	return b.String()
}

// LatencyIntervals are within-run confidence intervals of a latency
// distribution's mean and percentiles, in µs. A percentile's estimate is
// the run's own percentile (its histogram's); its interval inverts the
// batch-means interval of the proportion of messages at or below it
// (docs/statistics.md, "Percentiles within one run").
type LatencyIntervals struct {
	Mean Interval `json:"mean_us"`
	P50  Interval `json:"p50_us"`
	P90  Interval `json:"p90_us"`
	P99  Interval `json:"p99_us"`
}

// RunIntervals are one run's metrics after its warm-up, each with a
// within-run confidence interval at Level (batch means over the run's
// measured messages in the order the engine stored them, or over its
// sample intervals for throughput). A run's maximum has none.
type RunIntervals struct {
	Level       float64          `json:"level"`
	EndToEnd    LatencyIntervals `json:"end_to_end"`
	ServiceTime LatencyIntervals `json:"service_time"`
	// DuplicatesPct is successful consumptions beyond the first per
	// message stored after the cut, in %, counted by the meter (the
	// checker's count over the whole run is Summary.Duplicates).
	DuplicatesPct    Interval `json:"duplicates_pct"`
	ThroughputPerSec Interval `json:"throughput_per_sec"`
}

// The parts of end-to-end latency, in order; their names double as
// histogram names.
const (
	PartBrokerWait     = "broker_wait"
	PartRedeliveryWait = "redelivery_wait"
	PartLocalBuffer    = "local_buffer"
	PartProcessing     = "processing"
	PartAck            = "ack"
	// PartAtBroker: with a broker cost model only (it then follows
	// broker_wait, which no longer holds it): the message's put waiting at
	// the broker, and the pop that delivered it waiting (while the message
	// was there) and being served.
	PartAtBroker = "at_broker"
)

// Parts lists the parts of end-to-end latency in the order they happen.
var Parts = []string{PartBrokerWait, PartRedeliveryWait, PartLocalBuffer, PartProcessing, PartAck}

// LatencyPart is one part of the measured messages' end-to-end latency:
// its distribution (µs) and the within-run interval of its mean.
type LatencyPart struct {
	Name string `json:"name"` // one of Parts
	Latency
	MeanInterval Interval `json:"mean_interval"`
}

// Breakdown splits each measured message's end-to-end latency into parts
// that add up to it exactly (docs/statistics.md, "Where the time goes"):
// broker wait, redelivery wait, local buffer wait, processing and the ack.
type Breakdown struct {
	Parts []LatencyPart `json:"parts"`
	// Unattributed counts measured messages whose parts the trace did not
	// show (their end-to-end latency is in no part); 0 in every built-in.
	Unattributed int64 `json:"unattributed,omitempty"`
}

// Part returns the part named name (the zero part when absent).
func (b Breakdown) Part(name string) LatencyPart {
	for _, p := range b.Parts {
		if p.Name == name {
			return p
		}
	}
	return LatencyPart{Name: name}
}

// HeadOfLine is how long the queues of orderly (FIFO) groups were blocked
// behind messages that failed, and how much backlog waited behind them
// (docs/fifo.md, "Head-of-line blocking"). An episode of a queue starts
// when one of its messages fails (the listener did not succeed, the client
// let its lease go, or the lease ran out) and ends when every failed
// message of the queue is settled (acked, sent to a DLQ or dropped); one
// still open at the end of the run ends there. Durations are in µs.
type HeadOfLine struct {
	// Queues is how many queues of topics orderly groups consume got
	// messages; Blocked how many of them had at least one episode.
	Queues  int `json:"queues"`
	Blocked int `json:"blocked_queues"`
	// Episodes is each episode's length (Count: how many); TotalUs their
	// sum, the queue time lost to blocking.
	Episodes Latency `json:"episodes"`
	TotalUs  int64   `json:"total_us"`
	// MaxBacklog is the most messages that waited in a blocked queue
	// behind its failed head (stored, not yet settled).
	MaxBacklog int64 `json:"max_backlog"`
}
