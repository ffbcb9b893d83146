package model

// Latency is a latency distribution summary in microseconds.
type Latency struct {
	Count int64 `json:"count"`
	Mean  int64 `json:"mean_us"`
	P50   int64 `json:"p50_us"`
	P90   int64 `json:"p90_us"`
	P99   int64 `json:"p99_us"`
	P999  int64 `json:"p99_9_us"`
	Max   int64 `json:"max_us"`
}

// SeriesPoint is one sample of a run's time series (per interval).
type SeriesPoint struct {
	AtMs        int64 `json:"at_ms"` // virtual ms since the run started
	Produced    int64 `json:"produced"`
	Acked       int64 `json:"acked"`
	Backlog     int64 `json:"backlog"`   // produced but not yet acked, DLQ'd or dropped
	InFlight    int64 `json:"in_flight"` // broker records (store + cache)
	Redelivered int64 `json:"redelivered"`
}

// LimitHit is an engine cap a run ran into: the engine, the limit by the
// system's own name and its value, how often it held the workload back,
// and what was counted.
type LimitHit struct {
	Engine string `json:"engine"`
	Limit  string `json:"limit"`
	Value  int64  `json:"value"`
	Count  int64  `json:"count"`
	What   string `json:"what"`
}

// Violation is one broken invariant, with everything needed to replay it.
type Violation struct {
	Invariant  string   `json:"invariant"`
	Seed       uint64   `json:"seed"`
	EventIndex int64    `json:"event_index"`
	Msg        string   `json:"msg,omitempty"`
	Detail     string   `json:"detail"`
	History    []string `json:"history,omitempty"` // the message's trace lines
	Replay     string   `json:"replay"`            // the exact command that reproduces it
}

// Summary is the result of one simulation run: summary.json. Everything but
// WallSeconds is a deterministic function of the scenario and the seed.
type Summary struct {
	Scenario     string            `json:"scenario"`
	Seed         uint64            `json:"seed"`
	ConsumerKind string            `json:"consumer_kind,omitempty"`
	Params       map[string]string `json:"params,omitempty"` // sweep parameters of this point
	ConfigSHA256 string            `json:"config_sha256"`
	TraceXXH3    string            `json:"trace_xxh3"`

	Produced          int64            `json:"produced"`
	Acked             int64            `json:"acked"`
	DLQ               int64            `json:"dlq"`
	Dropped           int64            `json:"dropped"`
	Lost              int64            `json:"lost"`
	Deliveries        int64            `json:"deliveries"`
	Duplicates        int64            `json:"duplicates"`
	DuplicatesByCause map[string]int64 `json:"duplicates_by_cause"`
	DroppedByPolicy   map[string]int64 `json:"dropped_by_policy,omitempty"`
	// AckedNotDone counts the messages acked whose application commit then
	// failed every time (the outcome ack_then_fail): the broker's
	// at-least-once ends at the ack; past it the application owns the
	// message. Counted, never a violation.
	AckedNotDone int64       `json:"acked_not_done,omitempty"`
	Violations   []Violation `json:"violations"`

	EndToEnd    Latency `json:"end_to_end"`   // produce to successful ack
	ServiceTime Latency `json:"service_time"` // delivery (pop) to ack
	// Groups is each consumer group's share of the counts and latencies
	// above, when the run has more than one group (absent with one). A
	// group is an independent consumer of every message of its topic that
	// it subscribes to, so with several groups on one topic the counts and
	// latencies above are over (group, message) pairs.
	Groups []GroupSummary `json:"groups,omitempty"`
	// RedeliverAfterCrash is, for each message a consumer held (delivered,
	// not acked) when it crashed, the time from the crash to the
	// message's next delivery; absent when no consumer crashed holding one.
	RedeliverAfterCrash *Latency `json:"redeliver_after_crash,omitempty"`
	// HeadOfLine is the blocking of orderly groups' queues behind failed
	// messages; absent when no group consumes orderly.
	HeadOfLine *HeadOfLine `json:"head_of_line,omitempty"`
	// Broker is the broker's utilisation and queueing, when the run had a
	// broker cost model (nil without one).
	Broker *BrokerUsage `json:"broker,omitempty"`
	// LimitsHit lists the engine's documented caps the run ran into.
	LimitsHit []LimitHit `json:"limits_hit,omitempty"`
	// ReviveLag is a lease's deadline to the revive that wrote its copy
	// (leases that ended after the warm-up), for engines that revive.
	ReviveLag Latency `json:"revive_lag,omitzero"`
	// EngineCounters are the engine's own work counters over the whole run
	// (RocketMQ: pop.Stats, store writes and reads of each kind), by name.
	EngineCounters map[string]int64 `json:"engine_counters,omitempty"`

	// Warmup, Intervals, Breakdown and Notes: what the run measured after
	// its warm-up, how sure it is, where the time went (model/runstats.go).
	Warmup    WarmupCut    `json:"warmup"`
	Intervals RunIntervals `json:"intervals"`
	Breakdown Breakdown    `json:"breakdown"`
	Notes     []string     `json:"notes,omitempty"` // what a reader must know to read the numbers

	ThroughputPerSec float64          `json:"throughput_per_sec"` // acks per virtual second after warm-up
	SimEvents        int64            `json:"sim_events"`
	SimSeconds       float64          `json:"sim_seconds"`
	WallSeconds      float64          `json:"wall_seconds"`
	Coverage         map[string]int64 `json:"coverage"` // how often each fault path fired
	Series           []SeriesPoint    `json:"series,omitempty"`
}

