package filter

import (
	"fmt"
	"unicode/utf8"
)

// tok is a token kind of RocketMQ's SQL92 selector grammar
// (SelectorParser.jj).
type tok uint8

const (
	tEOF tok = iota
	tNOT
	tAND
	tOR
	tBETWEEN
	tIN
	tTRUE
	tFALSE
	tNULL
	tIS
	tCONTAINS
	tSTARTSWITH
	tENDSWITH
	tDecimal // DECIMAL_LITERAL: 0 | [1-9][0-9]*[lL]?
	tFloat   // FLOATING_POINT_LITERAL
	tString  // STRING_LITERAL: '...' with '' for a quote
	tID      // ID: [A-Za-z_$][A-Za-z0-9_$]*
	tEq      // =
	tNe      // <>
	tGt      // >
	tGe      // >=
	tLt      // <
	tLe      // <=
	tLParen
	tComma
	tRParen
	tPlus
	tMinus
)

var tokNames = [...]string{
	tEOF: "end of expression", tNOT: "NOT", tAND: "AND", tOR: "OR", tBETWEEN: "BETWEEN", tIN: "IN",
	tTRUE: "TRUE", tFALSE: "FALSE", tNULL: "NULL", tIS: "IS", tCONTAINS: "CONTAINS",
	tSTARTSWITH: "STARTSWITH", tENDSWITH: "ENDSWITH", tDecimal: "integer", tFloat: "decimal number",
	tString: "string", tID: "property name", tEq: "'='", tNe: "'<>'", tGt: "'>'", tGe: "'>='",
	tLt: "'<'", tLe: "'<='", tLParen: "'('", tComma: "','", tRParen: "')'", tPlus: "'+'", tMinus: "'-'",
}

// keywords are reserved words, matched without regard to ASCII case.
var keywords = []struct {
	word string
	t    tok
}{
	{"NOT", tNOT}, {"AND", tAND}, {"OR", tOR}, {"BETWEEN", tBETWEEN}, {"IN", tIN},
	{"TRUE", tTRUE}, {"FALSE", tFALSE}, {"NULL", tNULL}, {"IS", tIS},
	{"CONTAINS", tCONTAINS}, {"STARTSWITH", tSTARTSWITH}, {"ENDSWITH", tENDSWITH},
}

type token struct {
	t        tok
	pos, end int // byte range in the source
}

// lexer produces tokens on demand, as JavaCC's token manager does: a
// character that starts no token is an error only when the parser asks
// for the token there.
type lexer struct {
	src string
	pos int
	// noEOL is set once a "--" found no line end after it: none can
	// follow a later one either, so long runs of '-' stay linear.
	noEOL bool
}

// lexError is a lexical error at a byte offset.
type lexError struct {
	pos int
	msg string
}

// next skips white space and comments and returns the longest token at
// the current position.
func (lx *lexer) next() (token, *lexError) {
	if err := lx.skip(); err != nil {
		return token{}, err
	}
	s, i := lx.src, lx.pos
	if i >= len(s) {
		return token{t: tEOF, pos: i, end: i}, nil
	}
	t, n, err := lx.match(i)
	if err != nil {
		return token{}, err
	}
	lx.pos = i + n
	return token{t: t, pos: i, end: i + n}, nil
}

// skip passes over white space (space, tab, LF, CR, FF), block comments
// and line comments. A line comment needs its line end: "--" at the end
// of the input is two minus signs, as in RocketMQ's grammar.
func (lx *lexer) skip() *lexError {
	s := lx.src
	for lx.pos < len(s) {
		switch c := s[lx.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			lx.pos++
		case c == '-' && lx.pos+1 < len(s) && s[lx.pos+1] == '-' && !lx.noEOL:
			n := lineComment(s[lx.pos:])
			if n == 0 {
				lx.noEOL = true
				return nil
			}
			lx.pos += n
		case c == '/' && lx.pos+1 < len(s) && s[lx.pos+1] == '*':
			n := blockComment(s[lx.pos:])
			if n == 0 {
				return &lexError{lx.pos, "block comment \"/*\" is not closed by \"*/\""}
			}
			lx.pos += n
		default:
			return nil
		}
	}
	return nil
}

// lineComment returns the length of "--...EOL" at the start of s, or 0 when
// no line end follows.
func lineComment(s string) int {
	for i := 2; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return i + 1
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				return i + 2
			}
			return i + 1
		}
	}
	return 0
}

