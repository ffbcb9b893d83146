package scenarios

import "testing"

// batch-ack shows what batch acks save: with listener batches of up to 8
// from pops that find a backlog, batchAck true sends one
// BATCH_ACK_MESSAGE per batch's success prefix and no ACK_MESSAGE, far
// fewer requests per acked message than batchAck false's one each; both
// with zero violations. Shortened to 5 s.
func TestBatchAckBuiltin(t *testing.T) {
	perAcked := map[string]float64{}
	for _, v := range []string{"false", "true"} {
		sum := runBuiltinSeed(t, "batch-ack", 1, Override{Path: "duration", Value: "5s"}, Override{Path: "warmup", Value: "500ms"},
			Override{Path: "consumers[0].batchAck", Value: v})
		acks, batches := sum.EngineCounters["ack_requests"], sum.EngineCounters["batch_ack_requests"]
		if (v == "true") != (batches > 0) || (v == "true") != (acks == 0) {
			t.Errorf("batchAck %s: %d ack requests, %d batch ack requests", v, acks, batches)
		}
		if sum.Acked == 0 {
			t.Fatalf("batchAck %s: nothing acked", v)
		}
		perAcked[v] = float64(acks+batches) / float64(sum.Acked)
	}
	if perAcked["false"] != 1 || perAcked["true"] > 0.5 {
		t.Errorf("ack requests per acked message: %.3f with batchAck false, %.3f with true: want 1 and under 0.5",
			perAcked["false"], perAcked["true"])
	}
	t.Logf("ack requests per acked message: %.3f (false), %.3f (true)", perAcked["false"], perAcked["true"])
}
