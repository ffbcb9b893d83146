package filter

import (
	"fmt"
	"math"
	"strconv"
)

// op is a node of a compiled SQL92 expression. The node kinds follow
// RocketMQ's expression classes where a parse check or an evaluation rule
// depends on the class: a constant is not a property, a boolean constant
// is both a constant and a boolean expression, a negation is neither.
type op uint8

const (
	oProp      op = iota + 1 // PropertyExpression
	oConst                   // ConstantExpression: string, int, long, double
	oBoolConst               // BooleanConstantExpression: TRUE, FALSE, NULL
	oNeg                     // UnaryExpression NEGATE
	oCast                    // UnaryExpression BOOLEANCAST (a property used as a condition)
	oNot                     // UnaryExpression NOT
	oAnd                     // LogicExpression AND
	oOr                      // LogicExpression OR
	oEq                      // ComparisonExpression equal
	oNe                      // NOT(equal)
	oIsNull                  // equal(x, NULL)
	oIsNotNull               // NOT(equal(x, NULL))
	oGt
	oGe
	oLt
	oLe
	oBetween    // AND(x >= lo, x <= hi)
	oNotBetween // OR(x < lo, x > hi)
	oIn         // UnaryInExpression
	oNotIn
	oContains
	oNotContains
	oStartsWith
	oNotStartsWith
	oEndsWith
	oNotEndsWith
)

type node struct {
	op      op
	pos     int // byte offset where the node's text starts
	at      int // byte offset of its operator (= pos for leaves and prefix operators)
	a, b, c *node
	val     value    // oConst, oBoolConst
	name    string   // oProp
	list    []string // oIn, oNotIn
	search  string   // oContains and its kin
}

// isBoolean reports whether RocketMQ's class for n is a BooleanExpression.
func (n *node) isBoolean() bool {
	switch n.op {
	case oProp, oConst, oNeg:
		return false
	}
	return true
}

// isConstant reports whether n is a ConstantExpression.
func (n *node) isConstant() bool { return n.op == oConst || n.op == oBoolConst }

// maxDepth bounds the nesting of parentheses and unary operators. RocketMQ
// has no limit but the JVM's stack; popsim's keeps a hostile expression
// from exhausting the Go stack.
const maxDepth = 1000

// parser is a recursive-descent parser shaped like the JavaCC parser
// RocketMQ generates from SelectorParser.jj: the same productions, the
// same one- and two-token look-ahead, and the same checks when a node is
// built, so the same expressions are accepted and rejected.
type parser struct {
	src   string
	lx    lexer
	la    [2]token
	nla   int
	depth int
	bugs  Bugs
}

// perr is a parse error at a byte offset.
type perr struct {
	pos int
	msg string
}

func errAt(pos int, format string, args ...any) *perr {
	return &perr{pos, fmt.Sprintf(format, args...)}
}

func (p *parser) peek(k int) (token, *perr) {
	for p.nla <= k {
		t, err := p.lx.next()
		if err != nil {
			return token{}, &perr{err.pos, err.msg}
		}
		p.la[p.nla] = t
		p.nla++
	}
	return p.la[k], nil
}

func (p *parser) advance() token {
	t := p.la[0]
	p.la[0] = p.la[1]
	p.nla--
	return t
}

// expect consumes a token of kind t.
func (p *parser) expect(t tok, context string) (token, *perr) {
	got, err := p.peek(0)
	if err != nil {
		return token{}, err
	}
	if got.t != t {
		return token{}, errAt(got.pos, "%s: want %s, found %s", context, tokNames[t], p.describe(got))
	}
	return p.advance(), nil
}

func (p *parser) describe(t token) string {
	switch t.t {
	case tEOF:
		return "the end of the expression"
	case tID, tDecimal, tFloat, tString:
		return fmt.Sprintf("%s %s", tokNames[t.t], p.src[t.pos:t.end])
	}
	return tokNames[t.t]
}

func (p *parser) image(t token) string { return p.src[t.pos:t.end] }

// selector is JmsSelector: an orExpression that must be a condition. With
// the fixed behaviour it must also be the whole input; RocketMQ's grammar
// has no end-of-input token and ignores what follows (Bugs.TrailingInput).
func (p *parser) selector() (*node, *perr) {
	n, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if n, err = asBoolean(n); err != nil {
		return nil, err
	}
	if p.bugs.TrailingInput {
		return n, nil
	}
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	if t.t != tEOF {
		return nil, errAt(t.pos, "unexpected %s after a complete expression: want AND, OR or the end (a missing AND?)", p.describe(t))
	}
	return n, nil
}

