package sim

import (
	"testing"

	"popsim/clock"
	"popsim/model"
)

// Ack before the business commit (outcome ack_then_fail): the consumer
// acks, then its own commit fails. Every consumer kind acks such a
// message as a success, the trace says r=not-done, and the summary counts
// the messages never committed without calling them violations.
func TestAckedNotDoneIsCountedNotViolated(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple, Pull} {
		cfg := tinyConfig(kind)
		cfg.Producers[0].Arrivals = arrivals("backlog(200)")
		cfg.Consumers[0].Outcomes = outcomes("outcomes(reconsume_later=0.05,ack_then_fail=0.1)")
		cfg.Duration = 10 * clock.Second
		r := runKeep(t, cfg)
		noViolations(t, r)
		notDone, done := map[model.MsgID]bool{}, map[model.MsgID]bool{}
		for _, e := range only(r, model.EvConsumeEnd) {
			switch e.Reason {
			case model.RNotDone:
				notDone[e.Msg] = true
			case model.RSuccess:
				done[e.Msg] = true
			}
		}
		want := int64(0)
		for m := range notDone {
			if !done[m] {
				want++
			}
		}
		s := r.Summary
		if want < 5 || s.AckedNotDone != want || s.Acked != s.Produced {
			t.Fatalf("%s: acked_not_done %d, want %d (from the trace, at least 5); acked %d of %d", kind, s.AckedNotDone, want, s.Acked, s.Produced)
		}
	}
}
