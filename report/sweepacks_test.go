package report

import (
	"strings"
	"testing"
)

// The sweep report's Acks section appears only when a run acked in
// batches or left messages acked but not done, and its figures are the
// ratios of the sums over the seeds.
func TestSweepAcks(t *testing.T) {
	build := func(batch, notDone bool) string {
		sw := NewSweep("batch-ack", "", "")
		for seed := uint64(1); seed <= 2; seed++ {
			for _, c := range []int{1, 4} {
				p := sweepPoint("pop", c, seed, 200, false)
				p.Summary.EngineCounters = map[string]int64{"ack_requests": 200, "pop_requests": 50}
				if batch && c == 4 {
					p.Summary.EngineCounters = map[string]int64{"batch_ack_requests": 40 * int64(seed), "pop_requests": 50}
				}
				if notDone && c == 4 {
					p.Summary.AckedNotDone = 3 * int64(seed)
				}
				if err := sw.Add(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		return string(RenderSweepMarkdown(sw, nil))
	}
	if md := build(false, false); strings.Contains(md, "## Acks") {
		t.Errorf("an Acks section in a sweep with neither batch acks nor acked-not-done messages:\n%s", md)
	}
	md := build(true, false)
	for _, want := range []string{
		"| consumer_kind=pop, consumers=1 | 400 | 1.000 | 0.000 | 1.000 | 0.250 |",
		"| consumer_kind=pop, consumers=4 | 400 | 0.000 | 0.300 | 0.300 | 0.250 |", // (40 + 80) / 400
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no row %q in:\n%s", want, md)
		}
	}
	if strings.Contains(md, "acked, not done |") {
		t.Error("acked-not-done columns in a sweep without any")
	}
	md = build(false, true)
	if want := "| consumer_kind=pop, consumers=4 | 400 | 9 | 2.250 |"; !strings.Contains(md, want) {
		t.Errorf("no row %q in:\n%s", want, md)
	}
	if strings.Contains(md, "batch ack requests per acked") {
		t.Error("batch ack columns in a sweep without batch acks")
	}
}
