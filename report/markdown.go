package report

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"popsim/model"
	"popsim/stats"
)

// RenderRunMarkdown renders report.md for one run: a headline table,
// violations with their replay commands, duplicates by cause, drops by
// policy, the latency table, fault-path coverage, the charts as relative
// image links (each PNG linking to its SVG) and a short guide to reading
// them. The output depends only on its arguments.
func RenderRunMarkdown(r Run, charts []*Chart) []byte {
	s := r.Summary
	var b bytes.Buffer
	fmt.Fprintf(&b, "# popsim run: %s, seed %d\n\n", mdText(s.Scenario), s.Seed)
	writeHeadline(&b, s)
	writeViolations(&b, s.Violations)
	writeNotes(&b, s)
	writeCounts(&b, "Duplicates by cause", "cause", "duplicate deliveries", s.DuplicatesByCause, s.Duplicates)
	if len(s.DroppedByPolicy) > 0 {
		writeCounts(&b, "Dropped by policy", "policy", "messages dropped", s.DroppedByPolicy, s.Dropped)
	}
	writeLimits(&b, s.LimitsHit)
	writeLatencyTable(&b, r)
	writeGroups(&b, s.Groups)
	writeHeadOfLine(&b, s.HeadOfLine)
	writeRunIntervals(&b, s)
	writeBreakdown(&b, s)
	writeBroker(&b, s.Broker)
	writeEngineWork(&b, &s)
	if len(s.Coverage) > 0 {
		writeCounts(&b, "Fault-path coverage", "path", "times fired", s.Coverage, -1)
	}
	writeCharts(&b, charts)
	b.WriteString(runGuide)
	return b.Bytes()
}

func writeHeadline(b *bytes.Buffer, s model.Summary) {
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	row("scenario", mdText(s.Scenario))
	row("seed", strconv.FormatUint(s.Seed, 10))
	if s.ConsumerKind != "" {
		row("consumer kind", mdText(s.ConsumerKind))
	}
	if len(s.Params) > 0 {
		row("parameters", mdText(ParamsKey(s.Params)))
	}
	row("produced", itoa(s.Produced))
	row("acked", itoa(s.Acked))
	row("DLQ", itoa(s.DLQ))
	row("dropped", itoa(s.Dropped))
	row("lost", itoa(s.Lost))
	row("deliveries", itoa(s.Deliveries))
	row("duplicates", fmt.Sprintf("%d (%s %% of produced)", s.Duplicates, fmtFloat(pct(s.Duplicates, s.Produced), 3)))
	if s.AckedNotDone > 0 {
		row("acked, not done", fmt.Sprintf("%d (%s %% of produced): acked, then the application's commit failed; the broker's "+
			"at-least-once ends at the ack, so no retry comes and the application owns these (commit before acking, or keep its own "+
			"record of unfinished work); not a violation", s.AckedNotDone, fmtFloat(pct(s.AckedNotDone, s.Produced), 3)))
	}
	row("violations", strconv.Itoa(len(s.Violations)))
	tput := fmtFloat(s.ThroughputPerSec, 1) + " acks/s (virtual, after warm-up)"
	if iv := s.Intervals.ThroughputPerSec; iv.OK {
		tput += fmt.Sprintf("; %s within-run interval [%s, %s]", levelText(iv.Level), stats.FormatNumber(iv.Lo), stats.FormatNumber(iv.Hi))
	}
	row("throughput", tput)
	if hasRunStats(s) {
		row("warm-up", mdText(s.Warmup.String()))
	}
	row("end-to-end p50 / p99 / p99.9", fmt.Sprintf("%s / %s / %s ms", fmtMs(s.EndToEnd.P50), fmtMs(s.EndToEnd.P99), fmtMs(s.EndToEnd.P999)))
	row("sim events", itoa(s.SimEvents))
	row("sim seconds", fmtFloat(s.SimSeconds, 3))
	row("wall seconds", fmtFloat(s.WallSeconds, 3))
	row("config sha256", mdCode(orNone(s.ConfigSHA256)))
	row("trace xxh3", mdCode(orNone(s.TraceXXH3)))
	b.WriteString("\n")
}