func (p *parser) orExpr() (*node, *perr) {
	left, err := p.andExpr()
	for err == nil {
		var t token
		if t, err = p.peek(0); err != nil || t.t != tOR {
			break
		}
		p.advance()
		var right *node
		if right, err = p.andExpr(); err == nil {
			left, err = logic(oOr, t.pos, left, right)
		}
	}
	return left, err
}

func (p *parser) andExpr() (*node, *perr) {
	left, err := p.equality()
	for err == nil {
		var t token
		if t, err = p.peek(0); err != nil || t.t != tAND {
			break
		}
		p.advance()
		var right *node
		if right, err = p.equality(); err == nil {
			left, err = logic(oAnd, t.pos, left, right)
		}
	}
	return left, err
}

func logic(o op, pos int, left, right *node) (*node, *perr) {
	l, err := asBoolean(left)
	if err != nil {
		return nil, err
	}
	r, err := asBoolean(right)
	if err != nil {
		return nil, err
	}
	return &node{op: o, pos: l.pos, at: pos, a: l, b: r}, nil
}

// asBoolean is asBooleanExpression: a condition stays, a property becomes
// a boolean cast, anything else (a number, a string, a negation) is an
// error.
func asBoolean(n *node) (*node, *perr) {
	if n.isBoolean() {
		return n, nil
	}
	if n.op == oProp {
		return &node{op: oCast, pos: n.pos, at: n.pos, a: n}, nil
	}
	return nil, errAt(n.pos, "%s is not a condition: want a comparison, TRUE, FALSE or a property", render(n, 0))
}

func (p *parser) equality() (*node, *perr) {
	left, err := p.comparison()
	for err == nil {
		var t token
		if t, err = p.peek(0); err != nil {
			break
		}
		switch t.t {
		case tEq, tNe:
			p.advance()
			var right *node
			if right, err = p.comparison(); err == nil {
				left, err = equal(t, left, right)
			}
		case tIS:
			left, err = p.isNull(left)
		default:
			return left, nil
		}
	}
	return left, err
}

// isNull parses IS NULL / IS NOT NULL after left.
func (p *parser) isNull(left *node) (*node, *perr) {
	t1, err := p.peek(1)
	if err != nil {
		return nil, err
	}
	is := p.advance()
	if t1.t == tNULL {
		p.advance()
		return &node{op: oIsNull, pos: left.pos, at: is.pos, a: left}, nil
	}
	if _, err := p.expect(tNOT, "after IS"); err != nil {
		err.msg += " (IS NULL or IS NOT NULL)"
		return nil, err
	}
	if _, err := p.expect(tNULL, "after IS NOT"); err != nil {
		return nil, err
	}
	return &node{op: oIsNotNull, pos: left.pos, at: is.pos, a: left}, nil
}

// equal builds = and <> with ComparisonExpression.createEqual's checks.
func equal(t token, left, right *node) (*node, *perr) {
	for _, n := range []*node{left, right} {
		if n.op == oBoolConst && n.val.k == vNull {
			return nil, errAt(n.pos, "NULL cannot be compared with %s: use IS NULL or IS NOT NULL", tokNames[t.t])
		}
	}
	if left.isConstant() && right.isConstant() && left.op == oBoolConst && right.op != oBoolConst {
		return nil, errAt(left.pos, "%s cannot be compared with %s", render(left, 0), render(right, 0))
	}
	o := oEq
	if t.t == tNe {
		o = oNe
	}
	return &node{op: o, pos: left.pos, at: t.pos, a: left, b: right}, nil
}

func (p *parser) comparison() (*node, *perr) {
	left, err := p.unary()
	for err == nil {
		var t token
		if t, err = p.peek(0); err != nil {
			break
		}
		switch t.t {
		case tGt, tGe, tLt, tLe:
			p.advance()
			var right *node
			if right, err = p.unary(); err == nil {
				left, err = ordering(cmpOps[t.t], t.pos, left, right)
			}
		case tCONTAINS, tSTARTSWITH, tENDSWITH, tBETWEEN, tIN:
			left, err = p.keywordOp(left, false)
		case tNOT:
			left, err = p.notOp(left)
		default:
			return left, nil
		}
	}
	return left, err
}

