package filter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"popsim/model"
)

type tagCase struct {
	expr  string
	tags  []string // Tags() after parsing
	all   bool
	canon string
	rule  string
}

var tagCases = []tagCase{
	{"", nil, true, "*", "FilterAPI.buildSubscriptionData: empty is SUB_ALL"},
	{"*", nil, true, "*", "FilterAPI.buildSubscriptionData: * is SUB_ALL"},
	{"TAG1 || Tag2 || tag3", []string{"TAG1", "Tag2", "tag3"}, false, "TAG1 || Tag2 || tag3", "FilterAPITest.testBuildSubscriptionData"},
	{"A || B", []string{"A", "B"}, false, "A || B", "FilterAPITest.testBuildTagSome"},
	{"a||b", []string{"a", "b"}, false, "a || b", "split at ||"},
	{"a||", []string{"a"}, false, "a", "String.split drops the trailing empty piece"},
	{"||a", []string{"a"}, false, "a", "empty pieces are skipped"},
	{"a || a", []string{"a"}, false, "a", "tagsSet is a set"},
	{"a|||b", []string{"a", "|b"}, false, "a || |b", "split takes the leftmost ||"},
	{"a| || b", []string{"a|", "b"}, false, "a| || b", "a tag may end with |"},
	{"\ta\t||\x01b ", []string{"a", "b"}, false, "a || b", "String.trim removes characters <= U+0020"},
	{"a\u00a0", []string{"a\u00a0"}, false, "a\u00a0", "String.trim keeps NO-BREAK SPACE"},
	{" * ", []string{"*"}, false, "* ||", "only exactly \"*\" is SUB_ALL; \" * \" is the tag *"},
	{"a || *", []string{"a", "*"}, false, "a || *", "* inside a list is a tag"},
	{"   ", nil, false, " || ", "a list with no tag: tagsSet and codeSet empty, matches nothing"},
	{"|| ||", nil, false, " || ", "likewise"},
}

func TestTagParse(t *testing.T) {
	for _, c := range tagCases {
		for _, typ := range []string{"", TypeTag} {
			f, err := Parse(typ, c.expr)
			if err != nil {
				t.Errorf("Parse(%q, %q): %v (%s)", typ, c.expr, err, c.rule)
				continue
			}
			if f.Kind() != Tag || f.MatchesAll() != c.all || !slices.Equal(f.Tags(), c.tags) || f.String() != c.canon {
				t.Errorf("Parse(%q, %q) = kind %v all %v tags %q %q, want all %v tags %q %q (%s)",
					typ, c.expr, f.Kind(), f.MatchesAll(), f.Tags(), f.String(), c.all, c.tags, c.canon, c.rule)
			}
			g, err := Parse(typ, f.String())
			if err != nil || g.String() != f.String() || g.MatchesAll() != f.MatchesAll() || !slices.Equal(g.Tags(), f.Tags()) {
				t.Errorf("canonical %q of %q does not parse back: %v %v", f.String(), c.expr, g, err)
			}
		}
	}
}

