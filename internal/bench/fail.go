package bench

import (
	"fmt"
	"sync"
	"testing"
)

// failures keeps the last failure message of a body: testing.Benchmark
// (used by cmd/popbench) discards a benchmark's output, so without it a
// failed case would report nothing but an empty result.
var failures struct {
	sync.Mutex
	last string
}

func fatalf(b *testing.B, format string, args ...any) {
	b.Helper()
	msg := fmt.Sprintf(format, args...)
	failures.Lock()
	failures.last = msg
	failures.Unlock()
	b.Fatal(msg)
}

// TakeFailure returns and clears the last failure message ("" if none).
func TakeFailure() string {
	failures.Lock()
	defer failures.Unlock()
	m := failures.last
	failures.last = ""
	return m
}