// GroupSummary is one consumer group's share of a run: its ledger
// (Produced = Acked + DLQ + Dropped + Lost) and the latencies of its
// messages measured after the run's warm-up.
type GroupSummary struct {
	Group       string  `json:"group"`
	Topic       string  `json:"topic"`
	Produced    int64   `json:"produced"`
	Acked       int64   `json:"acked"`
	DLQ         int64   `json:"dlq"`
	Dropped     int64   `json:"dropped"`
	Lost        int64   `json:"lost"`
	Deliveries  int64   `json:"deliveries"`
	Duplicates  int64   `json:"duplicates"`
	EndToEnd    Latency `json:"end_to_end"`
	ServiceTime Latency `json:"service_time"`
}

// Interval is a confidence interval for one metric, as package stats
// computes it (model sits below stats and cannot import it; report and
// sweep fill this from stats.Interval). With probability about Level the
// procedure that produced it covers the true value. When OK is false there
// is no interval: Lo and Hi are 0 and mean nothing, Est may still hold a
// point estimate, and Note says why ("not enough data: 1 replication, need
// at least 2"). Est, Lo and Hi are in the unit of the metric that holds it.
type Interval struct {
	Est    float64 `json:"est"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`          // e.g. 0.95
	N      int     `json:"n"`              // independent units behind it (seeds, batches)
	Method string  `json:"method"`         // e.g. "t over replications"
	OK     bool    `json:"ok"`             // false: no interval, see Note
	Note   string  `json:"note,omitempty"` // details, or why there is no interval
}

// SeedMetric is one metric of a parameter point across its seeds: the
// interval and the per-seed values it came from, in the order of
// PointStats.Seeds.
type SeedMetric struct {
	Interval
	PerSeed []float64 `json:"per_seed"`
}

// PointStats are a parameter point's metrics across its seeds (a sweep
// cell, a plan's evaluated value), each with a confidence interval over
// the seeds at Level: latencies (end to end, µs) are the mean of the
// per-seed values with a t interval over them; duplicates the ratio
// Σduplicates/Σproduced (in %) with a delta-method interval; throughput
// the mean of per-seed acks/s. Max has no interval: a run's maximum grows
// with its length and is not a property of the steady state.
type PointStats struct {
	Level float64  `json:"level"`
	Seeds []uint64 `json:"seeds"` // the runs behind every interval, increasing
	// Excluded are runs that measured no end-to-end latency (a run that did
	// not finish): they are in no interval.
	Excluded         []uint64   `json:"excluded_seeds,omitempty"`
	Mean             SeedMetric `json:"mean_us"`
	P50              SeedMetric `json:"p50_us"`
	P90              SeedMetric `json:"p90_us"`
	P99              SeedMetric `json:"p99_us"`
	P999             SeedMetric `json:"p99_9_us"`
	Max              int64      `json:"max_us"` // largest over the seeds, no interval
	DuplicatesPct    SeedMetric `json:"duplicates_pct"`
	ThroughputPerSec SeedMetric `json:"throughput_per_sec"`
}