func TestTagMatch(t *testing.T) {
	aOrB, _ := Parse(TypeTag, "a || b")
	none, _ := Parse(TypeTag, "   ")
	star, _ := Parse(TypeTag, " * ")
	var nilFilter *Filter
	cases := []struct {
		f    *Filter
		tags string
		want bool
		rule string
	}{
		{aOrB, "a", true, "tagsSet contains the tag"},
		{aOrB, "b", true, "tagsSet contains the tag"},
		{aOrB, "c", false, "codeSet lacks its hash"},
		{aOrB, "A", false, "tags are case-sensitive"},
		{aOrB, "a ", false, "message tags are not trimmed"},
		{aOrB, "", false, "an untagged message matches only *"},
		{All(), "", true, "SUB_ALL"},
		{nilFilter, "x", true, "a nil filter is SUB_ALL"},
		{none, "a", false, "an empty tag list matches nothing"},
		{none, "", false, "an empty tag list matches nothing"},
		{star, "*", true, "the literal tag *"},
		{star, "a", false, "the literal tag * is not SUB_ALL"},
	}
	for _, c := range cases {
		m := &model.Message{Topic: "T", Tags: c.tags}
		if got := c.f.Match(m); got != c.want {
			t.Errorf("%v.Match(tags %q) = %v, want %v (%s)", c.f, c.tags, got, c.want, c.rule)
		}
		broker := c.f.MatchConsumeQueue(TagsCode(c.tags)) && c.f.MatchCommitLog(m)
		if got := broker && c.f.MatchTags(c.tags); got != c.want {
			t.Errorf("%v: the two broker stages and the proxy check give %v for %q, want %v", c.f, got, c.tags, c.want)
		}
		if tr, err := c.f.Evaluate(m); err != nil || (tr == True) != c.want {
			t.Errorf("%v.Evaluate(tags %q) = %v, %v", c.f, c.tags, tr, err)
		}
		if ok, err := c.f.Accepts(c.tags); err != nil || ok != c.want {
			t.Errorf("%v.Accepts(%q) = %v, %v", c.f, c.tags, ok, err)
		}
	}
}

// TestTagHashCollision: the broker compares only String.hashCode values
// (ExpressionMessageFilter.isMatchedByConsumeQueue), so it returns a
// message whose tag collides with a subscribed one; the proxy's exact
// check (PopMessageResultFilterImpl) then answers NO_MATCH.
func TestTagHashCollision(t *testing.T) {
	if TagsCode("Aa") != TagsCode("BB") || TagsCode("Aa") != 2112 {
		t.Fatalf("TagsCode(Aa) = %d, TagsCode(BB) = %d: Java gives 2112 for both", TagsCode("Aa"), TagsCode("BB"))
	}
	f, _ := Parse(TypeTag, "Aa")
	m := &model.Message{Topic: "T", Tags: "BB"}
	if !f.MatchConsumeQueue(TagsCode(m.Tags)) || !f.MatchCommitLog(m) {
		t.Error("the broker's stages must let the colliding tag BB through")
	}
	if f.MatchTags(m.Tags) || f.Match(m) {
		t.Error("the exact check must reject BB for Aa")
	}
	// "f5a5a608" hashes to 0, the tags code of an untagged message.
	zero, _ := Parse(TypeTag, "f5a5a608")
	if TagsCode("f5a5a608") != 0 || !zero.MatchConsumeQueue(TagsCode("")) || zero.Match(&model.Message{Topic: "T"}) {
		t.Error("an untagged message (code 0) passes the broker for a tag hashing to 0, and fails the exact check")
	}
}

func TestTagsCode(t *testing.T) {
	// Values of Java's String.hashCode.
	for s, want := range map[string]int64{
		"": 0, "a": 97, "TagA": 2598919, "hello": 99162322,
		"polygenelubricants": -2147483648, // Integer.MIN_VALUE
		"é":                  233,
		"😀":                  1772899, // surrogate pair D83D DE00: 31*0xD83D + 0xDE00
	} {
		if got := TagsCode(s); got != want {
			t.Errorf("TagsCode(%q) = %d, want %d", s, got, want)
		}
	}
}

// refFilter is pop/store.go's TAG filter as it was before this package,
// copied here as the reference the engine's switch must be judged against.
type refFilter []string

func refBuildFilter(expType, exp string) (refFilter, error) {
	if expType != "" && expType != "TAG" {
		return nil, fmt.Errorf("expression type %q is not supported: want TAG", expType)
	}
	exp = strings.TrimSpace(exp)
	if exp == "" || exp == "*" {
		return nil, nil
	}
	var f refFilter
	for _, t := range strings.Split(exp, "||") {
		if t = strings.TrimSpace(t); t != "" {
			f = append(f, t)
		}
	}
	if len(f) == 0 {
		return nil, fmt.Errorf("expression %q has no tag: want * or tag1 || tag2", exp)
	}
	return f, nil
}

