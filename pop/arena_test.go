package pop

import (
	"bytes"
	"strings"
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

// Strings carved from the arena's blocks keep their bytes while later
// ones are written after them and across new blocks; one too large for
// a block is made on its own.
func TestArenaStrings(t *testing.T) {
	var a strArena
	var got, want []string
	buf := make([]byte, 0, arenaStrs)
	for i := range 2000 {
		n := 1 + i%97
		if i%500 == 499 {
			n = arenaStrs/8 + 1
		}
		buf = append(buf[:0], strings.Repeat(string(rune('a'+i%26)), n)...)
		buf[0] = byte('0' + i%10)
		got = append(got, a.str(buf))
		want = append(want, string(buf))
		buf[len(buf)-1] = '!' // the caller's bytes are not the string's
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d changed: %q, made as %q", i, got[i], want[i])
		}
	}
	if s := a.str(nil); s != "" {
		t.Fatalf("empty string made as %q", s)
	}
}
