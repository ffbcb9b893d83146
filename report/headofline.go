package report

import (
	"bytes"
	"fmt"

	"popsim/model"
)

// HeadOfLineLine renders a run's head-of-line blocking on one line:
// "1 of 4 queues blocked, 1 episodes, 30.1 s in all; per episode p50
// 30130 ms, p99 30130 ms, max 30130 ms; backlog behind a blocker at most
// 147 messages".
func HeadOfLineLine(h model.HeadOfLine) string {
	if h.Episodes.Count == 0 {
		return fmt.Sprintf("none: no queue of %d blocked", h.Queues)
	}
	return fmt.Sprintf("%d of %d queues blocked, %d episodes, %s s in all; per episode p50 %s ms, p99 %s ms, max %s ms; backlog behind a blocker at most %d messages",
		h.Blocked, h.Queues, h.Episodes.Count, fmtFloat(float64(h.TotalUs)/1e6, 1),
		fmtMs(h.Episodes.P50), fmtMs(h.Episodes.P99), fmtMs(h.Episodes.Max), h.MaxBacklog)
}

// writeHeadOfLine writes the orderly groups' head-of-line blocking (a run
// without orderly groups has none and gets no section).
func writeHeadOfLine(b *bytes.Buffer, h *model.HeadOfLine) {
	if h == nil {
		return
	}
	b.WriteString("## Head-of-line blocking (orderly groups)\n\n")
	b.WriteString("A queue is blocked from its first failed message until every failed message of it is settled (acked, sent to a DLQ or dropped); its other messages wait behind it.\n\n")
	b.WriteString("| queues | blocked queues | episodes | blocked in all (s) | per episode p50 (ms) | p99 (ms) | max (ms) | max backlog behind a blocker |\n|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	fmt.Fprintf(b, "| %d | %d | %d | %s | %s | %s | %s | %d |\n\n", h.Queues, h.Blocked, h.Episodes.Count,
		fmtFloat(float64(h.TotalUs)/1e6, 1), fmtMs(h.Episodes.P50), fmtMs(h.Episodes.P99), fmtMs(h.Episodes.Max), h.MaxBacklog)
}

// HeadOfLine is the cell's head-of-line blocking over its runs: queues,
// episodes and blocked time summed, the backlog and the episodes' p50,
// p99 and max the worst over the runs (the mean count-weighted); nil when
// no run had an orderly group.
func (c *SweepCell) HeadOfLine() *model.HeadOfLine {
	var out *model.HeadOfLine
	var weighted float64
	for _, r := range c.Runs {
		h := r.HeadOfLine
		if h == nil {
			continue
		}
		if out == nil {
			out = &model.HeadOfLine{}
		}
		out.Queues += h.Queues
		out.Blocked += h.Blocked
		out.TotalUs += h.TotalUs
		out.MaxBacklog = max(out.MaxBacklog, h.MaxBacklog)
		e := &out.Episodes
		e.Count += h.Episodes.Count
		weighted += float64(h.Episodes.Mean) * float64(h.Episodes.Count)
		e.P50, e.P90, e.P99 = max(e.P50, h.Episodes.P50), max(e.P90, h.Episodes.P90), max(e.P99, h.Episodes.P99)
		e.P999, e.Max = max(e.P999, h.Episodes.P999), max(e.Max, h.Episodes.Max)
	}
	if out != nil && out.Episodes.Count > 0 {
		out.Episodes.Mean = int64(weighted/float64(out.Episodes.Count) + 0.5)
	}
	return out
}

// writeSweepHeadOfLine writes the cells' head-of-line blocking when any
// cell consumed orderly; a cell without an orderly group shows "—".
func writeSweepHeadOfLine(b *bytes.Buffer, s *Sweep) {
	cells := s.Cells()
	any := false
	for _, c := range cells {
		any = any || c.HeadOfLine() != nil
	}
	if !any {
		return
	}
	b.WriteString("## Head-of-line blocking (orderly groups)\n\n")
	b.WriteString("Summed over the seeds of each parameter set; p99, max and the backlog are the worst seed's. A queue is blocked from its first failed message until every failed message of it is settled.\n\n")
	b.WriteString("| parameters | queues blocked | episodes | blocked in all (s) | per episode p99 (ms) | max (ms) | max backlog behind a blocker |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range cells {
		h := c.HeadOfLine()
		if h == nil {
			fmt.Fprintf(b, "| %s | — | — | — | — | — | — |\n", mdText(ParamsKey(c.Params)))
			continue
		}
		fmt.Fprintf(b, "| %s | %d of %d | %d | %s | %s | %s | %d |\n", mdText(ParamsKey(c.Params)), h.Blocked, h.Queues, h.Episodes.Count,
			fmtFloat(float64(h.TotalUs)/1e6, 1), fmtMs(h.Episodes.P99), fmtMs(h.Episodes.Max), h.MaxBacklog)
	}
	b.WriteString("\n")
}