func (f refFilter) match(tags string) bool {
	if f == nil {
		return true
	}
	for _, t := range f {
		if t == tags {
			return true
		}
	}
	return false
}

// upstreamDiffers reports whether RocketMQ builds exp differently from the
// old pop filter, and how: the old filter trimmed the whole expression
// first, so a padded "*" or a blank expression meant everything, and a list
// with no tag was an error; RocketMQ compares the untrimmed expression with
// "*", and accepts a list with no tag, which then matches nothing. ("||"
// and "||||" stay errors in both.) The alphabet of the test keeps Java's
// trim and Go's TrimSpace equal; TestTrimDifferences covers the rest.
func upstreamDiffers(exp string) (all, nothing bool) {
	trimmed := strings.TrimSpace(exp)
	if trimmed == "" || trimmed == "*" {
		return exp != "" && exp != "*" && trimmed == "*", exp != "" && trimmed == ""
	}
	for _, t := range strings.Split(trimmed, "||") {
		if strings.TrimSpace(t) != "" {
			return false, false
		}
	}
	return false, strings.Trim(exp, "|") != ""
}

// TestTagDifferential compares Parse and Match with the old pop filter on
// random expressions and tags.
func TestTagDifferential(t *testing.T) {
	pieces := []string{"a", "b", "Aa", "BB", "*", " ", "\t", "|", "||", "x y", "a b"}
	tags := []string{"", "a", "b", "Aa", "BB", "*", "x y", "|", "a b", "c"}
	rng := rand.New(rand.NewPCG(17, 2026))
	counts := map[string]int{}
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		exp := b.String()
		typ := []string{"", "TAG"}[rng.IntN(2)]
		ref, refErr := refBuildFilter(typ, exp)
		got, err := Parse(typ, exp)
		star, nothing := upstreamDiffers(exp)
		switch {
		case star:
			counts["padded *: upstream's literal tag *"]++
			if err != nil || !slices.Equal(got.Tags(), []string{"*"}) {
				t.Fatalf("Parse(%q) = %v, %v: want the tag * alone", exp, got, err)
			}
		case nothing:
			counts["no tag: upstream matches nothing"]++
			if err != nil || got.MatchesAll() || len(got.Tags()) != 0 {
				t.Fatalf("Parse(%q) = %v, %v: want a filter with no tag", exp, got, err)
			}
		case refErr != nil || err != nil:
			counts["both errors"]++
			if (refErr == nil) != (err == nil) {
				t.Fatalf("Parse(%q): error %v, reference error %v", exp, err, refErr)
			}
		default:
			counts["same"]++
			for _, tg := range tags {
				m := &model.Message{Topic: "T", Tags: tg}
				if got.Match(m) != ref.match(tg) || got.MatchTags(tg) != ref.match(tg) {
					t.Fatalf("Parse(%q) on tags %q: Match %v, reference %v", exp, tg, got.Match(m), ref.match(tg))
				}
			}
		}
	}
	t.Logf("%v", counts)
	if counts["same"] < 30000 || counts["both errors"] == 0 || counts["padded *: upstream's literal tag *"] == 0 || counts["no tag: upstream matches nothing"] == 0 {
		t.Fatalf("the generator missed a class: %v", counts)
	}
}

// TestTrimDifferences: Java's String.trim removes characters <= U+0020 and
// nothing else; the old filter's strings.TrimSpace removed Unicode white
// space and kept ASCII control characters.
func TestTrimDifferences(t *testing.T) {
	for _, c := range []struct {
		exp     string
		tag     string // the one tag upstream sees
		oldTags string // what the old filter saw, for the record
	}{
		{"a\u00a0", "a\u00a0", "a"},
		{"\u2003a", "\u2003a", "a"},
		{"a\x01", "a", "a\x01"},
		{"\x1fa\x7f", "a\x7f", "\x1fa\x7f"},
	} {
		f, err := Parse(TypeTag, c.exp)
		if err != nil || !slices.Equal(f.Tags(), []string{c.tag}) {
			t.Errorf("Parse(%q) = %q, %v; want the tag %q", c.exp, f.Tags(), err, c.tag)
		}
		ref, _ := refBuildFilter(TypeTag, c.exp)
		if !slices.Equal([]string(ref), []string{c.oldTags}) {
			t.Errorf("reference %q = %q, want %q", c.exp, ref, c.oldTags)
		}
	}
}