var cmpOps = map[tok]op{tGt: oGt, tGe: oGe, tLt: oLt, tLe: oLe}

// notOp parses NOT CONTAINS / STARTSWITH / ENDSWITH / BETWEEN / IN after
// left; a NOT followed by anything else is an error there, as in
// RocketMQ's grammar.
func (p *parser) notOp(left *node) (*node, *perr) {
	t1, err := p.peek(1)
	if err != nil {
		return nil, err
	}
	switch t1.t {
	case tCONTAINS, tSTARTSWITH, tENDSWITH, tBETWEEN, tIN:
		not := p.advance()
		n, err := p.keywordOp(left, true)
		if n != nil {
			n.at = not.pos
		}
		return n, err
	}
	return nil, errAt(t1.pos, "after NOT here: want CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN, found %s", p.describe(t1))
}

var keywordOps = map[tok][2]op{
	tCONTAINS:   {oContains, oNotContains},
	tSTARTSWITH: {oStartsWith, oNotStartsWith},
	tENDSWITH:   {oEndsWith, oNotEndsWith},
	tBETWEEN:    {oBetween, oNotBetween},
	tIN:         {oIn, oNotIn},
}

// keywordOp parses [NOT] CONTAINS/STARTSWITH/ENDSWITH 'lit', BETWEEN lo AND
// hi, IN ('a', ...) after left; the keyword is the next token.
func (p *parser) keywordOp(left *node, not bool) (*node, *perr) {
	kw := p.advance()
	o := keywordOps[kw.t][0]
	if not {
		o = keywordOps[kw.t][1]
	}
	switch kw.t {
	case tBETWEEN:
		return p.between(o, kw, left)
	case tIN:
		return p.in(o, kw, left)
	}
	s, err := p.stringLit("after " + tokNames[kw.t])
	if err != nil {
		return nil, err
	}
	return &node{op: o, pos: left.pos, at: kw.pos, a: left, search: s}, nil
}

func (p *parser) stringLit(context string) (string, *perr) {
	t, err := p.expect(tString, context)
	if err != nil {
		return "", err
	}
	return unquote(p.image(t)), nil
}

func (p *parser) between(o op, kw token, left *node) (*node, *perr) {
	lo, err := p.unary()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tAND, "in BETWEEN low AND high"); err != nil {
		return nil, err
	}
	hi, err := p.unary()
	if err != nil {
		return nil, err
	}
	if o == oBetween && lo.isConstant() && hi.isConstant() {
		if err := checkBetweenBounds(lo, hi); err != nil {
			return nil, err
		}
	}
	lower, upper := oGe, oLe
	if o == oNotBetween {
		lower, upper = oLt, oGt
	}
	if _, err := ordering(lower, kw.pos, left, lo); err != nil {
		return nil, err
	}
	if _, err := ordering(upper, kw.pos, left, hi); err != nil {
		return nil, err
	}
	return &node{op: o, pos: left.pos, at: kw.pos, a: left, b: lo, c: hi}, nil
}

// checkBetweenBounds is createBetween's check of two constant bounds: not
// NULL, and low <= high as its comparison rules see it.
func checkBetweenBounds(lo, hi *node) *perr {
	if lo.val.k == vNull || hi.val.k == vNull {
		return errAt(lo.pos, "BETWEEN bounds cannot be NULL")
	}
	c, err := compare(hi.val, lo.val)
	if err != nil {
		return errAt(lo.pos, "BETWEEN bounds %s and %s cannot be compared: %s", render(lo, 0), render(hi, 0), err)
	}
	if c < 0 {
		return errAt(lo.pos, "BETWEEN %s AND %s: the low bound must not be greater than the high bound", render(lo, 0), render(hi, 0))
	}
	return nil
}

func (p *parser) in(o op, kw token, left *node) (*node, *perr) {
	if _, err := p.expect(tLParen, "after IN"); err != nil {
		return nil, err
	}
	var list []string
	for {
		s, err := p.stringLit("in an IN list (IN takes string literals only)")
		if err != nil {
			return nil, err
		}
		list = append(list, s)
		t, err := p.peek(0)
		if err != nil {
			return nil, err
		}
		if t.t != tComma {
			break
		}
		p.advance()
	}
	if _, err := p.expect(tRParen, "to close the IN list"); err != nil {
		return nil, err
	}
	if left.op != oProp {
		return nil, errAt(left.pos, "IN needs a property on its left, found %s", render(left, 0))
	}
	return &node{op: o, pos: left.pos, at: kw.pos, a: left, list: list}, nil
}

