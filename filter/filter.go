package filter

import (
	"fmt"
	"strings"

	"popsim/model"
)

// Expression types, as ExpressionType names them. A request that names
// none (Java's null, Go's "") means TAG.
const (
	TypeTag   = "TAG"
	TypeSQL92 = "SQL92"
)

// Kind is the language of a compiled filter.
type Kind uint8

// Kinds of filter.
const (
	Tag Kind = iota + 1
	SQL92
)

func (k Kind) String() string {
	switch k {
	case Tag:
		return TypeTag
	case SQL92:
		return TypeSQL92
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Bugs are switches that bring back known upstream defects of the filter
// language. Each is off by default, where popsim behaves as the fixed
// broker does.
type Bugs struct {
	// TrailingInput (apache/rocketmq#602, proposed in 2018 and closed
	// unmerged): the SQL92 grammar has no end-of-input token, so the
	// parser stops after the first complete condition and ignores the
	// rest: "a = 1 b = 2" subscribes to a = 1 (a token it peeks at must
	// still be lexically valid, and a dangling NOT or IS is still an
	// error). Fixed: anything after a complete condition is an error.
	TrailingInput bool
	// ZeroFloatLiteral (apache/rocketmq#10862): ConstantExpression.createFloat
	// rejects doubles below Double.MIN_VALUE, the smallest positive double,
	// so "a > 0.0" (and any literal that rounds to zero) does not parse.
	// Fixed: the lower bound is -Double.MAX_VALUE, so zero parses.
	ZeroFloatLiteral bool
}

// Parser compiles subscription expressions, with optional upstream bugs.
type Parser struct {
	Bugs Bugs
}

// Parse compiles a subscription with the fixed behaviour; see Parser.Parse.
func Parse(expressionType, expression string) (*Filter, error) {
	return Parser{}.Parse(expressionType, expression)
}

// ParsePop builds a pop request's filter with the fixed behaviour; see
// Parser.ParsePop.
func ParsePop(expressionType, expression string) (*Filter, error) {
	return Parser{}.ParsePop(expressionType, expression)
}

// Parse compiles a subscription as FilterAPI.build and the broker's
// compilation (ConsumerFilterManager.build) do. expressionType is "TAG"
// or "" (tags), or "SQL92"; the names are case-sensitive and any other is
// an error. A TAG expression is "*" or "" (everything) or tags separated
// by "||". A SQL92 expression must not be empty. Errors are *Error.
func (p Parser) Parse(expressionType, expression string) (*Filter, error) {
	switch expressionType {
	case "", TypeTag:
		return parseTag(expressionType, expression)
	case TypeSQL92:
		return p.parseSQL(expression)
	}
	return nil, &Error{Type: expressionType, Expression: expression, Offset: -1,
		Msg: fmt.Sprintf("expression type %q is not supported: want TAG (or empty, meaning TAG) or SQL92", expressionType)}
}

// ParsePop builds a pop request's filter as PopMessageProcessor does: an
// empty expression subscribes to everything whatever the type (the
// processor does not look at the type then); anything else is Parse. The
// broker answers a failure with SUBSCRIPTION_PARSE_FAILED (23) and
// ParseFailedRemark. Pops do not check enablePropertyFilter.
func (p Parser) ParsePop(expressionType, expression string) (*Filter, error) {
	if expression == "" {
		return All(), nil
	}
	return p.Parse(expressionType, expression)
}

func (p Parser) parseSQL(expression string) (*Filter, error) {
	fail := func(off int, msg string) error {
		return &Error{Type: TypeSQL92, Expression: expression, Offset: off, Msg: msg}
	}
	if expression == "" {
		return nil, fail(0, "a SQL92 expression cannot be empty")
	}
	ps := &parser{src: expression, lx: lexer{src: expression}, bugs: p.Bugs}
	root, err := ps.selector()
	if err != nil {
		return nil, fail(err.pos, err.msg)
	}
	return &Filter{kind: SQL92, root: root, src: expression}, nil
}

// Filter is a compiled subscription expression. It is immutable and safe
// to share. A nil *Filter subscribes to everything, like "*".
type Filter struct {
	kind Kind
	// TAG
	all   bool     // "*" or ""
	tags  []string // distinct tags in order of appearance
	codes []int32  // their String.hashCode values
	// SQL92
	root *node
	src  string
}

var all = &Filter{kind: Tag, all: true}

// All returns the TAG filter "*".
func All() *Filter { return all }

// Kind returns Tag or SQL92 (Tag for a nil filter).
func (f *Filter) Kind() Kind {
	if f == nil {
		return Tag
	}
	return f.kind
}

// MatchesAll reports whether f is the TAG subscription to everything ("*",
// "" or a nil filter). A SQL92 filter is never reported as one, whatever
// its expression.
func (f *Filter) MatchesAll() bool { return f == nil || f.all }

// Tags returns a TAG filter's distinct tags in order of appearance: empty
// for "*" and for a list with no tag in it (which matches nothing).
func (f *Filter) Tags() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.tags...)
}