func writeViolations(b *bytes.Buffer, vs []model.Violation) {
	fmt.Fprintf(b, "## Violations: %d\n\n", len(vs))
	if len(vs) == 0 {
		b.WriteString("None: every invariant held.\n\n")
		return
	}
	for i, v := range vs {
		fmt.Fprintf(b, "%d. **%s** at event %d", i+1, mdText(v.Invariant), v.EventIndex)
		if v.Msg != "" {
			fmt.Fprintf(b, ", message %s", mdCode(v.Msg))
		}
		fmt.Fprintf(b, ", seed %d: %s\n", v.Seed, mdText(v.Detail))
		fmt.Fprintf(b, "   - replay: %s\n", mdCode(orNone(v.Replay)))
		if len(v.History) > 0 {
			b.WriteString("\n   ```text\n")
			for _, h := range v.History {
				b.WriteString("   " + strings.ReplaceAll(h, "\n", " ") + "\n")
			}
			b.WriteString("   ```\n")
		}
	}
	b.WriteString("\n")
}

// writeCounts writes a section with a name → count table sorted by name and
// a share column when total > 0.
func writeCounts(b *bytes.Buffer, title, key, what string, counts map[string]int64, total int64) {
	fmt.Fprintf(b, "## %s\n\n", title)
	if len(counts) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	names := slices.Sorted(maps.Keys(counts))
	if total >= 0 {
		fmt.Fprintf(b, "| %s | %s | share |\n|---|--:|--:|\n", key, what)
	} else {
		fmt.Fprintf(b, "| %s | %s |\n|---|--:|\n", key, what)
	}
	for _, n := range names {
		if total >= 0 {
			fmt.Fprintf(b, "| %s | %d | %s %% |\n", mdText(n), counts[n], fmtFloat(pct(counts[n], total), 2))
		} else {
			fmt.Fprintf(b, "| %s | %d |\n", mdText(n), counts[n])
		}
	}
	b.WriteString("\n")
}

// writeLimits says which of the engine's documented caps the run ran
// into; nothing when it ran into none.
func writeLimits(b *bytes.Buffer, ls []model.LimitHit) {
	if len(ls) == 0 {
		return
	}
	b.WriteString("## Limits hit\n\n")
	b.WriteString("The workload ran into these documented caps of the engine: its results include waiting on them.\n\n")
	b.WriteString("| engine | limit | value | times | what was counted |\n|---|---|--:|--:|---|\n")
	for _, l := range ls {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s |\n", mdText(l.Engine), mdCode(l.Limit), l.Value, l.Count, mdText(l.What))
	}
	b.WriteString("\n")
}

func writeLatencyTable(b *bytes.Buffer, r Run) {
	b.WriteString("## Latency (ms)\n\n")
	b.WriteString("| | count | mean | p50 | p90 | p99 | p99.9 | max |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(name string, l model.Latency) {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", mdText(name), l.Count,
			fmtMs(l.Mean), fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Max))
	}
	row(HistLabel(HistEndToEnd), r.Summary.EndToEnd)
	row(HistLabel(HistServiceTime), r.Summary.ServiceTime)
	if l := r.Summary.RedeliverAfterCrash; l != nil {
		row("redeliver after crash (crash to next delivery of each message held)", *l)
	}
	for _, name := range sortedHistNames(r.Hists) {
		if name != HistEndToEnd && name != HistServiceTime && !IsPart(name) {
			row(HistLabel(name), LatencyOf(r.Hists[name]))
		}
	}
	b.WriteString("\n")
	if len(r.Hists) > 0 {
		b.WriteString("Full distributions: ")
		for i, name := range sortedHistNames(r.Hists) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "[%s](%s)", name+HgrmExt, name+HgrmExt)
		}
		fmt.Fprintf(b, " (HdrHistogram percentile text, ms); lossless: [%s](%s).\n\n", HlogFile, HlogFile)
	}
}

// writeGroups writes one row per consumer group when the run has more
// than one; nothing otherwise.
func writeGroups(b *bytes.Buffer, gs []model.GroupSummary) {
	if len(gs) == 0 {
		return
	}
	b.WriteString("## Consumer groups\n\n")
	b.WriteString("Each group consumes every message of its topic that it subscribes to, independently of the others: " +
		"the counts and latencies above are over (group, message) pairs. A message a group does not subscribe to is " +
		"dropped for that group by policy `no-match`. Latencies (ms) are end to end, after the warm-up.\n\n")
	b.WriteString(groupHeader + "\n" + groupRule + "\n")
	for _, g := range gs {
		writeGroupCells(b, g)
	}
	b.WriteString("\n")
}

