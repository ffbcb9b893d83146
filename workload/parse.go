package workload

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
)

// The text forms of distributions and arrival processes share one small
// grammar of calls:
//
//	expr  = name "(" [ arg { "," arg } ] ")"
//	arg   = [ word ( "=" | ":" ) ] value
//	value = expr | word
//	word  = one or more characters other than ( ) , = : and white space
//
// White space between tokens is ignored. Input is at most 4096 bytes and
// calls nest at most 16 deep.

// Bounds on parser input.
const (
	maxInput = 4096
	maxDepth = 16
)

// node is a parsed value: a call name(args) or a bare word.
type node struct {
	call bool
	name string // the call's name, or the word itself
	args []arg
}

// arg is a call argument; key is empty for a positional argument.
type arg struct {
	key string
	sep byte // '=' or ':' after key
	val *node
}

type parser struct {
	what  string // "dist", "arrivals", ... for error messages
	src   string
	pos   int
	depth int
}

// parseCall parses src as a single call expression.
func parseCall(what, src string) (*node, error) {
	if len(src) > maxInput {
		return nil, fmt.Errorf("workload: %s is %d bytes long: want at most %d", what, len(src), maxInput)
	}
	p := &parser{what: what, src: src}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(src) {
		return nil, p.errorf("want end of input after the expression, got %q", src[p.pos:p.pos+1])
	}
	if !n.call {
		return nil, p.errorf("want kind(arguments), e.g. %s", example(what))
	}
	return n, nil
}

// example shows each kind of input in error messages.
func example(what string) string {
	switch what {
	case "dist":
		return "exp(10ms)"
	case "arrivals":
		return "poisson(1000/s)"
	case "outcomes":
		return "outcomes(reconsume_later=0.01,exception=0.001)"
	}
	return "tags(TagA:3,TagB:1)"
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("workload: %s %s: at offset %d: %s", p.what, quote(p.src), p.pos, fmt.Sprintf(format, a...))
}

func (p *parser) value() (*node, error) {
	p.skipSpace()
	w := p.word()
	if w == "" {
		return nil, p.errorf("want a name or a value, got %s", p.got())
	}
	p.skipSpace()
	if p.peek() != '(' {
		return &node{name: w}, nil
	}
	if p.depth++; p.depth > maxDepth {
		return nil, p.errorf("calls nested more than %d deep", maxDepth)
	}
	p.pos++
	n := &node{call: true, name: w}
	if p.skipSpace(); p.peek() == ')' {
		p.pos++
		p.depth--
		return n, nil
	}
	return n, p.args(n)
}

// args parses arguments up to and including the closing parenthesis.
func (p *parser) args(n *node) error {
	for {
		a, err := p.arg()
		if err != nil {
			return err
		}
		n.args = append(n.args, a)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			p.depth--
			return nil
		default:
			return p.errorf("want \",\" or \")\", got %s", p.got())
		}
	}
}

func (p *parser) arg() (arg, error) {
	p.skipSpace()
	start := p.pos
	key := p.word()
	p.skipSpace()
	if c := p.peek(); key != "" && (c == '=' || c == ':') {
		p.pos++
		v, err := p.value()
		return arg{key: key, sep: c, val: v}, err
	}
	p.pos = start
	v, err := p.value()
	return arg{val: v}, err
}