// String is the canonical form: for TAG "*" or the tags joined by " || "
// (the spaces keep a tag that starts or ends with '|' apart from the
// separator); for SQL92 the condition with upper-case keywords, single
// spaces and the parentheses it needs. Parsing it with the same Kind gives
// an equal filter. Two TAG forms are unusual: " || " is a list with no tag
// (it matches nothing) and "* ||" is the literal tag "*" alone.
func (f *Filter) String() string {
	switch {
	case f.MatchesAll():
		return "*"
	case f.kind == SQL92:
		return render(f.root, 0)
	case len(f.tags) == 0:
		return " || "
	case len(f.tags) == 1 && f.tags[0] == "*":
		return "* ||"
	}
	return strings.Join(f.tags, " || ")
}

// TagsCode is the consume-queue tags code of a message's tag: its Java
// String.hashCode, and 0 for a message without a tag
// (MessageExtBrokerInner.tagsString2tagsCode).
func TagsCode(tags string) int64 {
	if tags == "" {
		return 0
	}
	return int64(javaHashCode(tags))
}

// MatchConsumeQueue is the broker's first stage
// (ExpressionMessageFilter.isMatchedByConsumeQueue): it sees only the
// consume-queue entry's tags code. A TAG filter passes "*" and any code
// equal to the hash code of one of its tags, so a message whose tag merely
// collides with a subscribed one (Java's "Aa" and "BB") passes, and so
// does an untagged message (code 0) for a tag that hashes to 0. A SQL92
// filter passes everything here (popsim keeps no bloom filter; upstream's
// is off by default and can only let more through).
func (f *Filter) MatchConsumeQueue(tagsCode int64) bool {
	if f.MatchesAll() || f.kind == SQL92 {
		return true
	}
	code := int32(tagsCode) // Long.intValue
	for _, c := range f.codes {
		if c == code {
			return true
		}
	}
	return false
}

// MatchCommitLog is the broker's second stage
// (ExpressionMessageFilter.isMatchedByCommitLog), run on the stored
// message's properties: TAG filters pass everything; a SQL92 filter passes
// a message for which its condition is TRUE (not FALSE, not NULL, and not
// an evaluation that throws). Long polling checks a new arrival with both
// stages too.
func (f *Filter) MatchCommitLog(m *model.Message) bool {
	if f.MatchesAll() || f.kind != SQL92 {
		return true
	}
	t, err := f.Evaluate(m)
	return err == nil && t == True
}

// MatchTags is the check of the proxy (PopMessageResultFilterImpl with
// FilterUtils.isTagMatched, whose NO_MATCH the proxy acks) and of the
// clients' processPopResult on what a pop returned: a TAG filter with
// tags wants one of them exactly, and a message without a tag ("") never
// matches it; "*" and every SQL92 filter pass everything.
func (f *Filter) MatchTags(tags string) bool {
	if f.MatchesAll() || f.kind == SQL92 {
		return true
	}
	if tags == "" {
		return false
	}
	for _, t := range f.tags {
		if t == tags {
			return true
		}
	}
	return false
}

