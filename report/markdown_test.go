package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"popsim/model"
)

func TestRunMarkdown(t *testing.T) {
	s := fixtureSummary()
	r := Run{Summary: s, Hists: randomHists(3, 1000)}
	md := string(RenderRunMarkdown(r, RunCharts(r)))
	for _, want := range []string{
		"# popsim run: fixture, seed 42",
		"| produced | 30000 |", "| acked | 29900 |", "| DLQ | 40 |", "| dropped | 3 |", "| lost | 0 |",
		"| duplicates | 400 (1.333 % of produced) |",
		"| violations | 2 |",
		"| throughput | 996.7 acks/s",
		"| sim events | 123456 |", "| sim seconds | 30.000 |", "| wall seconds | 0.500 |",
		"| trace xxh3 | `deadbeef` |",
		"## Violations: 2",
		"delivered inside a live lease \\| twice", // pipes escaped
		"replay: `popsim run fixture --seed 42 --until 1234`",
		"replay: `popsim run fixture --seed 42`",
		"   t=1 deliver m-17",
		"| ack-lost | 90 | 22.50 % |",
		"| max-attempts | 3 | 100.00 % |",
		"| end-to-end (produce → ack) | 29900 | 41.000 | 31.000 | 80.000 | 150.000 | 220.000 | 400.000 |",
		"| service time (pop → ack) | 29900 | 10.000 | 7.000 | 23.000 | 46.000 | 69.000 | 140.000 |",
		"[end_to_end.hgrm](end_to_end.hgrm)",
		"[![fixture seed 42: latency by percentile](latency.png)](latency.svg)",
		"(timeseries.png)", "(duplicates.png)",
		"## How to read this", "1/(1-q)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("run report lacks %q", want)
		}
	}
	// Causes appear sorted by name.
	if a, c, l := strings.Index(md, "| ack-lost |"), strings.Index(md, "| crash | 10"), strings.Index(md, "| lease-expired |"); !(a < c && c < l) {
		t.Error("duplicate causes are not sorted by name")
	}
	if !bytes.Equal([]byte(md), RenderRunMarkdown(r, RunCharts(r))) {
		t.Error("run report differs between two renders")
	}
}

func TestRunMarkdownClean(t *testing.T) {
	s := model.Summary{Scenario: "quiet", Seed: 1}
	md := string(RenderRunMarkdown(Run{Summary: s}, nil))
	for _, want := range []string{"## Violations: 0", "None: every invariant held.", "| config sha256 | `none` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("clean run report lacks %q", want)
		}
	}
	if strings.Contains(md, "## Charts") || strings.Contains(md, "Dropped by policy") || strings.Contains(md, "Limits hit") || strings.Contains(md, "redeliver after crash") {
		t.Error("clean run report has sections for data it does not have")
	}
}

func TestSweepMarkdownListsEveryFailingSeed(t *testing.T) {
	sw := NewSweep("consumers", "consumers", ParamConsumerKind)
	var failing []string
	for _, kind := range []string{"pop", "pull"} {
		for _, c := range []int{1, 2, 4} {
			for seed := uint64(1); seed <= 10; seed++ {
				fail := (seed+uint64(c))%3 == 0
				if err := sw.Add(sweepPoint(kind, c, seed, 50, fail)); err != nil {
					t.Fatal(err)
				}
				if fail {
					failing = append(failing, fmt.Sprintf("- seed %d, consumer_kind=%s, consumers=%d: 2 violation(s): no-loss\n  - replay: `popsim run sweep --seed %d --consumers %d`\n",
						seed, kind, c, seed, c))
				}
			}
		}
	}
	md := string(RenderSweepMarkdown(sw, SweepCharts(sw)))
	if len(failing) < 15 {
		t.Fatalf("fixture has only %d failing seeds", len(failing))
	}
	for _, f := range failing {
		if !strings.Contains(md, f) {
			t.Errorf("sweep report does not list:\n%s", f)
		}
	}
	// Two identical violations give one replay line, not two.
	if n := strings.Count(md, "  - replay: "); n != len(failing) {
		t.Errorf("%d replay lines, want %d (one per distinct command)", n, len(failing))
	}
	t60 := sw.Totals()
	for _, want := range []string{
		fmt.Sprintf("6 parameter sets, 60 runs: %d passed, %d failed.", t60.Passed, t60.Failed),
		fmt.Sprintf("## Failing seeds: %d", len(failing)),
		"| consumer_kind=pop, consumers=1 | 1 2 3 4 5 6 7 8 9 10 |",
		"| 2 5 8 |", // pop, consumers=1: seeds with (seed+1)%3 == 0
		"(sweep-p99-e2e.png)", "(sweep-duplicates.png)", "(sweep-throughput.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	if t60.Failed != len(failing) || t60.Runs != 60 || t60.Cells != 6 {
		t.Errorf("totals %+v, want 60 runs in 6 cells, %d failed", t60, len(failing))
	}
}