// ordering builds >, >=, <, <= with checkLessThanOperand: each side must be
// a number literal, a property or a negation; a string, TRUE, FALSE, NULL
// or a condition is an error.
func ordering(o op, pos int, left, right *node) (*node, *perr) {
	for _, n := range []*node{left, right} {
		switch {
		case n.isConstant() && !n.val.isNumber():
			return nil, errAt(n.pos, "%s cannot be compared with >, >=, <, <= or BETWEEN: want a number or a property", render(n, 0))
		case !n.isConstant() && n.isBoolean():
			return nil, errAt(n.pos, "the condition %s cannot be compared with >, >=, <, <= or BETWEEN: want a number or a property", render(n, 0))
		}
	}
	return &node{op: o, pos: left.pos, at: pos, a: left, b: right}, nil
}

func (p *parser) enter(pos int) *perr {
	p.depth++
	if p.depth > maxDepth {
		return errAt(pos, "the expression nests deeper than %d levels (popsim's limit)", maxDepth)
	}
	return nil
}

func (p *parser) unary() (*node, *perr) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	switch t.t {
	case tPlus:
		p.advance()
		return p.unary()
	case tMinus:
		p.advance()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: oNeg, pos: t.pos, at: t.pos, a: x}, nil
	case tNOT:
		p.advance()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x, err = asBoolean(x); err != nil {
			return nil, err
		}
		return &node{op: oNot, pos: t.pos, at: t.pos, a: x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*node, *perr) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	switch t.t {
	case tID:
		p.advance()
		return &node{op: oProp, pos: t.pos, name: p.image(t)}, nil
	case tLParen:
		p.advance()
		n, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen, "to close '('"); err != nil {
			return nil, err
		}
		return n, nil
	case tString:
		p.advance()
		return &node{op: oConst, pos: t.pos, val: str(unquote(p.image(t)))}, nil
	case tTRUE, tFALSE, tNULL:
		p.advance()
		v := value{}
		if t.t != tNULL {
			v = boolean(t.t == tTRUE)
		}
		return &node{op: oBoolConst, pos: t.pos, val: v}, nil
	case tDecimal:
		p.advance()
		return decimal(t.pos, p.image(t))
	case tFloat:
		p.advance()
		return p.float(t.pos, p.image(t))
	}
	return nil, errAt(t.pos, "want a property, a literal, '(', NOT, '+' or '-', found %s", p.describe(t))
}

// decimal is ConstantExpression.createFromDecimal: an int when it fits in
// 32 bits, else a long; beyond a long it is an error.
func decimal(pos int, img string) (*node, *perr) {
	digits := img
	if c := img[len(img)-1]; c == 'l' || c == 'L' {
		digits = img[:len(img)-1]
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return nil, errAt(pos, "integer %s is out of range: want at most %d", img, int64(math.MaxInt64))
	}
	if v <= math.MaxInt32 {
		return &node{op: oConst, pos: pos, val: value{k: vInt, i: v}}, nil
	}
	return &node{op: oConst, pos: pos, val: value{k: vLong, i: v}}, nil
}

// float is ConstantExpression.createFloat: a double, which must not
// overflow. Upstream also rejects values below Double.MIN_VALUE, i.e. zero
// (Bugs.ZeroFloatLiteral); the fixed bound is -Double.MAX_VALUE.
func (p *parser) float(pos int, img string) (*node, *perr) {
	v, err := strconv.ParseFloat(img, 64)
	if err != nil && !isRange(err) {
		return nil, errAt(pos, "%s is not a decimal number", img)
	}
	if v > math.MaxFloat64 {
		return nil, errAt(pos, "%s is greater than the largest double %g", img, math.MaxFloat64)
	}
	if p.bugs.ZeroFloatLiteral && v < math.SmallestNonzeroFloat64 {
		return nil, errAt(pos, "%s is less than Double.MIN_VALUE %g (apache/rocketmq#10862)", img, math.SmallestNonzeroFloat64)
	}
	return &node{op: oConst, pos: pos, val: value{k: vDouble, f: v}}, nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