func TestParsePop(t *testing.T) {
	for _, typ := range []string{"", "TAG", "SQL92", "FOO"} {
		f, err := ParsePop(typ, "")
		if err != nil || !f.MatchesAll() {
			t.Errorf("ParsePop(%q, \"\") = %v, %v: want everything (PopMessageProcessor ignores the type of an empty expression)", typ, f, err)
		}
	}
	if _, err := Parse(TypeSQL92, ""); err == nil {
		t.Error("Parse(SQL92, \"\") must fail as FilterAPI.build does")
	}
	if _, err := ParsePop("FOO", "a"); err == nil {
		t.Error("ParsePop(FOO, a) must fail")
	}
	f, err := ParsePop(TypeSQL92, "a = 1")
	if err != nil || f.Kind() != SQL92 {
		t.Errorf("ParsePop(SQL92, a = 1) = %v, %v", f, err)
	}
}

func TestRetry(t *testing.T) {
	sql, _ := Parse(TypeSQL92, "region = 'eu'")
	tag, _ := Parse(TypeTag, "a")
	subs := map[string]*Filter{"orders": sql, "audit": tag}
	lookup := func(topic string) *Filter { return subs[topic] }
	retry := func(real, region string) *model.Message {
		m := msg("RETRY_TOPIC", real, "region", region)
		m.Topic = model.RetryGroupTopicPrefix + "g"
		return m
	}
	for _, c := range []struct {
		m    *model.Message
		want bool
		rule string
	}{
		{retry("orders", "eu"), true, "judged by the SQL92 subscription of its real topic"},
		{retry("orders", "us"), false, "rejected by it"},
		{retry("audit", "us"), true, "a TAG subscription has no filter data: passes"},
		{retry("other", "us"), true, "no subscription: passes"},
		{msg("region", "us"), true, "no RETRY_TOPIC: its topic T has no subscription"},
	} {
		if got := MatchRetry(c.m, lookup); got != c.want {
			t.Errorf("MatchRetry(%v) = %v, want %v (%s)", c.m, got, c.want, c.rule)
		}
	}
	if got := RealTopic(retry("orders", "eu")); got != "orders" {
		t.Errorf("RealTopic = %q", got)
	}
}

func TestAccepts(t *testing.T) {
	f, _ := Parse(TypeSQL92, "TAGS = 'a' AND KEYS = 'k' AND price > 10")
	if ok, err := f.Accepts("a", model.Property{Key: "KEYS", Value: "k"}, model.Property{Key: "price", Value: "11"}); err != nil || !ok {
		t.Errorf("Accepts = %v, %v: want true", ok, err)
	}
	if ok, err := f.Accepts("b", model.Property{Key: "price", Value: "11"}); err != nil || ok {
		t.Errorf("Accepts = %v, %v: want false", ok, err)
	}
	if _, err := f.Accepts("a", model.Property{Key: "TAGS", Value: "a"}); err == nil {
		t.Error("a TAGS property must be refused: the tag is an argument")
	}
	if _, err := f.Accepts("a", model.Property{Key: model.PropertyFirstPopTime, Value: "x"}); err == nil {
		t.Error("a malformed 1ST_POP_TIME must be refused")
	}
}

func TestRemarks(t *testing.T) {
	if got := PropertyFilterDisabledRemark(TypeSQL92); got != "The broker does not support consumer to filter message by SQL92" {
		t.Errorf("remark %q", got)
	}
	if ParseFailedRemark != "parse the consumer's subscription failed" {
		t.Errorf("remark %q", ParseFailedRemark)
	}
}
