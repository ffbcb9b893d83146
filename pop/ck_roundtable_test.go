package pop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoundTableMatchesMap runs random rounds of puts, removes and gets
// against a Go map: keys that share a hash, and so a tag (the hash
// function is replaced by a few buckets' worth of values), must stay
// apart, entries must survive growth and the removal of those before
// them, and a reset must empty the table, also when its round stamp
// wraps.
func TestRoundTableMatchesMap(t *testing.T) {
	for _, hashes := range []int{1, 3, 1 << 30} {
		for _, startGen := range []uint32{0, math.MaxUint32 - 3} {
			t.Run(fmt.Sprintf("hashes=%d/gen=%d", hashes, startGen), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(hashes), uint64(startGen)))
				hash := func(k string) uint64 {
					if hashes == 1<<30 {
						return mkHash(k)
					}
					return mkHash(k) % uint64(hashes)
				}
				var tb roundTable
				tb.gen = startGen
				for round := 0; round < 12; round++ {
					if round > 0 || startGen != 0 {
						tb.reset()
					}
					want := map[string]*roundCk{}
					n := r.IntN(300)
					for op := 0; op < 3*n; op++ {
						k := fmt.Sprintf("topic%dgroup%d%d", r.IntN(n+1), round%2, r.IntN(3))
						h := hash(k)
						switch r.IntN(5) {
						case 0: // a carried round's removal
							tb.remove(k, h)
							delete(want, k)
							continue
						case 1, 2:
							rc := &roundCk{key: k, hash: h}
							if old := tb.put(rc); old != want[k] {
								t.Fatalf("round %d: put %q replaced %p, want %p", round, k, old, want[k])
							}
							want[k] = rc
						default:
							if got := tb.get(k, h); got != want[k] {
								t.Fatalf("round %d: get %q = %p, want %p", round, k, got, want[k])
							}
						}
					}
					seen := 0
					tb.each(func(rc *roundCk) { seen++ })
					if seen != len(want) || tb.n != len(want) {
						t.Fatalf("round %d: table holds %d (n %d), map %d", round, seen, tb.n, len(want))
					}
					for k, rc := range want {
						if got := tb.get(k, hash(k)); got != rc {
							t.Fatalf("round %d: after the ops, get %q = %p, want %p", round, k, got, rc)
						}
					}
				}
			})
		}
	}
}

// TestMkHashSpreads: distinct merge keys of one group and topic, as a
// round sees them (offsets and pop times one apart), hash apart.
func TestMkHashSpreads(t *testing.T) {
	seen := map[uint64]string{}
	for off := 0; off < 2000; off++ {
		for pt := 0; pt < 5; pt++ {
			k := fmt.Sprintf("TopicTest%%RETRY%%GIDCID%d%d%dbroker-a", off%8, 1000+off, 1704067200000+int64(pt))
			h := mkHash(k)
			if o, ok := seen[h]; ok {
				t.Fatalf("mkHash(%q) = mkHash(%q)", k, o)
			}
			seen[h] = k
		}
	}
}

// warmBatch reads a batch's typed forms without changing the round: nil
// forms (not decoded yet) and forms without a merge key are skipped, a
// CK's and an ack's are read, over an empty table and a filled one.
func TestWarmBatchReadsOnly(t *testing.T) {
	key := mkKey{key: "k", hash: mkHash("k")}
	ck := &ckBody{}
	ck.part, ck.mk, ck.own.first, ck.ck.PopTime = ckPart, &key, 7, 11
	ack := &ackBody{}
	ack.part, ack.mk = ackPart, &key
	bare := &reviveBody{}
	w := revWindow{d: []*reviveBody{nil, &ck.reviveBody, bare, &ack.reviveBody, nil}, lo: 1, base: 3}
	var s reviveService
	s.warmBatch(&w, 3, 4) // an empty table
	if s.warmed != 18 || s.cks.n != 0 {
		t.Fatalf("read %d over an empty table, want 18; table holds %d", s.warmed, s.cks.n)
	}
	s.cks.put(&roundCk{key: key.key, hash: key.hash})
	s.warmed = 0
	s.warmBatch(&w, 3, 4)
	tag := uint64(uint32(key.hash))
	if s.warmed != 18+2*tag || s.cks.n != 1 || s.cks.get(key.key, key.hash) == nil {
		t.Fatalf("read %d, want %d; the table changed", s.warmed, 18+2*tag)
	}
}
