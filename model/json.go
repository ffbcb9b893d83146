package model

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A small JSON reader for the revive topic's flat objects: one object of
// keys whose values are integers, strings, null or arrays of integers;
// values of unknown keys may be anything and are skipped. It accepts what
// encoding/json accepts for these shapes and never panics.

// ErrMalformedJSON is wrapped by every revive-payload decoding error.
var ErrMalformedJSON = errors.New("malformed revive-topic JSON")

type jsonParser struct {
	s    []byte
	i    int
	what string
}

func (p *jsonParser) fail(why string) error {
	return fmt.Errorf("%w: %s at byte %d: %s", ErrMalformedJSON, p.what, p.i, why)
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// parseObject reads one object, calling field for each key with the parser
// positioned at its value; field must consume the value.
func parseObject(data []byte, what string, field func(p *jsonParser, key string) error) error {
	p := &jsonParser{s: data, what: what}
	if !p.eat('{') {
		return p.fail("want an object")
	}
	if !p.eat('}') {
		for {
			p.ws()
			key, ok, err := p.str()
			if err != nil {
				return err
			}
			if !ok {
				return p.fail("want a key")
			}
			if !p.eat(':') {
				return p.fail("want ':'")
			}
			p.ws()
			if err := field(p, key); err != nil {
				return err
			}
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return p.fail("want ',' or '}'")
		}
	}
	p.ws()
	if p.i != len(p.s) {
		return p.fail("trailing data")
	}
	return nil
}

// null consumes a literal null.
func (p *jsonParser) null() bool {
	if len(p.s)-p.i >= 4 && string(p.s[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// int reads an integer that fits bits (null reads as 0, as fastjson reads
// it into a primitive).
func (p *jsonParser) int(bits int) (int64, error) {
	p.ws()
	if p.null() {
		return 0, nil
	}
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	k := j
	for k < len(p.s) && p.s[k] >= '0' && p.s[k] <= '9' {
		k++
	}
	if k == j || (p.s[j] == '0' && k-j > 1) {
		return 0, p.fail("want an integer")
	}
	if k < len(p.s) && (p.s[k] == '.' || p.s[k] == 'e' || p.s[k] == 'E') {
		return 0, p.fail("want an integer, not a fraction")
	}
	v, err := strconv.ParseInt(string(p.s[p.i:k]), 10, bits)
	if err != nil {
		return 0, p.fail(fmt.Sprintf("integer out of range for %d bits", bits))
	}
	p.i = k
	return v, nil
}

// str reads a string; ok is false for null.
func (p *jsonParser) str() (string, bool, error) {
	p.ws()
	if p.null() {
		return "", false, nil
	}
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false, p.fail("want a string")
	}
	p.i++
	var out []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true, nil
		case c < 0x20:
			return "", false, p.fail("control character in a string")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", false, err
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, c)
			p.i++
		}
	}
	return "", false, p.fail("unterminated string")
}

func (p *jsonParser) escape() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, p.fail("unterminated escape")
	}
	c := p.s[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		if p.i+4 > len(p.s) {
			return 0, p.fail("short \\u escape")
		}
		v, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 16)
		if err != nil {
			return 0, p.fail("bad \\u escape")
		}
		p.i += 4
		return rune(v), nil
	}
	return 0, p.fail("bad escape")
}

// int32s reads an array of 32-bit integers; null is nil.
func (p *jsonParser) int32s() ([]int32, error) {
	var out []int32
	err := p.array(func() error {
		v, err := p.int(32)
		out = append(out, int32(v))
		return err
	})
	if err == nil && out == nil && p.s[p.i-1] == ']' {
		out = []int32{}
	}
	return out, err
}

// int64s reads an array of integers; null is nil.
func (p *jsonParser) int64s() ([]int64, error) {
	var out []int64
	err := p.array(func() error {
		v, err := p.int(64)
		out = append(out, v)
		return err
	})
	if err == nil && out == nil && p.s[p.i-1] == ']' {
		out = []int64{}
	}
	return out, err
}

// array reads an array (or null), calling elem for each element.
func (p *jsonParser) array(elem func() error) error {
	p.ws()
	if p.null() {
		return nil
	}
	if !p.eat('[') {
		return p.fail("want an array")
	}
	if p.eat(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return nil
		}
		return p.fail("want ',' or ']'")
	}
}

// skip consumes any value, nesting at most 64 deep.
func (p *jsonParser) skip() error { return p.skipDepth(0) }

func (p *jsonParser) skipDepth(depth int) error {
	if depth > 64 {
		return p.fail("nested too deep")
	}
	p.ws()
	if p.i >= len(p.s) {
		return p.fail("want a value")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		_, _, err := p.str()
		return err
	case c == '{':
		p.i++
		if p.eat('}') {
			return nil
		}
		for {
			p.ws()
			if _, ok, err := p.str(); err != nil || !ok {
				return p.fail("want a key")
			}
			if !p.eat(':') {
				return p.fail("want ':'")
			}
			if err := p.skipDepth(depth + 1); err != nil {
				return err
			}
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				return nil
			}
			return p.fail("want ',' or '}'")
		}
	case c == '[':
		return p.array(func() error { return p.skipDepth(depth + 1) })
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(p.s)-p.i >= len(lit) && string(p.s[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return nil
		}
	}
	return p.fail("want a value")
}

// number consumes any JSON number.
func (p *jsonParser) number() error {
	j := p.i
	if p.s[j] == '-' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] >= '0' && p.s[k] <= '9' || p.s[k] == '.' || p.s[k] == 'e' || p.s[k] == 'E' || p.s[k] == '+' || p.s[k] == '-') {
		k++
	}
	if _, err := strconv.ParseFloat(string(p.s[p.i:k]), 64); err != nil || k == j {
		return p.fail("bad number")
	}
	p.i = k
	return nil
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, everything else (UTF-8) as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	i := 0 // the plain prefix (usually all of s) is appended at once
	for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
		i++
	}
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
