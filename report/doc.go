// Package report renders results it did not produce: a run's model.Summary
// and its HdrHistogram latency histograms, or a sweep of many runs. It
// writes summary.json, HdrHistogram files, PNG and SVG charts (gonum/plot)
// and a Markdown report, and reads run folders back for `popsim report`
// (re-render) and `popsim merge` (aggregate shards of a sweep).
//
// Layer 3: it imports popsim/model, popsim/stats, popsim/clock, the
// standard library, hdrhistogram-go and gonum/plot, and never pop, sim or
// workload. It reads
// no wall clock and writes no timestamps: the same inputs give the same
// bytes in every file (PNG, SVG and report.md included) on a given machine.
// Fonts are gonum's embedded Liberation fonts; no system font is needed.
//
// # Histograms
//
// Latencies are recorded in microseconds into NewLatencyHistogram (1 µs to
// 1 h, 3 significant figures, so any reported value is within 0.1 % of a
// recorded one). LatencyOf summarises one as a model.Latency. Merge adds one
// histogram into another exactly; it refuses histograms of another layout
// instead of rebucketing them.
//
// # A run folder (WriteRun, ReadRun)
//
//	summary.json        model.Summary, indented, fields in declaration order,
//	                    map keys sorted. Everything but wall_seconds is a
//	                    deterministic function of scenario and seed.
//	<name>.hgrm         one per histogram (end_to_end.hgrm, service_time.hgrm):
//	                    HdrHistogram percentile text, values in ms, 5 ticks per
//	                    half distance; what the HdrHistogram plotter
//	                    (hdrhistogram.github.io/HdrHistogram/plotFiles.html)
//	                    and hdr-plot read. Derived, never read back.
//	histograms.hlog     the lossless copy: HdrHistogram interval log v1.3, one
//	                    line per histogram, "Tag=<name>,<start s>,<length s>,
//	                    <max ms>,<base64 compressed V2 histogram>", names
//	                    sorted. ReadRun restores every count from it, so
//	                    shards merge exactly. Any HdrHistogram log reader
//	                    (Java or Go HistogramLogReader) reads it too.
//	<part>.hgrm         one per part of end-to-end latency (broker_wait,
//	                    redelivery_wait, local_buffer, processing, ack)
//	latency.png/.svg    latency by percentile: end-to-end and service time,
//	                    the within-run intervals of p50, p90, p99 as error bars
//	breakdown.png/.svg  the mean end-to-end latency stacked by part, each
//	                    part's p99 (when the summary has a breakdown)
//	timeseries.png/.svg throughput, backlog with in flight, redeliveries
//	                    over virtual time (when the summary has Series)
//	duplicates.png/.svg duplicates by cause, drops by policy (when any)
//	report.md           headline table (with the warm-up cut), violations
//	                    with replay commands, the simulator's notes,
//	                    duplicates by cause, latency table with the
//	                    within-run intervals, where the time goes, coverage,
//	                    the charts as relative links, and how to read them
//
// ReadRun reads summary.json (unknown fields are an error) and
// histograms.hlog; everything else in the folder is derived from those two
// and can be re-rendered with WriteRun.
//
// # Writing files
//
// Every file this package writes goes through WriteFileAtomic: a temporary
// file in the same folder, fsynced and renamed over the path, so a reader
// sees the old file or the complete new one. AtomicFile (CreateAtomic,
// Write, Commit or Abort) is the streaming form for files too large to hold
// in memory, such as popsim's -trace; the commands use these two for every
// output they write.
//
// # A sweep folder (Sweep, WriteSweep)
//
// A Sweep groups runs (SweepPoint) by parameter set into cells, merging
// their histograms, so each cell's percentiles are those of all its seeds'
// values together, never an average of percentiles.
//
//	sweep.json             one row per cell: params, seeds, failing seeds,
//	                       end-to-end latency (exact merge), duplicates %,
//	                       throughput, violations, and stats: every metric
//	                       with its interval over the seeds, its method and
//	                       the per-seed values (model.PointStats); the level;
//	                       totals of runs passed and failed; a plan's
//	                       question, answer and decisions; missing runs;
//	                       with several consumer groups, each group's
//	                       counts and latencies (SweepCell.Groups)
//	sweep-latency.png/.svg every cell's end-to-end percentile curve overlaid
//	sweep-p99-e2e.png/.svg p99 end-to-end latency (ms) against the swept
//	sweep-duplicates.*     parameter X, duplicates % and throughput (acks/s),
//	sweep-throughput.*     one line per value of the Group parameter; any
//	                       other metric a Threshold names gets a chart too
//	report.md              a plan's question and answer first, then its
//	                       decisions; what is missing if incomplete; every
//	                       cell in a table ("p99 [lo, hi]"), a line with the
//	                       intervals' level, seed count and methods; when
//	                       a run had them, head-of-line blocking and an
//	                       Acks table (ack and batch-ack requests per acked
//	                       message, acked but not done); and
//	                       every failing seed, each with its replay commands;
//	                       failures are never filtered or summarised away;
//	                       with several consumer groups, a "Consumer groups"
//	                       table: one row per cell and group
//
// # Intervals across seeds
//
// SweepCell.Stats (StatsOf) computes each metric's confidence interval
// over the cell's seeds from the runs' summaries, with package stats:
// latencies (mean and percentiles) by MeanCI of the per-seed values (the
// estimate is the mean of the seeds' own values, not the percentile of
// the merged histogram), duplicates by RatioCI of duplicates over
// produced, throughput by MeanCI; a maximum has no interval. Runs that
// measured no latency are left out and listed. The Sweep's Level (default
// DefaultLevel, 95 %) applies to all of them; FormatInterval prints one,
// or says why there is none.
//
// # Reading the charts
//
//   - Latency by percentile: x is 1/(1-q) on a log scale, labelled 0 %,
//     90 %, 99 %, 99.9 %, 99.99 %, 99.999 %, so each extra nine gets the
//     same width; y is latency on a log scale labelled with units (ms, s),
//     so a body of milliseconds and a tail of seconds both read. Points
//     follow the .hgrm spacing up to 99.999 %. End-to-end (produce to successful ack, measured from the
//     intended produce time) includes waiting in the backlog and in
//     redelivery; service time (pop to ack) does not; the gap between the
//     curves is queueing.
//   - Time series: per-interval counts (Produced, Acked, Redelivered) are
//     shown as rates per virtual second, a point covering (AtMs[i-1],
//     AtMs[i]]; a last interval cut short by the end of the run is left
//     out (a few events over a short interval would draw a false spike).
//     Backlog and InFlight are gauges sampled at AtMs, in one panel.
//   - Duplicates: horizontal bars, one per cause, sorted by name; the
//     duplicate share is duplicate deliveries per produced message.
//   - Sweep: one metric against the swept parameter, marked at the swept
//     values (log scale when they span a factor of 20); durations ("250ms")
//     are plotted in ms; each point's interval over the seeds is an error
//     bar (none where there is no interval); a plan's target is a dashed
//     line.
//
// # Usage
//
//	e2e := report.NewLatencyHistogram()
//	e2e.RecordValue(int64(ackAt.Sub(producedAt))) // µs
//	sum.EndToEnd = report.LatencyOf(e2e)
//	err := report.WriteRun("results/x/seed-1", sum,
//		map[string]*hdrhistogram.Histogram{report.HistEndToEnd: e2e, report.HistServiceTime: svc})
//
//	sw := report.NewSweep("consumers", "consumers", report.ParamConsumerKind)
//	for _, dir := range shardDirs {
//		run, err := report.ReadRun(dir)
//		...
//		err = sw.Add(report.SweepPoint{Summary: run.Summary, Hists: run.Hists})
//	}
//	err = report.WriteSweep("results/consumers", sw)
package report
