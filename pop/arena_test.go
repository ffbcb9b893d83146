package pop

import (
	"bytes"
	"testing"
)

// Bodies carved from one block never share bytes, nor can an append to
// one reach the next; a body too large for its window moves out whole.
func TestArenaBodies(t *testing.T) {
	var a reviveArena
	var got [][]byte
	for i := range 300 {
		n := 40 + i%7
		b := a.body(n)
		fill := bytes.Repeat([]byte{byte('a' + i%26)}, 30+i%13)
		if i%50 == 49 {
			fill = append(fill, bytes.Repeat([]byte{'!'}, n)...) // outgrows its window
		}
		got = append(got, a.used(append(b, fill...)))
	}
	for i, b := range got {
		if cap(b) != len(b) {
			t.Fatalf("body %d: cap %d beyond its length %d", i, cap(b), len(b))
		}
		want := byte('a' + i%26)
		if b[0] != want || b[29] != want {
			t.Fatalf("body %d was overwritten: %q", i, b)
		}
	}
	p := a.propList(2)
	q := a.propList(2)
	if cap(p) != 2 || len(p) != 0 || &p[:1][0] == &q[:1][0] {
		t.Fatal("property lists share storage or have the wrong room")
	}
}
