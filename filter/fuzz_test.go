package filter

// Native fuzz target for the parser: Parse must never panic, an error must
// be an *Error with an offset inside the expression, and an accepted
// expression's canonical String must parse back to the same String and
// the same results on a set of messages. Seeds are the test tables (f.Add)
// and testdata/fuzz/FuzzParse/.
//
//	go test ./filter -run '^$' -fuzz '^FuzzParse$' -fuzztime 60s

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"popsim/model"
)

var fuzzParsers = []Parser{{}, {Bugs: Bugs{TrailingInput: true, ZeroFloatLiteral: true}}}

// fuzzMessages give evaluation a mix of present, absent, numeric,
// non-numeric and boolean-looking properties.
var fuzzMessages = []*model.Message{
	msg(),
	msg("a", "3", "b", "x", "c", "true", "TAGS", "TagA", "value", "axb"),
	msg("a", "5.5", "b", "-0.0", "d", "NaN", "e", "2147483648", "KEYS", "k"),
	msg("a", "", "b", "10", "c", "9", "d", "Infinity", "key", "con", "TAGS", "''tag''"),
}

func FuzzParse(f *testing.F) {
	for _, c := range evalCases {
		f.Add(uint8(2), c.expr)
	}
	for _, c := range parseErrCases {
		if len(c.expr) < 200 {
			f.Add(uint8(2), c.expr)
		}
	}
	for _, c := range canonicalCases {
		f.Add(uint8(2), c.expr)
	}
	for _, c := range tagCases {
		f.Add(uint8(1), c.expr)
	}
	f.Fuzz(func(t *testing.T, kind uint8, expr string) {
		typ := []string{"", TypeTag, TypeSQL92, "sql92"}[kind%4]
		for _, p := range fuzzParsers {
			checkParse(t, p, typ, expr)
		}
	})
}

func checkParse(t *testing.T, p Parser, typ, expr string) {
	flt, err := p.Parse(typ, expr)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) || pe.Offset < -1 || pe.Offset > len(expr) || pe.Expression != expr {
			t.Fatalf("Parse(%q, %q): error %#v is not an *Error placed in the expression", typ, expr, err)
		}
		_ = err.Error()
		return
	}
	canon := flt.String()
	back, err := p.Parse(flt.Kind().String(), canon)
	if err != nil {
		t.Fatalf("Parse(%q, %q) = %q, which does not parse: %v", typ, expr, canon, err)
	}
	if back.String() != canon || back.Kind() != flt.Kind() {
		t.Fatalf("Parse(%q, %q) = %q, which parses to %v %q", typ, expr, canon, back.Kind(), back.String())
	}
	for _, m := range fuzzMessages {
		t1, e1 := flt.Evaluate(m)
		t2, e2 := back.Evaluate(m)
		if t1 != t2 || (e1 == nil) != (e2 == nil) {
			t.Fatalf("Parse(%q, %q) and its canonical %q disagree on %v: %v %v / %v %v", typ, expr, canon, m, t1, e1, t2, e2)
		}
		if flt.Match(m) != (t1 == True && e1 == nil) {
			t.Fatalf("Match and Evaluate disagree for %q on %v", canon, m)
		}
		_ = flt.MatchConsumeQueue(TagsCode(m.Tags))
		_ = flt.MatchTags(m.Tags)
	}
}

// TestRandomTokenStreams runs the fuzz checks on random sequences of the
// grammar's own tokens, which reach far more accepted expressions than
// random bytes do.
func TestRandomTokenStreams(t *testing.T) {
	vocab := []string{
		"a", "b", "c", "d", "TAGS", "(", ")", "(", ")", "NOT", "AND", "OR", "=", "<>", ">", ">=", "<", "<=",
		"IS", "NULL", "TRUE", "FALSE", "BETWEEN", "IN", "('x', 'TagA')", "('3')", ",", "CONTAINS", "STARTSWITH",
		"ENDSWITH", "'x'", "'3'", "'true'", "''", "3", "5.5", "0.0", "2147483648", "1e3", "-", "+", "--",
	}
	n := 100000
	if testing.Short() {
		n = 10000
	}
	rng := rand.New(rand.NewPCG(4, 17))
	parsed := 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := 1 + rng.IntN(9); k > 0; k-- {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteByte(" \n"[rng.IntN(8)/7])
		}
		expr := b.String()
		for _, p := range fuzzParsers {
			checkParse(t, p, TypeSQL92, expr)
		}
		if _, err := Parse(TypeSQL92, expr); err == nil {
			parsed++
		}
	}
	t.Logf("%d of %d random token streams parse", parsed, n)
	if parsed < n/50 {
		t.Fatalf("only %d of %d streams parse: the generator no longer reaches the grammar", parsed, n)
	}
}

