package sim

import (
	"strconv"
	"testing"
)

// A producer's keys come in blocks; each is still p<producer>-<seq>,
// across the blocks' edges.
func TestProducerKeysAcrossBlocks(t *testing.T) {
	p := &producer{prefix: "p3-", seq: 5}
	for range 3*keyBlock + 7 {
		want := "p3-" + strconv.FormatInt(p.seq, 10)
		if got := p.nextKey(); got != want {
			t.Fatalf("key of message %d: got %q, want %q", p.seq, got, want)
		}
		p.seq++
	}
}
