package filter

import (
	"fmt"
	"strings"

	"popsim/model"
)

// vkind is the Java type of a SQL92 value. Property values are always
// strings (or absent: null); literals are int (Integer), long (Long),
// double (Double), string or boolean; conditions are boolean or null.
type vkind uint8

const (
	vNull vkind = iota
	vBool
	vInt  // java.lang.Integer
	vLong // java.lang.Long
	vDouble
	vString
)

var vkindNames = [...]string{"null", "boolean", "int", "long", "double", "string"}

type value struct {
	k vkind
	b bool
	i int64 // vInt (within int32) and vLong
	f float64
	s string
}

func str(s string) value       { return value{k: vString, s: s} }
func boolean(b bool) value     { return value{k: vBool, b: b} }
func (v value) isNumber() bool { return v.k == vInt || v.k == vLong || v.k == vDouble }
func (v value) isTrue() bool   { return v.k == vBool && v.b }

// same reports whether v is the boolean b.
func (v value) same(b value) bool { return v.k == vBool && v.b == b.b }

var (
	vTrue  = boolean(true)
	vFalse = boolean(false)
)

func (v value) String() string {
	switch v.k {
	case vNull:
		return "NULL"
	case vBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case vString:
		return quote(v.s)
	case vDouble:
		return formatDouble(v.f)
	}
	return fmt.Sprint(v.i)
}

// Truth is the three-valued result of a SQL92 condition.
type Truth uint8

// Results of Evaluate. Only True delivers a message.
const (
	False Truth = iota
	True
	// Null is SQL's unknown: the condition needed a property the message
	// does not have. The broker does not deliver the message.
	Null
)

func (t Truth) String() string { return [...]string{"FALSE", "TRUE", "NULL"}[t] }

// evaluator evaluates a compiled expression over one message.
type evaluator struct {
	m   *model.Message
	src string
}

func (e *evaluator) fail(n *node, format string, args ...any) error {
	return &EvalError{Expression: e.src, Offset: n.at, Msg: fmt.Sprintf(format, args...)}
}

// eval returns n's value, or an error where RocketMQ's evaluation throws.
// Operands are evaluated in RocketMQ's order, with its short cuts, so an
// error is raised exactly when upstream raises one.
func (e *evaluator) eval(n *node) (value, error) {
	switch n.op {
	case oProp:
		// The broker decodes stored properties with
		// MessageDecoder.string2messageProperties, which drops a property
		// whose value is empty: to SQL92 it is absent.
		if s, ok := e.m.Property(n.name); ok && s != "" {
			return str(s), nil
		}
		return value{}, nil
	case oConst, oBoolConst:
		return n.val, nil
	case oNeg:
		return e.negate(n)
	case oCast:
		x, err := e.eval(n.a)
		if err != nil || x.k == vNull {
			return value{}, err
		}
		return boolean(x.isTrue()), nil
	case oNot, oNe, oIsNotNull:
		return e.not(n)
	case oAnd, oOr:
		return e.logic(n.op, n, n.a, n.b)
	case oEq:
		return e.equal(n, n.a, n.b)
	case oIsNull:
		x, err := e.eval(n.a)
		return boolean(x.k == vNull), err
	case oGt, oGe, oLt, oLe:
		return e.ordering(n.op, n, n.a, n.b)
	case oBetween, oNotBetween:
		return e.between(n)
	case oIn, oNotIn:
		x, err := e.eval(n.a)
		if err != nil || x.k != vString {
			return value{}, err
		}
		in := false
		for _, s := range n.list {
			if s == x.s {
				in = true
				break
			}
		}
		return boolean(in != (n.op == oNotIn)), nil
	}
	return e.stringOp(n)
}