func TestMdCode(t *testing.T) {
	for in, want := range map[string]string{
		"popsim run":   "`popsim run`",
		"a `b` c":      "``a `b` c``",
		"`x`":          "`` `x` ``",
		"two\nlines":   "`two lines`",
		"pipe | stays": "`pipe | stays`",
	} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fmtMs(-1500); got != "-1.500" {
		t.Errorf("fmtMs(-1500) = %q", got)
	}
}

// A sweep over consumer kinds has no numeric X; its report still says
// what was swept (it said "Swept: none").
func TestSweepMarkdownNamesWhatWasSwept(t *testing.T) {
	sw := NewSweep("pull-vs-pop", "", ParamConsumerKind)
	for _, kind := range []string{"pull", "pop-push", "simple"} {
		if err := sw.Add(sweepPoint(kind, 8, 1, 50, false)); err != nil {
			t.Fatal(err)
		}
	}
	md := string(RenderSweepMarkdown(sw, nil))
	if want := "Swept: consumer_kind (pop-push, pull, simple), one line per consumer_kind."; !strings.Contains(md, want) {
		t.Errorf("sweep report lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "Swept: none") || strings.Contains(md, "INCOMPLETE") {
		t.Errorf("sweep report:\n%s", md)
	}
}

// A plan's report leads with its question and answer; an incomplete
// sweep's report says so first and names the missing runs.
func TestSweepMarkdownPlanAndIncomplete(t *testing.T) {
	sw := NewSweep("tiny", "consumers", "")
	sw.Add(sweepPoint("pop", 2, 1, 50, false))
	sw.Question = "the smallest consumers in 1..16 meeting p99<=300ms (and no violations), 2 seeds per value"
	sw.Answer = "consumers=3"
	sw.Missing = []string{"seed 2, consumers=2 (runs/p000_consumers-2_seed2)"}
	md := string(RenderSweepMarkdown(sw, nil))
	want := "# popsim plan: tiny\n\n**Question:** the smallest consumers in 1..16 meeting p99<=300ms (and no violations), 2 seeds per value\n\n**Answer:** consumers=3\n\n**INCOMPLETE: 1 run(s) missing**"
	if !strings.HasPrefix(md, want) || !strings.Contains(md, "- seed 2, consumers=2 (runs/p000_consumers-2_seed2)\n") {
		t.Errorf("plan report does not lead with question, answer and the missing run:\n%s", md)
	}
	js, err := EncodeSweep(sw)
	if err != nil || !strings.Contains(string(js), `"answer": "consumers=3"`) || !strings.Contains(string(js), `"missing": [`) {
		t.Errorf("sweep.json (%v):\n%s", err, js)
	}
}

func TestRunMarkdownLimitsAndCrashRedelivery(t *testing.T) {
	s := model.Summary{Scenario: "peers", Seed: 1,
		RedeliverAfterCrash: &model.Latency{Count: 12, Mean: 30000, P50: 30000, P90: 30000, P99: 30000, P999: 30000, Max: 30000},
		LimitsHit:           []model.LimitHit{{Engine: "kafka-share", Limit: "group.share.partition.max.record.locks", Value: 2000, Count: 7, What: "fetches held back by a full in-flight window"}},
	}
	md := string(RenderRunMarkdown(Run{Summary: s}, nil))
	for _, want := range []string{
		"## Limits hit",
		"| kafka-share | `group.share.partition.max.record.locks` | 2000 | 7 | fetches held back by a full in-flight window |",
		"| redeliver after crash (crash to next delivery of each message held) | 12 | 30.000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("run report lacks %q", want)
		}
	}
}