// genExpr writes a random expression that follows the grammar's
// productions (operands of any kind, so the build-time checks still reject
// some), with random case, spacing, comments and parentheses.
func genExpr(rng *rand.Rand, b *strings.Builder, depth int) {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	sp := func() string { return pick(" ", " ", " ", "  ", "\t", "\n", " /*c*/ ", " -- c\n") }
	if depth <= 0 || rng.IntN(4) == 0 {
		b.WriteString(pick("a", "b", "c", "TAGS", "'x'", "'3'", "''", "3", "5.5", "0.0", "1e3", "2147483648", "5L", "TRUE", "FALSE", "NULL"))
		return
	}
	switch rng.IntN(9) {
	case 0, 1:
		genExpr(rng, b, depth-1)
		b.WriteString(sp() + pick("AND", "or", "Or") + sp())
		genExpr(rng, b, depth-1)
	case 2, 3:
		genExpr(rng, b, depth-1)
		b.WriteString(sp() + pick("=", "<>", ">", ">=", "<", "<=") + sp())
		genExpr(rng, b, depth-1)
	case 4:
		b.WriteString(pick("NOT", "not", "-", "+") + sp())
		genExpr(rng, b, depth-1)
	case 5:
		b.WriteString("(")
		genExpr(rng, b, depth-1)
		b.WriteString(")")
	case 6:
		genExpr(rng, b, depth-1)
		b.WriteString(sp() + pick("IS NULL", "IS NOT NULL", "CONTAINS 'x'", "NOT STARTSWITH ''", "ENDSWITH 'b'", "IN ('x', '3')", "NOT IN ('y')"))
	case 7:
		genExpr(rng, b, depth-1)
		b.WriteString(sp() + pick("BETWEEN", "NOT BETWEEN") + sp())
		genExpr(rng, b, 0)
		b.WriteString(" AND ")
		genExpr(rng, b, 0)
	default:
		b.WriteString(pick("a", "b", "c") + sp() + pick("=", ">", "<>") + sp() + pick("3", "'x'", "5.5", "-1", "TRUE"))
	}
}

func TestRandomExpressions(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 5000
	}
	rng := rand.New(rand.NewPCG(10862, 602))
	parsed := 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		genExpr(rng, &b, 1+rng.IntN(5))
		expr := b.String()
		for _, p := range fuzzParsers {
			checkParse(t, p, TypeSQL92, expr)
		}
		if _, err := Parse(TypeSQL92, expr); err == nil {
			parsed++
		}
	}
	t.Logf("%d of %d random expressions parse", parsed, n)
	if parsed < n/5 {
		t.Fatalf("only %d of %d expressions parse: the generator no longer reaches the grammar", parsed, n)
	}
}

func BenchmarkMatch(b *testing.B) {
	tag, _ := Parse(TypeTag, "TagA || TagB || TagC")
	sql, _ := Parse(TypeSQL92, "TAGS IN ('TagA', 'TagB') AND price BETWEEN 10 AND 20.5 AND region <> 'us'")
	m := msg("TAGS", "TagB", "price", "15", "region", "eu")
	code := TagsCode(m.Tags)
	b.Run("tag", func(b *testing.B) {
		for b.Loop() {
			if !tag.MatchConsumeQueue(code) || !tag.Match(m) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("sql92", func(b *testing.B) {
		for b.Loop() {
			if !sql.Match(m) {
				b.Fatal("no match")
			}
		}
	})
}