// The Consumer groups table's columns, shared by the run and sweep
// reports (a sweep puts its parameters in front).
const (
	groupHeader = "| group | topic | produced | acked | DLQ | dropped | lost | duplicates | count | p50 | p99 | p99.9 | max |"
	groupRule   = "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
)

// writeGroupCells writes one group's cells under groupHeader and ends the row.
func writeGroupCells(b *bytes.Buffer, g model.GroupSummary) {
	l := g.EndToEnd
	fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s |\n", mdText(g.Group), mdText(g.Topic),
		g.Produced, g.Acked, g.DLQ, g.Dropped, g.Lost, g.Duplicates, l.Count, fmtMs(l.P50), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Max))
}

func writeCharts(b *bytes.Buffer, charts []*Chart) {
	if len(charts) == 0 {
		return
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		fmt.Fprintf(b, "[![%s](%s.png)](%s.svg)\n\n", mdText(c.Title), c.Name, c.Name)
	}
}

const runGuide = `## How to read this

- **Latency by percentile.** The x axis is 1/(1-q) on a log scale: 90 % sits at 10,
  99 % at 100, 99.9 % at 1000, so every "nine" gets the same width and the tail is as
  visible as the median. A point (99 %, 40 ms) means 99 % of messages took at most 40 ms.
  Values come from HdrHistogram (3 significant figures: within 0.1 %).
- **End-to-end vs service time.** End-to-end runs from the moment a message was produced
  (its intended time, so queueing delay is included and no coordinated-omission correction
  is needed) to its successful ack. Service time runs from the delivery that succeeded (pop)
  to its ack: waiting in the client's local buffer, processing and the ack. "Where the time
  goes" splits end-to-end latency into broker wait, redelivery wait, local buffer wait,
  processing and the ack; the breakdown chart stacks their means (they add up to the mean)
  and sets each part's p99 beside the end-to-end p99.
- **Warm-up and intervals.** The run leaves out its start (with warmup: auto, where MSER-5
  finds the initial transient ends) and gives its means, percentiles, duplicates and
  throughput a within-run confidence interval by batch means; the percentile chart draws
  the p50, p90 and p99 intervals as error bars on the end-to-end curve. An interval measures
  the simulation's own randomness in this run, not how well the scenario models a system.
- **Time series.** Throughput, backlog, in-flight records and redeliveries over virtual
  time. A backlog that keeps rising means consumers are slower than producers; bursts of
  redeliveries follow lease expiries, crashes or lost acks.
- **Duplicates.** POP is at-least-once: a message is delivered again when its lease
  (invisibleTime) expires before the ack arrives (slow processing, a paused or crashed
  consumer, a lost ack or response), when an ack comes after the record was revived, or
  when volatile broker state is lost. Each duplicate delivery is attributed to one cause;
  duplicates % is duplicate deliveries per produced message.
- **Violations** are broken invariants; each lists the command that replays it.
`

// RenderSweepMarkdown renders report.md for a sweep: run totals, a plan's
// decisions, a table of every cell (parameters, seeds, end-to-end mean,
// p50, p99 and p99.9, duplicates %, throughput, each with its interval over
// the seeds; when any run measured them, the crash-to-redelivery p50 and
// p99 and the engine limits hit; violations, failing seeds) and a line saying the intervals'
// level, seed count and methods, head-of-line blocking and acks (ack requests per acked
// message, acked but not done) when any run had them, then every failing run with its
// violations' distinct replay commands (never filtered), then the charts.
func RenderSweepMarkdown(s *Sweep, charts []*Chart) []byte {
	var b bytes.Buffer
	t := s.Totals()
	if s.Question != "" {
		fmt.Fprintf(&b, "# popsim plan: %s\n\n", mdText(s.Name))
		fmt.Fprintf(&b, "**Question:** %s\n\n**Answer:** %s\n\n", mdText(s.Question), mdText(orNone(s.Answer)))
	} else {
		fmt.Fprintf(&b, "# popsim sweep: %s\n\n", mdText(s.Name))
	}
	writeMissing(&b, s.Missing)
	fmt.Fprintf(&b, "Swept: %s", mdText(orNone(strings.Join(s.Swept(), "; "))))
	if s.X != "" {
		fmt.Fprintf(&b, "; charted against %s", mdText(s.X))
	}
	if s.Group != "" {
		fmt.Fprintf(&b, ", one line per %s", mdText(s.Group))
	}
	fmt.Fprintf(&b, ". %d parameter sets, %d runs: %d passed, %d failed.\n\n", t.Cells, t.Runs, t.Passed, t.Failed)
	writeEvidence(&b, s)
	writeSweepTable(&b, s)
	writeSweepHeadOfLine(&b, s)
	writeSweepAcks(&b, s)
	writeSweepGroups(&b, s)
	writeFailing(&b, s)
	writeCharts(&b, charts)
	b.WriteString(sweepGuide)
	return b.Bytes()
}