// A sweep whose runs measured crash-to-redelivery times or hit engine
// limits shows both in its table, per cell over the seeds; a sweep without
// them keeps its columns as they were.
func TestSweepMarkdownLimitsAndCrashRedelivery(t *testing.T) {
	sw := NewSweep("peers", "", ParamConsumerKind)
	const locks = "group.share.partition.max.record.locks"
	for seed := uint64(1); seed <= 3; seed++ {
		p := sweepPoint("kafka-share", 4, seed, 50, false)
		p.Summary.RedeliverAfterCrash = &model.Latency{Count: 5, P50: int64(seed) * 1000_000, P99: 30_000_000}
		if seed != 2 {
			p.Summary.LimitsHit = []model.LimitHit{{Engine: "kafka-share", Limit: locks, Value: 2000, Count: int64(seed) * 10}}
		}
		q := sweepPoint("sqs", 8, seed, 50, false)
		if seed == 1 {
			q.Summary.RedeliverAfterCrash = &model.Latency{Count: 3, P50: 30_000_000, P99: 30_010_000}
		}
		for _, x := range []SweepPoint{p, q} {
			if err := sw.Add(x); err != nil {
				t.Fatal(err)
			}
		}
	}
	md := string(RenderSweepMarkdown(sw, nil))
	for _, want := range []string{
		" throughput acks/s [lo, hi] | crash → redelivery p50 / p99 ms (over the seeds) | limits hit (seeds, times) | violations | failing seeds |\n|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|---|\n",
		"| 1000–3000 / 30000 | `" + locks + "` 2000: 2 of 3 seeds, 40 times | 0 | none |\n",
		"| 30000 / 30010 (1 of 3 seeds) | none | 0 | none |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("sweep report lacks %q:\n%s", want, md)
		}
	}
	plain := NewSweep("plain", "", ParamConsumerKind)
	plain.Add(sweepPoint("pop", 2, 1, 50, false))
	if md := string(RenderSweepMarkdown(plain, nil)); strings.Contains(md, "crash → redelivery") || strings.Contains(md, "limits hit") ||
		!strings.Contains(md, "| throughput acks/s [lo, hi] | violations | failing seeds |\n|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n") {
		t.Errorf("a sweep without crash redeliveries or limits changed its table:\n%s", md)
	}
}

// Messages acked but not done get a headline row that names the boundary,
// only when there are some.
func TestRunMarkdownAckedNotDone(t *testing.T) {
	s := fixtureSummary()
	r := Run{Summary: s, Hists: randomHists(3, 10)}
	if md := string(RenderRunMarkdown(r, nil)); strings.Contains(md, "acked, not done") {
		t.Fatal("a row for acked-not-done messages in a run that has none")
	}
	r.Summary.AckedNotDone = 300
	md := string(RenderRunMarkdown(r, nil))
	if !strings.Contains(md, "| acked, not done | 300 (1.000 % of produced): acked, then the application's commit failed;") || !strings.Contains(md, "not a violation |") {
		t.Fatalf("no acked-not-done row in:\n%s", md[:min(len(md), 1500)])
	}
}

// A run with several groups gets a row per group; a run with one has no
// such section.
func TestRunMarkdownGroups(t *testing.T) {
	s := fixtureSummary()
	r := Run{Summary: s, Hists: randomHists(3, 10)}
	if md := string(RenderRunMarkdown(r, nil)); strings.Contains(md, "## Consumer groups") {
		t.Fatal("a consumer-group section in a run that has no per-group rows")
	}
	r.Summary.Groups = []model.GroupSummary{
		{Group: "billing", Topic: "orders", Produced: 100, Acked: 100, Deliveries: 101, Duplicates: 1, EndToEnd: model.Latency{Count: 90, P50: 5000, P99: 20000, P999: 30000, Max: 31000}},
		{Group: "audit", Topic: "orders", Produced: 100, Acked: 40, Dropped: 60, EndToEnd: model.Latency{Count: 35, P50: 50000, P99: 90000, P999: 95000, Max: 96000}},
	}
	md := string(RenderRunMarkdown(r, nil))
	for _, want := range []string{
		"## Consumer groups",
		"| billing | orders | 100 | 100 | 0 | 0 | 0 | 1 | 90 | 5.000 | 20.000 | 30.000 | 31.000 |",
		"| audit | orders | 100 | 40 | 0 | 60 | 0 | 0 | 35 | 50.000 | 90.000 | 95.000 | 96.000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("run report lacks %q", want)
		}
	}
}
