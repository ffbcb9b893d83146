package pop

import (
	"testing"

	pfilter "popsim/filter"

	"pgregory.net/rapid"
)

// TestSubscribesAllMatchesParsePop: where subscribesAll lets Pop skip
// pfilter.ParsePop, ParsePop would have answered the shared filter
// matching everything and no error (drawn among the shortcut's own
// expressions, their near misses and other types).
func TestSubscribesAllMatchesParsePop(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]string{"", pfilter.TypeTag, pfilter.TypeSQL92, "tag", "TAG ", "X"}).Draw(rt, "type")
		exp := rapid.OneOf(
			rapid.SampledFrom([]string{"", "*", " *", "* ", "**", "a", "a||b", "*||a", "a = 1", "||"}),
			rapid.StringOf(rapid.SampledFrom([]rune{'*', ' ', '|', 'a', '='})),
		).Draw(rt, "expression")
		f, err := pfilter.ParsePop(typ, exp)
		if subscribesAll(typ, exp) && (f != pfilter.All() || err != nil) {
			rt.Fatalf("subscribesAll(%q, %q), but ParsePop answers %+v, %v", typ, exp, f, err)
		}
	})
}