// writeMissing says a sweep is incomplete and lists the runs it lacks.
func writeMissing(b *bytes.Buffer, missing []string) {
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(b, "**INCOMPLETE: %d run(s) missing** (the sweep was interrupted or a shard is absent); every number below leaves them out:\n\n", len(missing))
	for _, m := range missing {
		fmt.Fprintf(b, "- %s\n", mdText(m))
	}
	b.WriteString("\n")
}

func writeSweepTable(b *bytes.Buffer, s *Sweep) {
	crash, limits := s.hasCrashRedelivery(), s.hasLimitsHit()
	b.WriteString("| parameters | seeds | e2e mean ms [lo, hi] | e2e p50 ms [lo, hi] | e2e p99 ms [lo, hi] | e2e p99.9 ms [lo, hi] | duplicates % [lo, hi] | throughput acks/s [lo, hi] |")
	if crash {
		b.WriteString(" crash → redelivery p50 / p99 ms (over the seeds) |")
	}
	if limits {
		b.WriteString(" limits hit (seeds, times) |")
	}
	b.WriteString(" violations | failing seeds |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|")
	if crash {
		b.WriteString("--:|")
	}
	if limits {
		b.WriteString("---|")
	}
	b.WriteString("--:|---|\n")
	lv := s.ConfidenceLevel()
	var excluded []string
	for _, c := range s.Cells() {
		st := c.Stats(lv)
		var failing []string
		for _, r := range c.Failing() {
			failing = append(failing, strconv.FormatUint(r.Seed, 10))
		}
		for _, seed := range st.Excluded {
			excluded = append(excluded, fmt.Sprintf("seed %d, %s", seed, ParamsKey(c.Params)))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |",
			mdText(ParamsKey(c.Params)), joinSeeds(c.Seeds()),
			FormatInterval(st.Mean.Interval, usMs), FormatInterval(st.P50.Interval, usMs),
			FormatInterval(st.P99.Interval, usMs), FormatInterval(st.P999.Interval, usMs),
			FormatInterval(st.DuplicatesPct.Interval, stats.FormatNumber), FormatInterval(st.ThroughputPerSec.Interval, stats.FormatNumber))
		if crash {
			fmt.Fprintf(b, " %s |", mdText(c.CrashRedelivery()))
		}
		if limits {
			fmt.Fprintf(b, " %s |", c.LimitsHit())
		}
		fmt.Fprintf(b, " %d | %s |\n", c.Violations(), orNone(strings.Join(failing, " ")))
	}
	b.WriteString("\n" + mdText(s.IntervalsLine()) + " How to read an interval: docs/statistics.md in the popsim repository.\n\n")
	if len(excluded) > 0 {
		fmt.Fprintf(b, "Left out of every interval (no end-to-end latency measured: the run did not finish): %s.\n\n", mdText(strings.Join(excluded, "; ")))
	}
}

// usMs formats microseconds as milliseconds, four significant digits.
func usMs(us float64) string { return stats.FormatNumber(us / 1000) }

// writeEvidence writes a plan's decision at every value it tried.
func writeEvidence(b *bytes.Buffer, s *Sweep) {
	if len(s.Evidence) == 0 {
		return
	}
	b.WriteString("## Decisions\n\n")
	first := s.Evidence[0]
	fmt.Fprintf(b, "| %s | seeds | verdict |", mdText(s.X))
	for _, c := range first.Conditions {
		fmt.Fprintf(b, " %s: %s [lo, hi] |", mdText(c.Condition), mdText(c.Unit))
	}
	b.WriteString(" violations |\n|--:|--:|---|" + strings.Repeat("--:|", len(first.Conditions)) + "--:|\n")
	perLook := 0.0
	for _, e := range s.Evidence {
		fmt.Fprintf(b, "| %s | %d | %s |", mdText(e.Value), e.Seeds, mdText(e.Verdict))
		for _, c := range e.Conditions {
			fmt.Fprintf(b, " %s (%s) |", FormatInterval(c.Interval, stats.FormatNumber), mdText(c.Verdict))
			perLook = max(perLook, c.Interval.Level)
		}
		fmt.Fprintf(b, " %d |\n", e.Violations)
	}
	fmt.Fprintf(b, "\nEach verdict compares the t interval over the value's seeds with the target: met when all of the interval meets it, "+
		"not met when none of it does, undecided otherwise (seeds were added until the verdict was clear or the budget ran out). "+
		"Seeds are added and the data looked at several times, so each look uses a %s interval, keeping the chance of any wrong verdict "+
		"at a value within %s. A run that broke an invariant makes its value not met.\n\n", levelText(perLook), levelText(1-s.ConfidenceLevel()))
}

