package filter

import (
	"strconv"
	"strings"
)

// Binding strength of SQL92 forms, weakest first, as the grammar's
// productions nest: orExpression, andExpression, equalityExpression,
// comparisonExpression, unaryExpr, primaryExpr.
const (
	lvlOr = iota + 1
	lvlAnd
	lvlEq
	lvlCmp
	lvlUnary
	lvlPrimary
)

var opSymbols = map[op]string{
	oAnd: "AND", oOr: "OR", oEq: "=", oNe: "<>", oGt: ">", oGe: ">=", oLt: "<", oLe: "<=",
	oContains: "CONTAINS", oNotContains: "NOT CONTAINS", oStartsWith: "STARTSWITH",
	oNotStartsWith: "NOT STARTSWITH", oEndsWith: "ENDSWITH", oNotEndsWith: "NOT ENDSWITH",
	oIn: "IN", oNotIn: "NOT IN", oBetween: "BETWEEN", oNotBetween: "NOT BETWEEN",
}

func level(n *node) int {
	switch n.op {
	case oOr:
		return lvlOr
	case oAnd:
		return lvlAnd
	case oEq, oNe, oIsNull, oIsNotNull:
		return lvlEq
	case oNot, oNeg:
		return lvlUnary
	case oProp, oConst, oBoolConst:
		return lvlPrimary
	case oCast:
		return level(n.a)
	}
	return lvlCmp
}

// render prints n in canonical SQL92, in parentheses when it binds more
// weakly than its place needs (min). Parsing the text gives the same
// expression back: the grammar's parentheses add no node, a unary plus is
// dropped, a negative number stays a negation, and a property used as a
// condition is cast again.
func render(n *node, min int) string {
	var b strings.Builder
	write(&b, n, min)
	return b.String()
}

func write(b *strings.Builder, n *node, min int) {
	if level(n) < min {
		b.WriteByte('(')
		write(b, n, 0)
		b.WriteByte(')')
		return
	}
	switch n.op {
	case oProp:
		b.WriteString(n.name)
	case oConst, oBoolConst:
		b.WriteString(n.val.String())
	case oCast:
		write(b, n.a, min)
	case oNeg:
		operand := render(n.a, lvlUnary)
		b.WriteByte('-')
		if strings.HasPrefix(operand, "-") {
			b.WriteByte(' ') // "--" would start a comment
		}
		b.WriteString(operand)
	case oNot:
		b.WriteString("NOT ")
		write(b, n.a, lvlUnary)
	case oOr, oAnd:
		write(b, n.a, level(n))
		b.WriteString(" " + opSymbols[n.op] + " ")
		write(b, n.b, level(n)+1)
	case oEq, oNe:
		write(b, n.a, lvlEq)
		b.WriteString(" " + opSymbols[n.op] + " ")
		write(b, n.b, lvlCmp)
	case oIsNull, oIsNotNull:
		write(b, n.a, lvlEq)
		if n.op == oIsNull {
			b.WriteString(" IS NULL")
		} else {
			b.WriteString(" IS NOT NULL")
		}
	case oGt, oGe, oLt, oLe:
		write(b, n.a, lvlCmp)
		b.WriteString(" " + opSymbols[n.op] + " ")
		write(b, n.b, lvlUnary)
	case oBetween, oNotBetween:
		write(b, n.a, lvlCmp)
		b.WriteString(" " + opSymbols[n.op] + " ")
		write(b, n.b, lvlUnary)
		b.WriteString(" AND ")
		write(b, n.c, lvlUnary)
	case oIn, oNotIn:
		write(b, n.a, lvlCmp)
		b.WriteString(" " + opSymbols[n.op] + " (")
		for i, s := range n.list {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(s))
		}
		b.WriteByte(')')
	default: // CONTAINS and its kin
		write(b, n.a, lvlCmp)
		b.WriteString(" " + opSymbols[n.op] + " ")
		b.WriteString(quote(n.search))
	}
}

// quote writes a string literal: in single quotes, a quote doubled.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// formatDouble prints a double that lexes back as a FLOATING_POINT_LITERAL
// of the same value: the shortest exact form, with ".0" when it would
// otherwise read as an integer.
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEIN") {
		s += ".0"
	}
	return s
}
