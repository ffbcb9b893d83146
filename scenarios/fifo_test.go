package scenarios

import (
	"testing"

	"popsim/clock"
	"popsim/sim"
)

// TestFifoPoisonBlocksItsQueue: fifo-poison's one poison message blocks its
// queue for retryMaxTimes+1 invisible times, goes to the DLQ, and the
// summary's head-of-line blocking says so; consumed concurrently, the same
// load has no head-of-line measure.
func TestFifoPoisonBlocksItsQueue(t *testing.T) {
	s, err := Builtin("fifo-poison")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(s.Config(s.Seed), sim.RunOptions{Scenario: "fifo-poison"})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.DLQ != 1 || len(sum.Violations) != 0 {
		t.Fatalf("DLQ %d, %d violations; want the poison message in the DLQ and no violation", sum.DLQ, len(sum.Violations))
	}
	h := sum.HeadOfLine
	if h == nil {
		t.Fatal("no head-of-line blocking in the summary of an orderly run")
	}
	// Three deliveries, each held for the 10 s invisible time.
	if h.Blocked != 1 || h.Episodes.Count != 1 || h.TotalUs < int64(30*clock.Second) || h.TotalUs > int64(32*clock.Second) {
		t.Errorf("%d queues blocked, %d episodes, %d µs in all; want one queue blocked once for 30 to 32 s", h.Blocked, h.Episodes.Count, h.TotalUs)
	}
	// 20 messages/s over 4 queues for 30 s: about 150 wait behind it.
	if h.MaxBacklog < 100 || h.MaxBacklog > 200 {
		t.Errorf("max backlog %d, want about 150", h.MaxBacklog)
	}

	c, err := Builtin("fifo-poison", Override{Path: "groups[0].consumeMessageOrderly", Value: "false"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = sim.Run(c.Config(c.Seed), sim.RunOptions{Scenario: "fifo-poison"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.HeadOfLine != nil || res.Summary.DLQ != 1 {
		t.Errorf("concurrent: head of line %+v, DLQ %d; want none and 1", res.Summary.HeadOfLine, res.Summary.DLQ)
	}
}
