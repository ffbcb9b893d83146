package pop_test

// Hot-path benchmarks of the engine, with the bare-index floor beside them.
// The bodies live in popsim/internal/bench (shared with cmd/popbench):
//
//	go test ./pop -run '^$' -bench . -benchtime=1s -count 10
//	go test ./pop -run '^$' -bench 'PopAck32|FloorPopAck32' -benchtime=2000x
//
// Sub-benchmarks are named inflight=1k|100k|1M/cache=off|on; floors have no
// cache dimension. None of them run under a plain `go test`.

import (
	"testing"

	"popsim/internal/bench"
)

func BenchmarkPopAck32(b *testing.B) { bench.RunSub(b, "PopAck32", bench.DefaultSizes) }

// BenchmarkPopAck32Batch is PopAck32 with the 32 acks sent as one batch ack.
func BenchmarkPopAck32Batch(b *testing.B) { bench.RunSub(b, "PopAck32Batch", bench.DefaultSizes) }

func BenchmarkFloorPopAck32(b *testing.B) { bench.RunSub(b, "FloorPopAck32", bench.DefaultSizes) }

func BenchmarkChangeInvisibleTime(b *testing.B) {
	bench.RunSub(b, "ChangeInvisibleTime", bench.DefaultSizes)
}

func BenchmarkFloorChangeInvisibleTime(b *testing.B) {
	bench.RunSub(b, "FloorChangeInvisibleTime", bench.DefaultSizes)
}

func BenchmarkRevive(b *testing.B) { bench.RunSub(b, "Revive", bench.DefaultSizes) }

func BenchmarkLongPollWake(b *testing.B) { bench.RunSub(b, "LongPollWake", bench.DefaultSizes) }

// BenchmarkPopAckQueues is pop 32 + 32 acks on a topic of 8, 1000 and 8000
// queues of which four hold messages (queues=N/path=kv|fs).
func BenchmarkPopAckQueues(b *testing.B) { bench.RunSub(b, "PopAckQueues", nil) }