// negate is UnaryExpression NEGATE: numbers change sign, anything else is
// null.
func (e *evaluator) negate(n *node) (value, error) {
	x, err := e.eval(n.a)
	if err != nil {
		return value{}, err
	}
	switch x.k {
	case vInt:
		return value{k: vInt, i: int64(-int32(x.i))}, nil
	case vLong:
		return value{k: vLong, i: -x.i}, nil
	case vDouble:
		return value{k: vDouble, f: -x.f}, nil
	}
	return value{}, nil
}

// not is NOT, and the NOT that RocketMQ wraps around = for <> and around
// IS NULL for IS NOT NULL: null stays null.
func (e *evaluator) not(n *node) (value, error) {
	var x value
	var err error
	switch n.op {
	case oNe:
		x, err = e.equal(n, n.a, n.b)
	case oIsNotNull:
		x, err = e.eval(n.a)
		x = boolean(x.k == vNull)
	default:
		x, err = e.eval(n.a)
	}
	if err != nil || x.k == vNull {
		return value{}, err
	}
	return boolean(!x.b), nil
}

// logic is LogicExpression: AND stops at a FALSE left side, OR at a TRUE
// one; otherwise a null side makes the result null.
func (e *evaluator) logic(o op, n, a, b *node) (value, error) {
	stop := vFalse
	if o == oOr {
		stop = vTrue
	}
	l, err := e.eval(a)
	if err != nil || l.same(stop) {
		return l, err
	}
	r, err := e.eval(b)
	if err != nil || r.same(stop) {
		return r, err
	}
	if l.k == vNull || r.k == vNull {
		return value{}, nil
	}
	return boolean(!stop.b), nil
}

// equal is ComparisonExpression's equality. Both sides are evaluated. When
// exactly one is null the result is null if it is the left one and FALSE
// if it is the right one (upstream's asymmetry); two nulls are equal.
func (e *evaluator) equal(n, a, b *node) (value, error) {
	l, err := e.eval(a)
	if err != nil {
		return value{}, err
	}
	r, err := e.eval(b)
	if err != nil {
		return value{}, err
	}
	switch {
	case l.k == vNull && r.k == vNull:
		return vTrue, nil
	case l.k == vNull:
		return value{}, nil
	case r.k == vNull:
		return vFalse, nil
	}
	c, cerr := compare(l, r)
	if cerr != nil {
		return value{}, e.fail(n, "%s = %s: %s", l, r, cerr)
	}
	return boolean(c == 0), nil
}

// ordering is ComparisonExpression's >, >=, <, <=. A null left side makes
// the result null before the right side is evaluated. Two strings are
// compared as doubles (Double.valueOf), anything else by compare.
func (e *evaluator) ordering(o op, n, a, b *node) (value, error) {
	l, err := e.eval(a)
	if err != nil || l.k == vNull {
		return value{}, err
	}
	r, err := e.eval(b)
	if err != nil || r.k == vNull {
		return value{}, err
	}
	var c int
	var cerr error
	if l.k == vString && r.k == vString {
		c, cerr = compareStringsAsDoubles(l.s, r.s)
	} else {
		c, cerr = compare(l, r)
	}
	if cerr != nil {
		return value{}, e.fail(n, "%s %s %s: %s", l, opSymbols[o], r, cerr)
	}
	switch o {
	case oGt:
		return boolean(c > 0), nil
	case oGe:
		return boolean(c >= 0), nil
	case oLt:
		return boolean(c < 0), nil
	}
	return boolean(c <= 0), nil
}

func compareStringsAsDoubles(l, r string) (int, error) {
	lf, lok := javaParseDouble(l)
	rf, rok := javaParseDouble(r)
	if !lok || !rok {
		return 0, fmt.Errorf("it is illegal to compare strings with >, >=, <, <= unless both are numbers (Double.valueOf)")
	}
	return javaDoubleCompare(lf, rf), nil
}