// Match reports whether the subscription accepts m in the end: the broker's
// two stages and the proxy's tag check together. For TAG that is an exact
// comparison of tags; the broker alone (MatchConsumeQueue with
// TagsCode(m.Tags), then MatchCommitLog) can return more.
func (f *Filter) Match(m *model.Message) bool {
	if f.MatchesAll() {
		return true
	}
	if f.kind == SQL92 {
		return f.MatchCommitLog(m)
	}
	return f.MatchTags(m.Tags)
}

// Evaluate returns the three-valued result of the filter's condition for m,
// and an *EvalError where RocketMQ's evaluation throws (the broker then
// does not deliver m). A TAG filter gives True or False, as Match.
func (f *Filter) Evaluate(m *model.Message) (Truth, error) {
	if f.MatchesAll() || f.kind != SQL92 {
		if f.Match(m) {
			return True, nil
		}
		return False, nil
	}
	e := evaluator{m: m, src: f.src}
	v, err := e.eval(f.root)
	switch {
	case err != nil:
		return Null, err
	case v.k == vNull:
		return Null, nil
	case v.b:
		return True, nil
	}
	return False, nil
}

// Accepts reports whether the filter would accept a message with these tags
// ("" for none) and properties, as Match does for a stored message: the
// question a scenario's validation asks of each group's subscription. A
// property the model cannot hold (a malformed 1ST_POP_TIME, a TAGS entry,
// which the tags argument gives) is an error.
func (f *Filter) Accepts(tags string, props ...model.Property) (bool, error) {
	m := &model.Message{Tags: tags}
	for _, p := range props {
		if p.Key == model.PropertyTags {
			return false, fmt.Errorf("filter: property %s: give the message's tag as the tags argument", p.Key)
		}
		if err := m.SetProperty(p.Key, p.Value); err != nil {
			return false, err
		}
	}
	return f.Match(m), nil
}

// RealTopic is the topic a message was first sent to: its RETRY_TOPIC
// property when it has one (a retry or dead-letter copy), else its topic.
func RealTopic(m *model.Message) string {
	if t, ok := m.Property(model.PropertyRetryTopic); ok && t != "" {
		return t
	}
	return m.Topic
}

// MatchRetry is ExpressionForRetryMessageFilter's commit-log stage for a
// message read from a consumer group's shared retry topic %RETRY%<group>
// (pull and push consumers, with the broker's filterSupportRetry): the
// message is judged by the group's subscription of its real topic
// (RealTopic), which subscription returns (nil when the group has none).
// It passes unless that subscription is SQL92 and rejects it; tags are not
// checked again. POP does not need this: a pop reads its own retry topic
// %RETRY%<group>_<topic> with the request's filter, so a retry copy, which
// keeps the original's tags and properties, is judged as the original.
func MatchRetry(m *model.Message, subscription func(realTopic string) *Filter) bool {
	f := subscription(RealTopic(m))
	return f.Kind() != SQL92 || f.MatchCommitLog(m)
}

// parseTag is FilterAPI.buildSubscriptionData: "" and "*" (exactly)
// subscribe to everything; otherwise the expression is split at "||" as
// Java's String.split does (trailing empty pieces dropped; none left is an
// error) and each piece is trimmed as by String.trim, empty ones skipped.
// A list with no tag left ("   ", " || ") is accepted and matches nothing.
func parseTag(typ, exp string) (*Filter, error) {
	if exp == "" || exp == "*" {
		return all, nil
	}
	pieces := strings.Split(exp, "||")
	for len(pieces) > 0 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	if len(pieces) == 0 {
		return nil, &Error{Type: typ, Expression: exp, Offset: 0,
			Msg: `nothing but "||" separators: want "*" or tags like tag1 || tag2`}
	}
	f := &Filter{kind: Tag}
	for _, piece := range pieces {
		t := javaTrim(piece)
		if t == "" || contains(f.tags, t) {
			continue
		}
		f.tags = append(f.tags, t)
		if c := javaHashCode(t); !containsCode(f.codes, c) {
			f.codes = append(f.codes, c)
		}
	}
	return f, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsCode(list []int32, c int32) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}