// blockComment returns the length of "/*...*/" at the start of s, or 0.
func blockComment(s string) int {
	for i := 2; i+1 < len(s); i++ {
		if s[i] == '*' && s[i+1] == '/' {
			return i + 2
		}
	}
	return 0
}

// match returns the kind and length of the token at i.
func (lx *lexer) match(i int) (tok, int, *lexError) {
	s := lx.src
	c := s[i]
	switch {
	case isIDStart(c):
		return word(s[i:])
	case isDigit(c) || c == '.':
		return lx.number(i)
	case c == '\'':
		return lx.stringLit(i)
	}
	two := ""
	if i+1 < len(s) {
		two = s[i : i+2]
	}
	switch two {
	case "<>":
		return tNe, 2, nil
	case "<=":
		return tLe, 2, nil
	case ">=":
		return tGe, 2, nil
	}
	switch c {
	case '=':
		return tEq, 1, nil
	case '<':
		return tLt, 1, nil
	case '>':
		return tGt, 1, nil
	case '(':
		return tLParen, 1, nil
	case ')':
		return tRParen, 1, nil
	case ',':
		return tComma, 1, nil
	case '+':
		return tPlus, 1, nil
	case '-':
		return tMinus, 1, nil
	}
	return 0, 0, &lexError{i, "unexpected character " + describeRune(s[i:]) + ": want a property name, a literal, an operator, '(' or ')'"}
}

func describeRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && len(s) > 0 && s[0] >= utf8.RuneSelf {
		return fmt.Sprintf("byte 0x%02x", s[0])
	}
	return fmt.Sprintf("%q (U+%04X)", r, r)
}

func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIDPart(c byte) bool { return isIDStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// word lexes an identifier; a whole word equal to a keyword (ignoring ASCII
// case) is that keyword.
func word(s string) (tok, int, *lexError) {
	n := 1
	for n < len(s) && isIDPart(s[n]) {
		n++
	}
	for _, k := range keywords {
		if len(k.word) == n && asciiEqualFold(s[:n], k.word) {
			return k.t, n, nil
		}
	}
	return tID, n, nil
}

func asciiEqualFold(a, upper string) bool {
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

// number lexes the longer of DECIMAL_LITERAL and FLOATING_POINT_LITERAL.
func (lx *lexer) number(i int) (tok, int, *lexError) {
	s := lx.src[i:]
	dec := 0
	if s[0] == '0' {
		dec = 1
	} else if isDigit(s[0]) {
		dec = digits(s)
		if dec < len(s) && (s[dec] == 'l' || s[dec] == 'L') {
			dec++
		}
	}
	if fl := floatLen(s); fl > dec {
		return tFloat, fl, nil
	}
	if dec == 0 {
		return 0, 0, &lexError{i, "'.' must be followed by a digit"}
	}
	return tDecimal, dec, nil
}

func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// floatLen is the length of a FLOATING_POINT_LITERAL at the start of s:
// d+ "." d* exp? | "." d+ exp? | d+ exp, or 0.
func floatLen(s string) int {
	n := digits(s)
	switch {
	case n < len(s) && s[n] == '.':
		frac := digits(s[n+1:])
		if n == 0 && frac == 0 {
			return 0
		}
		n += 1 + frac
		return n + exponentLen(s[n:])
	case n > 0:
		if e := exponentLen(s[n:]); e > 0 {
			return n + e
		}
	}
	return 0
}

// exponentLen is the length of [eE][+-]?d+ at the start of s, or 0.
func exponentLen(s string) int {
	if len(s) == 0 || s[0] != 'e' && s[0] != 'E' {
		return 0
	}
	n := 1
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	d := digits(s[n:])
	if d == 0 {
		return 0
	}
	return n + d
}

// stringLit lexes '...' where ” stands for one quote.
func (lx *lexer) stringLit(i int) (tok, int, *lexError) {
	s := lx.src
	for j := i + 1; j < len(s); j++ {
		if s[j] != '\'' {
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			j++
			continue
		}
		return tString, j + 1 - i, nil
	}
	return 0, 0, &lexError{i, "string literal is not closed by a quote (write '' for a quote inside it)"}
}

// unquote decodes a STRING_LITERAL image.
func unquote(img string) string {
	body := img[1 : len(img)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		out = append(out, body[i])
		if body[i] == '\'' {
			i++
		}
	}
	return string(out)
}