// between is BETWEEN as AND(x >= lo, x <= hi) and NOT BETWEEN as
// OR(x < lo, x > hi), with the short cuts of AND and OR.
func (e *evaluator) between(n *node) (value, error) {
	first, second, stop := oGe, oLe, vFalse
	if n.op == oNotBetween {
		first, second, stop = oLt, oGt, vTrue
	}
	l, err := e.ordering(first, n, n.a, n.b)
	if err != nil || l.same(stop) {
		return l, err
	}
	r, err := e.ordering(second, n, n.a, n.c)
	if err != nil || r.same(stop) {
		return r, err
	}
	if l.k == vNull || r.k == vNull {
		return value{}, nil
	}
	return boolean(!stop.b), nil
}

// stringOp is [NOT] CONTAINS / STARTSWITH / ENDSWITH. An empty search
// string is FALSE without evaluating the left side; a null or non-string
// left side is FALSE, for the NOT forms too.
func (e *evaluator) stringOp(n *node) (value, error) {
	if n.search == "" {
		return vFalse, nil
	}
	x, err := e.eval(n.a)
	if err != nil || x.k != vString {
		return vFalse, err
	}
	var has bool
	switch n.op {
	case oContains, oNotContains:
		has = strings.Contains(x.s, n.search)
	case oStartsWith, oNotStartsWith:
		has = strings.HasPrefix(x.s, n.search)
	default:
		has = strings.HasSuffix(x.s, n.search)
	}
	negated := n.op == oNotContains || n.op == oNotStartsWith || n.op == oNotEndsWith
	return boolean(has != negated), nil
}

// compare is ComparisonExpression.__compare with string conversion on (as
// every parsed expression has it): values of one type compare naturally;
// mixed numbers widen (int to long to double); a string meets a number by
// parsing the string as that number's type, and a boolean by
// Boolean.valueOf; a boolean on the left of a string is a
// ClassCastException; any other mix compares as "less" (-1).
func compare(l, r value) (int, error) {
	if l.k == r.k {
		return compareSame(l, r), nil
	}
	switch l.k {
	case vBool:
		if r.k == vString {
			return 0, fmt.Errorf("a boolean cannot be compared with a string (ClassCastException)")
		}
	case vInt, vLong:
		switch r.k {
		case vInt, vLong:
			return cmp3(l.i, r.i), nil
		case vDouble:
			return javaDoubleCompare(float64(l.i), r.f), nil
		case vString:
			x, err := parseAs(l.k, r.s)
			return cmp3(l.i, x.i), err
		}
	case vDouble:
		switch r.k {
		case vInt, vLong:
			return javaDoubleCompare(l.f, float64(r.i)), nil
		case vString:
			x, err := parseAs(vDouble, r.s)
			return javaDoubleCompare(l.f, x.f), err
		}
	case vString:
		if r.k == vBool {
			return compareSame(boolean(strings.EqualFold(l.s, "true")), r), nil
		}
		if r.isNumber() {
			x, err := parseAs(r.k, l.s)
			if err != nil {
				return 0, err
			}
			return compare(x, r)
		}
	}
	return -1, nil
}

// parseAs reads s as Integer.valueOf, Long.valueOf or Double.valueOf does.
func parseAs(k vkind, s string) (value, error) {
	switch k {
	case vInt, vLong:
		bits := 32
		if k == vLong {
			bits = 64
		}
		if i, ok := javaParseInt(s, bits); ok {
			return value{k: k, i: i}, nil
		}
	case vDouble:
		if f, ok := javaParseDouble(s); ok {
			return value{k: vDouble, f: f}, nil
		}
	}
	return value{}, fmt.Errorf("%s is not a Java %s (NumberFormatException)", quote(s), vkindNames[k])
}

func compareSame(l, r value) int {
	switch l.k {
	case vBool:
		switch {
		case l.b == r.b:
			return 0
		case l.b:
			return 1
		}
		return -1
	case vInt, vLong:
		return cmp3(l.i, r.i)
	case vDouble:
		return javaDoubleCompare(l.f, r.f)
	case vString:
		return CompareUTF16(l.s, r.s)
	}
	return 0
}

func cmp3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