func writeFailing(b *bytes.Buffer, s *Sweep) {
	t := s.Totals()
	fmt.Fprintf(b, "## Failing seeds: %d\n\n", t.Failed)
	if t.Failed == 0 {
		b.WriteString("None: every run held every invariant.\n\n")
		return
	}
	for _, c := range s.Cells() {
		for _, r := range c.Failing() {
			fmt.Fprintf(b, "- seed %d, %s: %d violation(s): %s\n", r.Seed, mdText(ParamsKey(c.Params)),
				len(r.Violations), mdText(strings.Join(invariants(r.Violations), ", ")))
			for _, cmd := range replays(r.Violations) {
				fmt.Fprintf(b, "  - replay: %s\n", mdCode(cmd))
			}
		}
	}
	b.WriteString("\n")
}

// invariants lists the distinct invariants broken, in first-seen order.
func invariants(vs []model.Violation) []string {
	return distinct(vs, func(v model.Violation) string { return v.Invariant })
}

// replays lists the distinct replay commands, in first-seen order.
func replays(vs []model.Violation) []string {
	return distinct(vs, func(v model.Violation) string { return v.Replay })
}

func distinct(vs []model.Violation, f func(model.Violation) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vs {
		if k := f(v); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

const sweepGuide = `## How to read this

- Each row aggregates every seed of one parameter set. The latency columns are the mean over
  the seeds of each seed's own mean or percentile, with a confidence interval over the seeds
  (independent replications); duplicates % is duplicate deliveries per produced message over
  all seeds (Σ duplicates / Σ produced), throughput the mean over seeds of acks per virtual
  second, each with its interval. sweep.json has every per-seed value behind the intervals,
  and the exact merge of the seeds' HdrHistograms (end_to_end), which the latency chart draws.
- An interval [lo, hi] at 95 % says: the procedure that built it covers the scenario's true
  long-run value in about 95 of 100 sweeps. It measures only the simulation's own randomness:
  more seeds narrow it. A row without an interval (one seed) says so rather than guess.
- The charts plot one metric against the swept parameter, one line per group, with the
  intervals as error bars. Where lines cross is where one configuration starts to beat the
  other; where their bars overlap, the seeds run so far cannot tell them apart.
- Every failing seed is listed above with the command that replays it. A sweep with
  failures is not a benchmark result: fix or explain the failures first.
`

func joinSeeds(seeds []uint64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fmtMs prints microseconds as milliseconds with three decimals, exactly.
func fmtMs(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%s%d.%03d", sign, us/1000, us%1000)
}

func fmtFloat(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

// mdText makes s safe inside a Markdown table cell or list item: pipes
// escaped, line breaks flattened.
func mdText(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdCode wraps s in a code span long enough not to be closed by backticks
// inside it.
func mdCode(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", ""), "\n", " ")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// writeEngineWork writes the engine's work counters with each per
// consumed (acked) message: RocketMQ's store writes and reads of each
// kind, the measure behind its KV path (fewer writes, less CPU).
func writeEngineWork(b *bytes.Buffer, s *model.Summary) {
	if len(s.EngineCounters) == 0 {
		return
	}
	b.WriteString("## Engine work\n\n")
	b.WriteString("Counters of the whole run (warm-up and drain included), and per acked message.\n\n")
	b.WriteString("| counter | count | per acked message |\n|---|--:|--:|\n")
	for _, n := range slices.Sorted(maps.Keys(s.EngineCounters)) {
		v := s.EngineCounters[n]
		per := "-"
		if s.Acked > 0 {
			per = fmtFloat(float64(v)/float64(s.Acked), 3)
		}
		fmt.Fprintf(b, "| %s | %d | %s |\n", mdText(n), v, per)
	}
	b.WriteString("\n")
}
