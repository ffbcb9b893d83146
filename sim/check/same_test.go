package check

import (
	"strings"
	"testing"
)

// sameName and samePlace must answer as == does, whether or not the two
// strings share their bytes.
func TestSameNameIsEquality(t *testing.T) {
	base := "topic-a"
	copied := strings.Clone(base)
	names := []string{"", base, copied, base[:5], "topic-b", "topic-ab", strings.Clone(""), base[1:]}
	for _, a := range names {
		for _, b := range names {
			if got, want := sameName(a, b), a == b; got != want {
				t.Errorf("sameName(%q, %q) = %v, want %v", a, b, got, want)
			}
			for _, q := range []int32{0, 1} {
				for _, o := range []int64{0, 7} {
					p1, p2 := place{a, 0, 7}, place{b, q, o}
					if got, want := samePlace(p1, p2), p1 == p2; got != want {
						t.Errorf("samePlace(%v, %v) = %v, want %v", p1, p2, got, want)
					}
				}
			}
		}
	}
}

// namePair.equal must answer as == does, in any order of questions: the
// pair it remembers never makes two different names equal.
func TestNamePairIsEquality(t *testing.T) {
	base := "topic-a"
	names := []string{"", base, strings.Clone(base), base[:5], "topic-b", strings.Clone("topic-b"), strings.Clone(""), base[1:], "topic-a "[:7]}
	var p namePair
	for round := 0; round < 3; round++ {
		for i, a := range names {
			for j := range names {
				b := names[(i+j*round+j)%len(names)]
				if got, want := p.equal(a, b), a == b; got != want {
					t.Fatalf("round %d: equal(%q, %q) = %v, want %v (remembered %q, %q)", round, a, b, got, want, p.a, p.b)
				}
			}
		}
	}
}
