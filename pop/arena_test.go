package pop

import (
	"strings"
	"testing"
)

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
