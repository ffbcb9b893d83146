package report

import (
	"strings"
	"testing"

	"popsim/model"
)

// withRunStats adds a run's own analysis to the fixture: a warm-up cut,
// within-run intervals (one missing), a breakdown and a note.
func withRunStats(s model.Summary) model.Summary {
	iv := func(est, lo, hi float64) model.Interval {
		return model.Interval{Est: est, Lo: lo, Hi: hi, Level: 0.95, N: 30, Method: "batch means", OK: true}
	}
	s.Warmup = model.WarmupCut{Rule: "MSER-5", AtMs: 12400, Messages: 1240, Of: 31140}
	s.Intervals = model.RunIntervals{Level: 0.95,
		EndToEnd: model.LatencyIntervals{Mean: iv(41200, 40100, 42300), P50: iv(31000, 30500, 31600), P90: iv(80000, 78000, 82500),
			P99: model.Interval{Est: 150000, Level: 0.95, N: 12, Method: "batch proportion", Note: "not enough data: 12 groups"}},
		ServiceTime:      model.LatencyIntervals{Mean: iv(10000, 9900, 10100)},
		DuplicatesPct:    iv(1.3, 1.1, 1.5),
		ThroughputPerSec: iv(996.5, 990.1, 1002.9),
	}
	parts := []int64{20000, 5000, 6000, 9000, 1000} // add up to the mean, 41000
	for i, name := range model.Parts {
		s.Breakdown.Parts = append(s.Breakdown.Parts, model.LatencyPart{Name: name,
			Latency:      model.Latency{Count: 29900, Mean: parts[i], P50: parts[i] / 2, P90: parts[i] * 2, P99: parts[i] * 4, P999: parts[i] * 5, Max: parts[i] * 10},
			MeanInterval: iv(float64(parts[i]), float64(parts[i])*0.9, float64(parts[i])*1.1)})
	}
	s.Notes = []string{"pop-push consumers do not serve one shared queue: 14.6 % of the mean end-to-end latency"}
	return s
}

func TestRunMarkdownRunStats(t *testing.T) {
	r := Run{Summary: withRunStats(fixtureSummary()), Hists: randomHists(3, 1000)}
	md := string(RenderRunMarkdown(r, RunCharts(r)))
	for _, want := range []string{
		"| throughput | 996.7 acks/s (virtual, after warm-up); 95 % within-run interval [990.1, 1003] |",
		"| warm-up | MSER-5 truncated the first 12.4 s (1240 messages, 4.0 %) |",
		"## Notes\n\n- pop-push consumers do not serve one shared queue: 14.6 % of the mean end-to-end latency\n",
		"Within-run 95 % confidence intervals, after the warm-up",
		"| end-to-end (produce → ack) | 41.20 [40.10, 42.30] | 31.00 [30.50, 31.60] | 80.00 [78.00, 82.50] | 150.0 (no interval: not enough data: 12 groups) |",
		"Duplicates: 1.300 [1.100, 1.500] % of the messages stored after the warm-up; throughput: 996.5 [990.1, 1003] acks/s.",
		"## Where the time goes (ms)",
		"| broker wait | 20.00 [18.00, 22.00] | 48.8 % | 10.000 | 40.000 | 80.000 | 200.000 |",
		"| ack | 1.000 [0.9000, 1.100] | 2.4 % |",
		"| end-to-end | 41.000 | 100 % |",
		"[![fixture seed 42: latency by percentile (mean 41.20 ms [40.10, 42.30], 95 % within run)](latency.png)](latency.svg)",
		"(breakdown.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("run report lacks %q", want)
		}
	}
	// An old summary, without the run's own analysis, renders without it.
	old := Run{Summary: fixtureSummary(), Hists: randomHists(3, 1000)}
	md = string(RenderRunMarkdown(old, RunCharts(old)))
	for _, absent := range []string{"| warm-up |", "Within-run", "## Where the time goes", "## Notes", "breakdown.png"} {
		if strings.Contains(md, absent) {
			t.Errorf("a summary without a run analysis renders %q", absent)
		}
	}
}

func TestRunMarkdownWarnsOfAFailedWarmup(t *testing.T) {
	s := withRunStats(fixtureSummary())
	s.Warmup.Failed, s.Warmup.Note = true, "the run is too short to leave its initial transient, run longer"
	md := string(RenderRunMarkdown(Run{Summary: s}, nil))
	if !strings.Contains(md, "- warm-up: MSER-5 truncated the first 12.4 s (1240 messages, 4.0 %); warning: the run is too short") {
		t.Errorf("report does not warn of the failed warm-up rule:\n%s", md)
	}
}

func TestBreakdownChart(t *testing.T) {
	s := withRunStats(fixtureSummary())
	c := BreakdownChart(ChartBreakdown, "fixture", s)
	checkChart(t, c)
	svg, _ := c.SVG()
	for _, want := range []string{"mean end-to-end latency by part (stacked)", "broker wait 20.00 ms (48.8 %)", "redelivery wait 20.00 ms", "end-to-end 150.0 ms"} {
		if !svgText(svg, want) {
			t.Errorf("breakdown chart has no text %q", want)
		}
	}
	// Parts of 0 (a Pull run has no ack part) have nothing to draw on the
	// log axis but still a row.
	s.Breakdown.Parts[4].Latency = model.Latency{}
	checkChart(t, BreakdownChart(ChartBreakdown, "fixture", s))
}