func (p *parser) word() string {
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune("(),=: \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) got() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	return strconv.Quote(p.src[p.pos : p.pos+1])
}

// positional returns exactly count positional arguments of call n.
func (n *node) positional(count int, want string) ([]*node, error) {
	if len(n.args) != count {
		return nil, fmt.Errorf("workload: %s has %d arguments: want %s(%s)", n.name, len(n.args), n.name, want)
	}
	vals := make([]*node, count)
	for i, a := range n.args {
		if a.key != "" {
			return nil, fmt.Errorf("workload: %s argument %d is named %q: want %s(%s)", n.name, i+1, a.key, n.name, want)
		}
		vals[i] = a.val
	}
	return vals, nil
}

// named returns the values of call n's key=value arguments in the order of
// keys, nil where absent. The first skip arguments are positional and are
// not examined. Unknown, repeated or unnamed arguments are errors.
func (n *node) named(skip int, keys ...string) ([]*node, error) {
	vals := make([]*node, len(keys))
	want := strings.Join(keys, ", ")
	for i, a := range n.args[skip:] {
		if a.key == "" || a.sep != '=' {
			return nil, fmt.Errorf("workload: %s argument %d is not key=value: want %s", n.name, skip+i+1, want)
		}
		k := indexOf(keys, a.key)
		if k < 0 {
			return nil, fmt.Errorf("workload: %s has unknown argument %q: want %s", n.name, a.key, want)
		}
		if vals[k] != nil {
			return nil, fmt.Errorf("workload: %s argument %q given twice", n.name, a.key)
		}
		vals[k] = a.val
	}
	return vals, nil
}

// required reports the first of keys whose value is missing.
func (n *node) required(vals []*node, keys ...string) error {
	for i, v := range vals {
		if v == nil {
			return fmt.Errorf("workload: %s is missing argument %q: want %s", n.name, keys[i], strings.Join(keys, ", "))
		}
	}
	return nil
}

func indexOf(keys []string, k string) int {
	for i, key := range keys {
		if key == k {
			return i
		}
	}
	return -1
}

// word returns the text of a bare-word value.
func (n *node) word(field, want string) (string, error) {
	if n.call {
		return "", fmt.Errorf("workload: %s: want %s, got %s(...)", field, want, n.name)
	}
	return n.name, nil
}

func (n *node) dur(field string) (clock.Duration, error) {
	w, err := n.word(field, "a duration")
	if err != nil {
		return 0, err
	}
	d, err := clock.ParseDuration(w)
	if err != nil {
		return 0, fmt.Errorf("workload: %s %s: want a duration such as 250ms, 30s or 2m, at most microsecond resolution", field, quote(w))
	}
	return d, nil
}

func (n *node) rate(field string) (Rate, error) {
	w, err := n.word(field, "a rate")
	if err != nil {
		return Rate{}, err
	}
	r, err := parseRate(w)
	if err != nil {
		return Rate{}, fmt.Errorf("workload: %s %s: %v", field, quote(w), err)
	}
	return r, nil
}

func (n *node) int(field string) (int64, error) {
	w, err := n.word(field, "an integer")
	if err != nil {
		return 0, err
	}
	if !allDigits(w) || len(w) > 18 {
		return 0, fmt.Errorf("workload: %s %s: want an unsigned integer of at most 18 digits", field, quote(w))
	}
	v, _ := strconv.ParseInt(w, 10, 64)
	return v, nil
}

func (n *node) float(field string) (float64, error) {
	w, err := n.word(field, "a number")
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return 0, fmt.Errorf("workload: %s %s: want a decimal number such as 1.5", field, quote(w))
	}
	return f, nil
}

func (n *node) ppm(field string) (int64, error) {
	w, err := n.word(field, "a probability")
	if err != nil {
		return 0, err
	}
	v, ok := parsePPM(w)
	if !ok {
		return 0, fmt.Errorf("workload: %s %s: want a probability from 0 to 1 with at most 6 decimals, e.g. 0.01", field, quote(w))
	}
	return v, nil
}

// ParseOutcomes parses
// "outcomes(reconsume_later=P,exception=P,poison_every=N,poison_count=K)"
// where each P is a probability with at most six decimals and N, K are
// counts (each may be omitted, and is then 0): messages N, 2N, … (at most
// K of them, K 0: all) are poison messages whose every delivery throws.
func ParseOutcomes(s string) (Outcomes, error) {
	n, err := parseCall("outcomes", s)
	if err != nil {
		return Outcomes{}, err
	}
	if n.name != "outcomes" {
		return Outcomes{}, fmt.Errorf("workload: outcomes kind %q unknown: want outcomes(...)", n.name)
	}
	vals, err := n.named(0, "reconsume_later", "exception", "poison_every", "poison_count", "ack_then_fail")
	if err != nil {
		return Outcomes{}, err
	}
	var ppm [2]int64
	for i, field := range [2]string{"outcomes reconsume_later", "outcomes exception"} {
		if vals[i] == nil {
			continue
		}
		if ppm[i], err = vals[i].ppm(field); err != nil {
			return Outcomes{}, err
		}
	}
	var poison [2]int64
	for i, field := range [2]string{"outcomes poison_every", "outcomes poison_count"} {
		if vals[2+i] == nil {
			continue
		}
		if poison[i], err = vals[2+i].int(field); err != nil {
			return Outcomes{}, err
		}
	}
	o, err := NewOutcomes(ppm[0], ppm[1])
	if err != nil {
		return Outcomes{}, err
	}
	if vals[4] != nil {
		notDone, err := vals[4].ppm("outcomes ack_then_fail")
		if err != nil {
			return Outcomes{}, err
		}
		if o, err = o.WithAckedNotDone(notDone); err != nil {
			return Outcomes{}, err
		}
	}
	return o.WithPoison(poison[0], poison[1])
}

// ParseTags parses "tags(Name:weight,...)" with integer weights; "tags()"
// is the zero Tags.
func ParseTags(s string) (Tags, error) {
	n, err := parseCall("tags", s)
	if err != nil {
		return Tags{}, err
	}
	if n.name != "tags" {
		return Tags{}, fmt.Errorf("workload: tags kind %q unknown: want tags(...)", n.name)
	}
	if len(n.args) == 0 {
		return Tags{}, nil
	}
	tags := make([]Tag, len(n.args))
	for i, a := range n.args {
		if a.key == "" || a.sep != ':' {
			return Tags{}, fmt.Errorf("workload: tags entry %d is not Name:weight", i+1)
		}
		w, err := a.val.int("tag " + a.key + " weight")
		if err != nil {
			return Tags{}, err
		}
		tags[i] = Tag{Name: a.key, Weight: w}
	}
	return NewTags(tags...)
}
