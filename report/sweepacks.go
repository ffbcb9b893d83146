package report

import (
	"bytes"
	"fmt"

	"popsim/model"
)

// writeSweepAcks writes, when any run acked in batches
// (batch_ack_requests) or acked messages its application then failed to
// commit (acked, not done), each cell's ack requests per acked message
// and its acked-but-not-done messages, summed over the seeds. Other
// sweeps' reports are unchanged.
func writeSweepAcks(b *bytes.Buffer, s *Sweep) {
	batch := s.anyRun(func(r *model.Summary) bool { return r.EngineCounters["batch_ack_requests"] > 0 })
	notDone := s.anyRun(func(r *model.Summary) bool { return r.AckedNotDone > 0 })
	if !batch && !notDone {
		return
	}
	b.WriteString("## Acks\n\n")
	b.WriteString("Summed over the seeds of each parameter set (whole runs: warm-up and drain included).")
	if batch {
		b.WriteString(" Requests per acked message: ACK_MESSAGE (one per message) and BATCH_ACK_MESSAGE (one per listener batch's success prefix); pops for comparison.")
	}
	if notDone {
		b.WriteString(" Acked, not done: acked, then the application's commit failed; no retry comes, the application owns them (not a violation).")
	}
	b.WriteString("\n\n| parameters | acked |")
	sep := "|---|--:|"
	if batch {
		b.WriteString(" ack requests per acked | batch ack requests per acked | both per acked | pop requests per acked |")
		sep += "--:|--:|--:|--:|"
	}
	if notDone {
		b.WriteString(" acked, not done | % of acked |")
		sep += "--:|--:|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, c := range s.Cells() {
		var acked, acks, batches, pops, nd int64
		for i := range c.Runs {
			r := &c.Runs[i]
			acked += r.Acked
			acks += r.EngineCounters["ack_requests"]
			batches += r.EngineCounters["batch_ack_requests"]
			pops += r.EngineCounters["pop_requests"]
			nd += r.AckedNotDone
		}
		per := func(n int64) string {
			if acked == 0 {
				return "-"
			}
			return fmtFloat(float64(n)/float64(acked), 3)
		}
		fmt.Fprintf(b, "| %s | %d |", mdText(ParamsKey(c.Params)), acked)
		if batch {
			fmt.Fprintf(b, " %s | %s | %s | %s |", per(acks), per(batches), per(acks+batches), per(pops))
		}
		if notDone {
			fmt.Fprintf(b, " %d | %s |", nd, fmtFloat(pct(nd, acked), 3))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
